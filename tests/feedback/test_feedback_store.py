"""The feedback database: several processes write at once and no row is lost; bounds, ownership, migrations."""
from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.feedback.store import DB_NAME, LIMITS, LOCAL_LOGIN, MIGRATIONS, SCHEMA_VERSION, FeedbackStore

WRITERS, EACH = 6, 40


def _writer(db: str, who: int, start: "mp.synchronize.Barrier") -> None:
    store = FeedbackStore(db)  # each process opens the file itself, as a demo process does
    start.wait(60)  # all begin together so their transactions really contend for the write lock
    for i in range(EACH):
        store.add(run="run-a", login=f"user{who}", input=f"tweet {who}-{i}", answer="neutral",
                  verdict="down", correction="negative", scores={"negative": 0.4, "neutral": 0.5})


def test_many_processes_write_at_once_and_no_row_is_lost(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    FeedbackStore(db)
    ctx = mp.get_context("spawn")  # a fresh interpreter per writer: nothing shared but the file
    start = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=_writer, args=(str(db), w, start)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    for p in procs:  # a writer stuck behind a crashed one must not outlive the test
        if p.is_alive():
            p.kill()
    assert [p.exitcode for p in procs] == [0] * WRITERS
    store = FeedbackStore(db)
    rows = list(store.iter_rows(run="run-a"))
    assert len(rows) == store.count() == WRITERS * EACH
    seen = {(r.login, r.input) for r in rows}
    assert seen == {(f"user{w}", f"tweet {w}-{i}") for w in range(WRITERS) for i in range(EACH)}
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_record_keeps_every_field(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    fid = store.add(run="r1", login=None, input="The flight was late", answer="positive", verdict="down",
                    correction="negative", scores={"positive": 0.7}, source="playground")
    r = store.get(fid)
    assert r is not None
    assert (r.run, r.login, r.input, r.answer, r.verdict, r.correction, r.scores, r.status, r.source) == (
        "r1", LOCAL_LOGIN, "The flight was late", "positive", "down", "negative", {"positive": 0.7}, "new",
        "playground")
    assert r.created > 0 and r.final_correction == "negative"


@pytest.mark.parametrize("field", ["input", "answer", "correction"])
def test_every_text_is_bounded_with_a_reason(tmp_path: Path, field: str) -> None:
    store = FeedbackStore(tmp_path)
    args = {"run": "r", "login": "ann", "input": "x", "answer": "y", "verdict": "down", "correction": "z"}
    args[field] = "a" * (LIMITS[field] + 1)
    with pytest.raises(StudioError) as err:
        store.add(**args)
    assert err.value.code == "feedback.too_long" and field in err.value.message and f"{LIMITS[field]:,}" in \
        err.value.message
    assert store.count() == 0


def test_bad_verdict_and_empty_input_are_refused(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    with pytest.raises(StudioError, match="verdict"):
        store.add(run="r", login="a", input="x", answer="y", verdict="<b>meh</b>")
    with pytest.raises(StudioError, match="input"):
        store.add(run="r", login="a", input="  ", answer="y", verdict="up")


def test_a_login_changes_or_withdraws_only_its_own(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    fid = store.add(run="r", login="ann", input="x", answer="positive", verdict="down", correction="neutral")
    store.review(fid, reviewer="owner", status="accepted", edited="negative")
    with pytest.raises(StudioError) as err:
        store.change(fid, "bob", correction="positive")
    assert err.value.code == "feedback.not_yours"
    with pytest.raises(StudioError):
        store.withdraw(fid, "bob")
    store.change(fid, "ann", correction="negative")
    r = store.get(fid)
    assert r is not None and r.correction == "negative" and r.status == "new" and r.edited is None
    store.withdraw(fid, "ann")
    assert store.get(fid) is None


def test_owner_review_accepts_edits_drops(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    a = store.add(run="r", login="ann", input="x", answer="positive", verdict="down", correction="neutral")
    b = store.add(run="r", login="bob", input="y", answer="positive", verdict="up")
    store.review(a, reviewer="owner", status="accepted", edited="negative")
    store.review(b, reviewer="owner", status="dropped")
    assert [r.status for r in store.iter_rows(run="r")] == ["accepted", "dropped"]
    assert store.get(a).final_correction == "negative"  # type: ignore[union-attr]
    assert [r.id for r in store.iter_rows(run="r", label="negative")] == [a]
    with pytest.raises(StudioError):
        store.review(a, reviewer="owner", status="merged")


def test_an_old_database_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    with sqlite3.connect(db) as con:  # a version-1 file, as the first studio with feedback wrote it
        con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        con.execute("INSERT INTO schema_version VALUES (1)")
        for sql in MIGRATIONS[0][1]:
            con.execute(sql)
        con.execute("INSERT INTO feedback (run, login, created, updated, input, input_key, answer, verdict) "
                    "VALUES ('r', 'ann', 1, 1, 'x', 'k', 'y', 'up')")
    store = FeedbackStore(db)
    assert store.schema_version() == SCHEMA_VERSION
    (row,) = store.iter_rows()
    assert row.source == "demo" and row.reviewer is None


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    FeedbackStore(db).add(run="r", login="ann", input="x", answer="y", verdict="up")
    with sqlite3.connect(db) as con:
        con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StudioError, match="newer studio"):
        FeedbackStore(db).add(run="r", login="ann", input="x", answer="y", verdict="up")


def test_a_login_has_an_hourly_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.feedback.quota as quota
    monkeypatch.setattr(quota, "ROWS_PER_HOUR", 3)
    store = FeedbackStore(tmp_path)
    for i in range(3):
        store.add(run="r", login="bot", input=f"x{i}", answer="y", verdict="up")
    with pytest.raises(StudioError) as err:
        store.add(run="r", login="bot", input="x3", answer="y", verdict="up")
    assert err.value.code == "feedback.quota" and store.count() == 3
    store.add(run="r", login="ann", input="x", answer="y", verdict="up")  # others are not held back
