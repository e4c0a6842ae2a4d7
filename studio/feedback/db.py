"""Opening the feedback database: WORKSPACE/feedback.sqlite3 as one regular file of the workspace, its schema brought
up to date or refused, and every SQLite failure turned into a coded error that names the file and the fix.

Why here and not in each caller: the studio, each demo page and the CLI open the same file, and a teammate (or a
script) who can write into the workspace can put a link or a folder where the file was. SQLite follows a link to the
database and creates its side files (``-wal``, ``-shm``, ``-journal``) through links too, so a dangling link to a
path outside made the studio create and fill a database there. So every connection first checks the file and its
side files without following links (``check_file``); SQLite cannot be told not to follow one (this build has no
``nofollow`` URI parameter), so the check runs before every open.

A damaged, truncated or foreign file gave raw SQLite text ("file is not a database"), a bug's message on the page
and a traceback on the command line; here each failure is one code of studio/words/feedback_errors.py whose fix is
the same in every case: move the file aside and the studio starts a new one, the old file kept for recovery.

The schema carries a version (table ``schema_version``), checked on every connection, not once per process: a demo
that opened the file before a newer studio migrated it must stop writing, not write rows with an old idea of the
table. ``MIGRATIONS`` lists each step from one version to the next, applied in order under the write lock.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..errors import StudioError

BUSY_TIMEOUT_MS = 30_000
SIDE_FILES = ("-wal", "-shm", "-journal")
LABEL_CHARS = 200  # a row's label as the summary counts it (labels are words; a free-text answer is cut)


def fix_key(text: str | None) -> str | None:
    """The same correction typed with other spacing or case is the same correction (agreement compares these)."""
    if text is None or not text.strip():
        return None
    return hashlib.sha256(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()[:32]


def _backfill(con: sqlite3.Connection) -> None:
    """Version 4's derived columns for the rows an older studio wrote, computed in SQL row by row (no row list)."""
    con.create_function("studio_fix_key", 1, fix_key, deterministic=True)
    con.execute("UPDATE feedback SET bytes = length(CAST(input AS BLOB)) + length(CAST(answer AS BLOB)) + "
                "COALESCE(length(CAST(correction AS BLOB)), 0) + COALESCE(length(CAST(scores AS BLOB)), 0), "
                "fix_key = studio_fix_key(COALESCE(edited, correction)), "
                f"label = substr(COALESCE(NULLIF(COALESCE(edited, correction), ''), answer), 1, {LABEL_CHARS})")


Step = str | Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[int, list[Step]]] = [
    (1, ["""CREATE TABLE feedback (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              run TEXT NOT NULL,
              login TEXT NOT NULL,
              created REAL NOT NULL,
              updated REAL NOT NULL,
              input TEXT NOT NULL,
              input_key TEXT NOT NULL,
              answer TEXT NOT NULL,
              verdict TEXT NOT NULL CHECK (verdict IN ('up', 'down')),
              correction TEXT,
              scores TEXT,
              status TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'accepted', 'dropped')),
              edited TEXT)""",
         "CREATE INDEX feedback_run ON feedback (run, status)",
         "CREATE INDEX feedback_input ON feedback (run, input_key)"]),
    (2, ["ALTER TABLE feedback ADD COLUMN source TEXT NOT NULL DEFAULT 'demo'",
         "ALTER TABLE feedback ADD COLUMN reviewer TEXT"]),
    (3, ["CREATE INDEX feedback_login ON feedback (login, created)"]),  # the per-login quota's count
    # bounded reads and writes: each row's size (the byte quotas), its correction's key (conflicts in SQL) and its
    # label (the summary), and who sent it on a page without logins (each visitor's quota). The indexes cover the
    # quota sums, the summary and the conflict check, so none of them reads a row's texts.
    (4, ["ALTER TABLE feedback ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0",
         "ALTER TABLE feedback ADD COLUMN fix_key TEXT",
         "ALTER TABLE feedback ADD COLUMN label TEXT NOT NULL DEFAULT ''",
         "ALTER TABLE feedback ADD COLUMN visitor TEXT",
         _backfill,
         "CREATE INDEX feedback_login_bytes ON feedback (login, created, bytes)",
         "CREATE INDEX feedback_visitor_bytes ON feedback (login, visitor, created, bytes)",
         "CREATE INDEX feedback_run_bytes ON feedback (run, bytes)",
         "CREATE INDEX feedback_summary ON feedback (run, status, verdict, login, label)",
         "CREATE INDEX feedback_agreement ON feedback (run, input_key, status, fix_key, login)"]),
    # which version of a shared run teammates see (promote / roll back by an owner), one row per action
    (5, ["""CREATE TABLE versions (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              line TEXT NOT NULL,
              run TEXT NOT NULL,
              action TEXT NOT NULL CHECK (action IN ('promote', 'rollback')),
              login TEXT NOT NULL,
              at REAL NOT NULL)""",
         "CREATE INDEX versions_line ON versions (line, id)"]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
COLUMNS = ("id", "run", "login", "created", "updated", "input", "input_key", "answer", "verdict", "correction",
           "scores", "status", "edited", "source", "reviewer", "bytes", "fix_key", "label", "visitor")

# SQLite's primary result codes -> the error a person reads (everything else: the file is not one we can use)
_CODES = {26: "feedback.db_not_sqlite", 11: "feedback.db_damaged", 10: "feedback.db_damaged",
          5: "feedback.db_locked", 6: "feedback.db_locked", 13: "feedback.db_full", 14: "feedback.db_cannot_open",
          8: "feedback.db_read_only"}


def check_file(path: Path) -> None:
    """The database and its side files are regular files or absent; never links (a dangling one included), never
    folders. Checked with lstat, so nothing is followed while looking.

    Raises:
        StudioError: feedback.db_link or feedback.db_not_file, naming the file.
    """
    for p in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)):
        try:
            mode = os.lstat(p).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            raise StudioError.of("feedback.db_cannot_open", file=str(p)) from None
        if stat.S_ISLNK(mode):
            raise StudioError.of("feedback.db_link", file=str(p))
        if not stat.S_ISREG(mode):
            raise StudioError.of("feedback.db_not_file", file=str(p))


