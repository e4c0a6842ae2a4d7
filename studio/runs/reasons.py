"""A run's end reason: the CLI's English text, and the codes with values a page words in its own language.

The engine and the job runner write why a run ended once, into status.json. The CLI (and a reader of an older
version) reads the English text under "reason"; beside it, "reason_parts" keeps each phrase as a code and its
values (studio/words/reason_words.py holds the words), so a page shows the reason in its language by code and no
table has to match English sentences. So a reason is a ``str`` (its English text: everything that prints, logs or
compares a reason keeps working) that also carries ``parts``.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import StudioError
from ..words import end_reasons

Part = tuple[str, dict[str, Any]]  # (code, values)


class Reason(str):
    """An end reason's English text, with ``parts`` (code, values) for the page's form of it."""

    parts: tuple[Part, ...]

    def __new__(cls, *parts: Part) -> "Reason":
        text = end_reasons.sentence([end_reasons.phrase(code, values) for code, values in parts])
        self = super().__new__(cls, text)
        self.parts = tuple(parts)
        return self

    @classmethod
    def of(cls, code: str, **values: Any) -> "Reason":
        """The reason ``code`` with its runtime ``values``; an unknown code (or values that do not fit its words)
        raises ``UnknownReason`` at once, so the first test of that path finds it."""
        return cls((code, {k: os.fspath(v) if isinstance(v, os.PathLike) else v for k, v in values.items()}))

    def then(self, *more: "Reason") -> "Reason":
        """This reason followed by ``more`` (one text, all their parts)."""
        return Reason(*self.parts, *(p for r in more for p in r.parts))


NO_REASON = Reason()  # a run that has not ended, or ended as asked: no reason to show


def disk_full(exc: BaseException, code: str) -> Reason:
    """A full disk while doing what ``code`` says (disk_full_training, disk_full_ending), in the system's words
    for it (its strerror: a full disk or a spent quota)."""
    return Reason.of(code, os_error=getattr(exc, "strerror", None) or "No space left on device")


def reason_fields(reason: Reason | StudioError) -> dict[str, Any]:
    """What status.json and an end event keep of a reason: its English text (the CLI's) and its parts; for an error
    that ended the run, its message (the CLI's, flags and all) and the error itself (``page_error``: the page
    words it, fix in page fields). Both always written, so no field of an earlier attempt of the run outlives it."""
    if isinstance(reason, StudioError):
        return {"reason": reason.message, "reason_parts": [], "code": reason.code, "page_error": reason.to_dict()}
    return {"reason": str(reason), "reason_parts": [{"code": code, "values": values} for code, values in reason.parts],
            "page_error": None}


def reason_text(record: dict[str, Any], lang: str = "en", surface: str = "page") -> str:
    """A recorded reason (status.json, a snapshot) in ``lang`` for ``surface``: by its parts; a record without
    parts (a run recorded by an older version) or with a code this version does not know, as written."""
    text = str(record.get("reason") or "")
    parts = record.get("reason_parts")
    if not text or not isinstance(parts, list) or not parts:
        return text
    try:
        phrases = [end_reasons.phrase(str(p["code"]), dict(p.get("values") or {}), lang, surface) for p in parts]
    except (end_reasons.UnknownReason, KeyError, TypeError, ValueError, AttributeError):  # another version's parts
        return text
    return end_reasons.sentence(phrases, lang)
