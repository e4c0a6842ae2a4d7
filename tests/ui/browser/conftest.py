"""What the browser tests share: one headless Chromium per test (``browser``), and a page logged in as someone
(``login_page``)."""
from __future__ import annotations

import re
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM


def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, Playwright's waits at 60 s (a 2-core machine under load is slow): the body of
    every browser fixture, whatever its scope."""
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def browser() -> Iterator[Any]:
    """One Chromium per test."""
    yield from chromium()


def login_page(browser: Any, url: str, who: tuple[str, str], height: int = 1000) -> Any:
    """A new English page at ``url`` with ``who``'s (login, password) typed into the login form."""
    pg = browser.new_context(viewport={"width": 1400, "height": height}, locale="en-US").new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url)
    pg.locator("input").nth(0).fill(who[0])
    pg.locator("input[type=password]").fill(who[1])
    pg.locator("button").filter(has_text=re.compile("log ?in", re.I)).first.click()
    return pg
