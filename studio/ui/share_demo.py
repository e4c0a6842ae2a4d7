"""The Evaluate tab's "Share a demo" panel: the command that serves the picked run's demo page, and a button that
starts that page as a child process (studio/app/shared_demos.py) on the studio's own host and logins.

The run comes from the Evaluate tab's dropdown and is resolved on the server (``find_finished_run``: a finished run
inside the runs folder, nothing else) before any child starts.

Wiring (evaluate_tab.py, after the run dropdown exists): ``build_share_panel(T, lang, run, ctx)``; ``lang`` only
writes the first command, each handler answers in its browser's (``for_each_browser``).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import gradio as gr

from .text import Markdown

from ..errors import StudioError
from ..runs.run_dir import find_finished_run
from ..app import shared_demos
from ..app.shared_demos import demo_command, launch_flags, on_network
from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .i18n import msg
from .text import text_value


def command_markdown(ctx: Any, run: str | None, lang: str = "en") -> str:
    """The panel's text: the command for the picked run, on this computer and for teammates on the network."""
    return _command_words(run, lang, ctx.workspace, getattr(launch_flags(ctx), "auth_file", None))


def _command_words(run: str | None, lang: str, workspace: Any, auth_file: str | None) -> str:
    if not run:
        return msg("demo.no_run", lang)
    name = Path(str(run)).name
    return msg("demo.command", lang, local=demo_command(name, workspace),
               network=demo_command(name, workspace, host="0.0.0.0", auth_file=auth_file or "logins.txt"))


def start_demo(ctx: Any, run: str | None, lang: str = "en") -> Iterator[str]:
    """Start (or find) the picked run's demo page on a free port; yields the panel's message as it goes.

    Raises:
        StudioError: no finished run picked, MAX_DEMOS already running, or the child ended before it served.
    """
    if not run:
        raise StudioError.of("page.demo_no_run")
    found = find_finished_run(ctx.runs_root, str(run))
    name = found.path.name
    try:
        demo = shared_demos.start(ctx, str(found.path))
    except shared_demos.TooManyDemos as busy:
        raise StudioError.of("page.demo_too_many", n=busy.running) from None
    if not shared_demos.ready(demo, lambda _s: None):
        yield msg("demo.starting", lang, run=name)
        if not shared_demos.ready(demo, time.sleep, shared_demos.READY_S):
            why = shared_demos.last_line(demo.log)
            demo.proc.terminate()
            if not why:
                raise StudioError.of("page.demo_silent", run=text_value(name))
            raise StudioError.of("page.demo_failed", run=text_value(name), detail=text_value(why))
    yield msg("demo.running" if on_network(ctx) else "demo.running_local", lang, run=name,
              urls="\n".join(f"- {u}" for u in demo.urls))


def stop_demo(ctx: Any, run: str | None, lang: str = "en") -> str:
    """Stop the picked run's demo page (its child process), if this studio started one."""
    if not run:
        raise StudioError.of("page.demo_no_run")
    found = find_finished_run(ctx.runs_root, str(run))
    stopped = shared_demos.stop(ctx, str(found.path))
    return msg("demo.stopped" if stopped else "demo.none_running", lang, run=found.path.name)


def on_pick(ctx: Any, run: str | None) -> str:
    """Another run picked: its command, in the browser's language."""
    return command_markdown(ctx, run, ctx.lang)


@ui_errors
def on_start(ctx: Any, run: str | None) -> Iterator[str]:
    """Start: ``start_demo`` in the browser's language."""
    yield from start_demo(ctx, run, ctx.lang)


@ui_errors
def on_stop_demo(ctx: Any, run: str | None) -> str:
    """Stop: ``stop_demo`` in the browser's language."""
    return stop_demo(ctx, run, ctx.lang)


# ------------------------------------------------------------------ layout
def build_share_panel(T: Any, lang: str, run_dropdown: Any, ctx: Any) -> dict[str, Any]:
    """The panel inside the caller's layout; its text follows ``run_dropdown``. Returns its components."""
    with gr.Accordion(T("demo.share"), open=False):
        Markdown(T("demo.share_intro"))
        command = Markdown(command_markdown(ctx, run_dropdown.value, lang), elem_id="share-demo-command")
        # written in the server's language at build time: each page load re-sends it in its browser's (localize.py)
        first, where, logins = run_dropdown.value, ctx.workspace, getattr(launch_flags(ctx), "auth_file", None)
        command.studio_localize = lambda lg: gr.update(value=_command_words(first, lg, where, logins))
        with gr.Row():
            start = gr.Button(T("demo.start"), variant="primary", elem_id="share-demo-start")
            stop = gr.Button(T("demo.stop"), elem_id="share-demo-stop")
        status = Markdown(elem_id="share-demo-status")

    # the Evaluate tab's run pick: its cheap listeners are "multiple", none "always_last" (test_ui_events.py)
    run_dropdown.change(for_each_browser(ctx, on_pick), run_dropdown, command, api_visibility="private",
                        trigger_mode="multiple")
    start.click(owner_action(ctx, on_start), run_dropdown, status, api_name="start_demo")
    stop.click(owner_action(ctx, on_stop_demo), run_dropdown, status, api_name="stop_demo")
    return {"command": command, "start": start, "stop": stop, "status": status}
