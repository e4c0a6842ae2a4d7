"""A training notice: a code and its values, worded by the catalog for the command line and for the page.

The run log and the CLI print a notice naming config keys (``cutoff_len``) and recipe files; a page names its own
fields ("Max tokens per example") in its own language. Both wordings of each code are one entry of the catalog
(``notice.<code>``, studio/words/notice_words.py), so a notice is made only from a code (``Notice.of(code,
**values)``), never from a sentence. It is a ``str``, the CLI's words (everything that prints, joins or compares
notices keeps working), that also carries ``code`` and ``params`` (studio/words/said.py); the engine writes both
into the run's "notice" event and the Train tab words the code in the page's words. The engine's notify takes
nothing else (``checked``): a notice sent as a plain sentence would reach the page in the CLI's words.
"""
from __future__ import annotations

from typing import Any

from .words.said import Said, recorded_text


class Notice(Said):
    """A notice's CLI words, with ``code`` and ``params`` for the page's words of it; made by ``of``."""

    prefix = "notice"


def checked(message: object) -> Notice:
    """``message`` if it is a Notice; anything else sent as a notice is a bug of its sender.

    Raises:
        TypeError: a plain sentence (the page could only show it in the CLI's words) or anything else.
    """
    if not isinstance(message, Notice):
        raise TypeError(f"a notice is a studio.notices.Notice (Notice.of(code, **values)), not {type(message).__name__}"
                        f": {message!r:.120}")
    return message


def notice_text(record: dict[str, Any] | str, lang: str = "en") -> str:
    """One notice as the page shows it: a run's notice event by its code, in ``lang`` and the page's words; an event
    whose code or values this studio's words lack (written by another version of the engine), or an older run's
    bare message, as its CLI message."""
    return recorded_text(record, "notice", lang)
