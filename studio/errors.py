"""One exception type for everything a user can fix.

The UI and the CLI show ``StudioError`` as-is (what / why / how to fix); anything
else is a bug and is logged with its traceback, never shown raw to a user.

Every error the studio raises is ``StudioError.of(code, **values)``: a code and its values, whose words
the catalog holds (studio/words/errors.py: both languages, both surfaces: the CLI's fix may name a flag, the page's
names the page's fields). The error is worded when shown (``text(lang, surface)``), so no table has to match an
English sentence; tests/words/test_catalog_complete.py holds the catalog complete. An error made from sentences is
what a run recorded by an older studio reads back as (``from_dict``): shown as it was written.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

from .words import errors as error_words


class StudioError(Exception):
    """A problem the user can fix: says what is wrong and how to fix it. Made by code (``of``); a sentence cannot
    make one (``StudioError("...")`` raises TypeError), so no English reaches a Chinese page by this road."""

    what: str
    why: str
    fix: str
    code: str
    values: dict[str, Any] | None  # set by ``of``: the error is worded by its code; None for an older run's record

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a StudioError is made from a code of the word catalog: StudioError.of(code, **values)")

    def _said(self, what: str, fix: str, why: str, code: str, values: dict[str, Any] | None) -> None:
        self.what, self.why, self.fix, self.code, self.values = what, why, fix, code, values
        Exception.__init__(self, self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle would call the constructor, which takes no sentence: rebuild from the record instead
        return StudioError.from_dict, (self.to_dict(),)

    @classmethod
    def of(cls, code: str, **values: Any) -> StudioError:
        """The error ``code`` (an entry of studio/words/errors.py) with its runtime ``values``; an unknown code
        raises ``UnknownCode`` at once, so a missing entry is a bug the first test of that path finds."""
        exc = cls.__new__(cls)
        exc._worded_by(code, values)
        return exc

    def _worded_by(self, code: str, values: dict[str, Any]) -> None:
        """Make this error the coded error ``code`` with ``values`` (its CLI words as ``message``)."""
        what, why, fix = error_words.words(code, values)
        self._said(what, fix, why, code, {k: os.fspath(v) if isinstance(v, os.PathLike) else v
                                          for k, v in values.items()})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StudioError:
        """The error back from ``to_dict()`` (as a run's status.json keeps it: the engine writes the error that ended
        a run, and the page shows it in its own words and language). A record of an older studio whose code this one
        does not know is shown as it was written; the page reads these records, so with the fix it wrote for the
        page when it kept one."""
        code = str(d.get("error") or d.get("code") or "error")
        if isinstance(d.get("values"), dict):
            try:
                return cls.of(code, **d["values"])
            except error_words.UnknownCode:  # a code this studio no longer knows (a run recorded by another version)
                pass
        exc = StudioError.__new__(StudioError)
        exc._said(str(d.get("what", "")), str(d.get("page_fix") or d.get("fix") or ""), str(d.get("why") or ""),
                  code, None)
        return exc

    def with_values(self, **changes: Any) -> StudioError:
        """The same coded error with some of its values changed (a path named as the person typed it)."""
        return StudioError.of(self.code, **{**(self.values or {}), **changes})

    @property
    def coded(self) -> bool:
        """True when the catalog words this error (``of``), not the sentences it was raised with."""
        return self.values is not None

    def text(self, lang: str = "en", surface: str = "cli") -> str:
        """The message in ``lang`` for ``surface`` ("cli" or "page"); a coded error from the catalog, another as
        raised (English)."""
        if self.coded:
            return error_words.sentence(*error_words.words(self.code, self.values or {}, lang, surface), lang=lang)
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
        """What a page shows in English: a coded error with the fix that names page fields instead of flags."""
        return self.text("en", "page") if self.coded else self.message

    def to_dict(self) -> dict:
        return {"error": self.code, "what": self.what, "why": self.why, "fix": self.fix,
                "message": self.message, **({"values": self.values} if self.coded else {})}


class ConfigError(StudioError):
    """A run configuration has one or more invalid fields (all listed at once).

    ``problems`` are the CLI's sentences (what callers print and compare); each is a coded problem
    (studio/config/checks.py ``problem``: a code of studio/words/config_problems.py and its values), so a page words
    it with its own field names in its language. A problem without a code is a bug of its maker (``UnknownCode``):
    no sentence is left for the page to re-word."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        items = [_coded_problem(p) for p in self.problems]
        self._worded_by("config.problem" if len(items) == 1 else "config.problems",
                        {"problems": items, "n": len(items)})


def _coded_problem(problem: str) -> dict[str, Any]:
    """A problem of a ConfigError as its error's values keep it: its code and values."""
    code = getattr(problem, "code", None)
    if not (isinstance(code, str) and code.startswith("check.") and error_words.has(code)):
        raise error_words.UnknownCode(f"the config problem {str(problem)!r} has no code of "
                                      "studio/words/config_problems.py (make it with studio/config/checks.py problem)")
    return {"problem": code, **problem.params}  # type: ignore[attr-defined]


def command_exit_code(run: Callable[[], int]) -> int:
    """A command's exit code: ``run()``'s, or 2 for a StudioError and 130 for Ctrl-C, each said in one line on
    stderr (never a traceback). What every ``python -m studio...`` entry point answers a person with."""
    try:
        return int(run() or 0)
    except StudioError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
