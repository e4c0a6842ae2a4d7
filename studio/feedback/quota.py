"""How much feedback one sender may add: rows and bytes per hour per login, the same per visitor of a page without
logins, and bytes per run in all.

Why bytes as well as rows: a row may hold 60 KB of text, so 2,000 rows an hour was ~470 MB an hour per login. Why
per visitor: every visitor of a loopback demo without logins is the one login "local", so one visitor's script used
up the hour for everyone else; each visitor (its page session) now has a login's quota, and all of them together
``ANONYMOUS_SHARE`` times that. Why per run: whatever the number of logins, one run's feedback stays a size a
person can review and the disk can hold.

Every sum is read from a covering index (studio/feedback/db.py, version 4) inside the write transaction, so two
writers cannot both pass the last free place and no row's texts are read to count.
"""
from __future__ import annotations

import sqlite3
import time

from ..errors import StudioError

MB = 2**20
HOUR_S = 3600.0
ROWS_PER_HOUR = 2000          # a person reviewing answers gives a few hundred
BYTES_PER_HOUR = 32 * MB      # ~500 chat answers with long corrections; a flood of 60 KB rows stops at ~550 rows
ANONYMOUS_SHARE = 10          # the visitors of a page without logins, together: ten visitors' worth
RUN_BYTES = 256 * MB          # one run's feedback, all logins, all time


def check(con: sqlite3.Connection, *, run: str, login: str, visitor: str | None, anonymous: bool,
          adding: int, now: float | None = None) -> None:
    """Refuse a row of ``adding`` bytes that would take its sender or its run over a quota.

    Raises:
        StudioError: feedback.quota (rows), feedback.quota_bytes, feedback.quota_visitor, feedback.run_full.
    """
    since = (now if now is not None else time.time()) - HOUR_S
    share = ANONYMOUS_SHARE if anonymous else 1
    rows, size = con.execute("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM feedback WHERE login = ? AND "
                             "created > ?", (login, since)).fetchone()
    if rows >= ROWS_PER_HOUR * share:
        raise StudioError.of("feedback.quota", login=login, n=rows)
    if size + adding > BYTES_PER_HOUR * share:
        raise StudioError.of("feedback.quota_bytes", login=login, mb=size / MB, limit=BYTES_PER_HOUR * share / MB)
    if anonymous and visitor:
        rows, size = con.execute("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM feedback WHERE login = ? AND "
                                 "visitor = ? AND created > ?", (login, visitor, since)).fetchone()
        if rows >= ROWS_PER_HOUR or size + adding > BYTES_PER_HOUR:
            raise StudioError.of("feedback.quota_visitor", n=rows, mb=size / MB, rows=ROWS_PER_HOUR,
                                 limit=BYTES_PER_HOUR / MB)
    (total,) = con.execute("SELECT COALESCE(SUM(bytes), 0) FROM feedback WHERE run = ?", (run,)).fetchone()
    if total + adding > RUN_BYTES:
        raise StudioError.of("feedback.run_full", run=run, mb=total / MB, limit=RUN_BYTES / MB)
