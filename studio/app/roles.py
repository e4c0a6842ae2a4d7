"""Who may do what on a shared studio: owners do everything, viewers look at results.

A handler that starts, stops, deletes, exports or uploads is marked ``owner_only`` where it is wired;
the login guard (studio/ui/guard.py) refuses it to a viewer on the server, so hiding a button is never
the protection. A marked function keeps its signature (Gradio reads it for ``gr.Request``).
"""
from __future__ import annotations

from typing import Any, Callable

ROLES = ("owner", "viewer")
_MARK = "studio_owner_only"


def owner_only(fn: Callable) -> Callable:
    """Mark ``fn`` (the exact object given to ``.click``/``.upload``) as an owner action; returns it."""
    setattr(fn, _MARK, True)
    return fn


def is_owner_only(fn: Any) -> bool:
    return bool(getattr(fn, _MARK, False))
