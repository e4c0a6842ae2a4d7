"""Start while a run is going queues the next one (issue 13, Runs): order kept, started when idle, clearable."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from studio.config import RunConfig
from studio.errors import StudioError
from studio.ui import run_queue


class FakeRunner:
    """One run at a time, like studio.jobs.JobRunner; ``finish()`` ends the current one."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.busy = False

    def snapshot(self) -> dict[str, Any]:
        return {"busy": self.busy}

    def start(self, cfg: RunConfig) -> Any:
        if self.busy:
            raise StudioError("A training run is already going", "wait", code="busy")
        self.busy = True
        self.started.append(cfg.output_dir)
        return SimpleNamespace(path=Path(cfg.output_dir))

    def finish(self) -> None:
        self.busy = False


def test_start_while_busy_queues_and_the_poll_starts_them_in_order() -> None:
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    same = lambda c: c  # noqa: E731
    assert run_queue.start_or_queue(ctx, RunConfig(output_dir="a"), same) == 0
    assert run_queue.start_or_queue(ctx, RunConfig(output_dir="b"), same) == 1
    assert run_queue.start_or_queue(ctx, RunConfig(output_dir="c"), same) == 2
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
    assert run_queue.start_or_queue(ctx, RunConfig(output_dir="x"), lambda c: c) == 1


def test_clear_forgets_the_queue() -> None:
    runner = FakeRunner()
    ctx = SimpleNamespace(runner=runner, extra={})
    for name in ("a", "b", "c"):
        run_queue.start_or_queue(ctx, RunConfig(output_dir=name), lambda c: c)
    assert run_queue.clear(ctx) == 2
    runner.finish()
    assert run_queue.start_next(ctx, lambda c: c) is None and runner.started == ["a"]
