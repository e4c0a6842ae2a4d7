"""A labels run is tried the way it was trained, in a real browser, in Chinese and in English: a bare text typed in
the playground's input gets a label (no instruction needed), and the same text sent in the chat gets the label on
its first line and every label's score after it."""
from __future__ import annotations

import re
import shutil
from typing import Any, Iterator

import pytest

from studio.words.catalog import msg
from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)
from tests.ui.browser.test_ui_browser_words_walk import LOCALE, TABS


@pytest.fixture(scope="module")
def server(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ui_server import Server
    ws = tmp_path_factory.mktemp("as_trained") / "ws"
    shutil.copytree(runs["full"], ws / "runs" / "full")  # a finished labels run (positive / negative)
    srv = Server(ws).wait_ready()   # no --lang: each browser gets the page in its own language
    yield srv
    srv.stop()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_bare_text_gets_a_label_in_the_playground_and_the_chat(server: Any, runs: dict, lang: str) -> None:
    from playwright.sync_api import expect, sync_playwright
    text = runs["heldout"][0]["input"]
    label = re.compile(r"^\s*(positive|negative)\s*$")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1000}, locale=LOCALE[lang])
        page.set_default_timeout(60_000)
        expect.set_options(timeout=60_000)
        page.goto(server.url)
        page.get_by_role("tab", name=TABS[lang][3]).click()
        page.get_by_text(msg("ev.play", lang), exact=True).first.click()
        page.get_by_role("textbox", name=msg("ev.input", lang), exact=True).fill(text)   # no instruction typed
        page.get_by_role("button", name=msg("ev.send", lang), exact=True).click()
        expect(page.get_by_role("textbox", name=msg("ev.tuned", lang), exact=True)).to_have_value(label)
        page.get_by_text(msg("ev.chat", lang), exact=True).first.click()
        page.get_by_role("textbox", name=msg("ev.message", lang), exact=True).fill(text)
        page.locator("#ev-chat-send").click()
        reply = page.locator("#ev-chat [data-testid='bot']").first
        expect(reply).to_have_text(re.compile(r"^\s*(positive|negative)\s.*(positive|negative) \d\.\d\d.*"
                                              r"(positive|negative) \d\.\d\d", re.S))
        browser.close()
