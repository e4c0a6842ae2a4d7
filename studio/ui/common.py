"""Helpers shared by the tab modules: user errors as messages, small formatters."""
from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import gradio as gr

from ..errors import StudioError

log = logging.getLogger("studio.ui")


def ui_errors(fn: Callable) -> Callable:
    """A StudioError becomes a gr.Error popup with its message as-is (never a traceback)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StudioError as exc:
            raise gr.Error(exc.message, print_exception=False) from None
        except gr.Error:
            raise
        except Exception:
            log.exception("unexpected error in %s", fn.__name__)
            from .i18n import msg
            raise gr.Error(msg("err.internal", name=fn.__name__), print_exception=False) from None
    return wrapper


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {(s % 3600) // 60:02d}m"
