"""Helpers shared by the tab modules: user errors as messages, small formatters."""
from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable, Iterator

import gradio as gr

from ..words.units import fmt_seconds  # noqa: F401 (the tabs' import)
from ..errors import StudioError

log = logging.getLogger("studio.ui")
NOBODY = "—"  # a table's "started by" cell of a run started without a login (or from the CLI)


def user_error(exc: BaseException, name: str, lang: str = "en") -> gr.Error:
    """The one rule for an error shown in the page: a StudioError's page message (its fix in the page's words,
    never a CLI flag: ``StudioError.page_fix``); anything else logged as a bug and shown as a plain sentence
    (never a traceback), in the language of the browser being answered (``lang`` outside a request; the Chinese
    words: studio/words/error_words.py). ``duration=None``: the message stays until the
    user closes it (a fading popup left only a bare red 'Error')."""
    if isinstance(exc, gr.Error):
        return exc
    if isinstance(exc, StudioError):  # in the page's language (no English words left in a Chinese page)
        from ..words.error_words import page_message
        from .session_lang import session_lang
        return gr.Error(page_message(exc, session_lang(lang)), duration=None, print_exception=False)
    from .i18n import msg
    from ..workspace import is_disk_full
    if is_disk_full(exc):  # a full disk is the operator's to fix, not a bug: what stopped, and what to do
        log.warning("disk full in %s: %s", name, exc)
        return gr.Error(msg("disk.full", lang, what=msg(f"disk.what_{_doing(name)}", lang)), duration=None,
                        print_exception=False)
    log.exception("unexpected error in %s", name, exc_info=exc)
    return gr.Error(msg("err.internal", lang, name=name), duration=None, print_exception=False)


def _doing(name: str) -> str:
    """Which write a handler's name says it was doing (the words of disk.what_*)."""
    return next((w for w in ("export", "convert", "upload", "checkpoint") if w in name.lower()), "other")


def ui_errors(fn: Callable) -> Callable:
    """Wrap a handler (plain or generator) so every error reaches the page through ``user_error``."""
    name = getattr(fn, "__name__", "handler")
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every error is shown, bugs are logged
                raise user_error(exc, name) from None
        return gen

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            raise user_error(exc, name) from None
    return wrapper
