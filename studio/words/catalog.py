"""Every word the studio shows a person, by code, in English and Chinese, for the command line and for the page.

One catalog of one entry shape (studio/words/entry.py), as LLaMA-Factory's webui keeps one locales table keyed by
id: the entries live in the files of this package (fields.py, page_labels.py, messages.py, the errors' sections,
...), joined in studio/words/registry.py, which refuses a code defined twice; studio/words/render.py words any code
with its values. ``msg`` takes the language from its caller: the page's handlers pass the language of the browser
they answer (``AppContext.lang``), so no module below the page reads a request.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .entry import LANGS, Entry
from .registry import CATALOG, GROUPS
from .render import render, template, words_of

# each field's Settings label, (English, Chinese), by config key: a view of the catalog's ``f.<key>`` entries
FIELD_LABELS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {code[2:]: e.page for code, e in CATALOG.items() if code.startswith("f.")})


def msg(key: str, lang: str = "en", **values: Any) -> str:
    """The page's words of ``key`` in ``lang`` with ``values``; without values, its words with the settings it names
    worded and its values' places left as written (a plot checks that a font has the glyphs of a title).

    Raises:
        UnknownCode: no entry for ``key``, or values that do not fit its words.
    """
    return render(key, values, lang, "page") if values else template(key, lang, "page")


def headers(key: str, lang: str = "en") -> list[str]:
    """Table headers in ``lang`` (Dataframe headers are not translated by the browser)."""
    return msg(key, lang).split("|")


def field_label(key: str, lang: str = "en") -> str:
    """A setting's Settings tab label in ``lang``; the config key for a name that is no field."""
    return words_of(f"f.{key}", lang) if f"f.{key}" in CATALOG else key


def browser_words(lang: str, help_values: Mapping[str, Any]) -> dict[str, str]:
    """The words the browser translates itself (``gr.I18n``), in ``lang``: labels as written (Gradio fills its own
    ``{position}``), each field's help worded for the page (``help_values``: the lists the config's vocabulary
    fills in)."""
    return {code: render(code, help_values, lang, "page") if code.startswith("h.") else e.text(lang, "page")
            for code, e in CATALOG.items() if e.browser}


__all__ = ["CATALOG", "Entry", "FIELD_LABELS", "GROUPS", "LANGS", "browser_words", "field_label", "headers", "msg"]
