"""The words of a coded error (``StudioError.of(code, **values)``): its what / why / fix, each an entry of the
catalog, worded for a surface in a language, and joined as one message.

An error ``code`` is the entries ``code`` (what is wrong: the same on both surfaces), ``code.why`` (optional) and
``code.fix`` (the command line's fix, which may name flags; its page words name the page's fields instead), made by
studio/words/entry.py ``error``. The sections: data_errors.py (reading and converting a file, the workspace's
paths), dataset_errors.py, model_errors.py, evaluation_errors.py, run_errors.py, app_errors.py, feedback_errors.py.
The values are worded by studio/words/render.py (settings per surface, lists, terms, a ``problems`` list).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .registry import ERROR_GROUPS
from .render import UnknownCode, has, placeholders, problem_text, render

__all__ = ["CODES", "UnknownCode", "has", "placeholders", "problem_text", "sentence", "words"]

# every error's code (the first entry of each ``error(...)`` of the sections)
CODES = tuple(item[0].code for group in ERROR_GROUPS for item in group if isinstance(item, tuple))


def words(code: str, values: Mapping[str, Any], lang: str = "en", surface: str = "cli") -> tuple[str, str, str]:
    """(what, why, fix) of the error ``code`` in ``lang`` for ``surface`` ("cli": the fix may name flags; "page":
    the page's fix); "" for a part the error has not.

    Raises:
        UnknownCode: no words for ``code``, or values that do not fit them.
    """
    if not has(code):
        raise UnknownCode(f"no words for the error code {code!r} in studio/words/ (add them to its catalog)")
    parts = (code, f"{code}.why", f"{code}.fix")
    what, why, fix = (render(p, values, lang, surface) if has(p) else "" for p in parts)
    return what, why, fix


def sentence(what: str, why: str, fix: str, lang: str = "en") -> str:
    """The parts as one message: "What. Why. Fix: how." (Chinese: full stops and 解决办法：)."""
    if lang == "zh":
        head = "".join(p.rstrip("。.") + "。" for p in (what, why) if p)
        return head + (f"解决办法：{fix.rstrip('。.')}。" if fix else "")
    parts = [p.rstrip(".") + "." for p in (what, why) if p]
    if fix:
        parts.append("Fix: " + fix.rstrip(".") + ".")
    return " ".join(parts)
