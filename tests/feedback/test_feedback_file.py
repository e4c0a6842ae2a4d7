"""The feedback database is part of the confined workspace: one regular file, never reached through a link and never
a folder; every way the file can be unusable (not SQLite, truncated, damaged, another program's database, locked,
written by a newer studio) is a coded error that names the file and the fix, in English and Chinese, through the
store, the CLI and the page, and a newer schema stops every writer, not only the one that opened the file last."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from studio.errors import StudioError
from studio.feedback.store import DB_NAME, SCHEMA_VERSION, FeedbackStore

ROOT = Path(__file__).resolve().parents[2]
RAW_SQLITE = ("file is not a database", "malformed", "database is locked", "no such table", "no such column",
              "unable to open", "DatabaseError", "OperationalError", "Traceback", "Something went wrong")
SIDE = ("", "-wal", "-shm", "-journal")


def _cli(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studio", "feedback", "--workspace", str(ws), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _every_use(store: FeedbackStore) -> dict[str, Callable[[], object]]:
    """Each kind of call the page, the demo and the CLI make."""
    return {"add": lambda: store.add(run="r", login="ann", input="x", answer="y", verdict="up"),
            "list": lambda: store.page(run="r"), "count": lambda: store.count("r"), "runs": store.runs,
            "review": lambda: store.review(1, reviewer="o", status="accepted"),
            "summary": lambda: store.summary("r")}


def _no_raw_words(text: str) -> None:
    for raw in RAW_SQLITE:
        assert raw.casefold() not in text.casefold(), f"raw {raw!r} reached the reader: {text}"


@pytest.mark.parametrize("side", SIDE)
@pytest.mark.parametrize("target", ["missing", "existing"])
def test_the_database_and_its_side_files_are_never_reached_through_a_link(tmp_path: Path, side: str,
                                                                          target: str) -> None:
    """A link in the file's place (dangling to outside included) or in a side file's (WAL, shared memory, journal)
    is refused before SQLite opens anything: nothing is created or written outside the workspace."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    if side:
        FeedbackStore.in_workspace(ws).add(run="r", login="ann", input="x", answer="y", verdict="up")
        for s in SIDE[1:]:
            (ws / (DB_NAME + s)).unlink(missing_ok=True)
    victim = outside / "victim"
    if target == "existing":
        victim.write_bytes(b"keep me")
    (ws / (DB_NAME + side)).symlink_to(victim)
    store = FeedbackStore.in_workspace(ws)
    for what, call in _every_use(store).items():
        with pytest.raises(StudioError) as err:
            call()
        assert err.value.code == "feedback.db_link", (what, err.value.code)
        assert DB_NAME + side in err.value.message
    assert sorted(p.name for p in outside.iterdir()) == (["victim"] if target == "existing" else [])
    if target == "existing":
        assert victim.read_bytes() == b"keep me"
    out = _cli(ws, "list")
    assert out.returncode == 2 and DB_NAME + side in out.stderr, out.stderr
    _no_raw_words(out.stdout + out.stderr)


def test_a_folder_in_the_files_place_is_refused_not_opened_as_a_nested_database(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / DB_NAME).mkdir(parents=True)
    store = FeedbackStore.in_workspace(ws)
    for what, call in _every_use(store).items():
        with pytest.raises(StudioError) as err:
            call()
        assert err.value.code == "feedback.db_not_file", (what, err.value.code)
    assert list((ws / DB_NAME).iterdir()) == []  # no database made inside the folder
    out = _cli(ws, "summary", "--run", "r")
    assert out.returncode == 2 and DB_NAME in out.stderr and "0" not in out.stdout, (out.stdout, out.stderr)
    _no_raw_words(out.stdout + out.stderr)


def _good(ws: Path) -> Path:
    store = FeedbackStore.in_workspace(ws)
    for i in range(60):
        store.add(run="r", login="ann", input=f"text {i} " + "x" * 3000, answer="y", verdict="up")
    db = ws / DB_NAME
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def _not_sqlite(ws: Path) -> None:
    (ws / DB_NAME).write_bytes(b"these are not the rows you are looking for\n" * 200)


def _truncated(ws: Path) -> None:
    db = _good(ws)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _damaged(ws: Path) -> None:
    db = _good(ws)
    data = bytearray(db.read_bytes())
    data[4096 * 2: 4096 * 6] = b"\xa5" * (4096 * 4)
    db.write_bytes(bytes(data))


def _header(ws: Path) -> None:
    db = _good(ws)
    data = bytearray(db.read_bytes())
    data[16:40] = b"\xff" * 24
    db.write_bytes(bytes(data))


def _other_program(ws: Path) -> None:
    with sqlite3.connect(ws / DB_NAME) as con:
        con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")


