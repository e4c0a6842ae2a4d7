"""What a feedback text may be: bounded, text that encodes, no NUL. Every value a caller hands the store passes here,
so a caller gets a StudioError naming the field and its limit, and nothing is cut silently: the row that reaches a
dataset is exactly the row someone wrote."""
from __future__ import annotations

import json
from typing import Any

from ..errors import StudioError

# characters; a tweet-sized labels run needs far less, a chat answer can be a few pages
LIMITS: dict[str, int] = {"run": 120, "login": 120, "input": 20_000, "answer": 20_000, "correction": 20_000,
                          "scores": 10_000, "note": 2_000, "visitor": 120}


def first_surrogate(text: str) -> int | None:
    """The 1-based position of the first character UTF-8 cannot encode (a lone surrogate a browser or a script can
    send in JSON), else None. Such a text cannot be stored, tokenized or sent back in an answer."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start + 1
    return None


def bounded(field: str, value: Any, *, required: bool = False) -> str | None:
    """``value`` as a stored text of ``field``: None when empty (refused when ``required``).

    Raises:
        StudioError: not a string, a NUL or a character that is not text, over the field's limit, empty if required.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise StudioError.of("feedback.empty", field=field)
        return None
    if not isinstance(value, str):
        raise StudioError.of("feedback.not_text", field=field)
    if "\x00" in value:
        raise StudioError.of("feedback.nul", field=field)
    bad = first_surrogate(value)
    if bad is not None:
        raise StudioError.of("feedback.not_unicode", field=field, pos=bad)
    if len(value) > LIMITS[field]:
        raise StudioError.of("feedback.too_long", field=field, n=len(value), limit=LIMITS[field])
    return value


def scores_text(scores: dict[str, Any] | None) -> str | None:
    if scores is None:
        return None
    try:
        text = json.dumps(scores, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StudioError.of("feedback.scores", detail=str(exc)[:200]) from exc
    return bounded("scores", text)


def size(*texts: str | None) -> int:
    """The bytes a row's texts take (what the byte quotas count)."""
    return sum(len(t.encode("utf-8")) for t in texts if t)
