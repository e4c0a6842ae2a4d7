"""A config's rules run once on its way from the Settings form to TrainingArguments.

Each door a config passes asks whether it is valid (the page's Start, the job runner, the training child's command
line, ``run_training`` for Python callers), but the rules of config/checks.py run once per content: they read
nothing but the fields, so a config found valid is not checked again until a field changes. The training child is
another process that reads config.yaml from disk: the job runner hands it the digest of the content it judged, and
the child judges only what differs from it.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from studio.app import form_values
from studio.app.context import AppContext
from studio.config import run_config
from studio.config.run_config import RunConfig
from studio.errors import ConfigError, StudioError


@pytest.fixture
def rule_runs(monkeypatch: pytest.MonkeyPatch) -> list[RunConfig]:
    """Every run of config/checks.py's rules, by the config it judged."""
    seen: list[RunConfig] = []
    real = run_config.problems

    def counted(cfg: RunConfig) -> list[str]:
        seen.append(cfg)
        return real(cfg)
    monkeypatch.setattr(run_config, "problems", counted)
    return seen


def test_a_valid_config_is_checked_once_until_a_field_changes(rule_runs: list[RunConfig]) -> None:
    cfg = RunConfig(dataset="d.jsonl")
    assert cfg.check() is cfg and cfg.check() is cfg
    assert len(rule_runs) == 1
    cfg.learning_rate = 5.0  # a field changed after the check: judged again, and refused
    with pytest.raises(ConfigError, match="learning_rate"):
        cfg.check()
    with pytest.raises(ConfigError):  # an invalid config is never remembered as valid
        cfg.check()
    assert len(rule_runs) == 3
    cfg.learning_rate = 1e-4
    cfg.check()
    assert len(rule_runs) == 4
    assert "_valid_as" not in cfg.to_dict() and "_valid_as" not in cfg.to_yaml()


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[AppContext, list[Any]]:
    ctx = AppContext.create(tmp_path / "ws")
    data = ctx.data_root / "d.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text('{"instruction": "hi", "input": "", "output": "yes"}\n', encoding="utf-8")
    launched: list[Any] = []

    def launch(run: Any, resume: str | None, started_by: str | None = None, judged: str | None = None,
               settings: str | None = None) -> Any:
        # no child: count, not train
        launched.append(run)
        ctx.runner._run = run
        return run
    monkeypatch.setattr(ctx.runner, "_launch", launch)
    return ctx, [launched, data]


def test_the_page_start_runs_the_rules_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            rule_runs: list[RunConfig]) -> None:
    from studio.ui.train_tab import start_run
    ctx, (launched, data) = _page(tmp_path, monkeypatch)
    values = form_values.config_to_values(RunConfig(dataset=str(data), learning_rate=3e-4))
    start_run(ctx, values)
    assert len(launched) == 1, "the run was not handed to the runner"
    assert len(rule_runs) == 1, [c.output_dir for c in rule_runs]
    assert RunConfig.load(launched[0].config).learning_rate == 3e-4


def test_the_page_refuses_a_bad_learning_rate_in_its_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                rule_runs: list[RunConfig]) -> None:
    from studio.ui.common import error_text
    from studio.ui.train_tab import start_run
    ctx, (launched, data) = _page(tmp_path, monkeypatch)
    values = form_values.config_to_values(RunConfig(dataset=str(data), learning_rate=3.0))
    with pytest.raises(StudioError) as err:
        start_run(ctx, values)
    assert launched == [] and len(rule_runs) == 1
    text = error_text(err.value, "start", "en")
    assert "Learning rate" in text and "learning_rate" not in text and "--set" not in text, text


def test_the_training_child_runs_the_rules_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                rule_runs: list[RunConfig]) -> None:
    """The child's command line checks the config.yaml it read; ``run_training`` is handed that config and does
    not judge it again (its own check stays for Python callers)."""
    from studio.cli import train
    from studio.engine import run as engine_run
    handed: list[RunConfig] = []

    def stop_after_the_check(cfg: RunConfig, resume_from: str | None = None) -> dict[str, Any]:
        handed.append(cfg)
        cfg.check()  # run_training's first line
        return {"state": "finished", "step": 0}
    monkeypatch.setattr(train, "run_training", stop_after_the_check)  # the name the command line calls
    assert "cfg.check()" in Path(engine_run.__file__).read_text(encoding="utf-8")
    path = tmp_path / "run" / "config.yaml"
    path.parent.mkdir()
    data = tmp_path / "d.jsonl"
    data.write_text('{"instruction": "hi", "input": "", "output": "yes"}\n' * 8, encoding="utf-8")
    RunConfig(dataset=str(data), output_dir=str(path.parent)).save(path)  # as the job runner writes it: every key
    args = argparse.Namespace(config=str(path), overrides=[], resume=None, nproc=None, quiet=True)
    assert train.main(args) == 0
    assert len(handed) == 1 and len(rule_runs) == 1


def _child_args(path: Path) -> argparse.Namespace:
    return argparse.Namespace(config=str(path), overrides=[], resume=None, nproc=None, quiet=True)


def test_from_the_page_to_the_trainer_the_rules_run_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         rule_runs: list[RunConfig]) -> None:
    """Both processes of a page's run: Start judges the form's config in the server; the job runner writes it and
    starts the child with the digest of what it judged; the child reads config.yaml back and does not judge it
    again, up to the trainer (``run_training`` is handed a config already known valid)."""
    import subprocess
    from studio.cli import train
    from studio.config.run_config import JUDGED_ENV
    from studio.ui.train_tab import start_run
    ctx = AppContext.create(tmp_path / "ws")
    data = ctx.data_root / "d.jsonl"
    data.write_text('{"instruction": "hi", "input": "", "output": "yes"}\n' * 8, encoding="utf-8")
    children: list[dict[str, str]] = []

    ended = subprocess.Popen(["true"])
    ended.wait()

    class Child:  # the runner's Popen: the environment it would start the child with, and no child
        def __init__(self, cmd: list[str], env: dict[str, str], **_: Any) -> None:
            children.append(env)
            self.pid = ended.pid
    monkeypatch.setattr(subprocess, "Popen", Child)
    monkeypatch.setattr(ctx.runner, "_supervise", lambda: None)  # nobody waits for (or signals) the fake child
    run = start_run(ctx, form_values.config_to_values(RunConfig(dataset=str(data), learning_rate=3e-4)))
    assert len(children) == 1 and len(rule_runs) == 1
    handed: list[RunConfig] = []

    def trainer(cfg: RunConfig, resume_from: str | None = None) -> dict[str, Any]:
        handed.append(cfg)
        cfg.check()  # run_training's first line
        return {"state": "finished", "step": 0}
    monkeypatch.setattr(train, "run_training", trainer)
    monkeypatch.setenv(JUDGED_ENV, children[0][JUDGED_ENV])  # the child's environment
    config = Path(ctx.runs_root).glob("*/config.yaml")
    path = next(config)
    assert train.main(_child_args(path)) == 0
    assert len(rule_runs) == 1 and handed[0].learning_rate == 3e-4
    # the same child given a config.yaml changed on disk since (or a digest of something else) judges it
    path.write_text(path.read_text(encoding="utf-8").replace("0.0003", "3.0"), encoding="utf-8")
    with pytest.raises(ConfigError, match="learning_rate"):
        train.main(_child_args(path))
    assert len(rule_runs) == 2
