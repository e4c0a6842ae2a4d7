"""The words of a StudioError on the page, in the page's language.

A coded error (``StudioError.of(code, **values)``: every error the studio raises) is worded by its code from the
catalog (studio/words/errors.py), in the page's language and with the page's fix: nothing here matches its
sentences. An error without a code (a run recorded by an older studio, read back from its status.json) is shown as
it was written, in English, with its page fix.
"""
from __future__ import annotations

from typing import Any


def page_message(exc: Any, lang: str = "en") -> str:
    """What the page shows for ``exc`` (a StudioError: this package sits below studio/errors.py and names no
    class of it) in ``lang``: a coded error worded by its code; another as written (``exc.page_message``)."""
    if exc.coded:
        return exc.text(lang, "page")
    return exc.page_message
