"""A viewer's page says "viewer" and switches off what the server would refuse it.

A viewer's Train tab said "No run yet. Press Start." beside an enabled Start, which the server then refused, and
nothing on the page said "viewer". The controls are found from the built page (every trigger of an owner-only
handler), so the test covers a button wired tomorrow.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from studio.app.context import AppContext
from studio.app.roles import is_owner_only
from studio.ui import app, page_role, train_tab


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ctx = AppContext.create(tmp_path_factory.mktemp("roles") / "ws")
    ctx.extra["roles"] = {"vera": "viewer", "olga": "owner"}
    blocks = app.build_app(ctx)
    return blocks


def test_every_owner_only_control_is_marked_and_nothing_else(built: Any) -> None:
    cfg = built.get_config_file()
    comps = {c["id"]: c for c in cfg["components"]}
    owner_targets = {c._id for c in page_role.owner_controls(built)}
    direct = {t for fn in built.fns.values() if is_owner_only(fn.fn) for t, _ in fn.targets if t is not None}
    assert direct < owner_targets  # and the first events of chains that end in one (Convert: clear, then convert)
    assert len(owner_targets) >= 10  # Start, Abort, Resume, Convert, Delete, Export, the model uploads, ...
    classes = {i: c.get("props", {}).get("elem_classes") or [] for i, c in comps.items()}
    assert all(page_role.OWNER_CLASS in classes[t] for t in owner_targets), [
        comps[t]["props"].get("elem_id") for t in owner_targets if page_role.OWNER_CLASS not in classes[t]]
    marked = {i for i, cl in classes.items() if page_role.OWNER_CLASS in cl}
    assert marked == owner_targets
    ids = {comps[t]["props"].get("elem_id") for t in owner_targets}
    assert {"start-btn", "abort-btn", "resume-btn", "convert-btn"} <= ids


def test_a_viewers_page_cannot_press_them() -> None:
    rule = re.search(r"body\.studio-viewer \.owner-action \{([^}]*)\}", app.CSS)
    assert rule and "pointer-events: none" in rule.group(1)
    assert page_role.VIEWER_CLASS == "studio-viewer" and page_role.OWNER_CLASS == "owner-action"


@pytest.mark.parametrize("user,role", [("vera", "viewer"), ("olga", "owner"), (None, "owner")])
def test_the_page_says_who_is_looking(built: Any, user: str | None, role: str) -> None:
    ctx = built.studio_ctx
    banner, said = page_role.role_banner(ctx.answering(lang="en", user=user))
    idle = train_tab.status_markdown({"state": "idle"}, "en", page_role.page_role(ctx.answering(lang="en", user=user)))
    zh = page_role.role_banner(ctx.answering(lang="zh", user=user))[0]
    assert said == role
    if role == "viewer":
        assert banner["visible"] and "viewer" in banner["value"] and "vera" in banner["value"]
        assert "查看者" in zh["value"]
        assert "Press" not in idle and "viewer" in idle
    else:
        assert banner["visible"] is False and "Press **Start**" in idle
    loads = [d for d in built.get_config_file()["dependencies"] if page_role.VIEWER_CLASS in (d.get("js") or "")]
    assert loads, "a page load marks a viewer's page"


@pytest.mark.parametrize("user,role", [("vera", "viewer"), ("olga", "owner")])
def test_a_viewers_data_tab_says_and_does_one_thing(built: Any, user: str, role: str) -> None:
    """Issue 52: a viewer's Data tab opened the file dialog and previewed the file while the banner said upload was
    owner-only. Now opening a file there is an owner's (its controls are off on a viewer's page and the server
    refuses it), a note on the tab says where a viewer's upload goes, and the banner says a viewer may upload a
    file to predict."""
    import gradio as gr
    from types import SimpleNamespace
    cfg = built.get_config_file()
    comps = {c["id"]: c for c in cfg["components"]}
    marked = {comps[c._id]["props"].get("elem_id") for c in page_role.owner_controls(built)}
    assert {"data-upload", "sample-btn"} <= marked
    ctx = built.studio_ctx
    load = next(fn for fn in built.fns.values() if any(
        getattr(o, "elem_id", None) == "data-viewer-note" for o in fn.outputs))
    request = SimpleNamespace(session_hash=f"s-{user}", headers={"accept-language": "en-US"}, username=user)
    updates = load.fn(request)
    note = updates[[getattr(o, "elem_id", None) for o in load.outputs].index("data-viewer-note")]
    sample = next(fn.fn for fn in built.fns.values() if fn.api_name == "sample_data")
    if role == "viewer":
        assert note["visible"] and "Batch prediction" in note["value"]
        assert "upload a file to predict" in page_role.role_banner(ctx.answering(lang="en", user=user))[0]["value"]
        with pytest.raises(gr.Error):
            sample(request)
    else:
        assert note["visible"] is False
        assert "Read 427 rows" in sample(request)[0]