def db_error(exc: sqlite3.Error, path: Path) -> StudioError:
    """``exc`` as the coded error a person can act on (raw SQLite text never reaches a page or a terminal)."""
    code = getattr(exc, "sqlite_errorcode", None)
    known = _CODES.get(code & 0xFF) if isinstance(code, int) else None
    return StudioError.of(known or "feedback.db_foreign", file=str(path))


def _version(con: sqlite3.Connection) -> int | None:
    """The file's schema version; 0 for an empty file (a new database); None for another program's database."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_version" not in tables:
        return 0 if not tables - {"sqlite_sequence"} else None
    row = con.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def _ready(con: sqlite3.Connection, path: Path) -> None:
    """Refuse a newer or foreign file; bring an older or empty one up to date under the write lock."""
    version = _version(con)
    if version == SCHEMA_VERSION:
        return
    if version is None:
        raise StudioError.of("feedback.db_foreign", file=str(path))
    if version > SCHEMA_VERSION:
        raise StudioError.of("feedback.schema", file=str(path), version=version, known=SCHEMA_VERSION)
    con.execute("BEGIN IMMEDIATE")
    try:
        version = _version(con)  # another process may have migrated it meanwhile
        if version is None or version > SCHEMA_VERSION:
            raise StudioError.of("feedback.db_foreign", file=str(path))
        if version == 0:
            con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        for target, steps in MIGRATIONS:
            if target > version:
                for step in steps:
                    step(con) if callable(step) else con.execute(step)
        con.execute("DELETE FROM schema_version")
        con.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _prepare(con: sqlite3.Connection, path: Path) -> None:
    """Settings and schema of a fresh connection, retried while another process holds the file.

    SQLite's busy handler does not cover every step of opening a WAL file (a peer closing the last connection
    checkpoints and removes the WAL under an exclusive lock; a journal-mode change answers SQLITE_BUSY at once),
    so a burst of writers could see "locked" after milliseconds. The retry keeps the promise of BUSY_TIMEOUT_MS.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_MS)}")
            # WAL is a property of the file: set once, when it is not yet (setting it again takes a lock)
            if str(con.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable at checkpoints, never corrupt
            _ready(con, path)
            return
        except sqlite3.OperationalError as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A short connection to the checked file with an up-to-date schema; SQLite failures as coded errors.

    Raises:
        StudioError: a link or folder in the file's place, an unusable file, a newer schema, a lock held too long.
    """
    check_file(path)
    try:  # a new workspace: its folder is made as the studio makes it (a file in its place is refused below)
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise StudioError.of("feedback.db_cannot_open", file=str(path)) from None
    try:
        # isolation_level=None: transactions are opened explicitly (BEGIN IMMEDIATE for writes)
        con = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise db_error(exc, path) from None
    try:
        try:
            _prepare(con, path)
            con.row_factory = sqlite3.Row
            yield con
        except sqlite3.Error as exc:
            raise db_error(exc, path) from None
    finally:
        con.close()


@contextmanager
def write(path: Path) -> Iterator[sqlite3.Connection]:
    """``connect`` inside one write transaction, its lock taken before anything is read."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
