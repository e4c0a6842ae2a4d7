"""A page handler takes its inputs by name: its own parameters, or ``v`` of studio/ui/inputs.named (``v.form``,
``v.gpu_mem``), never a positional ``*args`` it slices. ``args[-2]`` meant the card memory on the Settings tab until
Host RAM was added after it, and app.py's ``a[3]`` meant the training data because of the order of a list in
another module. The tab's builder draws (``draw_*``), its wiring says which component is which name (``wire_*``),
and the handlers live at module level."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import SimpleNamespace

import pytest

from studio.app.context import AppContext

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "studio" / "ui"
# the modules that make a handler's call (the browser's ctx, inputs by name, errors in the page's words): their
# wrappers take *args to pass them on whole
CALL_MAKERS = {"handlers.py", "inputs.py", "common.py"}


def _var_positional(fn: object) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_POSITIONAL for p in params)


def _handlers(app: object) -> list:
    return [d for d in app.fns.values() if d.fn is not None  # type: ignore[attr-defined]
            and not getattr(d.fn, "__module__", "").startswith("gradio")]


def test_no_function_of_the_page_unpacks_positional_values() -> None:
    bad = []
    for path in sorted(UI.glob("*.py")):
        if path.name in CALL_MAKERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)) and node.args.vararg:
                bad.append(f"{path.name}:{node.lineno} {getattr(node, 'name', 'lambda')}(*{node.args.vararg.arg})")
    assert not bad, "take the inputs by name (studio/ui/inputs.named), not *args:\n" + "\n".join(bad)


def test_every_event_of_the_studio_page_names_its_inputs(tmp_path: Path) -> None:
    """What Gradio calls has one named parameter per input (an API caller sees the same names)."""
    from studio.ui.app import build_app
    events = _handlers(build_app(AppContext.create(tmp_path / "ws", lang="en")))
    assert len(events) > 60
    bad = sorted({f"{d.api_name or d.name}: {getattr(d.fn, '__qualname__', d.fn)}" for d in events
                  if _var_positional(d.fn)})
    assert not bad, "events whose handler takes *values:\n" + "\n".join(bad)


@pytest.mark.parametrize("task", ["labels", "chat"])
def test_every_event_of_the_demo_page_names_its_inputs(tmp_path: Path, task: str) -> None:
    from studio.ui.demo import build_demo
    run = SimpleNamespace(name="r", task=task, labels=["a", "b"], examples=[], model="m", method="lora",
                          template="t", path=tmp_path, like=None)
    bad = sorted({getattr(d.fn, "__qualname__", "?") for d in _handlers(build_demo(run, None)) if _var_positional(d.fn)})
    assert not bad, bad


def test_named_inputs_reach_the_handler_by_name() -> None:
    import gradio as gr
    from studio.ui.inputs import named
    with gr.Blocks():
        a, b, c = gr.Number(), gr.Number(), gr.Textbox()

    def handler(ctx: object, v: object, request: object = None) -> tuple:
        return ctx, v.form.a, v.form.b, v.note, request  # type: ignore[attr-defined]

    fn, inputs = named(handler, {"form": {"a": a, "b": b}, "note": c})
    assert inputs == [a, b, c]
    assert list(inspect.signature(fn).parameters) == ["ctx", "a", "b", "note", "request"]
    assert fn("ctx", 1, 2, "n") == ("ctx", 1, 2, "n", None)
    assert fn("ctx", 1, note="n", b=2) == ("ctx", 1, 2, "n", None)  # an API caller naming them
    with pytest.raises(ValueError):
        named(handler, {"form": {"a": a}, "a": b})  # one name, two inputs


def test_every_tab_is_drawn_wired_and_answered_at_module_level() -> None:
    """Each studio/ui/<name>_tab.py has ``draw_<name>_tab`` and ``wire_<name>_tab``, and no event handler defined
    inside a function (a handler inside the builder is untestable alone and sees the builder's locals)."""
    import ast
    root = Path(__file__).resolve().parents[2] / "studio" / "ui"
    tabs = sorted(root.glob("*_tab.py"))
    assert len(tabs) >= 6
    for path in tabs:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        name = path.stem[:-len("_tab")]
        assert {f"draw_{name}_tab", f"wire_{name}_tab"} <= top, path.name
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith(("draw_", "wire_",
                                                                                                  "build_"))):
            inner = [m.name for m in ast.walk(fn) if m is not fn and isinstance(m, (ast.FunctionDef,
                                                                                     ast.AsyncFunctionDef))]
            assert not inner, f"{path.name}: {fn.name} defines {inner}"
