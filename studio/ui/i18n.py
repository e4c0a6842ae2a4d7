"""The page's languages: ``gr.I18n`` for labels the browser translates, and server-built messages in the
language they are given.

The words themselves live in the catalog (studio/words/catalog.py). ``msg`` here is the page's form of
``words.msg`` (a value in a message is text, not HTML). A handler is given its browser's language
(studio/ui/handlers.py) and passes it down.
"""
from __future__ import annotations

from typing import Any

import gradio as gr
from ..config.run_config import help_values
from ..words import catalog
from ..words.catalog import LANGS  # noqa: F401 (the page's name: studio/ui/localize.py)
from .text import text_value
from ..web.session_lang import head_script, lang_middleware as _lang_middleware


def msg(key: str, lang: str = "en", **fmt: Any) -> str:
    """A server-side message in ``lang``."""
    # a name in a message is text: toasts show their message as HTML (studio/ui/text.py)
    return catalog.msg(key, lang, **{k: text_value(v) for k, v in fmt.items()})


def headers(key: str, lang: str = "en") -> list[str]:
    """Table headers in ``lang`` (Dataframe headers are not translated by the browser)."""
    return catalog.headers(key, lang)


def translations() -> dict[str, dict[str, str]]:
    """{'en': {key: text}, 'zh': {...}} for gr.I18n: every entry the browser translates (labels, each field's label
    ``f.<key>`` and help ``h.<key>``, Gradio's own words its zh locale lacks)."""
    return {lang: catalog.browser_words(lang, help_values()) for lang in LANGS}


def make_i18n() -> Any:
    return gr.I18n(**translations())


def force_lang_head(lang: str) -> str:
    """<head> script that makes ``lang`` the page's starting language (kept for callers; see studio/web/session_lang.py)."""
    return head_script(lang)


def lang_middleware(lang: str | None) -> Any:
    """The middleware that makes the page's labels start in the session's language (studio/web/session_lang.py);
    it also gives a Chinese session the login page's message in Chinese (Gradio's own login words, such as
    "Incorrect Credentials", come from Gradio's zh-CN locale, which follows the same language)."""
    return _lang_middleware(lang, {catalog.msg("login", "en"): catalog.msg("login", "zh")})
