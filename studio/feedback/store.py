"""Teammates' feedback on answers: one SQLite file in the workspace, written by the studio and demo processes at once.

Why SQLite and not a JSON file: several processes (the studio, one or more demo pages) append at the same time; a
file rewritten whole loses whichever write lands second. SQLite in WAL mode lets readers go on while one writer
holds the lock, and ``busy_timeout`` makes a second writer wait for it instead of failing. Every write opens its
transaction with ``BEGIN IMMEDIATE`` so the lock is taken before anything is read (no read-then-upgrade deadlock).

The schema carries a version (table ``schema_version``); ``MIGRATIONS`` lists each step from one version to the
next, applied in order under the write lock, so an older file opened by a newer studio is brought up to date once.

Every text is bounded (``LIMITS``): a caller gets a StudioError naming the field and its limit, nothing is cut
silently, so the row that reaches a dataset is exactly the row someone wrote.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, asdict
from pathlib import Path
from typing import Any, Iterator, Literal

from ..errors import StudioError

DB_NAME = "feedback.sqlite3"
LOCAL_LOGIN = "local"  # a loopback demo without logins: everyone there is the person at this machine
VERDICTS = ("up", "down")
STATUSES = ("new", "accepted", "dropped")
Verdict = Literal["up", "down"]
Status = Literal["new", "accepted", "dropped"]

# characters; a tweet-sized labels run needs far less, a chat answer can be a few pages
LIMITS: dict[str, int] = {"run": 120, "login": 120, "input": 20_000, "answer": 20_000, "correction": 20_000,
                          "scores": 10_000, "note": 2_000}
BUSY_TIMEOUT_MS = 30_000
# rows one login may add in an hour: a person reviewing answers gives a few hundred; a script looping on the
# endpoint is stopped before it fills the disk (every login has quotas, as every request has bounds)
QUOTA_PER_HOUR = 2000

MIGRATIONS: list[tuple[int, list[str]]] = [
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
    # issue 49: which version of a shared run teammates see (promote / rollback by an owner), one row per action
    (4, ["""CREATE TABLE versions (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              line TEXT NOT NULL,
              run TEXT NOT NULL,
              action TEXT NOT NULL CHECK (action IN ('promote', 'rollback')),
              login TEXT NOT NULL,
              at REAL NOT NULL)""",
         "CREATE INDEX versions_line ON versions (line, id)"]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
SOURCES = ("demo", "playground", "chat", "batch", "cli")


@dataclass(frozen=True)
class Feedback:
    id: int
    run: str
    login: str
    created: float
    updated: float
    input: str
    answer: str
    verdict: str
    correction: str | None
    scores: dict[str, Any] | None
    status: str
    edited: str | None
    source: str
    reviewer: str | None

    @property
    def final_correction(self) -> str | None:
        """What a dataset uses: the owner's edit when there is one, else the teammate's correction."""
        return self.edited if self.edited is not None else self.correction

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def input_key(text: str) -> str:
    """The same input typed with other spacing or case is the same question (agreement groups by this)."""
    return hashlib.sha256(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()[:32]


def _bounded(field: str, value: str | None, *, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise StudioError.of("feedback.empty", field=field)
        return None
    if not isinstance(value, str):
        raise StudioError.of("feedback.not_text", field=field)
    if "\x00" in value:
        raise StudioError.of("feedback.nul", field=field)
    if len(value) > LIMITS[field]:
        raise StudioError.of("feedback.too_long", field=field, n=len(value), limit=LIMITS[field])
    return value


def _login(login: str | None) -> str:
    return _bounded("login", login) or LOCAL_LOGIN


def _scores(scores: dict[str, Any] | None) -> str | None:
    if scores is None:
        return None
    try:
        text = json.dumps(scores, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StudioError.of("feedback.scores", detail=str(exc)) from exc
    return _bounded("scores", text)


# ---- issue 49: agreement, conflicts first, versions. New reads and one new table; the methods above are unchanged.
# The label a row gives: the owner's edit, else the teammate's correction, else the answer a 👍 confirmed (a 👎
# without a correction says only "not this one" and gives none).
LABEL_SQL = "COALESCE(edited, correction, CASE WHEN verdict = 'up' THEN answer END)"
MAX_PAIR_ROWS = 100_000  # shared rows read for the agreement of one run; bounded like every listing


def norm_label(text: str | None) -> str | None:
    """Spaces and case aside, two labels are the same (the rule datasets.conflicts uses)."""
    return None if text is None else " ".join(str(text).split()).casefold()


class _AgreementReads:
    """Conflicts and agreement computed by SQLite (GROUP BY over the run's rows), never by loading every row:
    a run with a hundred thousand rows answers from its index. ``studio_norm`` is the label rule above,
    registered on the connection so SQLite applies it."""

    path: Path

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as con:  # type: ignore[attr-defined]
            con.create_function("studio_norm", 1, norm_label, deterministic=True)
            yield con

    _LABELLED = (f"SELECT id, login, input_key, studio_norm({LABEL_SQL}) AS lab FROM feedback "
                 f"WHERE run = ? AND status != 'dropped' AND {LABEL_SQL} IS NOT NULL")
    _CLASH = ("SELECT input_key FROM ({labelled}) GROUP BY input_key "
              "HAVING COUNT(DISTINCT lab) > 1 AND COUNT(DISTINCT login) > 1")

    def conflict_keys(self, run: str) -> set[str]:
        """Input keys of ``run`` that two or more logins labelled differently (rows not dropped)."""
        with self._reading() as con:
            sql = self._CLASH.format(labelled=self._LABELLED)
            return {r[0] for r in con.execute(sql, (run,))}

    def conflict_ids(self, run: str) -> set[int]:
        """Ids of the rows (dropped ones aside) whose input is in conflict."""
        with self._reading() as con:
            sql = (f"SELECT id FROM feedback WHERE run = ? AND status != 'dropped' AND input_key IN "
                   f"({self._CLASH.format(labelled=self._LABELLED)})")
            return {int(r[0]) for r in con.execute(sql, (run, run))}

    def label_pairs(self, run: str) -> list[tuple[str, str, str, str]]:
        """(login a, login b, a's label, b's label) for every input both labelled (a < b; each login's latest row
        per input), at most MAX_PAIR_ROWS."""
        latest = (f"SELECT login, input_key, lab FROM ({self._LABELLED}) WHERE id IN "
                  f"(SELECT MAX(id) FROM ({self._LABELLED}) GROUP BY login, input_key)")
        sql = (f"WITH l AS ({latest}) SELECT a.login, b.login, a.lab, b.lab FROM l a JOIN l b "
               "ON a.input_key = b.input_key AND a.login < b.login ORDER BY a.login, b.login LIMIT ?")
        with self._reading() as con:
            return [tuple(r) for r in con.execute(sql, (run, run, MAX_PAIR_ROWS))]  # type: ignore[misc]

    def review_list(self, run: str, *, status: str | None = None, login: str | None = None,
                    label: str | None = None, limit: int = 2000) -> list[Feedback]:
        """The owner's review: ``list``'s rows with the conflicting ones first (then oldest first)."""
        where, args = ["run = ?"], [run]
        for column, value in (("status", status), ("login", login)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        if label:
            where.append("(answer = ? OR correction = ? OR edited = ?)")
            args += [label, label, label]
        clash = self._CLASH.format(labelled=self._LABELLED)
        sql = (f"SELECT * FROM feedback WHERE {' AND '.join(where)} ORDER BY (status != 'dropped' AND input_key IN "
               f"({clash})) DESC, id LIMIT ?")
        with self._reading() as con:
            return [_record(r) for r in con.execute(sql, (*args, run, max(1, min(int(limit), 100_000))))]

    # ---- versions: which run of a shared line teammates see
    def record_version(self, line: str, run: str, action: str, login: str | None) -> None:
        """An owner promoted ``run`` (or rolled back to it) for the shared ``line`` (whoever may is the caller's
        check: studio/app/versions.py)."""
        if action not in ("promote", "rollback"):
            raise StudioError.of("feedback.status", status=str(action)[:20], statuses=["promote", "rollback"])
        values = (_bounded("run", line, required=True), _bounded("run", run, required=True), action, _login(login))
        with self._write() as con:  # type: ignore[attr-defined]
            con.execute("INSERT INTO versions (line, run, action, login, at) VALUES (?, ?, ?, ?, ?)",
                        (*values, time.time()))

    def version_history(self, line: str, limit: int = 200) -> list[dict[str, Any]]:
        """The line's promotions and rollbacks, oldest first."""
        with self._connect() as con:  # type: ignore[attr-defined]
            rows = con.execute("SELECT run, action, login, at FROM versions WHERE line = ? ORDER BY id DESC LIMIT ?",
                               (line, max(1, min(int(limit), 10_000)))).fetchall()
        return [dict(r) for r in reversed(rows)]

    def version_lines(self) -> list[str]:
        with self._connect() as con:  # type: ignore[attr-defined]
            return [r[0] for r in con.execute("SELECT DISTINCT line FROM versions ORDER BY line LIMIT 1000")]


class FeedbackStore(_AgreementReads):
    """The feedback table of one workspace. Cheap to create: each call opens its own short connection, so an
    instance can be shared by threads and used from forked processes."""

    def __init__(self, path: str | Path):
        p = Path(path)
        self.path = p / DB_NAME if p.is_dir() else p
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._write() as con:
            self._migrate(con)

    @classmethod
    def in_workspace(cls, workspace: str | Path) -> "FeedbackStore":
        return cls(Path(workspace) / DB_NAME)

    # ---- connections
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # isolation_level=None: transactions are opened explicitly (BEGIN IMMEDIATE for writes)
        con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable at checkpoints, never corrupt
            con.row_factory = sqlite3.Row
            yield con
        finally:
            con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _migrate(self, con: sqlite3.Connection) -> None:
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = con.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else 0
        if version > SCHEMA_VERSION:
            raise StudioError.of("feedback.schema", file=self.path.name, version=version, known=SCHEMA_VERSION)
        for target, statements in MIGRATIONS:
            if target > version:
                for sql in statements:
                    con.execute(sql)
        if row is None:
            con.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version < SCHEMA_VERSION:
            con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def schema_version(self) -> int:
        with self._connect() as con:
            return int(con.execute("SELECT version FROM schema_version").fetchone()[0])

    # ---- teammates
    def add(self, *, run: str, login: str | None, input: str, answer: str, verdict: str,
            correction: str | None = None, scores: dict[str, Any] | None = None, source: str = "demo") -> int:
        """Record one teammate's feedback on one answer; returns its id.

        Raises:
            StudioError: an unknown verdict or source, an empty run/input, a text over its limit.
        """
        if verdict not in VERDICTS:
            raise StudioError.of("feedback.verdict", verdict=str(verdict)[:20], verdicts=list(VERDICTS))
        if source not in SOURCES:
            raise StudioError.of("feedback.source", source=str(source)[:20], sources=list(SOURCES))
        values = (_bounded("run", run, required=True), _login(login), _bounded("input", input, required=True),
                  _bounded("answer", answer) or "", verdict, _bounded("correction", correction), _scores(scores))
        now = time.time()
        with self._write() as con:
            recent = con.execute("SELECT COUNT(*) FROM feedback WHERE login = ? AND created > ?",
                                 (values[1], now - 3600)).fetchone()[0]
            if recent >= QUOTA_PER_HOUR:
                raise StudioError.of("feedback.quota", login=values[1], n=recent)
            cur = con.execute(
                "INSERT INTO feedback (run, login, created, updated, input, input_key, answer, verdict, correction,"
                " scores, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (values[0], values[1], now, now, values[2], input_key(values[2]), values[3], values[4], values[5],
                 values[6], source))
            return int(cur.lastrowid)

    def _own(self, con: sqlite3.Connection, feedback_id: int, login: str | None) -> sqlite3.Row:
        row = con.execute("SELECT * FROM feedback WHERE id = ?", (int(feedback_id),)).fetchone()
        if row is None or row["login"] != _login(login):
            # the same words for "absent" and "someone else's": a login learns nothing about others' rows
            raise StudioError.of("feedback.not_yours", id=int(feedback_id))
        return row

    def change(self, feedback_id: int, login: str | None, *, verdict: str | None = None,
               correction: str | None = None) -> None:
        """A login changes its own feedback; the row goes back to 'new' (the owner reviews what it now says).

        Raises:
            StudioError: not this login's row, or a bad verdict / too long a correction.
        """
        if verdict is not None and verdict not in VERDICTS:
            raise StudioError.of("feedback.verdict", verdict=str(verdict)[:20], verdicts=list(VERDICTS))
        text = _bounded("correction", correction)
        with self._write() as con:
            row = self._own(con, feedback_id, login)
            con.execute("UPDATE feedback SET verdict = ?, correction = ?, status = 'new', edited = NULL, "
                        "reviewer = NULL, updated = ? WHERE id = ?",
                        (verdict or row["verdict"], text, time.time(), row["id"]))

    def withdraw(self, feedback_id: int, login: str | None) -> None:
        """A login takes back its own feedback (the row is deleted; datasets made earlier keep their copy).

        Raises:
            StudioError: not this login's row.
        """
        with self._write() as con:
            row = self._own(con, feedback_id, login)
            con.execute("DELETE FROM feedback WHERE id = ?", (row["id"],))

    # ---- owners
    def review(self, feedback_id: int, *, reviewer: str | None, status: str | None = None,
               edited: str | None = None) -> None:
        """An owner accepts or drops a row, or edits its correction (whoever may review is the caller's check).

        Raises:
            StudioError: no such row, an unknown status, too long an edit.
        """
        if status is not None and status not in STATUSES:
            raise StudioError.of("feedback.status", status=str(status)[:20], statuses=list(STATUSES))
        text = _bounded("correction", edited)
        with self._write() as con:
            row = con.execute("SELECT * FROM feedback WHERE id = ?", (int(feedback_id),)).fetchone()
            if row is None:
                raise StudioError.of("feedback.missing", id=int(feedback_id))
            con.execute("UPDATE feedback SET status = ?, edited = ?, reviewer = ?, updated = ? WHERE id = ?",
                        (status or row["status"], text if edited is not None else row["edited"], _login(reviewer),
                         time.time(), row["id"]))

    # ---- reading
    def get(self, feedback_id: int) -> Feedback | None:
        with self._connect() as con:
            row = con.execute("SELECT * FROM feedback WHERE id = ?", (int(feedback_id),)).fetchone()
        return _record(row) if row else None

    def list(self, *, run: str | None = None, login: str | None = None, status: str | None = None,
             label: str | None = None, limit: int = 10_000) -> list[Feedback]:
        """Rows, oldest first, filtered by run, login, status, and label (the model's answer or the correction)."""
        where, args = [], []
        for column, value in (("run", run), ("login", login), ("status", status)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        if label:
            where.append("(answer = ? OR correction = ? OR edited = ?)")
            args += [label, label, label]
        sql = "SELECT * FROM feedback" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id LIMIT ?"
        with self._connect() as con:
            return [_record(r) for r in con.execute(sql, (*args, max(1, min(int(limit), 100_000))))]

    def count(self, run: str | None = None) -> int:
        with self._connect() as con:
            if run is None:
                return int(con.execute("SELECT COUNT(*) FROM feedback").fetchone()[0])
            return int(con.execute("SELECT COUNT(*) FROM feedback WHERE run = ?", (run,)).fetchone()[0])

    def runs(self) -> list[str]:
        with self._connect() as con:
            return [r[0] for r in con.execute("SELECT DISTINCT run FROM feedback ORDER BY run")]


def _record(row: sqlite3.Row) -> Feedback:
    data = dict(row)
    data.pop("input_key", None)
    data["scores"] = json.loads(data["scores"]) if data.get("scores") else None
    return Feedback(**data)
