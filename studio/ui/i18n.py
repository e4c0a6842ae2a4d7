"""The page's languages: ``gr.I18n`` for labels the browser translates, and server-built messages in the
language they are given.

The words themselves live in studio/words/catalog.py. ``msg`` here is the page's form of ``words.msg`` (a value in
a message is text, not HTML). A handler is given its browser's language (studio/ui/handlers.py) and passes it down.
"""
from __future__ import annotations

from typing import Any

import gradio as gr
from ..config.run_config import field_meta
from ..config.vocabulary import DEEPSPEED_SHORTCUTS
from ..words import catalog
from ..words.catalog import (FIELD_HELP_ZH, FIELD_LABELS, GRADIO_KEYS, LANGS, MESSAGES, UI,  # noqa: F401 (the page's names)
                             model_langs as _model_langs)
from .text import text_value
from ..web.session_lang import head_script, lang_middleware as _lang_middleware


def msg(key: str, lang: str = "en", **fmt: Any) -> str:
    """A server-side message in ``lang``."""
    # a name in a message is text: toasts show their message as HTML (studio/ui/text.py)
    return catalog.msg(key, lang, **{k: text_value(v) for k, v in fmt.items()})


def headers(key: str, lang: str = "en") -> list[str]:
    """Table headers in ``lang`` (Dataframe headers are not translated by the browser)."""
    return catalog.headers(key, lang)


def model_langs(text: str, lang: str = "en") -> str:
    return _model_langs(text, lang)


def translations() -> dict[str, dict[str, str]]:
    """{'en': {key: text}, 'zh': {...}} for gr.I18n."""
    en: dict[str, str] = {k: v[0] for k, v in UI.items()}
    zh: dict[str, str] = {k: v[1] for k, v in UI.items()}
    for name, (e, z) in FIELD_LABELS.items():
        en[f"f.{name}"], zh[f"f.{name}"] = e, z
    en.update({f"h.{m['name']}": m["help"] for m in field_meta()})   # English help: RunConfig's own metadata
    zh.update({f"h.{k}": v for k, v in field_help_zh().items()})
    # Gradio's own status announcements, whose keys its zh locale lacks: shown raw ('common.complete') otherwise
    for key, (e, z) in GRADIO_KEYS.items():
        en.setdefault(key, e)
        zh.setdefault(key, z)
    return {"en": en, "zh": zh}


def field_help_zh() -> dict[str, str]:
    """Each field's Chinese help, with the values the catalog leaves to the code that owns them (the DeepSpeed
    plans of config/vocabulary.py, so both languages list the same plans)."""
    plans = "、".join(DEEPSPEED_SHORTCUTS)
    return {k: v.replace("{deepspeed_plans}", plans) for k, v in FIELD_HELP_ZH.items()}


def make_i18n() -> Any:
    return gr.I18n(**translations())


def force_lang_head(lang: str) -> str:
    """<head> script that makes ``lang`` the page's starting language (kept for callers; see studio/web/session_lang.py)."""
    return head_script(lang)


def lang_middleware(lang: str | None) -> Any:
    """The middleware that makes the page's labels start in the session's language (studio/web/session_lang.py);
    it also gives a Chinese session the login page's message in Chinese (Gradio's own login words, such as
    "Incorrect Credentials", come from Gradio's zh-CN locale, which follows the same language)."""
    return _lang_middleware(lang, {MESSAGES["login"][0]: MESSAGES["login"][1]})
