"""Every read and write of feedback is bounded: a listing holds one page of texts however long and many the rows,
counts and conflicts are computed in the database (and agree with the rule they replace), and a sender is held to
bytes as well as rows: per login, per visitor of a page without logins, per run."""
from __future__ import annotations

import json
import random
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.feedback.store import FeedbackStore, input_key

try:
    from feedback_rows import bulk
except ImportError:  # tests/ as a package
    from tests.feedback.feedback_rows import bulk

LONG = 20_000  # characters: a text at its limit


def test_a_listing_of_many_long_rows_holds_one_page_of_text(tmp_path: Path) -> None:
    """300 rows of 60,000 characters (18 MB of text): the Feedback tab's listing answers with one page of rows and
    counts of all of them, and holds little memory while it makes the answer."""
    from studio.app.context import AppContext
    from studio.ui.feedback_tab import list_feedback
    ctx = AppContext.create(tmp_path / "ws")
    bulk(ctx.workspace, ({"input": f"{i} " + "i" * LONG, "answer": "a" * LONG, "correction": f"{i} " + "c" * LONG,
                          "login": f"t{i % 7}"} for i in range(300)))
    list_feedback(ctx, "r", "", "", "")  # the first open brings the file up to date: not what is measured
    tracemalloc.start()
    try:
        table, counts, clash, *_ = list_feedback(ctx, "r", "", "", "")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    sent = len(json.dumps([table, counts, clash], default=str))
    assert len(table["value"]) <= 50 and counts["total"] == 300 and sum(counts["login"].values()) == 300
    assert sent < 2_000_000, f"one listing sends {sent / 1e6:.1f} MB"
    assert peak < 8 * 2**20, f"one listing held {peak / 2**20:.0f} MB"


def _reference(rows: list[dict]) -> tuple[dict, set[str]]:
    """The rule the SQL replaces, as the studio computed it in Python over every row."""
    def norm(t: str) -> str:
        return " ".join(t.split()).casefold()
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        fixed = r["edited"] if r.get("edited") is not None else r.get("correction")
        if r["status"] != "dropped" and fixed:
            groups[input_key(r["input"])].append({**r, "fixed": fixed})
    clash = set()
    for key, group in groups.items():
        if len({norm(g["fixed"]) for g in group}) > 1 and len({g["login"] for g in group}) > 1:
            clash.add(key)
    counts = {"total": len(rows), "verdict": dict(Counter(r["verdict"] for r in rows)),
              "status": dict(Counter(r["status"] for r in rows)), "login": dict(Counter(r["login"] for r in rows)),
              "conflicts": len(clash)}
    return counts, clash


def test_counts_and_conflicts_from_the_database_agree_with_the_rule_on_every_row(tmp_path: Path) -> None:
    rnd = random.Random(3)
    store = FeedbackStore(tmp_path / "ws")
    rows = []
    for i in range(100):
        text = rnd.choice(["late again", "Late  AGAIN", "seat ok", "fine", f"unique {i}"])
        fix = rnd.choice([None, "negative", " Negative", "positive", "neutral"])
        who = rnd.choice(["ann", "bob", "cat"])
        fid = store.add(run="r", login=who, input=text, answer=rnd.choice(["positive", "negative"]),
                        verdict="down" if fix else rnd.choice(["up", "down"]), correction=fix)
        status = rnd.choice(["new", "accepted", "dropped"])
        store.review(fid, reviewer="o", status=status)
        rows.append({"input": text, "correction": fix, "login": who, "status": status,
                     "verdict": "down" if fix else store.get(fid).verdict})  # type: ignore[union-attr]
    counts, clash = _reference(rows)
    summary = store.summary("r")
    assert {k: summary[k] for k in counts} == counts
    assert store.conflict_keys("r") == clash and clash
    shown = store.conflicts("r", limit=1000)
    assert {input_key(c.input) for c in shown} == clash
    assert all(len({w for who in c.answers.values() for w, _ in who}) > 1 for c in shown)


def test_a_flood_of_long_rows_is_stopped_by_bytes_not_only_by_rows(tmp_path: Path) -> None:
    """2,000 rows an hour was the only cap: ~470 MB an hour per login. Bytes are counted too."""
    store = FeedbackStore(tmp_path / "ws")
    wide = "😀" * (LONG - 8)  # 4 bytes a character: a row of ~240 KB, as the flood that filed issue 47 sent
    added, refused = 0, None
    for i in range(700):
        try:
            store.add(run="r", login="bob", verdict="down", input=f"{i} {wide}", answer=wide, correction=wide)
            added += 1
        except StudioError as exc:
            refused = exc
            break
    assert refused is not None and refused.code == "feedback.quota_bytes", f"{added} rows of 240 KB accepted"
    assert "bob" in refused.message and added * 240_000 < 40 * 2**20
    store.add(run="r", login="ann", input="x", answer="y", verdict="up")  # another login is not held back


def test_each_visitor_of_a_page_without_logins_has_a_quota_of_its_own(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every visitor of a loopback demo is the login "local": one visitor's script used up everyone's hour."""
    from studio.feedback import quota
    monkeypatch.setattr(quota, "ROWS_PER_HOUR", 3)
    monkeypatch.setattr(quota, "ANONYMOUS_SHARE", 2)
    store = FeedbackStore(tmp_path / "ws")
    for i in range(3):
        store.add(run="r", login=None, visitor="page-1", input=f"x{i}", answer="y", verdict="up")
    with pytest.raises(StudioError) as err:
        store.add(run="r", login=None, visitor="page-1", input="x4", answer="y", verdict="up")
    assert err.value.code == "feedback.quota_visitor"
    for i in range(3):  # another visitor is not held back by the first
        store.add(run="r", login=None, visitor="page-2", input=f"z{i}", answer="y", verdict="up")
    with pytest.raises(StudioError) as err:  # all visitors together: ANONYMOUS_SHARE visitors' worth
        store.add(run="r", login=None, visitor="page-3", input="w", answer="y", verdict="up")
    assert err.value.code == "feedback.quota"


def test_a_run_keeps_a_bounded_size_of_feedback_whoever_sends_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.feedback import quota
    monkeypatch.setattr(quota, "RUN_BYTES", 100_000)
    store = FeedbackStore(tmp_path / "ws")
    for i in range(4):
        store.add(run="r", login=f"t{i}", input=f"{i}" + "x" * (LONG - 1), answer="y", verdict="up")
    with pytest.raises(StudioError) as err:
        store.add(run="r", login="t9", input="9" + "x" * (LONG - 1), answer="y", verdict="up")
    assert err.value.code == "feedback.run_full" and "'r'" in err.value.message
    store.add(run="other", login="t9", input="x", answer="y", verdict="up")


def test_the_demo_page_records_each_visitor_by_its_page_session(tmp_path: Path) -> None:
    """The feedback row of a page without logins carries its page session: the quota's visitor."""
    from types import SimpleNamespace
    from studio.app.feedback_intake import record_generated
    from studio.app import answers
    store = FeedbackStore(tmp_path / "ws")
    req = SimpleNamespace(session_hash="page-7", headers={}, username=None)
    answers.keep(req, "chat", "/runs/r", ("hi",), "hello")
    fid, _ = record_generated(store, kind="chat", run_name="r", run_key="/runs/r", asked=("hi",), shown="hello",
                              verdict="up", correction=None, labels=[], login=None, request=req, source="demo")
    import sqlite3
    with sqlite3.connect(store.path) as con:
        assert con.execute("SELECT login, visitor FROM feedback WHERE id = ?", (fid,)).fetchone() == \
            ("local", "page-7")
