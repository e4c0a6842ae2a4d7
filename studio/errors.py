"""One exception type for everything a user can fix.

The UI and the CLI show ``StudioError`` as-is (what / why / how to fix); anything
else is a bug and is logged with its traceback, never shown raw to a user.

A fix that names a command-line flag (``--label-column NAME``) helps the person at a terminal and nobody
on the page, so such an error also carries ``page_fix``: the same advice in the page's words (its field
names). The CLI prints ``message``; the page shows ``page_message`` (studio/ui/common.py, ``user_error``).
tests/ui/test_page_messages.py holds every error below the UI to this rule.

The newer way, to which the studio moves subsystem by subsystem: ``StudioError.of(code, **values)`` carries a code
and its values, and studio/words/errors.py holds each code's words (both languages, both surfaces); the error is
worded when shown (``text(lang, surface)``), so no table has to match an English sentence.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .words import errors as error_words


class StudioError(Exception):
    """A problem the user can fix: says what is wrong and how to fix it."""

    def __init__(self, what: str, fix: str = "", *, why: str = "", code: str = "error",
                 page_fix: str | None = None):
        self.what = what
        self.why = why
        self.fix = fix
        self.code = code
        self.page_fix = page_fix  # the fix in the page's words, when ``fix`` names command-line flags
        self.values: dict[str, Any] | None = None  # set by ``of``: the error is worded by its code
        super().__init__(self.message)

    @classmethod
    def of(cls, code: str, **values: Any) -> StudioError:
        """The error ``code`` (an entry of studio/words/errors.py) with its runtime ``values``; an unknown code
        raises ``UnknownCode`` at once, so a missing entry is a bug the first test of that path finds."""
        what, why, fix = error_words.words(code, values)
        page_fix = error_words.words(code, values, surface="page")[2]
        exc = cls.__new__(cls)
        StudioError.__init__(exc, what, fix, why=why, code=code, page_fix=page_fix if page_fix != fix else None)
        exc.values = {k: os.fspath(v) if isinstance(v, os.PathLike) else v for k, v in values.items()}
        return exc

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StudioError:
        """The error back from ``to_dict()`` (as a run's status.json keeps it: the engine writes the error that ended
        a run, and the page shows it in its own words and language)."""
        code = str(d.get("error") or d.get("code") or "error")
        if isinstance(d.get("values"), dict):
            try:
                return cls.of(code, **d["values"])
            except error_words.UnknownCode:  # a code this studio no longer knows (a run recorded by another version)
                pass
        return cls(str(d.get("what", "")), str(d.get("fix") or ""), why=str(d.get("why") or ""),
                   code=code, page_fix=d.get("page_fix"))

    def with_values(self, **changes: Any) -> StudioError:
        """The same coded error with some of its values changed (a path named as the person typed it)."""
        return StudioError.of(self.code, **{**(self.values or {}), **changes})

    @property
    def coded(self) -> bool:
        """True when the catalog words this error (``of``), not the sentences it was raised with."""
        return self.values is not None

    def text(self, lang: str = "en", surface: str = "cli",
             labels: Callable[[str, str], str | None] | None = None) -> str:
        """The message in ``lang`` for ``surface`` ("cli" or "page"); a coded error from the catalog, another as
        raised (English)."""
        if self.coded:
            return error_words.sentence(*error_words.words(self.code, self.values or {}, lang, surface, labels),
                                        lang=lang)
        return self.message if surface == "cli" else self.page_message

    def _text(self, fix: str) -> str:
        parts = [self.what.rstrip(".") + "."]
        if self.why:
            parts.append(self.why.rstrip(".") + ".")
        if fix:
            parts.append("Fix: " + fix.rstrip(".") + ".")
        return " ".join(parts)

    @property
    def message(self) -> str:
        """What the CLI prints (its fix may name flags)."""
        return self._text(self.fix)

    @property
    def page_message(self) -> str:
        """What a page shows: the same, with the fix that names page fields instead of flags."""
        return self._text(self.fix if self.page_fix is None else self.page_fix)

    def to_dict(self) -> dict:
        return {"error": self.code, "what": self.what, "why": self.why, "fix": self.fix,
                "message": self.message, **({"page_fix": self.page_fix} if self.page_fix is not None else {}),
                **({"values": self.values} if self.coded else {})}


class ConfigError(StudioError):
    """A run configuration has one or more invalid fields (all listed at once)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        what = "The run configuration has {} problem{}: {}".format(
            len(problems), "" if len(problems) == 1 else "s", "; ".join(problems))
        super().__init__(what, "correct the listed fields in the YAML, the --set options or the Settings tab",
                         code="config", page_fix="correct the listed fields on the Settings tab")
