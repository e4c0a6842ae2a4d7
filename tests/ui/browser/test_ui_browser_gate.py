"""Issue 49 end to end in a real browser (Debian's chromium), owner and viewer on real servers:

1. alice (owner) shares the demo of run "old" from the Evaluate tab's "Share a demo" panel;
2. bob (viewer) opens it, uploads a file of texts to "Rows worth checking" and works through the queue of the rows
   the run is least sure about: 👍 where the run is right, the right label where it is wrong;
3. alice accepts the rows on the Feedback tab, improves the run on the Train tab, reads the verdict on the frozen
   check set and promotes the improved run with one click;
4. bob's demo page now answers with the improved run (its header names it, and its scores are the improved run's);
   the Runs tab shows the versions; alice rolls back and the demo answers with "old" again.
"""
from __future__ import annotations

import csv
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
QUEUE = 6


@pytest.fixture()
def finished(tmp_path: Path, tiny_model_dir: Path) -> dict[str, Any]:
    ws = tmp_path / "ws"
    train_tiny_labels_run(ws, tiny_model_dir)
    pool = make_review_rows(30, seed=21)
    texts = tmp_path / "texts.csv"
    with open(texts, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text"])
        w.writerows([[r["input"]] for r in pool])
    logins = tmp_path / "logins.txt"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    return {"ws": ws, "logins": logins, "texts": texts, "truth": {r["input"]: r["output"] for r in pool},
            "model_dir": tiny_model_dir}


def _value(pg: Any, elem: str) -> str:
    return pg.locator(f"#{elem} textarea, #{elem} input").first.input_value()


def test_viewer_works_the_least_sure_queue_owner_gates_promotes_and_rolls_back(finished: dict[str, Any],
                                                                               browser: Any) -> None:
    from playwright.sync_api import expect
    from studio.evaluation import inference
    from studio.feedback.store import FeedbackStore
    from ui_server import Server
    ws, truth = finished["ws"], finished["truth"]
    studio = Server(ws, "--lang", "en", "--auth-file", str(finished["logins"]),
                    "--data-root", str(finished["model_dir"])).wait_ready()
    try:
        # 1. alice shares the demo of "old"
        alice = login_page(browser, studio.url, OWNER, height=1100)
        alice.get_by_role("tab", name="4. Evaluate").click()
        alice.get_by_text("Share a demo").click()
        alice.locator("#share-demo-start").click()
        status = alice.locator("#share-demo-status")
        expect(status).to_contain_text("is running", timeout=240_000)
        demo_url = re.search(r"http://[\w.:\[\]-]+/?", status.inner_text()).group(0)

        # 2. bob, a viewer, works through the queue of the rows the run is least sure about
        bob = login_page(browser, demo_url, VIEWER, height=1100)
        expect(bob.locator("#demo-header")).to_contain_text("old")
        bob.get_by_text("Rows worth checking").click()
        bob.locator("#least-sure-file input[type=file]").set_input_files(str(finished["texts"]))
        n = bob.locator("#least-sure-n input")
        n.fill(str(QUEUE))
        n.press("Tab")
        bob.locator("#least-sure-find").click()
        progress = bob.locator("#least-sure-progress")
        expect(progress).to_contain_text(f"Row 1 of {QUEUE}")
        seen = []
        for i in range(QUEUE):
            expect(progress).to_contain_text(f"Row {i + 1} of {QUEUE}")
            text = _value(bob, "least-sure-text")
            seen.append(text)
            answer = bob.locator("#least-sure-scores").inner_text()
            if truth[text] in answer.split("\n")[0]:  # the Label's heading is the run's answer
                bob.locator("#least-sure-right").click()
            else:
                bob.locator("#least-sure-fix input").click()
                bob.get_by_role("option", name=truth[text], exact=True).click()
                bob.locator("#least-sure-send").click()
        expect(progress).to_contain_text(f"All {QUEUE} rows checked")
        store = FeedbackStore.in_workspace(ws)
        rows = list(store.iter_rows(run="old"))
        assert sorted(r.input for r in rows) == sorted(seen) and {r.login for r in rows} == {"bob"}
        assert all((r.correction or r.answer) == truth[r.input] for r in rows)  # what bob said is what was stored

        # 3. alice reviews, improves, reads the verdict and promotes
        alice.get_by_role("tab", name="Feedback").click()
        alice.locator("#fb-refresh").click()
        expect(alice.locator("#fb-table")).to_contain_text("bob")
        alice.locator("#fb-accept-new").click()
        expect(alice.locator("#fb-info textarea, #fb-info input").first).to_have_value(
            f"{QUEUE} row(s) marked accepted")
        alice.get_by_role("tab", name="3. Train").click()
        alice.get_by_text("Improve this run with its feedback").click()
        expect(alice.locator("#improve-plan")).to_contain_text("kept aside to judge the result")
        alice.locator("#improve-btn").click()
        result = alice.locator("#improve-result")
        expect(result).to_contain_text("Check ", timeout=240_000)
        expect(result).to_contain_text("flipped right")
        if "Check failed" in result.inner_text():
            alice.locator("#improve-anyway input").check()  # the owner decides, and says so
        alice.locator("#improve-promote").click()
        expect(alice.locator("#improve-live")).to_contain_text("Teammates of old now see old-improved")

        # 4. the demo answers with the improved run; the Runs tab shows the versions; a rollback goes back
        new, old = ws / "runs" / "old-improved", ws / "runs" / "old"
        labels, like = inference.label_task(str(old))
        texts = list(truth)
        p_news, p_olds = (inference.label_probabilities(str(r), texts, labels, like) for r in (new, old))

        def pct(p: dict[str, float]) -> str:
            top = max(p, key=p.get)
            return f"{round(100 * p[top])}%"

        # a text whose shown score tells the two runs apart (the improved run trained 4 steps on bob's rows)
        probe, p_new, p_old = next((t, a, b) for t, a, b in zip(texts, p_news, p_olds) if pct(a) != pct(b))

        def shown_on(pg: Any) -> str:
            pg.reload()
            pg.locator("#demo-text textarea").fill(probe)
            pg.locator("#demo-classify").click()
            expect(pg.locator("#demo-scores")).not_to_be_empty()
            pg.wait_for_timeout(1000)
            return pg.locator("#demo-scores").inner_text()

        bob.reload()
        expect(bob.locator("#demo-header")).to_contain_text("old-improved")
        scores = shown_on(bob)
        assert pct(p_new) in scores and max(p_new, key=p_new.get) in scores, (scores, p_new, p_old)
        alice.get_by_role("tab", name="5. Runs").click()
        expect(alice.locator("#runs-versions")).to_contain_text("old → old-improved")
        alice.get_by_role("tab", name="3. Train").click()
        alice.locator("#improve-rollback").click()
        expect(alice.locator("#improve-live")).to_contain_text("Teammates of old now see old.")
        bob.reload()
        expect(bob.locator("#demo-header")).not_to_contain_text("old-improved")
        scores = shown_on(bob)
        assert pct(p_old) in scores and max(p_old, key=p_old.get) in scores, (scores, p_new, p_old)
    finally:
        studio.stop()
