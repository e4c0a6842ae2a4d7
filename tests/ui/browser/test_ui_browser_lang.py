"""In-page language switch, in a real browser: each browser session gets its own language.

One server started WITHOUT --lang. A Chinese browser (locale zh-CN: navigator.language and
Accept-Language) gets Chinese labels AND Chinese messages built on the server (status, error
toasts, run states); an English browser on the same server at the same time gets English; the
page's English / 中文 switch changes both for that browser only.
"""
from __future__ import annotations

from typing import Any

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)

ZH_IDLE, EN_IDLE = "还没有运行", "No run yet"
ZH_NO_FILE, EN_NO_FILE = "请先上传文件或点击示例数据按钮", "Upload a file or press the sample button first"


def _convert_error(pg: Any, expect: Any, text: str) -> None:
    """Convert with no file: the server's error beside Convert, in the session's language."""
    pg.get_by_role("tab", name=("1. 数据" if text == ZH_NO_FILE else "1. Data")).click()
    pg.locator("#convert-btn").click()
    expect(pg.locator("#data-report")).to_contain_text(text)


def test_each_browser_gets_its_own_language_and_the_switch_changes_server_messages(tmp_path: Any) -> None:
    from playwright.sync_api import expect, sync_playwright
    from ui_server import Server
    expect.set_options(timeout=60_000)
    srv = Server(tmp_path / "ws").wait_ready()  # no --lang: each browser's own language
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            zh = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN").new_page()
            en = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
            for pg in (zh, en):
                pg.set_default_timeout(60_000)
                pg.goto(srv.url)
            # labels (gr.I18n in the browser) and the server-built status, per browser
            expect(zh.get_by_role("tab", name="3. 训练")).to_be_visible()
            expect(en.get_by_role("tab", name="3. Train")).to_be_visible()
            zh.get_by_role("tab", name="3. 训练").click()
            en.get_by_role("tab", name="3. Train").click()
            expect(zh.locator("#train-status")).to_contain_text(ZH_IDLE)
            expect(en.locator("#train-status")).to_contain_text(EN_IDLE)
            # an error built on the server, both browsers at once
            _convert_error(zh, expect, ZH_NO_FILE)
            _convert_error(en, expect, EN_NO_FILE)
            expect(zh.locator("#data-report")).not_to_contain_text(EN_NO_FILE)
            expect(en.locator("#lang-switch input[value=en]")).to_be_checked()
            expect(zh.locator("#lang-switch input[value=zh]")).to_be_checked()

            # the Chinese browser switches to English in the page: labels and messages follow; the other stays
            zh.locator("#lang-switch").get_by_text("English").click()
            expect(zh.get_by_role("tab", name="3. Train")).to_be_visible()  # the page reloaded in English
            expect(zh.locator("#lang-switch input[value=en]")).to_be_checked()
            zh.get_by_role("tab", name="3. Train").click()
            expect(zh.locator("#train-status")).to_contain_text(EN_IDLE)
            _convert_error(zh, expect, EN_NO_FILE)

            # and the English browser switches to Chinese
            en.locator("#lang-switch").get_by_text("中文").click()
            expect(en.get_by_role("tab", name="3. 训练")).to_be_visible()
            en.get_by_role("tab", name="3. 训练").click()
            expect(en.locator("#train-status")).to_contain_text(ZH_IDLE)
            _convert_error(en, expect, ZH_NO_FILE)
            # a reload keeps each browser's choice
            zh.reload()
            expect(zh.get_by_role("tab", name="3. Train")).to_be_visible()
            browser.close()
    finally:
        srv.stop()
