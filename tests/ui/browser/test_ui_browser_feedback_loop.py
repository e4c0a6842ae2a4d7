"""The feedback loop end to end in a real browser (Debian's chromium) against real servers: a teammate's
corrections on the demo page reach the database, become a dataset in one click and train an improved run whose
before / after appears on the page.

1. ``python -m studio demo old`` (the verb, as a child process) with a login file: bob, a viewer, logs in, types
   reviews the run gets wrong and sends "the right answer" for each from the feedback row's dropdown;
2. the rows are in the workspace's SQLite feedback database, recorded as bob's, with the model's answer and his
   correction; the demo is stopped;
3. the studio (launch.py, same login file): alice, an owner, opens the Feedback tab, sees bob's rows, accepts them
   (the row-ids box and Accept) and presses Make dataset once: the dataset is in data/dataset_info.json;
4. on the Train tab she opens "Improve this run", presses Improve, and the before / after tables appear.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ui.browser.conftest import login_page
from tests.ui.browser.test_browser import pytestmark  # noqa: F401  (same browser, same skip rules)

try:
    from conftest import make_review_rows, train_tiny_labels_run
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, train_tiny_labels_run

OWNER, VIEWER = ("alice", "owner-pw"), ("bob", "viewer-pw")
N_FIX = 4  # reviews bob corrects


@pytest.fixture()
def finished(tmp_path: Path, tiny_model_dir: Path) -> dict[str, Any]:
    """A finished tiny LoRA labels run "old", its login file, and N_FIX reviews it labels wrongly."""
    from studio.app.demo_run import describe_run
    from studio.evaluation import inference
    ws = tmp_path / "ws"
    (ws / "runs").mkdir(parents=True)
    train_tiny_labels_run(ws, tiny_model_dir)
    info = describe_run(ws / "runs" / "old")
    assert info.task == "labels", info
    # reviews the run answers wrongly (the demo computes the same answer on its server): each "right answer" is a
    # correction, never a 👍, so the counts below are exact
    pool = make_review_rows(40, seed=9)
    scores = inference.label_probabilities(info.path, [r["input"] for r in pool], info.labels, info.like)
    wrong = [dict(r, model=max(s, key=s.get)) for r, s in zip(pool, scores) if max(s, key=s.get) != r["output"]]
    assert len(wrong) >= N_FIX, f"the tiny run got all but {len(wrong)} of {len(pool)} right"
    logins = tmp_path / "logins.txt"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    return {"ws": ws, "logins": logins, "fixes": wrong[:N_FIX], "labels": list(info.labels),
            "model_dir": tiny_model_dir}


def test_a_teammates_corrections_on_the_demo_train_an_improved_run(finished: dict[str, Any], browser: Any) -> None:
    from playwright.sync_api import expect
    from studio.feedback.store import FeedbackStore
    from ui_server import DemoServer, Server
    ws, fixes = finished["ws"], finished["fixes"]
    store = FeedbackStore.in_workspace(ws)
    assert list(store.iter_rows(run="old")) == []

    # 1. bob (a viewer) on the demo page: each review, then the right label from the dropdown, then Send
    demo = DemoServer(ws, "old", "--lang", "en", "--auth-file", str(finished["logins"])).wait_ready()
    try:
        pg = login_page(browser, demo.url, VIEWER)
        expect(pg.locator("#demo-header")).to_contain_text("old")
        reply = pg.locator("#fb-reply textarea, #fb-reply input").first
        said = ""
        for row in fixes:
            pg.locator("#demo-text textarea").fill(row["input"])
            pg.locator("#fb-right input").click()
            pg.get_by_role("option", name=row["output"], exact=True).click()
            expect(pg.locator("#fb-right input")).to_have_value(row["output"])
            pg.locator("#fb-send").click()
            expect(reply).not_to_have_value(said)  # this row's reply, not the last one's
            expect(reply).to_have_value(re.compile(r"your right answer is recorded \(#\d+\)"))
            said = reply.input_value()
    finally:
        demo.stop()

    # 2. the database holds exactly bob's corrections: his login, the model's (wrong) answer, his label
    rows = sorted(store.iter_rows(run="old"), key=lambda r: r.id)
    assert [(r.login, r.input, r.answer, r.verdict, r.correction, r.status, r.source) for r in rows] == [
        ("bob", f["input"], f["model"], "down", f["output"], "new", "demo") for f in fixes]
    ids = [r.id for r in rows]

    # 3. alice (an owner) in the studio: Feedback tab, accept bob's rows, Make dataset once
    studio = Server(ws, "--lang", "en", "--auth-file", str(finished["logins"]),
                    "--data-root", str(finished["model_dir"])).wait_ready()
    try:
        pg = login_page(browser, studio.url, OWNER)
        pg.get_by_role("tab", name="Feedback").click()
        table = pg.locator("#fb-table")
        for f in fixes:
            expect(table).to_contain_text(f["input"][:30])
        expect(table).to_contain_text("bob")
        # no "accept all" control: the owner types the ids the table shows into the row-ids box
        shown = table.inner_text()
        assert all(re.search(rf"(?<![\d#]){fid}(?!\d)", shown) for fid in ids), shown[:2000]
        pg.locator("#fb-ids input, #fb-ids textarea").first.fill(", ".join(map(str, ids)))
        pg.locator("#fb-accept").click()
        info = pg.locator("#fb-info textarea, #fb-info input").first
        expect(info).to_have_value(f"{N_FIX} row(s) marked accepted")
        assert [(r.status, r.reviewer) for r in sorted(store.iter_rows(run="old"), key=lambda r: r.id)] == \
            [("accepted", "alice")] * N_FIX
        pg.locator("#fb-dataset-name input, #fb-dataset-name textarea").first.fill("bob_fixes")
        pg.locator("#fb-make").click()
        expect(info).to_have_value(re.compile(rf"Made bob_fixes \({N_FIX}\)"))
        registered = json.loads((ws / "data" / "dataset_info.json").read_text(encoding="utf-8"))
        assert "bob_fixes" in registered
        made = [json.loads(line) for line in
                (ws / "data" / registered["bob_fixes"]["file_name"]).read_text(encoding="utf-8").splitlines()]
        assert sorted(r["output"] for r in made) == sorted(f["output"] for f in fixes)

        # 4. Train tab: Improve this run, then the before / after. (Improve builds its own old-improved_feedback
        # datasets from the same accepted rows: it does not train on "bob_fixes", the dataset Make dataset wrote.)
        pg.get_by_role("tab", name="3. Train").click()
        pg.get_by_text("Improve this run with its feedback").click()
        from studio.feedback.check_set import is_aside
        taught = sum(not is_aside(f["input"]) for f in fixes)  # one row in five is kept aside to judge the result
        expect(pg.locator("#improve-plan")).to_contain_text(f"{taught} correction(s)")
        pg.locator("#improve-btn").click()
        result = pg.locator("#improve-result")
        expect(result).to_contain_text(f"improved from old with {taught} feedback rows", timeout=240_000)
        expect(result).to_contain_text("held-out rows of old")
        expect(result).to_contain_text("F1 positive")
        expect(result).to_contain_text("Check ")  # the gate's verdict on the frozen check set, after the tables
        assert result.locator("table").count() >= 3
    finally:
        studio.stop()
