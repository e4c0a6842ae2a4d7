"""A training notice: the CLI's words, and a code with values the page renders in its own words.

The run log and the CLI print a notice as written, naming config keys (``cutoff_len``) and recipe files; a page
names its own fields ("Max tokens per example") in its own language. So a notice is a ``str`` (the CLI's text:
everything that prints, joins or compares notices keeps working) that also carries ``code`` and ``params``; the
engine writes both into the run's "notice" event and the Train tab renders the code through
studio/words/notice_words.py. tests/ui/test_page_notices.py holds every notice the engine can send to this.
"""
from __future__ import annotations

from typing import Any


class Notice(str):
    """A notice's CLI text, with ``code`` and ``params`` for the page's form of it."""

    code: str
    params: dict[str, Any]

    def __new__(cls, text: str, code: str, /, **params: Any) -> "Notice":
        self = super().__new__(cls, text)
        self.code, self.params = code, params
        return self

    def page_form(self) -> dict[str, Any]:
        """What a notice event carries for the page beside its ``message``."""
        return {"code": self.code, "params": self.params}
