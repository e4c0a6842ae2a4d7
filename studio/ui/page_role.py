"""What a login may do, shown on its page: a viewer's page says "viewer" and every control wired to an owner-only
handler is switched off there.

The server refuses those handlers to viewers anyway (each owner action itself: studio/ui/handlers.py, owner_action); this is the page telling the truth about it. The
controls are found from the built page itself (every trigger of a handler marked ``owner_only``), so a button
wired tomorrow is covered without a list to keep: each gets the class OWNER_CLASS, and a viewer's page carries
VIEWER_CLASS on <body>, which app.py's CSS turns into a control that cannot be pressed.
"""
from __future__ import annotations

from typing import Any

import gradio as gr

from ..app.context import AppContext
from ..app.roles import is_owner_only
from .handlers import for_each_browser
from .i18n import msg

OWNER_CLASS = "owner-action"
VIEWER_CLASS = "studio-viewer"
_MARK_JS = ("(role) => { document.body.classList.toggle('" + VIEWER_CLASS + "', role === 'viewer'); "
            "document.querySelectorAll('." + OWNER_CLASS + " button, ." + OWNER_CLASS + " input, ." + OWNER_CLASS
            + " textarea').forEach(e => { if (role === 'viewer') e.setAttribute('aria-disabled', 'true'); }); }")


def page_role(ctx: AppContext) -> str:
    """'owner' or 'viewer' for the login ``ctx`` answers (an owner without logins)."""
    return ctx.role()


def owner_controls(blocks: Any) -> list[Any]:
    """Every component whose event runs an owner-only handler, directly or later in its ``.then`` chain."""
    by_id, fns = blocks.blocks, blocks.fns
    out: dict[int, Any] = {}
    for fn in fns.values():
        if not is_owner_only(fn.fn):
            continue
        seen: set[int] = set()
        while fn.trigger_after is not None and fn.trigger_after not in seen:  # a .then: the chain's first event
            seen.add(fn.trigger_after)
            fn = fns[fn.trigger_after]
        for block, _event in fn.targets:
            comp = by_id.get(block) if block is not None else None
            if comp is not None:
                out[block] = comp
    return list(out.values())


def mark_owner_controls(blocks: Any) -> None:
    """Put OWNER_CLASS on every owner control (before the page's config is written)."""
    for comp in owner_controls(blocks):
        classes = comp.elem_classes if isinstance(comp.elem_classes, list) else (
            [comp.elem_classes] if comp.elem_classes else [])
        if OWNER_CLASS not in classes:
            comp.elem_classes = classes + [OWNER_CLASS]


def role_banner(ctx: AppContext) -> tuple[Any, str]:
    """(the banner's update, the role) for the login ``ctx`` answers."""
    role = page_role(ctx)
    if role != "viewer":
        return gr.update(value="", visible=False), role
    return gr.update(value=msg("role.viewer", ctx.lang, user=ctx.user or ""), visible=True), role


NOTE = "studio_role_note"  # a component with this attribute (a message code) is a note shown to viewers only


def wire_role(app: Any, banner: Any, ctx: AppContext) -> None:
    """On each page load: the banner says the role, a viewer's page switches the owner controls off, and each
    viewer's note (a component carrying NOTE: where the controls a viewer lacks are, what a viewer may do instead)
    shows on a viewer's page only."""
    mark_owner_controls(app)
    role = gr.Textbox(visible=False, elem_id="page-role")
    notes = [c for c in app.blocks.values() if isinstance(getattr(c, NOTE, None), str)]

    def banner_and_notes(ctx: AppContext) -> list[Any]:
        update, who = role_banner(ctx)
        return [update, who, *(gr.update(value=msg(getattr(c, NOTE), ctx.lang), visible=True) if who == "viewer"
                               else gr.update(visible=False) for c in notes)]

    app.load(for_each_browser(ctx, banner_and_notes), None, [banner, role, *notes],
             api_visibility="private").then(None, role, None, js=_MARK_JS)