def _other_columns(ws: Path) -> None:
    with sqlite3.connect(ws / DB_NAME) as con:
        con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        con.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
        con.execute("CREATE TABLE feedback (id INTEGER PRIMARY KEY, note TEXT)")


BROKEN = {"not SQLite": (_not_sqlite, "feedback.db_not_sqlite"), "truncated": (_truncated, "feedback.db_damaged"),
          "damaged pages": (_damaged, "feedback.db_damaged"), "damaged header": (_header, "feedback.db_not_sqlite"),
          "another program's database": (_other_program, "feedback.db_foreign"),
          "a table of other columns": (_other_columns, "feedback.db_foreign")}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_an_unusable_file_is_a_coded_error_naming_the_file_and_the_fix_everywhere(tmp_path: Path, kind: str) -> None:
    make, code = BROKEN[kind]
    ws = tmp_path / "ws"
    ws.mkdir()
    make(ws)
    store = FeedbackStore.in_workspace(ws)
    uses = {**_every_use(store), "every row": lambda: list(store.iter_rows(run="r"))}
    raised = []
    for what, call in uses.items():
        try:
            call()
        except StudioError as exc:
            raised.append((what, exc))
        # SQLite finds damage where it reads: a count from an intact index may still answer, never wrongly crash
    if kind != "damaged pages":
        assert [w for w, _ in raised] == list(uses), raised
    assert "every row" in [w for w, _ in raised]
    for what, err in raised:
        assert err.code == code, (what, err.code)
        for lang in ("en", "zh"):
            for surface in ("cli", "page"):
                text = err.text(lang, surface)
                assert DB_NAME in text, text
                _no_raw_words(text)
        assert "feedback.sqlite3.old" in err.text("en", "cli")  # the fix: move it aside
    for args in (("list",), ("summary", "--run", "r"), ("add", "--run", "r", "--input", "x", "--verdict", "up")):
        out = _cli(ws, *args)
        assert out.returncode == 2 and "Error:" in out.stderr and DB_NAME in out.stderr, (args, out.stderr)
        _no_raw_words(out.stdout + out.stderr)


def test_the_feedback_tab_shows_the_coded_error_in_the_pages_language(tmp_path: Path) -> None:
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.feedback_tab import list_feedback
    ctx = AppContext.create(tmp_path / "ws")
    _not_sqlite(ctx.workspace)
    for lang, words in (("en", "is not a SQLite database"), ("zh", "不是数据库文件")):
        with pytest.raises(gr.Error) as err:
            list_feedback(ctx.answering(lang=lang, user="olga"), "r", "", "", "", 1)
        assert words in str(err.value.message) and DB_NAME in str(err.value.message)
        _no_raw_words(str(err.value.message))


def test_a_locked_file_is_a_coded_error_after_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.feedback.db as db_mod
    monkeypatch.setattr(db_mod, "BUSY_TIMEOUT_MS", 200)
    ws = tmp_path / "ws"
    store = FeedbackStore.in_workspace(ws)
    store.add(run="r", login="ann", input="x", answer="y", verdict="up")
    holder = sqlite3.connect(ws / DB_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program (a backup, a database browser) holds the file
    try:
        with pytest.raises(StudioError) as err:
            store.add(run="r", login="ann", input="y", answer="y", verdict="up")
        assert err.value.code == "feedback.db_locked" and DB_NAME in err.value.message
        _no_raw_words(err.value.text("zh", "page"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.add(run="r", login="ann", input="y", answer="y", verdict="up")  # once it lets go, writing works again


def test_a_newer_schema_stops_every_writer_that_opened_the_file_before(tmp_path: Path) -> None:
    """A demo opens the store when it starts; a newer studio then migrates the file: the demo's next write is
    refused (not written with an old idea of the table), as the studio's and the CLI's are."""
    ws = tmp_path / "ws"
    demo_store = FeedbackStore.in_workspace(ws)  # opened at the demo's start
    demo_store.add(run="r", login="ann", input="x", answer="y", verdict="up")
    with sqlite3.connect(ws / DB_NAME) as con:  # a newer studio came by
        con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    for what, call in _every_use(demo_store).items():
        if what in ("add", "review"):
            with pytest.raises(StudioError) as err:
                call()
            assert err.value.code == "feedback.schema", what
            assert DB_NAME in err.value.text("zh", "page")
    with sqlite3.connect(ws / DB_NAME) as con:
        assert con.execute("SELECT COUNT(*) FROM feedback").fetchone()[0] == 1
    out = _cli(ws, "add", "--run", "r", "--input", "z", "--verdict", "up")
    assert out.returncode == 2 and "newer studio" in out.stderr, out.stderr
