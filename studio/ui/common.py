"""Helpers shared by the tab modules: user errors as messages, small formatters."""
from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable, Iterator

import gradio as gr

from ..words import units
from ..errors import StudioError
from ..words.error_words import page_message
from ..workspace import is_disk_full
from ..app.context import AppContext
from .i18n import msg
from .text import text_value

log = logging.getLogger("studio.ui")
NOBODY = "—"  # a table's "started by" cell of a run started without a login (or from the CLI)


# A toast is for the moment it is raised: it fades after TOAST_S and the page closes every toast when another tab
# is picked (CLOSE_TOASTS_JS, app.py), so none floats over a tab it is not about. What must stay (an upload's
# or a Convert's problem) is written next to its control instead (``inline_errors``) until that control changes.
TOAST_S = 15.0
CLOSE_TOASTS_JS = "() => { document.querySelectorAll('[data-testid=\"toast-close\"]').forEach(b => b.click()); }"


def error_text(exc: BaseException, name: str, lang: str = "en") -> str:
    """The one rule for an error's words on the page: a StudioError worded by its code with the page's fix (never a
    CLI flag: studio/words/error_words.py); anything else logged as a bug and shown as a plain sentence (never a
    traceback), in ``lang``."""
    if isinstance(exc, gr.Error):
        return str(exc.message)
    if isinstance(exc, StudioError):  # in the page's language (no English words left in a Chinese page)
        return page_message(exc, lang)
    if is_disk_full(exc):  # a full disk is the operator's to fix, not a bug: what stopped, and what to do
        log.warning("disk full in %s: %s", name, exc)
        return msg("disk.full", lang, what=msg(f"disk.what_{_doing(name)}", lang))
    log.exception("unexpected error in %s", name, exc_info=exc)
    return msg("err.internal", lang, name=name)


def user_error(exc: BaseException, name: str, lang: str = "en") -> gr.Error:
    """``exc`` as a toast: ``error_text``'s words under a title in the page's language, for TOAST_S seconds.

    A toast shows its message as HTML and a coded error's values (a file, a run, a label) are a person's text, so
    the whole message is made text here, once for every error (the studio's own words hold no HTML)."""
    if isinstance(exc, gr.Error):
        return exc
    return gr.Error(text_value(error_text(exc, name, lang)), duration=TOAST_S, print_exception=False,
                    title=msg("err.title", lang))


def info(text: str, lang: str = "en") -> None:
    """A passing note (``gr.Info``) under a title in the page's language (Gradio's own title is English)."""
    gr.Info(text, title=msg("info.title", lang))


def warning(text: str, lang: str = "en") -> None:
    """A warning toast (``gr.Warning``) under a title in the page's language (Gradio's own title is English)."""
    gr.Warning(text, title=msg("warn.title", lang))


def _doing(name: str) -> str:
    """Which write a handler's name says it was doing (the words of disk.what_*)."""
    return next((w for w in ("export", "convert", "upload", "checkpoint") if w in name.lower()), "other")


def _handler_lang(fn: Callable) -> Callable[[tuple, dict], str]:
    """How to read the language a handler answers in from its call: its ``lang`` argument, else its AppContext's
    (studio/ui/handlers.py gives each handler its browser's), else "en". A coded error is worded when shown, so its
    words come out in the same language as the handler's own messages."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return lambda args, kwargs: "en"

    def lang_of(args: tuple, kwargs: dict) -> str:
        try:
            given = sig.bind_partial(*args, **kwargs).arguments
        except TypeError:
            return "en"
        lang = given.get("lang")
        if lang is None:
            lang = next((v.lang for v in given.values() if isinstance(v, AppContext)), None)
        return lang if isinstance(lang, str) and lang in ("en", "zh") else "en"
    return lang_of


def ui_errors(fn: Callable) -> Callable:
    """Wrap a handler (plain or generator) so every error reaches the page through ``user_error``, in the language
    the handler answers in (its ``lang`` or its AppContext's)."""
    name = getattr(fn, "__name__", "handler")
    lang_of = _handler_lang(fn)
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every error is shown, bugs are logged
                raise user_error(exc, name, lang_of(args, kwargs)) from None
        return gen

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            raise user_error(exc, name, lang_of(args, kwargs)) from None
    return wrapper


def fmt_seconds(seconds: float | None, lang: str) -> str:
    """A duration in ``lang``."""
    return units.fmt_seconds(seconds, lang)


def inline_errors(slot: int, n: int) -> Callable[[Callable], Callable]:
    """Wrap a handler with ``n`` outputs so an error is written into output ``slot`` (a Markdown beside the control
    it is about: "❌ what. Fix: ...") and the other outputs are left as they are, instead of raised as a toast. The
    message stays until that control's next event replaces it, and no output turns into a bare "Error" pill. The
    words are in the language the handler answers in (its ``lang`` or its AppContext's)."""
    def wrap(fn: Callable) -> Callable:
        name = getattr(fn, "__name__", "handler")
        lang_of = _handler_lang(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every error is shown, bugs are logged
                said = "❌ " + error_text(exc, name, lang_of(args, kwargs))
                if n == 1:
                    return said
                return tuple(said if i == slot else gr.skip() for i in range(n))
        return wrapper
    return wrap

