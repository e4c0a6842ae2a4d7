"""Server-built words fixed when the page was built (table headers, choice names), redone per browser.

``gr.I18n`` translates labels in the browser, but Dataframe headers and Radio choice names are plain
strings the server wrote once, in the server's default language. On every page load this module
sends them again in that browser's language (studio/ui/handlers.py). It finds them by what
they hold, so a tab (the Evaluate tab builds its own) needs no extra wiring.
"""
from __future__ import annotations

from typing import Any, Callable

import gradio as gr

from ..app.context import AppContext
from .handlers import for_each_browser
from .i18n import LANGS, headers, msg

# tables that stay empty until a button fills them (the others re-send their headers with every refresh);
# Gradio shows a Dataframe's value headers, so an update of ``headers`` alone does not reach the page
HEADER_KEYS = ("ev.per_class_headers", "ev.wrong_headers")
# Radio/Dropdown choices whose values are fixed and whose names are messages: value -> message key
CHOICE_KEYS = {"validation": "ev.val", "upload": "ev.upload",
               "folder": "ev.fmt_folder", "f16": "ev.fmt_f16", "q8_0": "ev.fmt_q8_0",
               "score": "ev.mode_score", "generate": "ev.mode_generate"}
# any other component built with server-made words carries its own re-labeller: ``comp.studio_localize(lang)``
ATTR = "studio_localize"


def _header_key(comp: Any) -> str | None:
    current = list(getattr(comp, "headers", None) or [])
    for key in HEADER_KEYS:
        if any(current == headers(key, lang) for lang in LANGS):
            return key
    return None


def _choice_keys(comp: Any) -> list[tuple[str, str]] | None:
    values = [c[1] if isinstance(c, (tuple, list)) else c for c in getattr(comp, "choices", None) or []]
    if values and all(v in CHOICE_KEYS for v in values):
        return [(CHOICE_KEYS[v], v) for v in values]
    return None


def localizers(blocks: dict[int, Any]) -> list[tuple[Any, Callable[[str], Any]]]:
    """(component, lang -> update) for the empty tables' headers and the message-named choice lists."""
    out: list[tuple[Any, Callable[[str], Any]]] = []
    for comp in blocks.values():
        if callable(own := getattr(comp, ATTR, None)):
            out.append((comp, own))
        elif isinstance(comp, gr.Dataframe) and (key := _header_key(comp)):
            out.append((comp, lambda lang, k=key: gr.update(value={"headers": headers(k, lang), "data": []},
                                                            headers=headers(k, lang))))
        elif isinstance(comp, (gr.Radio, gr.Dropdown)) and (pairs := _choice_keys(comp)):
            out.append((comp, lambda lang, p=pairs: gr.update(choices=[(msg(k, lang), v) for k, v in p])))
    return out


def wire(app: Any, ctx: AppContext) -> int:
    """Inside ``with app:``: one page-load event that re-sends them; how many components it covers."""
    found = localizers(app.blocks)
    if found:
        comps = [c for c, _ in found]
        app.load(for_each_browser(ctx, lambda ctx: [fn(ctx.lang) for _, fn in found]), None, comps,
                 api_visibility="private")
    return len(found)
