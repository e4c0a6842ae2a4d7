"""Names a person chose are text: the studio's Markdown and HTML components never pass an HTML tag through.

Run, dataset, label, column, file and login names reach the page inside Markdown (messages, tables, the data
report) and toasts. Gradio's sanitizer removes scripts but keeps ``<img onerror=...>``, and a run renamed to one
was sent to every user. So the rule is in the component, not in each message: every ``<`` outside a Markdown code
span becomes ``&lt;`` (Markdown shows it as "<"; a code span already shows its text literally), so no text in a
Markdown component is ever HTML. The studio's own Markdown holds no HTML tags (it never needed any); the one
HTML component builds its links with every name escaped and marks the result ``Escaped``; any other value it
is given is escaped whole. tests/robustness/test_names_text.py checks every such component of the built pages.
"""
from __future__ import annotations

import html
import re
from typing import Any

import gradio as gr

_TICKS = re.compile(r"`+")


class Escaped(str):
    """HTML built by the studio with every name escaped (``html.escape``): shown as HTML."""


def markdown_text(text: str) -> str:
    """``text`` with every ``<`` outside code spans escaped (CommonMark's code spans: a run of N backticks up to the
    next run of exactly N; an unmatched run is literal text)."""
    out, pos = [], 0
    for m in _TICKS.finditer(text):
        if m.start() < pos:
            continue
        close = next((c for c in _TICKS.finditer(text, m.end()) if len(c.group()) == len(m.group())), None)
        if close is None:
            continue
        out.append(text[pos:m.start()].replace("<", "&lt;"))
        out.append(text[m.start():close.end()])
        pos = close.end()
    out.append(text[pos:].replace("<", "&lt;"))
    return "".join(out)

from gradio.events import Dependency

class Markdown(gr.Markdown):
    """gr.Markdown whose text is never HTML (see the module's docstring)."""

    def postprocess(self, value: Any) -> Any:
        out = super().postprocess(value)
        return markdown_text(out) if isinstance(out, str) else out
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component


class HTML(gr.HTML):
    """gr.HTML that shows only ``Escaped`` values as HTML; anything else is shown as text."""

    def postprocess(self, value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, Escaped):
            value = html.escape(value, quote=False)
        return super().postprocess(value)
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component


def text_value(value: Any) -> Any:
    """A value placed in a message that Gradio may show as HTML (gr.Info / gr.Warning / gr.Error): a name's ``<`` as
    an entity (Markdown and HTML both show it as "<"). Numbers and other values pass unchanged."""
    return value.replace("<", "&lt;") if isinstance(value, str) else value