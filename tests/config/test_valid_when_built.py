"""A RunConfig is valid when it is built, as TRL's SFTConfig checks itself on construction.

Every way of making one (the dataclass itself, ``from_dict``, a YAML file, ``--set``, ``replace``,
``dataclasses.replace``, a Draft's ``build``, the Settings form, the run queue's file) ends in its ``__post_init__``,
which refuses with every problem at once; a built one cannot be changed in place. So nothing that is handed a
RunConfig checks it again: the run queue, the job runner, the training child (which reads config.yaml back by the
same construction, with no digest from its parent) and the engine trust it. What is being edited is a ``Draft``.
"""
from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from studio.app import form_values
from studio.app.context import AppContext
from studio.config import run_config
from studio.config.run_config import Draft, RunConfig
from studio.errors import ConfigError, StudioError
from studio.runs import queue as run_queue

GOOD = {"dataset": "d.jsonl"}
BAD_LR = {"dataset": "d.jsonl", "learning_rate": 3.0}  # a value of the right type that no rule accepts


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# every door a RunConfig is made through, each asked for one with learning_rate 3.0
DOORS: dict[str, Callable[[Path], Any]] = {
    "RunConfig(...)": lambda tmp: RunConfig(**BAD_LR),
    "from_dict": lambda tmp: RunConfig.from_dict(BAD_LR),
    "load (YAML)": lambda tmp: RunConfig.load(_yaml(tmp, "dataset: d.jsonl\nlearning_rate: 3.0\n")),
    "load --set": lambda tmp: RunConfig.load(_yaml(tmp, "dataset: d.jsonl\n"), ["learning_rate=3.0"]),
    "replace": lambda tmp: RunConfig(**GOOD).replace(learning_rate=3.0),
    "dataclasses.replace": lambda tmp: dataclasses.replace(RunConfig(**GOOD), learning_rate=3.0),
    "Draft.build": lambda tmp: Draft(**BAD_LR).build(),
    "the Settings form": lambda tmp: form_values.values_to_config(
        form_values.config_to_values(Draft(**BAD_LR))),
}


@pytest.mark.parametrize("door", list(DOORS))
def test_no_door_makes_an_invalid_run_config(tmp_path: Path, door: str) -> None:
    with pytest.raises(ConfigError) as err:
        DOORS[door](tmp_path)
    assert [p.code for p in err.value.problems] == ["check.below"], err.value.problems  # type: ignore[attr-defined]
    assert "learning_rate" in err.value.message


def test_every_problem_comes_at_once_from_construction() -> None:
    with pytest.raises(ConfigError) as err:
        RunConfig(dataset="", learning_rate=3.0, bf16=True, fp16=True)
    codes = {p.code for p in err.value.problems}  # type: ignore[attr-defined]
    assert {"check.dataset_empty", "check.below", "check.bf16_fp16"} <= codes, codes


def test_a_built_config_cannot_change_in_place() -> None:
    cfg = RunConfig(**GOOD)
    with pytest.raises(dataclasses.FrozenInstanceError, match="replace"):
        cfg.learning_rate = 5.0
    assert cfg.learning_rate == 2e-4
    assert cfg.replace(learning_rate=1e-4).learning_rate == 1e-4  # a new one, checked as it is built
    cfg.notices = ["kept"]  # what is no field (notices, derived values, an improvement's lineage) may be set
    assert cfg.replace(seed=1).notices == ["kept"]


def test_there_is_no_check_after_construction() -> None:
    """The memo, its digest and the door-by-door check are gone: validity is the type."""
    for gone in ("check", "judged", "judged_before"):
        assert not hasattr(RunConfig, gone), gone
    assert not hasattr(run_config, "JUDGED_ENV")
    assert "_valid_as" not in vars(RunConfig(**GOOD))


def test_a_draft_holds_what_is_being_edited() -> None:
    """The Settings form, the estimate and the memory advice's candidates may be invalid while they are edited: a
    Draft lists its problems and builds the RunConfig once they are gone."""
    draft = Draft()
    assert [p.code for p in draft.validate()] == ["check.dataset_empty"]  # type: ignore[attr-defined]
    assert type(draft.replace(learning_rate=3.0)) is Draft
    built = draft.replace(dataset="d.jsonl").build()
    assert type(built) is RunConfig and built.dataset == "d.jsonl"
    assert type(built.draft()) is Draft and not isinstance(draft, RunConfig)


