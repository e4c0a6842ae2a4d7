"""Read a state file the studio keeps, or move it aside loudly: the one reader of status.json, queue.json,
settings.yaml, dataset_info.json (the page's) and the page's small JSON records.

A garbage state file used to be read as "nothing": a finished run showed "Unknown", the queued runs vanished, the
settings fell back to defaults, with at most a log line. Here an unreadable file is renamed
``<name>.corrupt-<UTC time>`` (kept, never deleted: its bytes may be all someone has), recorded in a short list
the page shows (which file, what to do), and the caller goes on as if it were absent, so everything else keeps
working. A missing file is not a problem.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from .workspace import atomic_write_text

log = logging.getLogger("studio.state")
MAX_STATE_BYTES = 64 * 2**20  # a state file is small; a huge one is garbage, not something to parse in memory
_LOCK = threading.Lock()
_SEEN: deque["Quarantined"] = deque(maxlen=50)


@dataclass(frozen=True)
class Quarantined:
    """One state file that could not be read: where it was, where its bytes are kept, why."""
    file: Path
    kept_as: Path | None  # None: it could not be moved (a read-only folder); it is left where it is
    reason: str
    when: float


def _utc_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def quarantine(path: Path, reason: str) -> Quarantined:
    """Move ``path`` aside as ``<name>.corrupt-<UTC time>`` (a free name) and record it for the page."""
    path = Path(path)
    target: Path | None = path.with_name(f"{path.name}.corrupt-{_utc_stamp()}")
    n = 2
    while target is not None and os.path.lexists(target):
        target, n = path.with_name(f"{path.name}.corrupt-{_utc_stamp()}-{n}"), n + 1
    try:
        os.rename(path, target)  # same folder: never a copy, never follows a link (the link itself is moved)
    except OSError as exc:
        log.warning("cannot move the unreadable %s aside: %s", path, exc)
        target = None
    found = Quarantined(path, target, reason[:200], time.time())
    log.warning("state file %s could not be read (%s); kept as %s", path, reason, target)
    with _LOCK:
        _SEEN.append(found)
    return found


def problems(since: float = 0.0) -> list[Quarantined]:
    """State files moved aside by this process since ``since`` (oldest first)."""
    with _LOCK:
        return [q for q in _SEEN if q.when >= since]


def _parse(text: str, kind: str) -> Any:
    if kind == "json":
        return json.loads(text)
    return yaml.safe_load(text)


def read_state(path: str | Path, *, kind: str = "json", expect: type | tuple[type, ...] = dict,
               empty: Any = None, check: Callable[[Any], None] | None = None) -> Any:
    """The parsed content of a state file; ``empty`` when it is absent (or empty, when ``empty`` is not None).

    A file that cannot be read, is not valid JSON/YAML, is not an ``expect``, or that ``check`` refuses (it raises
    ValueError) is moved aside (``quarantine``) and ``empty`` comes back. A link is never followed: a state file
    that is a symlink is refused the same way (it could name any file of the machine).
    """
    path = Path(path)
    if not os.path.lexists(path):
        return empty
    try:
        if path.is_symlink() or not path.is_file():
            raise ValueError("not a plain file")
        if path.stat().st_size > MAX_STATE_BYTES:
            raise ValueError(f"larger than {MAX_STATE_BYTES // 2**20} MB")
        text = path.read_text(encoding="utf-8-sig")
        if not text.strip() and empty is not None:
            return empty
        data = _parse(text, kind)
        if not isinstance(data, expect):
            raise ValueError(f"holds {type(data).__name__}, not {getattr(expect, '__name__', expect)}")
        if check is not None:
            check(data)
        return data
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, RecursionError) as exc:
        quarantine(path, f"{type(exc).__name__}: {exc}")
        return empty


def write_json_with_backup(path: str | Path, data: Any) -> None:
    """Write ``data`` to ``<name>.bak``, then to ``path``, each atomically: the backup is a copy of the latest state,
    never the one before it. (A backup one write behind brought back runs the owner had cleared once queue.json was
    damaged.) A crash between the two writes leaves ``path`` one state behind and the backup right."""
    path = Path(path)
    text = json.dumps(data, ensure_ascii=False, indent=1)
    atomic_write_text(path.with_name(path.name + ".bak"), text)
    atomic_write_text(path, text)


__all__ = ["MAX_STATE_BYTES", "Quarantined", "problems", "quarantine", "read_state", "write_json_with_backup"]
