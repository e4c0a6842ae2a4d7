"""A message made by code: a ``str`` holding its command line's English, that also carries its code and values.

A notice of the engine (studio/notices.py), a step of a model's preparation, a memory suggestion: each is said
once, where it happens, as ``Kind.of(code, **values)``. Everything that prints, logs, joins or compares it keeps
working on the English; a page words the same code in its own language and fields (``text(lang)``), and a record of
it (an event of the run's log) keeps ``page_form()`` beside the English for a later reader. It is never made from a
sentence: ``Said("...")`` raises, so English cannot reach a page by this road.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .render import UnknownCode, render


class Said(str):
    """A message's command-line English with ``code`` and ``params``; ``prefix`` is its kind's namespace in the
    catalog (a notice ``truncated`` is the entry ``notice.truncated``)."""

    prefix = ""
    code: str
    params: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> Said:
        raise TypeError(f"a {cls.__name__} is made from a code of the catalog: {cls.__name__}.of(code, **values)")

    @classmethod
    def of(cls, code: str, **params: Any) -> Any:
        """The message ``code`` with its runtime ``params``; an unknown code, or values that do not fit its words on
        any surface or language, raises ``UnknownCode`` at once (the first test of that path finds it, not a
        Chinese browser)."""
        catalog_code = f"{cls.prefix}.{code}" if cls.prefix else code
        # a path is kept as text: a record of the message (a run's event) is JSON
        params = {k: os.fspath(v) if isinstance(v, os.PathLike) else v for k, v in params.items()}
        self = str.__new__(cls, render(catalog_code, params, "en", "cli"))
        for lang in ("en", "zh"):
            for surface in ("cli", "page"):
                render(catalog_code, params, lang, surface)
        self.code, self.params = code, params
        return self

    @property
    def catalog_code(self) -> str:
        return f"{self.prefix}.{self.code}" if self.prefix else self.code

    def text(self, lang: str = "en", surface: str = "page") -> str:
        """The message in ``lang`` for ``surface``."""
        return render(self.catalog_code, self.params, lang, surface)

    def page_form(self) -> dict[str, Any]:
        """What a record of it keeps beside its English ``message``: the code and values to word it again."""
        return {"code": self.code, "params": self.params}

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle rebuild a str subclass through __new__, which a sentence may not reach
        return _remade, (type(self), self.code, self.params)


def _remade(cls: type[Said], code: str, params: dict[str, Any]) -> Said:
    return cls.of(code, **params)


def recorded_text(record: Mapping[str, Any] | str, prefix: str, lang: str = "en", surface: str = "page") -> str:
    """A recorded message (an event's ``code``, ``params`` and English ``message``; an older run's bare message) in
    ``lang``: by its code; one whose code or values this studio's words lack (written by another version) as its
    English message."""
    if isinstance(record, str):
        return record
    code = f"{prefix}.{record.get('code')}" if prefix else str(record.get("code"))
    try:
        return render(code, dict(record.get("params") or {}), lang, surface)
    except (UnknownCode, TypeError, ValueError):
        return str(record.get("message", ""))