def test_the_queue_file_is_read_by_the_same_construction(tmp_path: Path) -> None:
    """A queue.json edited by hand (or written by an older studio) cannot put an invalid run in the queue."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / run_queue.FILE).write_text('[{"dataset": "d.jsonl", "learning_rate": 3.0}, {"dataset": "d.jsonl"}]')
    ctx = SimpleNamespace(workspace=ws, runner=SimpleNamespace(snapshot=lambda: {"busy": True}), extra={})
    assert run_queue.waiting(ctx) == 1  # the invalid one is dropped (logged), the valid one waits


@pytest.fixture
def rule_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every run of config/checks.py's rules, by the function that asked for it."""
    seen: list[str] = []
    real = run_config.problems

    def counted(cfg: Any) -> list[str]:
        seen.append(inspect.stack()[1].function)
        return real(cfg)
    monkeypatch.setattr(run_config, "problems", counted)
    return seen


def test_from_the_page_to_the_trainer_only_construction_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              rule_runs: list[str]) -> None:
    """Both processes of a page's run: Start builds the form's RunConfig, the one hand-over (runs/queue.submit)
    gives it to the job runner, which writes it and starts the child with no word of what was checked; the child
    builds it again from config.yaml (a file may change on disk) and hands it to the trainer. The rules run only
    where a config is built: no door checks one it was given."""
    import importlib
    from studio.ui.train_tab import start_run
    ctx = AppContext.create(tmp_path / "ws")
    data = ctx.data_root / "d.jsonl"
    data.write_text('{"instruction": "hi", "input": "", "output": "yes"}\n' * 8, encoding="utf-8")
    children: list[dict[str, str]] = []
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()

    class Child:  # the runner's Popen: the environment it would start the child with, and no child
        def __init__(self, cmd: list[str], env: dict[str, str], **_: Any) -> None:
            children.append({"cmd": cmd, "env": env})
            self.pid = ended.pid
    monkeypatch.setattr(subprocess, "Popen", Child)
    monkeypatch.setattr(ctx.runner, "_supervise", lambda: None)  # nobody waits for (or signals) the fake child
    start_run(ctx, form_values.config_to_values(Draft(dataset=str(data), learning_rate=3e-4)))
    assert len(children) == 1 and rule_runs and set(rule_runs) == {"__post_init__"}, rule_runs
    assert not [k for k in children[0]["env"] if "JUDGED" in k]  # nothing about the config travels beside the file
    cmd = children[0]["cmd"]
    assert cmd[1] == "-m", cmd
    child = importlib.import_module(cmd[2] + ".__main__")  # the door the runner's child goes through
    handed: list[Any] = []

    def trainer(cfg: Any, resume_from: str | None = None) -> dict[str, Any]:
        handed.append(cfg)
        return {"state": "finished", "step": 0}
    monkeypatch.setattr(child, "run_training", trainer)

    def derive(*_: Any, **__: Any) -> Any:
        raise AssertionError("the job runner's config.yaml names every field: nothing is left to derive")
    monkeypatch.setattr("studio.autoconfig.fill_unset", derive)
    path = next(Path(ctx.runs_root).glob("*/config.yaml"))
    rule_runs.clear()
    assert child.main([str(path)]) == 0
    assert rule_runs == ["__post_init__"]  # the child's one construction, and no check of what it built
    assert type(handed[0]) is RunConfig and handed[0].learning_rate == 3e-4
    # the same child given a config.yaml changed on disk since: refused as it is built
    path.write_text(path.read_text(encoding="utf-8").replace("0.0003", "3.0"), encoding="utf-8")
    with pytest.raises(ConfigError, match="learning_rate"):
        child.train_file(str(path), None)


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[AppContext, list[Any], Path]:
    ctx = AppContext.create(tmp_path / "ws")
    data = ctx.data_root / "d.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text('{"instruction": "hi", "input": "", "output": "yes"}\n', encoding="utf-8")
    launched: list[Any] = []

    def launch(run: Any, resume: str | None, started_by: str | None = None, settings: str | None = None) -> Any:
        launched.append(run)  # no child: count, not train
        ctx.runner._run = run
        return run
    monkeypatch.setattr(ctx.runner, "_launch", launch)
    return ctx, launched, data


def test_the_page_start_hands_over_the_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.ui.train_tab import start_run
    ctx, launched, data = _page(tmp_path, monkeypatch)
    start_run(ctx, form_values.config_to_values(Draft(dataset=str(data), learning_rate=3e-4)))
    assert len(launched) == 1, "the run was not handed to the runner"
    assert RunConfig.load(launched[0].config).learning_rate == 3e-4


def test_the_page_refuses_a_bad_learning_rate_in_its_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                rule_runs: list[str]) -> None:
    from studio.ui.common import error_text
    from studio.ui.train_tab import start_run
    ctx, launched, data = _page(tmp_path, monkeypatch)
    values = form_values.config_to_values(Draft(dataset=str(data), learning_rate=3.0))
    with pytest.raises(StudioError) as err:
        start_run(ctx, values)
    assert launched == [] and rule_runs == ["__post_init__"]
    text = error_text(err.value, "start", "en")
    assert "Learning rate" in text and "learning_rate" not in text and "--set" not in text, text
