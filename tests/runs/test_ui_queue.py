"""Start while a run is going queues the next one: order kept, started when idle, clearable."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs import queue as run_queue


class FakeRunner:
    """One run at a time, like studio.runs.jobs.JobRunner; ``finish()`` ends the current one."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.busy = False

    def snapshot(self) -> dict[str, Any]:
        return {"busy": self.busy}

    def start(self, cfg: RunConfig, *, by: str | None = None, settings: str | None = None) -> Any:
        if self.busy:
            raise StudioError.of("run.busy", name="another")  # as the real runner refuses
        self.busy = True
        self.started.append(cfg.output_dir)
        return SimpleNamespace(path=Path(cfg.output_dir))

    def finish(self) -> None:
        self.busy = False


def test_start_while_busy_queues_and_the_poll_starts_them_in_order() -> None:
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    same = lambda c: c  # noqa: E731
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="a"), same) == 0
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="b"), same) == 1
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="c"), same) == 2
    assert run_queue.start_next(ctx, same) is None and runner.started == ["a"]  # still busy
    runner.finish()
    assert run_queue.start_next(ctx, same) == "b" and run_queue.waiting(ctx) == 1
    runner.finish()
    assert run_queue.start_next(ctx, same) == "c" and runner.started == ["a", "b", "c"]


def test_a_race_with_another_browser_queues_instead_of_refusing() -> None:
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    runner.snapshot = lambda: {"busy": False}  # the other press started between our check and our start
    runner.busy = True
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="x"), lambda c: c) == 1


def test_clear_forgets_the_queue() -> None:
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    for name in ("a", "b", "c"):
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir=name), lambda c: c)
    assert run_queue.clear(ctx) == 2
    runner.finish()
    assert run_queue.start_next(ctx, lambda c: c) is None and runner.started == ["a"]


def test_the_queue_survives_a_server_restart_and_starts_without_a_page(tmp_path: Path) -> None:
    """The queue is kept in the workspace; a new server (a new AppContext on the same
    workspace) restores it and its watcher starts the next run with no browser polling."""
    import json
    import time
    from studio.app.context import AppContext
    first = FakeRunner()
    first.busy = True  # a run is going when the person queues two more
    ctx = AppContext.create(tmp_path / "ws", runner=first)  # type: ignore[arg-type]
    same = lambda c: c  # noqa: E731
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="b", learning_rate=3e-4), same) == 1
    assert run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="c"), same) == 2
    kept = json.loads((tmp_path / "ws" / run_queue.FILE).read_text())
    assert [c["output_dir"] for c in kept] == ["b", "c"]
    assert not list((tmp_path / "ws").glob(".queue.json.*"))  # atomic write: no temp file left behind

    # the server restarts: a new context (and runner) on the same workspace
    runner = FakeRunner()
    again = AppContext.create(tmp_path / "ws", runner=runner)  # type: ignore[arg-type]
    assert run_queue.waiting(again) == 2
    assert run_queue._queue(again)[0].learning_rate == 3e-4  # the queued settings themselves, not defaults
    stop = run_queue.watch(again, same, every_s=0.05)
    try:
        deadline = time.time() + 10
        while not runner.started and time.time() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
    assert runner.started == ["b"] and run_queue.waiting(again) == 1
    assert [c["output_dir"] for c in json.loads((tmp_path / "ws" / run_queue.FILE).read_text())] == ["c"]
    assert run_queue.clear(again) == 1
    assert json.loads((tmp_path / "ws" / run_queue.FILE).read_text()) == []
    assert run_queue.waiting(AppContext.create(tmp_path / "ws", runner=FakeRunner())) == 0  # type: ignore[arg-type]


def test_an_unreadable_queue_file_is_ignored(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / run_queue.FILE).write_text("{not json")
    ctx = AppContext.create(tmp_path / "ws", runner=FakeRunner())  # type: ignore[arg-type]
    assert run_queue.waiting(ctx) == 0
    (tmp_path / "ws" / run_queue.FILE).write_text('[{"output_dir": "ok", "dataset": "d.jsonl"}, {"no_such_key": 1}]')
    assert run_queue.waiting(AppContext.create(tmp_path / "ws", runner=FakeRunner())) == 1  # type: ignore[arg-type]


def test_a_queued_config_is_judged_when_queued_not_when_its_turn_comes() -> None:
    """Nothing invalid reaches the queue: the config is refused as it is built, before Start hands it over."""
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="a"), lambda c: c)
    with pytest.raises(StudioError, match="learning_rate"):
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="b", learning_rate=3.0), lambda c: c)
    assert run_queue.waiting(ctx) == 0


def test_start_with_the_settings_of_the_running_run_names_it(tmp_path: Path) -> None:
    """The run that trains counts as queued: the same settings started again (by anyone, also after a server
    restart: the key is kept in the run's status.json) are answered "already running" with its name, not
    queued as a full duplicate; other settings still queue."""
    from studio.runs.run_dir import RunDir

    class Runner(FakeRunner):
        def snapshot(self) -> dict[str, Any]:
            return {"busy": self.busy, "run": self.started[-1] if self.busy else None}

        def start(self, cfg: RunConfig, *, by: str | None = None, settings: str | None = None) -> Any:
            run = super().start(cfg, by=by)
            RunDir(run.path).ensure().write_status("running", settings_key=settings)
            return run

    runner = Runner()
    ctx = SimpleNamespace(runner=runner, extra={})
    form = RunConfig(dataset="d.jsonl", output_dir=str(tmp_path / "news"))
    assert run_queue.submit(ctx, form, lambda c: c, by="ann") == 0
    restarted = SimpleNamespace(runner=runner, extra={})  # a new server: nothing remembered in memory
    for who in ("ann", "bob"):
        with pytest.raises(StudioError) as refused:
            run_queue.submit(restarted, form, lambda c: c, by=who)
        assert refused.value.code == "run.already_running" and refused.value.values["name"] == "news"
    assert run_queue.waiting(restarted) == 0
    other = RunConfig(dataset="d.jsonl", output_dir=str(tmp_path / "news"), learning_rate=1e-4)
    assert run_queue.submit(restarted, other, lambda c: c, by="ann") == 1


def test_a_queued_run_that_cannot_start_is_taken_off_and_said_on_every_page() -> None:
    """Its turn came and it could not start (its base model deleted meanwhile): it leaves the queue, since it would
    fail again at every tick, and the page says which and why in its own words, instead of it vanishing."""
    from studio.ui.train_tab import queue_lines
    from studio.words.error_words import page_message
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    same = lambda c: c  # noqa: E731
    run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="a"), same)
    run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir="b"), same)
    assert "1" in queue_lines(ctx, "en")
    runner.finish()
    refused = StudioError.of("app.model_missing", model="/models/gone", demo="tiny-demo")

    def gone(cfg: RunConfig) -> RunConfig:
        raise refused
    assert run_queue.start_next(ctx, gone) is None and run_queue.waiting(ctx) == 0
    for lang in ("en", "zh"):
        shown = queue_lines(ctx, lang)
        assert page_message(refused, lang) in shown, shown
    assert run_queue.start_next(ctx, same) is None and runner.started == ["a"]  # not tried again
