"""Start while a run is going queues the next one, instead of refusing.

The job runner trains one run at a time (the card's memory belongs to that run). A person who
has two ideas to try should not have to wait by the page to press Start again, so the page keeps
a first-in-first-out list of configs and starts the next one when the runner is idle. It lives
in the server (``ctx.extra``), next to the runner, so every browser sees the same queue, and in
the workspace (``queue.json``, rewritten atomically on every change), so a restarted server still
starts the runs a person queued; ``watch`` starts them even with no page open.
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, Callable, Protocol

from ..config.run_config import RunConfig
from ..errors import StudioError
from ..workspace import atomic_write_text
from .jobs import JobRunner



class QueueHost(Protocol):
    """What the queue needs of the server that keeps it: its workspace (queue.json), its one job runner, and a
    place for server-side state (``extra``) that every browser shares."""
    workspace: Path
    runner: JobRunner
    extra: dict[str, Any]


_LOCK = threading.Lock()
FILE = "queue.json"
BY_KEY = "_started_by"  # queue.json only: who pressed Start (not a RunConfig key)
log = logging.getLogger("studio.runs")


def _file(ctx: QueueHost) -> Path | None:
    ws = getattr(ctx, "workspace", None)
    return Path(ws) / FILE if ws else None


def _restore(ctx: QueueHost) -> list[RunConfig]:
    """The queue a previous server left in the workspace (a run that no longer loads is dropped, logged)."""
    path = _file(ctx)
    if path is None or not path.exists():
        return []
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("ignoring the unreadable run queue %s: %s", path, exc)
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        try:
            item = dict(item)
            by = item.pop(BY_KEY, None)
            out.append(_mark(RunConfig.from_dict(item, source=str(path)), by if isinstance(by, str) else None))
        except (StudioError, TypeError, ValueError) as exc:
            log.warning("dropping a queued run that no longer loads: %s", exc)
    return out


def _mark(cfg: RunConfig, by: str | None) -> RunConfig:
    """The login that queued ``cfg`` travels with it: the run starts later, from whichever page polls first."""
    object.__setattr__(cfg, "_studio_started_by", by)
    return cfg


def _by(cfg: RunConfig) -> str | None:
    return getattr(cfg, "_studio_started_by", None)


def _entry(cfg: RunConfig) -> dict:
    by = _by(cfg)
    return {**cfg.to_dict(), **({BY_KEY: by} if by else {})}


def _save(ctx: QueueHost) -> None:
    path = _file(ctx)
    if path is None:
        return
    try:
        atomic_write_text(path, json.dumps([_entry(c) for c in _queue(ctx)], ensure_ascii=False, indent=1))
    except OSError as exc:  # a full disk must not stop the run itself from starting
        log.warning("cannot keep the run queue in %s: %s", path, exc)


def _queue(ctx: QueueHost) -> list[RunConfig]:
    if "queue" not in ctx.extra:
        ctx.extra["queue"] = _restore(ctx)
    return ctx.extra["queue"]


def start_or_queue(ctx: QueueHost, cfg: RunConfig, resolve: Callable[[RunConfig], RunConfig],
                   by: str | None = None) -> int:
    """Start ``cfg`` now (returns 0) or, while a run is going, queue it (returns its place, 1 = next).

    ``by`` is the login that pressed Start: the run records it as its starter, also when it starts later.

    ``resolve`` turns the form's config into the run's (absolute paths, a fresh run folder); it is
    applied when the run really starts, so a queued run never reuses a folder made in between.

    Raises:
        StudioError: anything but "a run is already going" (bad paths, a used folder, ...).
    """
    cfg = _mark(cfg, by)
    with _LOCK:
        if _queue(ctx) or ctx.runner.snapshot().get("busy"):
            _queue(ctx).append(cfg)
            _save(ctx)
            return len(_queue(ctx))
        try:
            ctx.runner.start(resolve(cfg), by=by)
        except StudioError as exc:
            if exc.code != "busy":  # another browser started one a moment ago: wait behind it
                raise
            _queue(ctx).append(cfg)
            _save(ctx)
            return len(_queue(ctx))
    return 0


def start_next(ctx: QueueHost, resolve: Callable[[RunConfig], RunConfig]) -> str | None:
    """Start the first queued run when the runner is idle (called by the status poll); its folder name."""
    with _LOCK:
        if not _queue(ctx) or ctx.runner.snapshot().get("busy"):
            return None
        cfg = _queue(ctx).pop(0)
        _save(ctx)
        try:
            return ctx.runner.start(resolve(cfg), by=_by(cfg)).path.name
        except StudioError:
            return None  # e.g. its data was deleted meanwhile: drop it rather than retry forever


def waiting(ctx: QueueHost) -> int:
    with _LOCK:
        return len(_queue(ctx))


def clear(ctx: QueueHost) -> int:
    """Forget every queued run; how many there were."""
    with _LOCK:
        n = len(_queue(ctx))
        _queue(ctx).clear()
        _save(ctx)
    return n


def watch(ctx: QueueHost, resolve: Callable[[RunConfig], RunConfig], every_s: float = 2.0) -> threading.Event:
    """Start queued runs in the background, with or without a page open; set the returned event to stop."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                start_next(ctx, resolve)
            except Exception:  # keep watching: one bad moment must not end the queue for good
                log.exception("the run queue could not start the next run")

    threading.Thread(target=loop, name="run-queue", daemon=True).start()
    return stop


__all__ = ["clear", "start_next", "start_or_queue", "waiting", "watch"]
