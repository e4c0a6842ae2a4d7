"""Who started a run and who stopped it (per-user state): recorded in the run folder by the job runner,
shown on the Train tab's status and in both run tables, in English and Chinese; without a login nothing is
recorded and the tables show a dash."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from studio.config.run_config import RunConfig
from studio.runs.jobs import JobRunner
from studio.runs.run_dir import RunDir
from studio.runs import queue as run_queue
from studio.ui.runs_tab import table_rows
from studio.ui.train_tab import runs_rows, status_markdown


class SleepRunner(JobRunner):
    """A child that sleeps instead of training (the attribution is the runner's, not the engine's)."""

    def command(self, run: RunDir, resume: str | None) -> list[str]:
        return [sys.executable, "-c", "import time; time.sleep(30)", "studio", str(run.config)]


def _cfg(tmp_path: Path, name: str) -> RunConfig:
    return RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / name))


def test_the_run_folder_records_who_started_and_who_stopped_it(tmp_path: Path) -> None:
    runner = SleepRunner(tmp_path / "runs", grace_s=0.3, poll_s=0.05)
    run = runner.start(_cfg(tmp_path, "a"), by="alice")
    assert run.read_status()["started_by"] == "alice"
    assert runner.snapshot()["started_by"] == "alice"
    assert runner.abort(by="bob") and runner.wait(10) == "aborted"
    status = json.loads(run.status_file.read_text())
    assert status["started_by"] == "alice" and status["stopped_by"] == "bob"
    assert status["reason"].startswith("stopped on request by bob")
    snap = runner.snapshot()
    assert snap["started_by"] == "alice" and snap["stopped_by"] == "bob"
    en, zh = status_markdown(snap, "en"), status_markdown(snap, "zh")
    assert "Started by **alice**" in en and "stopped by **bob**" in en
    assert "由 **alice** 开始" in zh and "由 **bob** 停止" in zh
    past = runner.past_runs()[0]
    assert past["started_by"] == "alice" and past["stopped_by"] == "bob"
    # a later resume by someone else keeps the starter (the run is still alice's)
    assert JobRunner(tmp_path / "runs").past_runs()[0]["started_by"] == "alice"


def test_without_a_login_nothing_is_recorded_and_the_tables_show_a_dash(tmp_path: Path) -> None:
    runner = SleepRunner(tmp_path / "runs", grace_s=0.3, poll_s=0.05)
    run = runner.start(_cfg(tmp_path, "solo"))
    assert runner.abort() and runner.wait(10) == "aborted"
    status = run.read_status()
    assert "started_by" not in status and "stopped_by" not in status
    snap = runner.snapshot()
    for lang in ("en", "zh"):
        text = status_markdown(snap, lang)
        assert "Started by" not in text and "stopped by" not in text and "开始" not in text.split("\n\n")[0]
    ctx = SimpleNamespace(runner=runner, lang="en")
    row = runs_rows(ctx)[0]  # type: ignore[arg-type]
    assert row[-1] == "—"


def test_both_run_tables_have_a_started_by_column(tmp_path: Path) -> None:
    from studio.ui.i18n import headers
    runner = SleepRunner(tmp_path / "runs", grace_s=0.3, poll_s=0.05)
    runner.start(_cfg(tmp_path, "a"), by="alice")
    assert runner.abort(by="alice") and runner.wait(10) == "aborted"
    for lang, word in (("en", "started by"), ("zh", "发起人")):
        ctx = SimpleNamespace(runner=runner, lang=lang)
        train_headers = headers("runs_headers", lang)
        assert train_headers[-1] == word and runs_rows(ctx)[0][-1] == "alice"  # type: ignore[arg-type]
        runs_headers = headers("runs.headers", lang)
        assert word in runs_headers
        rows = table_rows([{**runner.past_runs()[0], "accuracy": None, "seconds": None, "when": ""}], lang)
        assert rows[0][runs_headers.index(word)] == "alice" and len(rows[0]) == len(runs_headers)
        rows = table_rows([{**runner.past_runs()[0], "accuracy": None, "seconds": None, "when": "",
                            "started_by": None}], lang)
        assert rows[0][runs_headers.index(word)] == "—"


class _QueueRunner:
    def __init__(self) -> None:
        self.started: list[tuple[str, str | None]] = []
        self.busy = False

    def snapshot(self) -> dict[str, Any]:
        return {"busy": self.busy}

    def start(self, cfg: RunConfig, *, by: str | None = None, settings: str | None = None) -> Any:
        self.busy = True
        self.started.append((cfg.output_dir, by))
        return SimpleNamespace(path=Path(cfg.output_dir))


def test_a_queued_run_is_started_in_the_name_of_who_queued_it(tmp_path: Path) -> None:
    """The poll that starts a queued run comes from whichever page ticks first: the starter travels with the run,
    also through queue.json (a restarted server)."""
    runner = _QueueRunner()
    ctx = SimpleNamespace(runner=runner, extra={}, workspace=tmp_path)
    same = lambda c: c  # noqa: E731
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="a"), same, by="alice") == 0
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="b"), same, by="carol") == 1
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="c"), same) == 2
    again = SimpleNamespace(runner=runner, extra={}, workspace=tmp_path)  # the server restarted
    runner.busy = False
    assert run_queue.start_next(again, same) == "b"
    runner.busy = False
    assert run_queue.start_next(again, same) == "c"
    assert runner.started == [("a", "alice"), ("b", "carol"), ("c", None)]


def test_a_fresh_run_starts_while_the_runner_rewrites_its_status(tmp_path: Path) -> None:
    """Seen in the two-user browser test on a loaded machine: the child's output_dir check ran while the job runner
    wrote the pid into status.json (atomic_write_text's '.status.json.<random>' beside it), took the temp file for
    a second run and refused to train ("already holds a run (starting)")."""
    from studio.cli.train import guard_output_dir
    run = RunDir(tmp_path / "runs" / "r").ensure()
    cfg = _cfg(tmp_path, "r")
    cfg.save(run.config)
    run.write_status("starting", reason="", pid=None, started_by="alice")
    run.stdout.write_text("")
    (run.path / ".status.json.k2j4x9").write_text("{}")
    guard_output_dir(cfg, str(run.config), None)  # no error: the runner's own prepared folder


def test_a_viewer_polling_an_idle_runner_is_not_told_to_press_start(tmp_path: Path) -> None:
    """The idle status is worded for the login the tick answers: an owner is told to press Start, a viewer (who
    cannot) is told what the page is for them."""
    from studio.app.context import AppContext
    from studio.ui.train_tab import poll
    ctx = AppContext.create(tmp_path / "ws")
    ctx.extra["roles"] = {"vera": "viewer", "olga": "owner"}
    owner = poll(ctx.answering(lang="en", user="olga"), None)[0]
    viewer = poll(ctx.answering(lang="en", user="vera"), None)[0]
    assert "Press **Start**" in owner
    assert "Press" not in viewer and "viewer" in viewer, viewer
    assert "Press **Start**" in status_markdown({"state": "idle"}, "en")  # no login: the owner's words
