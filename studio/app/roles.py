"""Who may do what on a shared studio: owners do everything, viewers look at results.

A handler that starts, stops, deletes, exports or uploads is made by ``studio.ui.handlers.owner_action``, which
checks the caller's role inside the action (from the login its request proves) and marks it here; the login guard
(studio/web/guard.py) reads the mark to refuse it to a viewer early, and the page greys out its controls. Neither
the guard nor the page is the protection: the action's own check is. A marked function keeps its signature
(Gradio reads it for ``gr.Request``).
"""
from __future__ import annotations

from typing import Any, Callable

ROLES = ("owner", "viewer")
_MARK = "studio_owner_only"


def mark_owner_only(fn: Callable) -> Callable:
    """Mark ``fn`` (the exact object given to ``.click``/``.upload``) as an owner action; returns it. Only
    ``owner_action`` calls this: a mark without the action's own check would be a gate in front of nothing."""
    setattr(fn, _MARK, True)
    return fn


def is_owner_only(fn: Any) -> bool:
    return bool(getattr(fn, _MARK, False))
