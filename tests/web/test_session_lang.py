"""The language of one browser session (studio/web/session_lang.py), without a browser."""
from __future__ import annotations

from studio.web.session_lang import from_accept_language, from_headers, head_script


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


def test_the_head_script_reads_the_cookie_before_the_server_default() -> None:
    assert "studio_lang=(en|zh)" in head_script("zh") and "m[1]:'zh'" in head_script("zh")
    assert "m[1]:null" in head_script(None)
