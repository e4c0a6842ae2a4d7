"""The Train tab's "Improve this run" accordion: pick a finished run with accepted feedback and a method, see what
the feedback holds, queue the improving run (owners only, like Start), and read the before / after once it
finished. The logic is studio/app/improve_page.py; this file only draws and wires it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from ..app import improve_page
from ..app.context import AppContext
from ..words.catalog import msg
from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .text import Markdown


@ui_errors
def on_open(ctx: AppContext) -> tuple[Any, str]:
    """The box opened: the runs with accepted feedback, the first picked, and its plan."""
    choices = improve_page.feedback_runs(ctx)
    first = choices[0][1] if choices else None
    return gr.update(choices=choices, value=first), improve_page.plan_text(ctx, first, "auto")


@ui_errors
def on_pick(ctx: AppContext, run_v: str | None, method_v: str) -> str:
    """Another run or method picked: what its feedback holds and which training it would get."""
    return improve_page.plan_text(ctx, run_v, method_v)


@ui_errors
def on_go(ctx: AppContext, run_v: str | None, method_v: str) -> tuple[str, str]:
    """Queue the improving run -> (its progress line, its folder for the timer to follow)."""
    made = improve_page.queue_improvement(ctx, run_v, method_v)
    gr.Info(msg("queued", ctx.lang, n=made["place"]) if made["place"] else
            msg("started", ctx.lang, name=Path(made["run"]).name))
    text, _ = improve_page.progress_text(ctx, made["run"])
    return text, made["run"]


@ui_errors
def on_tick(ctx: AppContext, new_run: str | None) -> tuple[Any, Any]:
    """The improving run's progress, then its before / after once it ended (and the timer stops following it)."""
    if not new_run:
        return gr.skip(), gr.skip()
    text, done = improve_page.progress_text(ctx, new_run)
    return text, (None if done else gr.skip())


def build_improve_box(ctx: AppContext, T: Any) -> dict[str, Any]:
    with gr.Accordion(T("imp.title"), open=False, elem_id="improve-box") as box:
        with gr.Row():
            run = gr.Dropdown(choices=[], label=T("imp.run"), elem_id="improve-run", scale=3)
            method = gr.Radio(["auto", "sft", "dpo"], value="auto", label=T("imp.method"), elem_id="improve-method",
                              scale=2)
        plan = Markdown(elem_id="improve-plan")
        go = gr.Button(T("imp.go"), variant="primary", elem_id="improve-btn")
        result = Markdown(elem_id="improve-result")
    pending = gr.State(None)  # the improving run's folder until its comparison is shown
    timer = gr.Timer(3.0)

    box.expand(for_each_browser(ctx, on_open), None, [run, plan], api_visibility="private")
    gr.on([run.change, method.change], for_each_browser(ctx, on_pick), [run, method], plan, api_visibility="private")
    go.click(owner_action(ctx, on_go), [run, method], [result, pending], api_name="improve")
    timer.tick(for_each_browser(ctx, on_tick), pending, [result, pending], api_visibility="private",
               show_progress="hidden")
    return {"box": box, "run": run, "method": method, "plan": plan, "go": go, "result": result}
