"""Per-login upload rules on a shared studio: what each role may send, how much each login may keep, for how long.

Gradio has one size limit for every upload and keeps every file until the server restarts, so a viewer could
send 4 GB files (the limit meant for owners' models) as often as they liked. The login guard (studio/web/guard.py) asks
this module before and after Gradio's upload route:

- a request body is counted as it arrives: a viewer's over ``data_mb`` (the spreadsheet limit: viewers upload
  files to predict, nothing else), an owner's over the larger of the data and model limits, is refused with 413
  before it is all read;
- a viewer's upload must be a data file (``DATA_SUFFIXES``); a model file is an owner's upload;
- each login keeps at most its quota of uploads on disk (``quota_mb`` for owners, ``viewer_quota_mb`` for
  viewers) and at most ``MAX_FILES`` of them: when a new upload goes over, that login's oldest uploads are removed
  first (a file another login uploaded too is kept for them). An upload is counted as the disk holds it: its
  blocks and the folder Gradio makes for it (``on_disk``), so 2,000 one-byte uploads count ~16 MB and 2,000 files,
  not 2 KB;
- files in the upload cache older than ``KEEP_S`` (a day) are swept (``sweep``; Gradio's own ``delete_cache`` does
  the same for the files it knows).
"""
from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

MB = 2**20
KEEP_S = 24 * 3600
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".jsonl", ".parquet", ".xlsx", ".xls", ".yaml", ".yml")
DEFAULT_QUOTA_MB = 10_240.0       # an owner's uploads kept at once (two or three models)
DEFAULT_VIEWER_QUOTA_MB = 200.0   # a viewer's (a few spreadsheets to predict)
MAX_FILES = {"owner": 1000, "viewer": 100}  # uploads kept per login: each costs inodes whatever its size
FOLDER_BYTES = 4096               # the folder Gradio makes for each upload (one block of most file systems)


def on_disk(path: str) -> int:
    """The bytes an upload takes on disk: its allocated blocks (at least its size) and its own folder."""
    st = os.stat(path)
    return max(st.st_size, getattr(st, "st_blocks", 0) * 512) + FOLDER_BYTES


@dataclass
class UploadPolicy:
    data_mb: float = 50.0
    model_mb: float = 4096.0
    quota_mb: float = DEFAULT_QUOTA_MB
    viewer_quota_mb: float = DEFAULT_VIEWER_QUOTA_MB
    _kept: dict[str, "OrderedDict[str, int]"] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def body_limit(self, role: str) -> int:
        """The most bytes one upload request of ``role`` may carry."""
        return int((self.data_mb if role != "owner" else max(self.data_mb, self.model_mb)) * MB)

    def allowed(self, role: str, path: str) -> bool:
        """Whether ``role`` may keep an upload of this kind (viewers: data files only)."""
        return role == "owner" or Path(path).suffix.lower() in DATA_SUFFIXES

    def quota(self, role: str) -> int:
        return int((self.quota_mb if role == "owner" else min(self.viewer_quota_mb, self.quota_mb)) * MB)

    def kept(self, user: str, paths: list[str], role: str, claimed_by_others: "set[str]") -> list[str]:
        """Record ``user``'s new uploads; returns the paths to remove (that login's oldest, over its quota).
        ``claimed_by_others``: paths another login uploaded too (forgotten for ``user``, never removed)."""
        now = time.time()
        removed: list[str] = []
        with self._lock:
            mine = self._kept.setdefault(user, OrderedDict())
            for p in paths:
                try:
                    mine[p] = on_disk(p)
                except OSError:
                    continue
                mine.move_to_end(p)
            for p in [p for p in mine if not os.path.exists(p) or _age(p, now) > KEEP_S]:
                mine.pop(p)
            limit, files = self.quota(role), MAX_FILES["owner" if role == "owner" else "viewer"]
            while mine and (sum(mine.values()) > limit or len(mine) > files) and len(mine) > 1:
                old, _ = mine.popitem(last=False)
                if old not in claimed_by_others:
                    removed.append(old)
        return removed


def _age(path: str, now: float) -> float:
    try:
        return now - os.stat(path).st_mtime
    except OSError:
        return 0.0


def remove(paths: list[str]) -> None:
    """Delete uploads (and their folder when Gradio made one just for them)."""
    for p in paths:
        try:
            os.remove(p)
            os.rmdir(os.path.dirname(p))  # Gradio keeps each upload in a folder named by its hash
        except OSError:
            pass


def sweep(root: str | Path, keep_s: float = KEEP_S) -> int:
    """Remove files under ``root`` (the upload cache) older than ``keep_s``; how many. Links are not followed."""
    now, n = time.time(), 0
    for folder, _, files in os.walk(root, followlinks=False):
        for name in files:
            p = os.path.join(folder, name)
            try:
                if now - os.lstat(p).st_mtime > keep_s:
                    os.remove(p)
                    n += 1
            except OSError:
                continue
    return n
