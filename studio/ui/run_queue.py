"""Start while a run is going queues the next one, instead of refusing.

The job runner trains one run at a time (the card's memory belongs to that run). A person who
has two ideas to try should not have to wait by the page to press Start again, so the page keeps
a first-in-first-out list of configs and starts the next one when the runner is idle. It lives
in the server (``ctx.extra``), next to the runner, so every browser sees the same queue; it is not
written to disk, so a restarted server starts with an empty queue (nothing starts by surprise).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..config import RunConfig
from ..errors import StudioError
from .context import AppContext

_LOCK = threading.Lock()


def _queue(ctx: AppContext) -> list[RunConfig]:
    return ctx.extra.setdefault("queue", [])


def start_or_queue(ctx: AppContext, cfg: RunConfig, resolve: Callable[[RunConfig], RunConfig]) -> int:
    """Start ``cfg`` now (returns 0) or, while a run is going, queue it (returns its place, 1 = next).

    ``resolve`` turns the form's config into the run's (absolute paths, a fresh run folder); it is
    applied when the run really starts, so a queued run never reuses a folder made in between.

    Raises:
        StudioError: anything but "a run is already going" (bad paths, a used folder, ...).
    """
    with _LOCK:
        if _queue(ctx) or ctx.runner.snapshot().get("busy"):
            _queue(ctx).append(cfg)
            return len(_queue(ctx))
        try:
            ctx.runner.start(resolve(cfg))
        except StudioError as exc:
            if exc.code != "busy":  # another browser started one a moment ago: wait behind it
                raise
            _queue(ctx).append(cfg)
            return len(_queue(ctx))
    return 0


def start_next(ctx: AppContext, resolve: Callable[[RunConfig], RunConfig]) -> str | None:
    """Start the first queued run when the runner is idle (called by the status poll); its folder name."""
    with _LOCK:
        if not _queue(ctx) or ctx.runner.snapshot().get("busy"):
            return None
        cfg = _queue(ctx).pop(0)
        try:
            return ctx.runner.start(resolve(cfg)).path.name
        except StudioError:
            return None  # e.g. its data was deleted meanwhile: drop it rather than retry forever


def waiting(ctx: AppContext) -> int:
    return len(_queue(ctx))


def clear(ctx: AppContext) -> int:
    """Forget every queued run; how many there were."""
    with _LOCK:
        n = len(_queue(ctx))
        _queue(ctx).clear()
    return n


__all__ = ["clear", "start_next", "start_or_queue", "waiting"]
