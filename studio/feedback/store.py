"""Teammates' feedback on answers: one SQLite file in the workspace, written by the studio and demo processes at once.

Why SQLite and not a JSON file: several processes (the studio, one or more demo pages) append at the same time; a
file rewritten whole loses whichever write lands second. SQLite in WAL mode lets readers go on while one writer
holds the lock, and ``busy_timeout`` makes a second writer wait for it instead of failing. Every write opens its
transaction with ``BEGIN IMMEDIATE`` so the lock is taken before anything is read (no read-then-upgrade deadlock).

The file is opened by studio/feedback/db.py (never through a link, the schema checked on every connection, SQLite's
failures as coded errors); texts are bounded by feedback/texts.py and senders by feedback/quota.py. Every read is
bounded too: a listing is one page (``page``), counts and conflicts are computed in SQL (``summary``, ``conflicts``),
and what needs every row (datasets, exports) streams them (``iter_rows``) instead of holding a list of them.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterator, Literal

from ..errors import StudioError
from . import db, quota
from .db import LABEL_CHARS, MIGRATIONS, SCHEMA_VERSION, fix_key  # noqa: F401  # the schema's facts, for callers
from .texts import LIMITS, bounded, scores_text, size  # noqa: F401

DB_NAME = "feedback.sqlite3"
LOCAL_LOGIN = "local"  # a loopback demo without logins: everyone there is the person at this machine
VERDICTS = ("up", "down")
STATUSES = ("new", "accepted", "dropped")
Verdict = Literal["up", "down"]
Status = Literal["new", "accepted", "dropped"]
SOURCES = ("demo", "playground", "chat", "batch", "cli")
PAGE_ROWS = 50        # rows of one listing page
SHOWN_CHARS = 2_000   # characters of each text a listing page carries (the export and the datasets have them all)
BATCH = 50            # rows fetched at a time by iter_rows (50 of the longest rows: ~12 MB)


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


_FIELDS = tuple(f.name for f in fields(Feedback))
_SELECT = ", ".join(_FIELDS)


@dataclass(frozen=True)
class Page:
    """One page of a listing: its rows (texts cut to SHOWN_CHARS), how many rows match, which page of how many."""
    rows: list[Feedback]
    total: int
    page: int
    pages: int


@dataclass(frozen=True)
class Conflict:
    """One input that logins corrected differently: each distinct answer with who gave it and the row ids."""
    input: str
    answers: dict[str, list[tuple[str, int]]]  # correction -> [(login, feedback id), ...]


def input_key(text: str) -> str:
    """The same input typed with other spacing or case is the same question (agreement groups by this)."""
    return hashlib.sha256(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()[:32]


def _login(login: str | None) -> str:
    return bounded("login", login) or LOCAL_LOGIN


def _derived(answer: str, correction: str | None, edited: str | None) -> tuple[str | None, str]:
    """(fix_key, label) of a row: its final correction's key, and what the summary counts it under."""
    final = edited if edited is not None else correction
    return fix_key(final), (final or answer)[:LABEL_CHARS]


def _record(row: sqlite3.Row) -> Feedback:
    data = {k: row[k] for k in _FIELDS}
    data["scores"] = json.loads(data["scores"]) if data.get("scores") else None
    return Feedback(**data)


