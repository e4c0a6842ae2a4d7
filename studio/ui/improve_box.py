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
from .common import info, ui_errors
from .handlers import for_each_browser, owner_action
from .text import Markdown


@ui_errors
def on_open(ctx: AppContext) -> tuple[Any, str, str, str | None]:
    """The box opened: the runs with accepted feedback, the first picked, its plan, and the verdict of its newest
    improvement (kept with that run: reopening the page shows it again)."""
    choices = improve_page.feedback_runs(ctx)
    first = choices[0][1] if choices else None
    return (gr.update(choices=choices, value=first), improve_page.plan_text(ctx, first, "auto"),
            *improve_page.latest_judged(ctx, first))


@ui_errors
def on_pick(ctx: AppContext, run_v: str | None, method_v: str) -> tuple[str, str, str | None]:
    """Another run or method picked: what its feedback holds, which training it would get, its last verdict."""
    return (improve_page.plan_text(ctx, run_v, method_v), *improve_page.latest_judged(ctx, run_v))


@ui_errors
def on_promote(ctx: AppContext, judged: str | None, anyway: bool) -> str:
    """An owner's one click after the verdict: teammates get the improved run."""
    return improve_page.promote(ctx, judged, anyway)


@ui_errors
def on_rollback(ctx: AppContext, run_v: str | None) -> str:
    """An owner's way back: teammates get the version before the live one."""
    return improve_page.rollback(ctx, run_v)


@ui_errors
def on_go(ctx: AppContext, run_v: str | None, method_v: str) -> tuple[str, str, None]:
    """Queue the improving run -> (its progress line, its folder for the timer to follow, nothing to promote
    until it is judged)."""
    made = improve_page.queue_improvement(ctx, run_v, method_v)
    info(msg("queued", ctx.lang, n=made["place"]) if made["place"] else
         msg("started", ctx.lang, name=Path(made["run"]).name), ctx.lang)
    text, _ = improve_page.progress_text(ctx, made["run"])
    return text, made["run"], None


@ui_errors
def on_tick(ctx: AppContext, new_run: str | None) -> tuple[Any, Any, Any]:
    """The improving run's progress, then its before / after and verdict once it ended (the timer stops
    following it, and Promote acts on it)."""
    if not new_run:
        return gr.skip(), gr.skip(), gr.skip()
    text, done = improve_page.progress_text(ctx, new_run)
    return text, (None if done else gr.skip()), (new_run if done else gr.skip())


def build_improve_box(ctx: AppContext, T: Any) -> dict[str, Any]:
    with gr.Accordion(T("imp.title"), open=False, elem_id="improve-box") as box:
        with gr.Row():
            run = gr.Dropdown(choices=[], label=T("imp.run"), elem_id="improve-run", scale=3)
            method = gr.Radio(["auto", "sft", "dpo"], value="auto", label=T("imp.method"), elem_id="improve-method",
                              scale=2)
        plan = Markdown(elem_id="improve-plan")
        go = gr.Button(T("imp.go"), variant="primary", elem_id="improve-btn")
        result = Markdown(elem_id="improve-result")
        with gr.Row():
            promote = gr.Button(T("imp.promote"), variant="primary", elem_id="improve-promote")
            anyway = gr.Checkbox(value=False, label=T("imp.anyway"), elem_id="improve-anyway")
            rollback = gr.Button(T("imp.rollback"), elem_id="improve-rollback")
        said = Markdown(elem_id="improve-live")
    pending = gr.State(None)  # the improving run's folder until its comparison is shown
    judged = gr.State(None)   # the improved run the verdict shown is about: what Promote promotes (server-side)
    timer = gr.Timer(3.0)

    box.expand(for_each_browser(ctx, on_open), None, [run, plan, result, judged], api_visibility="private")
    gr.on([run.change, method.change], for_each_browser(ctx, on_pick), [run, method], [plan, result, judged],
          api_visibility="private")
    go.click(owner_action(ctx, on_go), [run, method], [result, pending, judged], api_name="improve")
    timer.tick(for_each_browser(ctx, on_tick), pending, [result, pending, judged], api_visibility="private",
               show_progress="hidden")
    promote.click(owner_action(ctx, on_promote), [judged, anyway], said, api_name="promote")
    rollback.click(owner_action(ctx, on_rollback), run, said, api_name="rollback")
    return {"box": box, "run": run, "method": method, "plan": plan, "go": go, "result": result}
