"""A training notice: a code and its values, worded by the catalog for the command line and for the page.

The run log and the CLI print a notice naming config keys (``cutoff_len``) and recipe files; a page names its own
fields ("Max tokens per example") in its own language. Both wordings of each code live in
studio/words/notice_words.py, so a notice is made only from a code (``Notice.of(code, **values)``), never from a
sentence. It is a ``str``, the CLI's words (everything that prints, joins or compares notices keeps working), that
also carries ``code`` and ``params``; the engine writes both into the run's "notice" event and the Train tab words
the code in the page's words (``page_form``). The engine's notify takes nothing else (``checked``): a notice sent as
a plain sentence would reach the page in the CLI's words.
"""
from __future__ import annotations

from typing import Any

from .words import notice_words
from .words.errors import UnknownCode


class Notice(str):
    """A notice's CLI words, with ``code`` and ``params`` for the page's words of it; made by ``of``."""

    code: str
    params: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> "Notice":
        raise TypeError("a notice is made from a code of studio/words/notice_words.py: Notice.of(code, **values)")

    @classmethod
    def of(cls, code: str, **params: Any) -> "Notice":
        """The notice ``code`` (an entry of studio/words/notice_words.py) with its runtime ``params``; an unknown
        code, or values that do not fit its CLI or page words, raises ``UnknownCode`` at once, so the first test of
        that path finds the bug (not a Chinese browser, falling back to the CLI's English)."""
        self = str.__new__(cls, notice_words.cli_words(code, params))
        for lang in ("en", "zh"):
            try:
                notice_words.page_words(code, params, lang)
            except (KeyError, IndexError, ValueError):
                raise UnknownCode(f"the values {sorted(params)} do not fit the page words ({lang}) of the notice "
                                  f"{code!r}") from None
        self.code, self.params = code, params
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle rebuild a str subclass through __new__, which a sentence may not reach
        return _remade, (self.code, self.params)

    def page_form(self) -> dict[str, Any]:
        """What a notice event carries for the page beside its ``message``."""
        return {"code": self.code, "params": self.params}


def _remade(code: str, params: dict[str, Any]) -> Notice:
    return Notice.of(code, **params)


def checked(message: object) -> Notice:
    """``message`` if it is a Notice; anything else sent as a notice is a bug of its sender.

    Raises:
        TypeError: a plain sentence (the page could only show it in the CLI's words) or anything else.
    """
    if not isinstance(message, Notice):
        raise TypeError(f"a notice is a studio.notices.Notice (Notice.of(code, **values)), not {type(message).__name__}"
                        f": {message!r:.120}")
    return message
