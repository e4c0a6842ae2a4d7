"""Why a run ended, as one text: its phrases (each a code of studio/words/reason_words.py with its values) worded
and joined in a language.

A phrase that says what to do after what happened ("The disk is full ...; free some space ...") is its code's words
and its ``.fix``'s, joined as the language joins two clauses.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .render import UnknownCode, has, render


class UnknownReason(UnknownCode):
    """A code with no words, or values that do not fit them: a bug of whoever wrote the reason."""


def phrase(code: str, values: Mapping[str, Any], lang: str = "en", surface: str = "cli") -> str:
    """One part of a reason in ``lang`` for ``surface``.

    Raises:
        UnknownReason: a code without words, or values that do not fit them.
    """
    try:
        what = render(f"reason.{code}", values, lang, surface)
        if not has(f"reason.{code}.fix"):
            return what
        return what + ("；" if lang == "zh" else "; ") + render(f"reason.{code}.fix", values, lang, surface)
    except UnknownCode as exc:
        raise UnknownReason(f"no words for the end reason {code!r} with the values {sorted(values)}: {exc}") from None


def sentence(phrases: list[str], lang: str = "en") -> str:
    """The phrases of one reason as one text: each after a space (Chinese: none), a phrase that ends without a
    mark closed by a full stop first ("...then press Resume or Start again. Before that: ...")."""
    out = ""
    for p in phrases:
        if out:
            if lang == "zh":
                out += "" if out.endswith(("。", "；", "：")) else "。"
            else:
                out += ("" if out.endswith((".", ";", ":")) else ".") + " "
        out += p
    return out
