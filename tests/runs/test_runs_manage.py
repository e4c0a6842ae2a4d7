"""Rename and delete runs: only runs under the runs folder, never the one training."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs.jobs import JobRunner
from studio.runs.manage import delete_runs, rename_run
from studio.runs.run_dir import RunDir


def _run(root: Path, name: str) -> RunDir:
    run = RunDir(root / name).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(run.path)).save(run.config)
    run.write_status("finished", ended=1.0)
    return run


def test_rename_moves_the_folder_and_its_config_follows(tmp_path: Path) -> None:
    runner = JobRunner(tmp_path / "runs")
    run = _run(tmp_path / "runs", "latest-1")
    moved = rename_run(runner, str(run.path), "gemma-reviews-try2")
    assert moved.path == (tmp_path / "runs" / "gemma-reviews-try2").resolve() and not run.path.exists()
    assert RunConfig.load(moved.config).output_dir == str(moved.path)
    _run(tmp_path / "runs", "other")
    for bad in ("other", "../escape", "a/b", "", ".."):
        with pytest.raises(StudioError):
            rename_run(runner, str(moved.path), bad)
    assert moved.path.is_dir()


def test_delete_only_runs_in_the_runs_folder(tmp_path: Path) -> None:
    runner = JobRunner(tmp_path / "runs")
    a, b = _run(tmp_path / "runs", "a"), _run(tmp_path / "runs", "b")
    outside = tmp_path / "keep"
    outside.mkdir()
    (outside / "config.yaml").write_text("{}")
    nested = _run(tmp_path / "runs" / "a", "inner")  # a folder below a run is not a run of this list
    for bad in ([str(outside)], [str(a.path), str(outside)], [str(tmp_path / "runs")], [str(nested.path)],
                [str(tmp_path / "runs" / ".." / "keep")]):
        with pytest.raises(StudioError, match="is not a run in this studio's runs folder"):
            delete_runs(runner, bad)
    assert outside.is_dir() and a.path.is_dir()  # nothing is deleted when one of them is refused
    assert delete_runs(runner, [str(a.path), str(b.path)]) == 2
    assert not a.path.exists() and not b.path.exists()


def test_the_run_training_now_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = JobRunner(tmp_path / "runs")
    run = _run(tmp_path / "runs", "busy")
    monkeypatch.setattr(JobRunner, "busy", property(lambda self: True))
    monkeypatch.setattr(JobRunner, "current", property(lambda self: run))
    with pytest.raises(StudioError, match="is training now"):
        delete_runs(runner, [str(run.path)])
    with pytest.raises(StudioError, match="is training now"):
        rename_run(runner, str(run.path), "x")
    assert run.path.is_dir()


NAMES_REFUSED = ["<img src=x onerror=alert(1)>", "a b", "-rf", ".hidden", "~home", "x;rm", "a\u200bb", "é\ud800"]
NAMES_ACCEPTED = ["gemma-reviews_try2.1", "模型-第二次", "run~2", "_scratch"]


def test_a_run_name_is_accepted_or_refused_by_the_rule_its_message_states(tmp_path: Path) -> None:
    """A run renamed to ``<img …>`` was accepted while the refusal of other names said "letters, digits, '-', '_'
    or '.'": the rule applied is the rule stated, for every name."""
    from studio.words.render import words_of
    runner = JobRunner(tmp_path / "runs")
    run = _run(tmp_path / "runs", "latest-1")
    for bad in NAMES_REFUSED:
        with pytest.raises(StudioError) as err:
            rename_run(runner, str(run.path), bad)
        assert "letters, digits, '-', '_', '.' or '~'" in err.value.message, err.value.message
        err.value.text("zh", "page").encode("utf-8")  # a refused name is quoted as text that can be sent back
    assert run.path.is_dir() and sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["latest-1"]
    for good in NAMES_ACCEPTED:
        run = rename_run(runner, str(run.path), good)
        assert run.path.name == good
    for code in ("name.plain", "name.file", "name.export", "name.run"):  # the lenient rule claims no charset
        assert "letters" not in words_of(f"{code}.fix", "en", "cli"), code
