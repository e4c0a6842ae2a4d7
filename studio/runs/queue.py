"""Start while a run is going queues the next one, instead of refusing.

The job runner trains one run at a time (the card's memory belongs to that run). A person who
has two ideas to try should not have to wait by the page to press Start again, so the page keeps
a first-in-first-out list of configs and starts the next one when the runner is idle. It lives
in the server (``ctx.extra``), next to the runner, so every browser sees the same queue, and in
the workspace (``queue.json``, rewritten atomically on every change, the previous good copy kept as
``queue.json.bak``), so a restarted server still
starts the runs a person queued; ``watch`` starts them even with no page open.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from ..config.run_config import RunConfig
from ..errors import StudioError
from ..state_files import read_state, write_json_with_backup
from .jobs import JobRunner
from .run_dir import RunDir



class QueueHost(Protocol):
    """What the queue needs of the server that keeps it: its workspace (queue.json), its one job runner, and a
    place for server-side state (``extra``) that every browser shares."""
    workspace: Path
    runner: JobRunner
    extra: dict[str, Any]


_LOCK = threading.Lock()
# A shared server: one login pressing Start forty times must not fill the card for a day (40 Starts in 2.4 s
# were all queued), and a double click must not train the same settings twice.
MAX_QUEUED_PER_LOGIN = 5
SAME_START_S = 30.0   # a Start of the same settings by the same login within this is "already queued"
FILE = "queue.json"
DROPPED_SHOWN_S = 900.0   # how long every page says that a queued run could not start
BY_KEY = "_started_by"  # queue.json only: who pressed Start (not a RunConfig key)
log = logging.getLogger("studio.runs")


def _file(ctx: QueueHost) -> Path | None:
    ws = getattr(ctx, "workspace", None)
    return Path(ws) / FILE if ws else None


def _restore(ctx: QueueHost) -> list[RunConfig]:
    """The queue a previous server left in the workspace; an unreadable queue.json is kept aside
    (studio/state_files.py, the page says so) and the queue comes back from queue.json.bak, its last good copy.
    A run that no longer loads is dropped, logged."""
    path = _file(ctx)
    if path is None:
        return []
    items = read_state(path, kind="json", expect=list)
    if items is None:
        items = read_state(path.with_name(path.name + ".bak"), kind="json", expect=list) or []
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
        write_json_with_backup(path, [_entry(c) for c in _queue(ctx)])
    except OSError as exc:  # a full disk must not stop the run itself from starting
        log.warning("cannot keep the run queue in %s: %s", path, exc)


def _queue(ctx: QueueHost) -> list[RunConfig]:
    if "queue" not in ctx.extra:
        ctx.extra["queue"] = _restore(ctx)
    return ctx.extra["queue"]


def submit(ctx: QueueHost, cfg: RunConfig, resolve: Callable[[RunConfig], RunConfig],
           by: str | None = None) -> int:
    """The one hand-over of a run: start ``cfg`` now (returns 0) or, while a run is going, queue it (returns its
    place, 1 = next). The page's Start and "Improve this run" both come here.

    ``cfg`` is a RunConfig, so it is valid (it checked itself when it was built); nothing here checks it again.
    ``by`` is the login that pressed Start: the run records it as its starter, also when it starts later.

    ``resolve`` turns the form's config into the run's (absolute paths, a fresh run folder); it is
    applied when the run really starts, so a queued run never reuses a folder made in between.

    Raises:
        StudioError: anything but "a run is already going" (bad paths, a used folder, ...); ConfigError for a
            Draft (a Python caller's) that does not build.
    """
    cfg = _mark(cfg if isinstance(cfg, RunConfig) else cfg.build(), by)
    with _LOCK:
        _refuse_repeat(ctx, cfg, by)
        if _queue(ctx) or ctx.runner.snapshot().get("busy"):
            _refuse_over_cap(ctx, by)
            _queue(ctx).append(cfg)
            _save(ctx)
            return len(_queue(ctx))
        try:
            ctx.runner.start(resolve(cfg), by=by, settings=_settings_key(cfg))
        except StudioError as exc:
            if exc.code != "run.busy":  # another browser started one a moment ago: wait behind it
                raise
            _queue(ctx).append(cfg)
            _save(ctx)
            return len(_queue(ctx))
    return 0


def _settings_key(cfg: RunConfig) -> str:
    """The settings a person chose (the form's, before a run folder is made for them), as a short digest (it is
    kept in the run's status.json)."""
    return hashlib.sha256(json.dumps(cfg.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:24]


def _refuse_repeat(ctx: QueueHost, cfg: RunConfig, by: str | None) -> None:
    """Start with the settings of the run that is training (whoever started it): already running, named. A second
    Start of the same settings by the same login: already queued (or just started)."""
    now = time.monotonic()
    key = _settings_key(cfg)
    snap = ctx.runner.snapshot()
    if snap.get("busy") and snap.get("run"):
        running = RunDir(snap["run"])
        if running.read_status().get("settings_key") == key:
            raise StudioError.of("run.already_running", name=running.path.name)
    recent = [(t, b, k) for t, b, k in ctx.extra.get("recent_starts", []) if now - t < SAME_START_S]
    same = any(b == by and k == key for _, b, k in recent) or any(
        _by(c) == by and _settings_key(c) == key for c in _queue(ctx))
    ctx.extra["recent_starts"] = recent + [(now, by, key)]
    if same:
        raise StudioError.of("run.already_queued")


def _refuse_over_cap(ctx: QueueHost, by: str | None) -> None:
    mine = sum(1 for c in _queue(ctx) if _by(c) == by)
    if mine >= MAX_QUEUED_PER_LOGIN:
        raise StudioError.of("run.queue_full", n=mine)


def start_next(ctx: QueueHost, resolve: Callable[[RunConfig], RunConfig]) -> str | None:
    """Start the first queued run when the runner is idle (called by the status poll); its folder name."""
    with _LOCK:
        if not _queue(ctx) or ctx.runner.snapshot().get("busy"):
            return None
        cfg = _queue(ctx).pop(0)
        _save(ctx)
        try:
            return ctx.runner.start(resolve(cfg), by=_by(cfg), settings=_settings_key(cfg)).path.name
        except StudioError as exc:
            # e.g. its data or base model was deleted meanwhile: off the queue (it would fail again at every tick),
            # and said on every page (``dropped``) rather than vanishing
            log.warning("a queued run could not start: %s", exc.message)
            ctx.extra["queue_dropped"] = [*ctx.extra.get("queue_dropped", [])[-4:], (time.time(), exc)]
            return None


def dropped(ctx: QueueHost, within_s: float = DROPPED_SHOWN_S) -> list[StudioError]:
    """Why the queued runs that could not start in the last ``within_s`` seconds were taken off, oldest first."""
    now = time.time()
    return [exc for t, exc in ctx.extra.get("queue_dropped", []) if now - t < within_s]


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


__all__ = ["clear", "dropped", "start_next", "submit", "waiting", "watch"]
