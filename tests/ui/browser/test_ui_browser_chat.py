"""Evaluate's chat in a real browser: the reply appears, and the chat's toolbar covers no message (Gradio
floats the toolbar and the label over the top of the message list)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)


@pytest.fixture(scope="module")
def server(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ui_server import Server
    ws = tmp_path_factory.mktemp("chat") / "ws"
    shutil.copytree(runs["full"], ws / "runs" / "full")  # a finished run (its base stays where evalkit built it)
    srv = Server(ws, "--lang", "en").wait_ready()
    yield srv
    srv.stop()


def test_chat_reply_appears_below_the_toolbar(server: Any, runs: dict, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright
    row = runs["heldout"][0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 800, "height": 1000}, locale="en-US")
        page.set_default_timeout(60_000)
        expect.set_options(timeout=60_000)
        page.goto(server.url)
        page.get_by_role("tab", name="Evaluate").click()
        page.get_by_text("Chat with the fine-tuned model").first.click()
        box = page.get_by_role("textbox", name="Message")
        for i in range(3):  # enough turns for the list to scroll under where the toolbar sits
            box.fill(f"{row['instruction']}\n{row['input']} " + "Really. " * 20)
            page.locator("#ev-chat-send").click()
            expect(page.locator("#ev-chat [data-testid='bot']").nth(i)).to_have_text(re.compile("positive|negative"))
        expect(page.locator("#ev-stop-chat")).to_be_visible()
        geometry = page.evaluate("""() => {
            const chat = document.querySelector('#ev-chat');
            const bar = chat.querySelector('.top-panel').getBoundingClientRect();
            const list = chat.querySelector('.bubble-wrap');
            list.scrollTop = 150;  // a message half-way up, where it used to pass under the toolbar
            return {barBottom: bar.bottom, listTop: list.getBoundingClientRect().top,
                    label: !!chat.querySelector('label.float')};
        }""")
        page.locator("#ev-chat").screenshot(path=str(tmp_path / "chat.png"))
        browser.close()
    assert geometry["barBottom"] <= geometry["listTop"], geometry
    assert not geometry["label"], "the floating label covered the first message too"
