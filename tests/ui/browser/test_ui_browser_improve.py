"""In a real browser (Debian's chromium): an owner opens "Improve this run" on the Train tab for a
run with accepted feedback, sees what the feedback holds and the method, presses Improve, and the before / after
comparison appears when the improving run (trained by the studio's run queue) finishes."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)

try:
    from conftest import add_corrections, train_tiny_labels_run
except ImportError:  # tests/ as a package
    from tests.conftest import add_corrections, train_tiny_labels_run


@pytest.fixture()
def studio(tmp_path: Path, tiny_model_dir: Path) -> Iterator[Any]:
    from ui_server import Server
    ws = tmp_path / "ws"
    (ws / "runs").mkdir(parents=True)
    train_tiny_labels_run(ws, tiny_model_dir)
    add_corrections(ws, 6)
    srv = Server(ws, "--lang", "en", "--no-auth", "--data-root", str(tiny_model_dir)).wait_ready()
    yield srv
    srv.stop()


def test_improve_this_run_shows_the_plan_then_the_before_and_after(studio: Any) -> None:
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
        pg.set_default_timeout(60_000)
        pg.goto(studio.url)
        pg.get_by_role("tab", name="3. Train").click()
        pg.get_by_text("Improve this run with its feedback").click()
        expect(pg.locator("#improve-plan")).to_contain_text("6 correction(s), 6 preference pair(s).")
        expect(pg.locator("#improve-plan")).to_contain_text("SFT")
        pg.locator("#improve-btn").click()
        result = pg.locator("#improve-result")
        expect(result).to_contain_text("improved from old with 6 feedback rows (sft)", timeout=240_000)
        expect(result).to_contain_text("held-out rows of old")
        expect(result).to_contain_text("F1 positive")
        # held-out rows and feedback rows before / after, then the gate's verdict on the frozen check set
        expect(result).to_contain_text("Check ")
        assert result.locator("table").count() >= 3
        browser.close()
