"""The language of one browser session (studio/ui/session_lang.py), without a browser."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from studio.ui.i18n import msg
from studio.ui.session_lang import from_accept_language, from_headers, head_script, session_lang


def test_accept_language_picks_the_preferred_of_english_and_chinese() -> None:
    assert from_accept_language("zh-CN,zh;q=0.9,en;q=0.8") == "zh"
    assert from_accept_language("en-US,en;q=0.9,zh;q=0.8") == "en"
    assert from_accept_language("fr-FR,zh-TW;q=0.5,en;q=0.7") == "en"
    assert from_accept_language("de,zh;q=0") is None and from_accept_language("") is None


def test_the_page_switch_wins_then_the_server_flag_then_the_browser() -> None:
    zh_browser = {"accept-language": "zh-CN,zh"}
    assert from_headers(zh_browser, None) == "zh"
    assert from_headers(zh_browser, "en") == "en"  # --lang en
    assert from_headers({**zh_browser, "cookie": "x=1; studio_lang=en; y=2"}, "zh") == "en"  # the in-page switch
    assert from_headers({"cookie": "studio_lang=fr"}, None) is None  # only en/zh are ours


def test_messages_follow_the_request_being_answered(tmp_path: Path) -> None:
    from gradio.context import LocalContext
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    ctx = AppContext.create(tmp_path / "ws", lang="en")
    build_app(ctx)  # the page that serves a context tells it how to read the request being answered
    assert msg("idle", "en").startswith("No run yet") and ctx.lang == "en"  # no request: the given language
    token = LocalContext.request.set(SimpleNamespace(headers={"accept-language": "zh-CN"}))
    try:
        assert session_lang("en") == "zh" and ctx.lang == "zh"
        assert msg("idle", "en").startswith("还没有运行")  # a handler that captured 'en' at build time
        LocalContext.request.set(SimpleNamespace(headers={"accept-language": "zh-CN", "cookie": "studio_lang=en"}))
        assert msg("idle", "zh").startswith("No run yet") and ctx.lang == "en"
    finally:
        LocalContext.request.reset(token)
    assert ctx.lang == "en"


def test_the_head_script_reads_the_cookie_before_the_server_default() -> None:
    assert "studio_lang=(en|zh)" in head_script("zh") and "m[1]:'zh'" in head_script("zh")
    assert "m[1]:null" in head_script(None)
