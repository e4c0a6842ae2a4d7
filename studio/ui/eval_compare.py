"""Evaluate tab, measured comparisons: the scorecard's latency/memory rows, full vs quantized, the deploy report,
generation defaults.

Thin like the tab itself: the numbers come from ``studio.evaluation.compare`` / ``footprint`` / ``gen_defaults``
(which load the models); this module only turns widget values into calls and results into markdown.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from .text import Markdown

from ..evaluation.compare import compare_full_quantized, exports
from ..evaluation.gen_defaults import generation_defaults
from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .inputs import Values, named
from .i18n import msg
from ..errors import StudioError
from ..evaluation.deploy_report import deploy_report
from ..evaluation.generation_check import generation_check
from ..app import generation_report
from ..app.eval_tables import compare_markdown, deploy_markdown, measured_rows  # noqa: F401 (tests' names)
from ..app.uploads import DATA_MB, check_data_upload
from ..evaluation import inference

DATA_TYPES = [".jsonl", ".json", ".csv", ".tsv", ".xlsx", ".parquet"]


def data_file(source: str, file: str | None, limit_mb: float = DATA_MB) -> str | None:
    """The file a check reads: the upload (checked against the data limit) or None for the run's validation rows."""
    if source == "upload":
        if not file:
            raise StudioError.of("page.no_upload")
        check_data_upload(file, limit_mb, DATA_TYPES)
        return file
    return None


def check_rows(ctx: Any, v: Values) -> Any:
    """The rows the sentiment check would use for the inputs ``v`` (run, source, file, max_rows) by name: the
    comparisons below measure on the same rows."""
    limit = float(getattr(ctx, "max_upload_mb", DATA_MB))
    return inference.check_rows(v.run, data_file(v.source, v.file, limit), int(v.max_rows or 0) or None)



def on_compare_quantized(run: str, full_pick: str | None, quant_pick: str | None, rows_of: Callable[[], Any],
                         mode: str, lang: str = "en") -> str:
    """Compare the chosen full model (the run when none is picked) with the chosen quantized one on the rows."""
    full = full_pick or run
    if not full:
        raise StudioError.of("page.no_full_model")
    if not quant_pick:
        raise StudioError.of("page.no_quantized_model")
    rows = rows_of()
    return compare_markdown(compare_full_quantized(full, quant_pick, rows, mode), lang)


def on_deploy_report(run: str, rows_of: Callable[[], Any], mode: str, lang: str = "en") -> str:
    """The deploy report of the picked run on the rows the sentiment check would use."""
    if not run:
        raise StudioError.of("page.no_run")
    return deploy_markdown(deploy_report(run, rows_of(), mode=mode), lang)


@ui_errors
def deploy_handler(ctx: Any, v: Values) -> str:
    return on_deploy_report(v.run, functools.partial(check_rows, ctx, v), v.mode, ctx.lang)


def build_deploy_panel(T: Any, ctx: Any, run: Any, rows: dict[str, Any]) -> dict[str, Any]:
    """The "Deploy report" accordion, beside full vs quantized, on the rows the check would use (``rows``: its
    source, file, max_rows and mode by name). The report is worded in the language of the browser that asked for
    it (``for_each_browser``).

    An owner action: it writes (temporary exports, hundreds of MB for a real model) and holds the CPU for minutes.
    The run comes from the run picker, whose value Gradio checks against the runs it listed.
    """
    with gr.Accordion(T("ev.d_title"), open=False):
        Markdown(T("ev.d_intro"))
        go = gr.Button(T("ev.d_go"), variant="primary")
        out = Markdown(elem_id="ev-deploy")
    fn, inputs = named(deploy_handler, {"run": run, **rows})
    go.click(owner_action(ctx, fn), inputs, out, api_name="deploy_report")
    return {"deploy_out": out}


def on_generation_check(run: str, rows_of: Callable[[], Any], compare: bool, lang: str = "en") -> str:
    """The generation check of the picked run on the rows the checks above use, as the page's Markdown."""
    if not run:
        raise StudioError.of("page.no_run")
    return generation_report.markdown(generation_check(run, rows_of(), bool(compare)).to_dict(), lang)


@ui_errors
def generation_handler(ctx: Any, v: Values) -> str:
    return on_generation_check(v.run, functools.partial(check_rows, ctx, v), v.compare, ctx.lang)