def _where(run: str | None, login: str | None, status: str | None, label: str | None) -> tuple[str, list[Any]]:
    where, args = [], []
    for column, value in (("run", run), ("login", login), ("status", status)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if label:
        where.append("(answer = ? OR correction = ? OR edited = ?)")
        args += [label, label, label]
    return (" WHERE " + " AND ".join(where) if where else ""), args


# The label a row gives: the owner's edit, else the teammate's correction, else the answer a 👍 confirmed (a 👎
# without a correction says only "not this one" and gives none).
LABEL_SQL = "COALESCE(edited, correction, CASE WHEN verdict = 'up' THEN answer END)"
MAX_PAIR_ROWS = 100_000  # shared rows read for the agreement of one run; bounded like every listing


def norm_label(text: str | None) -> str | None:
    """Spaces and case aside, two labels are the same (the rule datasets.conflicts uses)."""
    return None if text is None else " ".join(str(text).split()).casefold()


class _AgreementReads:
    """Teammates who disagree, computed by SQLite (GROUP BY over the run's rows), never by loading every row: a 👍
    is a label too, so it can clash with another login's correction. ``studio_norm`` is the label rule above,
    registered on the connection so SQLite applies it. Also the versions of a shared line (promote, roll back)."""

    path: Path

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with db.connect(self.path) as con:
            con.create_function("studio_norm", 1, norm_label, deterministic=True)
            yield con

    _LABELLED = (f"SELECT id, login, input_key, studio_norm({LABEL_SQL}) AS lab FROM feedback "
                 f"WHERE run = ? AND status != 'dropped' AND {LABEL_SQL} IS NOT NULL")
    _SHARED = ("SELECT input_key FROM feedback WHERE run = ? AND status != 'dropped' GROUP BY input_key "
               "HAVING COUNT(DISTINCT login) > 1")
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
        # only the inputs two or more logins sent (the agreement index, no text read) have their labels worked out:
        # normalising every row's label text took 4 s a listing on 2,000 rows of 240 KB from one login
        labelled = f"{self._LABELLED} AND input_key IN ({self._SHARED})"
        latest = (f"SELECT login, input_key, lab FROM ({labelled}) WHERE id IN "
                  f"(SELECT MAX(id) FROM ({labelled}) GROUP BY login, input_key)")
        sql = (f"WITH l AS ({latest}) SELECT a.login, b.login, a.lab, b.lab FROM l a JOIN l b "
               "ON a.input_key = b.input_key AND a.login < b.login ORDER BY a.login, b.login LIMIT ?")
        with self._reading() as con:
            return [tuple(r) for r in con.execute(sql, (run, run, run, run, MAX_PAIR_ROWS))]  # type: ignore[misc]

    # ---- versions: which run of a shared line teammates see
    def record_version(self, line: str, run: str, action: str, login: str | None) -> None:
        """An owner promoted ``run`` (or rolled back to it) for the shared ``line`` (whoever may is the caller's
        check: studio/app/versions.py)."""
        if action not in ("promote", "rollback"):
            raise StudioError.of("feedback.status", status=str(action)[:20], statuses=["promote", "rollback"])
        values = (bounded("run", line, required=True), bounded("run", run, required=True), action, _login(login))
        with db.write(self.path) as con:
            con.execute("INSERT INTO versions (line, run, action, login, at) VALUES (?, ?, ?, ?, ?)",
                        (*values, time.time()))

    def version_history(self, line: str, limit: int = 200) -> list[dict[str, Any]]:
        """The line's promotions and rollbacks, oldest first."""
        with db.connect(self.path) as con:
            rows = con.execute("SELECT run, action, login, at FROM versions WHERE line = ? ORDER BY id DESC LIMIT ?",
                               (line, max(1, min(int(limit), 10_000)))).fetchall()
        return [dict(r) for r in reversed(rows)]

    def version_lines(self) -> list[str]:
        with db.connect(self.path) as con:
            return [r[0] for r in con.execute("SELECT DISTINCT line FROM versions ORDER BY line LIMIT 1000")]


class FeedbackStore(_AgreementReads):
    """The feedback table of one workspace. Cheap to create and touches no file: each call opens its own short
    connection (checked, db.connect), so an instance can be shared by threads and used from forked processes, and a
    damaged file is an error of the call that meets it, never of a page being built."""

    def __init__(self, path: str | Path):
        p = Path(path)
        # a workspace folder (tests, scripts) or the database file itself; a folder named like the database is the
        # database's place taken by a folder, refused when used, never a workspace to nest a database in
        self.path = p / DB_NAME if p.is_dir() and p.name != DB_NAME else p

    @classmethod
    def in_workspace(cls, workspace: str | Path) -> "FeedbackStore":
        return cls(Path(workspace) / DB_NAME)

    def schema_version(self) -> int:
        with db.connect(self.path) as con:
            return int(con.execute("SELECT version FROM schema_version").fetchone()[0])

    # ---- teammates
    def add(self, *, run: str, login: str | None, input: str, answer: str, verdict: str,
            correction: str | None = None, scores: dict[str, Any] | None = None, source: str = "demo",
            visitor: str | None = None) -> int:
        """Record one teammate's feedback on one answer; returns its id. ``visitor``: who sent it on a page without
        logins (its page session), so each visitor has a quota of their own.

        Raises:
            StudioError: an unknown verdict or source, an empty run/input, a text over its limit or not text, a
                quota reached, or a database that cannot be used.
        """
        if verdict not in VERDICTS:
            raise StudioError.of("feedback.verdict", verdict=str(verdict)[:20], verdicts=list(VERDICTS))
        if source not in SOURCES:
            raise StudioError.of("feedback.source", source=str(source)[:20], sources=list(SOURCES))
        run_v, login_v = bounded("run", run, required=True), _login(login)
        text = bounded("input", input, required=True)
        said, fix, scored = bounded("answer", answer) or "", bounded("correction", correction), scores_text(scores)
        seen = bounded("visitor", visitor)
        nbytes = size(text, said, fix, scored)
        key, label = _derived(said, fix, None)
        now = time.time()
        with db.write(self.path) as con:
            quota.check(con, run=run_v or "", login=login_v, visitor=seen, anonymous=login_v == LOCAL_LOGIN,
                        adding=nbytes, now=now)
            cur = con.execute(
                "INSERT INTO feedback (run, login, created, updated, input, input_key, answer, verdict, correction,"
                " scores, source, bytes, fix_key, label, visitor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_v, login_v, now, now, text, input_key(text or ""), said, verdict, fix, scored, source, nbytes,
                 key, label, seen))
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
        text = bounded("correction", correction)
        with db.write(self.path) as con:
            row = self._own(con, feedback_id, login)
            key, label = _derived(row["answer"], text, None)
            con.execute("UPDATE feedback SET verdict = ?, correction = ?, status = 'new', edited = NULL, "
                        "reviewer = NULL, updated = ?, fix_key = ?, label = ?, bytes = ? WHERE id = ?",
                        (verdict or row["verdict"], text, time.time(), key, label,
                         size(row["input"], row["answer"], text, row["scores"]), row["id"]))

    def withdraw(self, feedback_id: int, login: str | None) -> None:
        """A login takes back its own feedback (the row is deleted; datasets made earlier keep their copy).

        Raises:
            StudioError: not this login's row.
        """
        with db.write(self.path) as con:
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
        text = bounded("correction", edited)
        with db.write(self.path) as con:
            row = con.execute("SELECT id, answer, correction, edited, status FROM feedback WHERE id = ?",
                              (int(feedback_id),)).fetchone()
            if row is None:
                raise StudioError.of("feedback.missing", id=int(feedback_id))
            final = text if edited is not None else row["edited"]
            key, label = _derived(row["answer"], row["correction"], final)
            con.execute("UPDATE feedback SET status = ?, edited = ?, reviewer = ?, updated = ?, fix_key = ?, "
                        "label = ? WHERE id = ?", (status or row["status"], final, _login(reviewer), time.time(),
                                                   key, label, row["id"]))

    def accept_new(self, *, run: str, reviewer: str | None, login: str | None = None,
                   label: str | None = None) -> int:
        """Accept every new row of ``run`` that the filters match, in one statement; how many."""
        where, args = _where(run, login, "new", label)
        with db.write(self.path) as con:
            cur = con.execute(f"UPDATE feedback SET status = 'accepted', reviewer = ?, updated = ?{where}",
                              (_login(reviewer), time.time(), *args))
            return int(cur.rowcount)

    # ---- reading
    def get(self, feedback_id: int) -> Feedback | None:
        with db.connect(self.path) as con:
            row = con.execute(f"SELECT {_SELECT} FROM feedback WHERE id = ?", (int(feedback_id),)).fetchone()
        return _record(row) if row else None

    def page(self, *, run: str | None = None, login: str | None = None, status: str | None = None,
             label: str | None = None, page: int = 1, per_page: int = PAGE_ROWS,
             cut: int | None = SHOWN_CHARS) -> Page:
        """One page of rows, oldest first, filtered by run, login, status and label (the model's answer or the
        correction); each text cut to ``cut`` characters in SQL, so a page of long rows stays small."""
        where, args = _where(run, login, status, label)
        per_page = max(1, min(int(per_page), 500))
        texts = ("input", "answer", "correction", "edited")
        columns = ", ".join(f"substr({c}, 1, {int(cut)}) AS {c}" if cut and c in texts else c for c in _FIELDS)
        # a run's rows in conflict come first, so an owner settles them before anything trains on the run
        order, first = ("(status != 'dropped' AND input_key IN ({})) DESC, id".format(
            self._CLASH.format(labelled=self._LABELLED)), [run]) if run else ("id", [])
        with self._reading() as con:
            total = int(con.execute(f"SELECT COUNT(*) FROM feedback{where}", args).fetchone()[0])
            pages = max(1, -(-total // per_page))
            number = max(1, min(int(page), pages))
            rows = [_record(r) for r in con.execute(f"SELECT {columns} FROM feedback{where} ORDER BY {order} LIMIT ? "
                                                    "OFFSET ?", (*args, *first, per_page, (number - 1) * per_page))]
        return Page(rows, total, number, pages)

    def iter_rows(self, *, run: str | None = None, status: str | None = None, login: str | None = None,
                  label: str | None = None) -> Iterator[Feedback]:
        """Every matching row, oldest first, whole, fetched BATCH at a time (never a list of all of them)."""
        where, args = _where(run, login, status, label)
        last = 0
        while True:
            with db.connect(self.path) as con:  # short connections: a slow consumer never holds the file
                batch = [_record(r) for r in con.execute(
                    f"SELECT {_SELECT} FROM feedback{where}{' AND' if where else ' WHERE'} id > ? ORDER BY id "
                    "LIMIT ?", (*args, last, BATCH))]
            yield from batch
            if len(batch) < BATCH:
                return
            last = batch[-1].id

    def count(self, run: str | None = None, status: str | None = None) -> int:
        where, args = _where(run, None, status, None)
        with db.connect(self.path) as con:
            return int(con.execute(f"SELECT COUNT(*) FROM feedback{where}", args).fetchone()[0])

    def runs(self) -> list[str]:
        with db.connect(self.path) as con:
            return [r[0] for r in con.execute("SELECT DISTINCT run FROM feedback ORDER BY run")]

    def accepted_by_run(self) -> list[tuple[str, int]]:
        """(run, accepted rows) for every run with accepted rows, most first."""
        with db.connect(self.path) as con:
            return [(r[0], int(r[1])) for r in con.execute(
                "SELECT run, COUNT(*) AS n FROM feedback WHERE status = 'accepted' GROUP BY run ORDER BY n DESC, run")]

    def conflicts(self, run: str, limit: int = 20) -> list[Conflict]:
        """Up to ``limit`` conflicting inputs of ``run`` (``conflict_keys``' rule: a 👍 is a label too) with who said
        what (texts cut to LABEL_CHARS)."""
        out = []
        with self._reading() as con:
            clash = self._CLASH.format(labelled=self._LABELLED)
            for (key,) in con.execute(clash + " LIMIT ?", (run, int(limit))).fetchall():
                answers: dict[str, list[tuple[str, int]]] = {}
                shown: str = ""
                for r in con.execute(
                        f"SELECT id, login, substr(input, 1, {LABEL_CHARS}), studio_norm({LABEL_SQL}), substr("
                        f"{LABEL_SQL}, 1, {LABEL_CHARS}) FROM feedback WHERE run = ? AND input_key = ? AND status != "
                        f"'dropped' AND {LABEL_SQL} IS NOT NULL ORDER BY id LIMIT 100", (run, key)):
                    shown = shown or r[2]
                    answers.setdefault(r[4], []).append((r[1], int(r[0])))
                out.append(Conflict(shown, answers))
        return out

    def summary(self, run: str, top: int = 20) -> dict[str, Any]:
        """Counts for the review panel, in SQL: by verdict, status, login and label (the correction, else the model's
        answer; the ``top`` most frequent, cut to LABEL_CHARS, the rest as one count), and the conflicts."""
        def grouped(con: sqlite3.Connection, column: str, total: int) -> dict[str, int]:
            found = con.execute(f"SELECT {column}, COUNT(*) AS n FROM feedback WHERE run = ? GROUP BY {column} "
                                "ORDER BY n DESC, 1 LIMIT ?", (run, top)).fetchall()
            out = {str(k): int(n) for k, n in found}
            rest = total - sum(out.values())  # the less frequent values, as one count
            return {**out, **({"…": rest} if rest else {})}
        with db.connect(self.path) as con:
            total = int(con.execute("SELECT COUNT(*) FROM feedback WHERE run = ?", (run,)).fetchone()[0])
            out = {"total": total, **{c: grouped(con, c, total) for c in ("verdict", "status", "login", "label")}}
        out["conflicts"] = len(self.conflict_keys(run))
        return out
