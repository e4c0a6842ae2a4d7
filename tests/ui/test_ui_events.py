"""No two "always_last" listeners share a trigger anywhere on the page.

Why: Gradio 6.31's page defers a change that arrives while an "always_last" listener runs, and when that listener
ends it re-sends the deferred change to *every* listener of that change. Two such listeners on one change defer
each other and re-trigger each other for ever: after "Apply" in Settings the estimate and the settings save ran
twice a second without end, the fit panel never settled, and a browser test failed on CI. (`.change` listeners
are "always_last" by default.) The rule is checked on the built page, so a listener added tomorrow is covered;
the browser half of it is in test_ui_browser_fit.py (the page goes quiet after Apply).
"""
from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

from studio.ui import app
from studio.app.context import AppContext


def _shared_always_last(blocks: Any) -> dict[str, list[str]]:
    cfg = blocks.get_config_file()
    names = {c["id"]: (c.get("props", {}).get("elem_id") or str(c.get("props", {}).get("label")) or c["type"])
             for c in cfg["components"]}
    fns = {i: f for i, f in enumerate(blocks.fns.values())}
    listeners: dict[tuple[int, str], list[str]] = collections.defaultdict(list)
    for dep in cfg["dependencies"]:
        if dep.get("trigger_mode") != "always_last":
            continue
        fn = fns.get(dep["id"])
        label = dep.get("api_name") or getattr(getattr(fn, "fn", None), "__name__", str(dep["id"]))
        for target, event in dep["targets"]:
            listeners[(target, event)].append(label)
    return {f"{names.get(t, t)}.{e}": ls for (t, e), ls in listeners.items() if len(ls) > 1}


def test_no_trigger_has_two_always_last_listeners(tmp_path: Path) -> None:
    blocks = app.build_app(AppContext.create(tmp_path / "ws"))
    assert _shared_always_last(blocks) == {}, "make the cheaper listener trigger_mode='multiple' or chain it with .then"


def test_the_check_sees_two_always_last_listeners() -> None:
    """The rule itself can fail: two plain .change listeners on one box are reported."""
    import gradio as gr
    with gr.Blocks() as blocks:
        box, out1, out2 = gr.Textbox(elem_id="box"), gr.Markdown(), gr.Markdown()
        box.change(lambda v: v, box, out1)
        box.change(lambda v: v, box, out2)
        ok = gr.Textbox(elem_id="ok")
        ok.change(lambda v: v, ok, out1)
        ok.change(lambda v: v, ok, out2, trigger_mode="multiple")
    shared = _shared_always_last(blocks)
    assert list(shared) == ["box.change"] and len(shared["box.change"]) == 2, shared
