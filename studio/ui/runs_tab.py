"""Runs tab: every run in the workspace (page or CLI), their loss curves on one plot, scorecards side by side.

Comparing tries is how a newcomer learns what a setting does ("best" vs "quick", LoRA vs full);
H2O LLM Studio offers it, LLaMA-Factory does not. Everything here is read from the run folders
(studio/runs/run_dir.py's contract), so runs started with `python -m studio train` into workspace/runs
appear too.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from .text import Markdown

from ..errors import StudioError
from ..runs.plots import overlay_figure
from ..runs.run_dir import RunDir
from ..runs.run_time import run_seconds
from ..runs.manage import delete_runs, rename_run
from ..app import improve_page
from ..app.auto_eval import ensure_scored
from .common import NOBODY, fmt_seconds, ui_errors
from .handlers import for_each_browser, owner_action
from ..app.context import AppContext
from .i18n import headers, msg
from .train_tab import plot_lang


def _status(path: str) -> dict[str, Any]:
    return RunDir(path).read_status()


# how long a run trained, all its parts (Abort + Resume) together, only from what it recorded (run_time.run_seconds)
recorded_seconds = run_seconds


def run_table(ctx: AppContext) -> list[dict[str, Any]]:
    """One dict per run, newest first: what the table and the scorecards show."""
    out = []
    for r in ctx.runner.past_runs(limit=200):
        st = _status(r["path"])
        acc = ensure_scored(ctx, r["path"]) if r["state"] == "finished" else None
        out.append({**r, "accuracy": acc.get("accuracy") if acc else None, "held_out": acc.get("n") if acc else None,
                    "seconds": run_seconds(st), "lineage": improve_page.lineage_line(r["path"], ctx.lang),
                    "when": time.strftime("%m-%d %H:%M", time.localtime(r["started"])) if r.get("started") else ""})
    return out


def table_rows(runs: list[dict[str, Any]], lang: str) -> list[list[Any]]:
    def num(v: Any) -> Any:
        return "" if v is None else round(v, 4)
    return [[r["name"], msg(f"state.{r['state']}", lang) if r["state"] in STATES else r["state"], r["model"],
             r["method"], Path(str(r["dataset"])).stem, "" if r["accuracy"] is None else f"{r['accuracy']:.1%}",
             fmt_seconds(r["seconds"], lang) if r["seconds"] else NOBODY, num(r["final_loss"]), r["when"],
             r.get("started_by") or NOBODY] for r in runs]


STATES = ("starting", "running", "finished", "aborted", "failed", "unknown")


# the scorecards' rows: (the fact's name, its value of one run in a language)
SCORECARD_ROWS = [
    ("runs.accuracy", lambda r, lang: "" if r["accuracy"] is None else f"{r['accuracy']:.1%}"),
    ("runs.held_out", lambda r, lang: r["held_out"] or ""),
    ("runs.model", lambda r, lang: r["model"]), ("runs.method", lambda r, lang: r["method"]),
    ("runs.data", lambda r, lang: Path(str(r["dataset"])).stem),
    ("runs.lr", lambda r, lang: r["learning_rate"]), ("runs.steps", lambda r, lang: r["step"] or ""),
    ("runs.final_loss", lambda r, lang: "" if r["final_loss"] is None else f"{r['final_loss']:.4f}"),
    ("runs.eval_loss", lambda r, lang: "" if r["eval_loss"] is None else f"{r['eval_loss']:.4f}"),
    ("runs.time", lambda r, lang: fmt_seconds(r["seconds"], lang) if r["seconds"] else ""),
    ("runs.origin", lambda r, lang: r.get("lineage") or "")]  # improved_from.json: "Improve this run" made it


def scorecards(runs: list[dict[str, Any]], picked: list[str], lang: str) -> str:
    """The picked runs side by side: one column per run, one row per fact."""
    chosen = [r for r in runs if r["path"] in (picked or [])]
    if not chosen:
        return msg("runs.pick_some", lang)
    lines = ["| | " + " | ".join(r["name"] for r in chosen) + " |", "|---" * (len(chosen) + 1) + "|"]
    lines += [f"| {msg(key, lang)} | " + " | ".join(str(get(r, lang)) for r in chosen) + " |"
              for key, get in SCORECARD_ROWS]
    return "\n".join(lines)


def compare(ctx: AppContext, picked: list[str] | None) -> tuple[Any, str]:
    """(overlay plot, scorecards) for the picked run folders."""
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib.pyplot as plt
    runs = run_table(ctx)
    curves = [(r["name"], RunDir(r["path"]).events()) for r in runs if r["path"] in (picked or [])]
    lang = plot_lang(ctx.lang)
    fig = overlay_figure(curves, title=msg("plot.compare", lang),
                         labels={"step": msg("plot.step", lang), "loss": msg("plot.loss", lang)})
    plt.close(fig)
    return fig, scorecards(runs, picked or [], ctx.lang)


def refresh_runs(ctx: AppContext, current: list[str] | None) -> tuple[Any, Any]:
    """(table, run choices) reloaded; the picked runs that still exist stay picked, else the two newest are."""
    runs = run_table(ctx)
    choices = [(f"{r['name']} ({r['when']})", r["path"]) for r in runs]
    keep = [p for p in (current or []) if any(p == v for _, v in choices)]
    if not keep:
        keep = [v for _, v in choices[:2]]
    return (gr.update(value=table_rows(runs, ctx.lang), headers=headers("runs.headers", ctx.lang)),
            gr.update(choices=choices, value=keep))


@ui_errors
def on_rename(ctx: AppContext, paths: list[str] | None, name: str) -> str:
    if len(paths or []) != 1:
        raise StudioError.of("page.pick_one_run")
    moved = rename_run(ctx.runner, paths[0], name)
    return msg("runs.renamed", ctx.lang, name=moved.path.name)


@ui_errors
def on_delete(ctx: AppContext, paths: list[str] | None) -> str:
    if not paths:
        return msg("runs.pick_some", ctx.lang)
    return msg("runs.deleted", ctx.lang, n=delete_runs(ctx.runner, paths))


@dataclass
class RunsTab:
    """The Runs tab's components by name."""

    table: Any
    picked: Any
    refresh_btn: Any
    new_name: Any
    rename_btn: Any
    delete_btn: Any
    manage_info: Any
    versions: Any
    plot: Any
    cards: Any


