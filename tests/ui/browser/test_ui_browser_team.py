"""Two logged-in teammates on one studio, in a real browser (Debian's chromium).

alice and bob are owners (one --auth-file). Settings belong to each login: bob's page, opened before alice saved,
changes bob's settings and never alice's; a page of alice's own that is older than her last save is refused with
a warning the page shows. A run alice starts says she started it, on her page and on bob's; when bob aborts it,
the run says bob stopped it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)

PASSWORD = "team-pw"


@pytest.fixture()
def team(tmp_path: Path) -> Iterator[Any]:
    from ui_server import Server
    logins = tmp_path / "logins.txt"
    logins.write_text(f"alice:{PASSWORD}:owner\nbob:{PASSWORD}:owner\n", encoding="utf-8")
    srv = Server(tmp_path / "ws", "--lang", "en", "--auth-file", str(logins)).wait_ready()
    yield srv
    srv.stop()


def login(browser: Any, url: str, user: str) -> Any:
    """A fresh browser profile (its own cookies) logged in as ``user``, on the studio's page."""
    from playwright.sync_api import expect
    pg = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url)
    pg.locator("input").nth(0).fill(user)
    pg.locator("input[type=password]").fill(PASSWORD)
    pg.locator("button").filter(has_text=re.compile("log ?in", re.I)).first.click()
    expect(pg.get_by_role("tab", name="2. Settings")).to_be_visible()
    return pg


def budget(pg: Any, name: str) -> None:
    pg.locator("#simple-budget").get_by_text(name, exact=True).click()


def budget_value(pg: Any) -> str:
    return pg.locator("#simple-budget input:checked").input_value()


def settle(pg: Any) -> None:
    """The page's load events (restore the settings, check them) have run: the check panel has its text."""
    from playwright.sync_api import expect
    expect(pg.locator("#check")).not_to_be_empty()
    pg.wait_for_timeout(1500)  # the change events the restore sets off (they keep the settings) end too


def test_teammates_keep_their_own_settings_and_runs_say_who_started_and_stopped_them(team: Any) -> None:
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=45_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        # opened first: bob's page and a second page of alice's (both before alice saves)
        bob = login(browser, team.url, "bob")
        alice_old = login(browser, team.url, "alice")
        for pg in (bob, alice_old):
            pg.get_by_role("tab", name="2. Settings").click()
            settle(pg)
        alice = login(browser, team.url, "alice")
        alice.get_by_role("tab", name="2. Settings").click()
        settle(alice)

        # alice picks "best": her settings are saved (a reload shows it)
        budget(alice, "best")
        alice.wait_for_timeout(1500)
        # her older page changes the budget: refused, and the page says so
        budget(alice_old, "quick")
        expect(alice_old.get_by_text("Your settings were changed in another page")).to_be_visible()
        # bob's page (opened before alice saved) changes bob's settings, not alice's, and is not refused
        budget(bob, "quick")
        bob.wait_for_timeout(1500)
        expect(bob.get_by_text("Your settings were changed in another page")).to_have_count(0)
        alice.reload()
        alice.get_by_role("tab", name="2. Settings").click()
        settle(alice)
        assert budget_value(alice) == "best"
        bob.reload()
        bob.get_by_role("tab", name="2. Settings").click()
        settle(bob)
        assert budget_value(bob) == "quick"

        # alice trains (the sample reviews, converted on her Data tab), and the run says she started it
        alice.get_by_role("tab", name="1. Data").click()
        alice.locator("#sample-btn").click()
        expect(alice.locator("#data-info")).to_contain_text("Read 427 rows")
        alice.locator("#convert-btn").click()
        expect(alice.locator("#data-report")).to_contain_text("Wrote 427 rows")
        alice.get_by_role("tab", name="3. Train").click()
        expect(alice.locator("#train-will")).to_contain_text("sample_reviews")
        # a long run (tiny-demo trains 480 steps in seconds): it must still be going when bob presses Abort
        alice.get_by_role("tab", name="2. Settings").click()
        alice.locator("#advanced").get_by_text("Advanced: every setting").click()
        steps = alice.locator("#field-max_steps input")
        steps.fill("100000")
        steps.press("Tab")
        alice.wait_for_timeout(1500)
        alice.get_by_role("tab", name="3. Train").click()
        alice.locator("#start-btn").click()
        expect(alice.locator("#train-status")).to_contain_text("Started by alice")

        # bob sees the same run, says who started it, and aborts it
        bob.get_by_role("tab", name="3. Train").click()
        expect(bob.locator("#train-status")).to_contain_text("Started by alice")
        expect(bob.locator("#abort-btn")).to_be_enabled()
        bob.locator("#abort-btn").click()
        for pg in (bob, alice):
            expect(pg.locator("#train-status")).to_contain_text("Aborted", timeout=60_000)
            expect(pg.locator("#train-status")).to_contain_text("Started by alice · stopped by bob")
            expect(pg.locator("#train-status")).to_contain_text("stopped on request by bob")

        # the Runs tab's table names the starter
        alice.get_by_role("tab", name="5. Runs").click()
        table = alice.locator("#runs-table")
        expect(table).to_contain_text("started by")
        expect(table).to_contain_text("alice")
        browser.close()