def build_generation_panel(T: Any, ctx: Any, run: Any, rows: dict[str, Any]) -> dict[str, Any]:
    """The "Generation check" accordion (an instruction or chat run's numbers) on the rows the check would use, as
    the deploy report's. It only reads and scores, as the sentiment check does: not an owner action."""
    with gr.Accordion(T("gen.title"), open=False):
        Markdown(T("gen.intro"))
        with gr.Row():
            compare = gr.Checkbox(value=True, label=T("gen.compare"), elem_id="ev-gen-compare")
            go = gr.Button(T("gen.go"), variant="primary", elem_id="ev-gen-go")
        out = Markdown(elem_id="ev-gen")
    fn, inputs = named(generation_handler, {"run": run, "compare": compare, **rows})
    go.click(for_each_browser(ctx, fn), inputs, out, api_name="generation_check")
    return {"gen_out": out}


def defaults_updates(run: str | None) -> list[Any]:
    """Slider updates (playground: max new, temperature, top-p; chat: the same three) for the picked run's model."""
    d = generation_defaults(run)
    play, chat = d["play"], d["chat"]
    return [gr.update(value=play["max_new_tokens"]), gr.update(value=play["temperature"]),
            gr.update(value=play["top_p"]), gr.update(value=chat["max_new_tokens"]),
            gr.update(value=chat["temperature"]), gr.update(value=chat["top_p"])]


def quant_choices(exports_dir: str | Path, lang: str = "en") -> tuple[list, list]:
    """(full choices, quantized choices) for the two dropdowns: "" = the run picked above; "4"/"8" = quantize now."""
    full = [(msg("ev.q_the_run", lang), "")] + exports(exports_dir, quantized=False)
    quant = [(msg("ev.q_now4", lang), "4"), (msg("ev.q_now8", lang), "8")] + exports(exports_dir, quantized=True)
    return full, quant


@ui_errors
def quant_handler(ctx: Any, v: Values) -> str:
    return on_compare_quantized(v.run, v.full, v.quantized, functools.partial(check_rows, ctx, v), v.mode, ctx.lang)


def build_quant_panel(T: Any, ctx: Any, exports_dir: str, run: Any, rows: dict[str, Any]) -> dict[str, Any]:
    """The "Full vs quantized" accordion, on the rows the check above would use (``rows``, by name).
    The choices start in ``ctx``'s language; the handlers answer in their browser's (``for_each_browser``)."""
    full_choices, quant_choices_ = quant_choices(exports_dir, ctx.lang)
    with gr.Accordion(T("ev.q_title"), open=False):
        Markdown(T("ev.q_intro"))
        with gr.Row():
            full_pick = gr.Dropdown(full_choices, value="", label=T("ev.q_full"), scale=3)
            quant_pick = gr.Dropdown(quant_choices_, value="4", label=T("ev.q_quant"), scale=3)
            refresh = gr.Button(T("ev.refresh"), scale=1)
        go = gr.Button(T("ev.q_go"), variant="primary")
        out = Markdown(elem_id="ev-quant")
    # the choice names were written in the server's language: each page load re-sends them in the browser's
    full_pick.studio_localize = lambda lg: gr.update(choices=quant_choices(exports_dir, lg)[0])
    quant_pick.studio_localize = lambda lg: gr.update(choices=quant_choices(exports_dir, lg)[1])
    fn, inputs = named(quant_handler, {"run": run, "full": full_pick, "quantized": quant_pick, **rows})
    go.click(for_each_browser(ctx, fn), inputs, out, api_name="compare_quantized")
    refresh.click(for_each_browser(ctx, relist_quantized), None, [full_pick, quant_pick], api_visibility="private")
    return {"full_pick": full_pick, "quant_pick": quant_pick, "quant_out": out}


def relist_quantized(ctx: Any) -> tuple[Any, Any]:
    workspace = Path(getattr(ctx, "workspace", ".") or ".")
    f, q = quant_choices(str(workspace / "exports"), ctx.lang)
    return gr.update(choices=f), gr.update(choices=q)


__all__ = ["DATA_TYPES", "build_deploy_panel", "check_rows", "data_file", "build_generation_panel", "on_generation_check", "build_quant_panel", "compare_markdown", "defaults_updates", "deploy_markdown",
           "measured_rows", "on_compare_quantized", "on_deploy_report", "quant_choices"]