def build_runs_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """The Runs tab drawn and wired; ``refresh`` reloads the table and the choices."""
    tab = draw_runs_tab(ctx, T)
    wire_runs_tab(ctx, tab)
    return {"table": tab.table, "picked": tab.picked, "plot": tab.plot, "cards": tab.cards, "refresh": refresh_runs,
            "versions": tab.versions}


def draw_runs_tab(ctx: AppContext, T: Any) -> RunsTab:
    """The components in their places."""
    lang = ctx.lang
    Markdown(T("runs.intro"))
    table = gr.Dataframe(headers=headers("runs.headers", lang), interactive=False, wrap=True, elem_id="runs-table")
    # built in the server's language; each page load re-sends the empty headers in the browser's (localize.py)
    table.studio_localize = lambda lg: gr.update(value={"headers": headers("runs.headers", lg), "data": []},
                                                 headers=headers("runs.headers", lg))
    picked = gr.CheckboxGroup(choices=[], label=T("runs.pick"), elem_id="runs-pick")
    with gr.Row():
        refresh_btn = gr.Button(T("runs.refresh"), size="sm")
        new_name = gr.Textbox(label=T("runs.new_name"), max_lines=1, scale=2, elem_id="runs-new-name")
        rename_btn = gr.Button(T("runs.rename"), size="sm", elem_id="runs-rename")
        delete_btn = gr.Button(T("runs.delete"), size="sm", variant="stop", elem_id="runs-delete")
    manage_info = Markdown(elem_id="runs-manage-info")
    with gr.Accordion(T("runs.versions"), open=True):
        versions = Markdown(elem_id="runs-versions")  # lines teammates see: versions, the live one, who changed it
    plot = gr.Plot(label=T("runs.plot"), elem_id="runs-plot", format="png")
    cards = Markdown(elem_id="runs-cards")
    return RunsTab(table=table, picked=picked, refresh_btn=refresh_btn, new_name=new_name, rename_btn=rename_btn,
                   delete_btn=delete_btn, manage_info=manage_info, versions=versions, plot=plot, cards=cards)


def wire_runs_tab(ctx: AppContext, t: RunsTab) -> None:
    """The tab's events: which handler answers which component, with which inputs."""
    refreshed = for_each_browser(ctx, refresh_runs)
    listed = [t.table, t.picked]
    t.refresh_btn.click(refreshed, t.picked, listed, api_name="runs_refresh").then(
        for_each_browser(ctx, improve_page.versions_markdown), None, t.versions, api_visibility="private")
    t.rename_btn.click(owner_action(ctx, on_rename), [t.picked, t.new_name], t.manage_info,
                       api_name="rename_run").success(refreshed, t.picked, listed, api_visibility="private")
    # the browser asks first; a cancelled confirm sends no runs, and nothing is deleted
    confirm = json.dumps(msg("runs.confirm_delete", ctx.lang))
    t.delete_btn.click(owner_action(ctx, on_delete), t.picked, t.manage_info, api_name="delete_runs",
                       js=f"(p) => (p && p.length && confirm({confirm})) ? p : []"
                       ).success(refreshed, t.picked, listed, api_visibility="private")
    t.picked.change(for_each_browser(ctx, compare), t.picked, [t.plot, t.cards], api_name="runs_compare",
                    show_progress="hidden")
