"""Data tab: upload -> preview and column statistics -> choose columns, task and labels -> convert.

Reading, guessing, converting and checking all live in studio/data (readers, convert, report);
this module wires widgets to them and writes the result into the workspace's data folder.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import gradio as gr

from .text import Markdown

from ..app.roles import owner_only
from ..data.convert import (TASKS, convert_table, guess_columns, guess_task, label_column_problem,
                            refuse_replacing, register_dataset, write_jsonl)
from ..data.label_check import label_warnings
from ..data.labels import detect_language, format_label_map, suggest_label_map
from ..data.readers import SUPPORTED_SUFFIXES, Table, cell_str, preview, read_table
from ..data.report import column_stats, format_report, validation_report
from ..errors import StudioError
from ..state_files import read_state
from ..app.state_problems import problem_lines
from ..workspace import ASSETS_DIR
from .common import error_text, inline_errors
from .handlers import for_each_browser
from ..app.context import AppContext
from .i18n import headers, msg
from ..words.render import has
from ..app.settings import catalog, remember_dataset
from ..workspace import confine

SAMPLE = ASSETS_DIR / "sample_reviews.csv"
ROLES = ("text", "label", "instruction", "input", "output", "messages")
TASK_ROLES = {"sentiment": ("text", "label"), "instruction": ("instruction", "input", "output"),
              "chat": ("messages",)}


def open_table(path: str | Path, ctx: AppContext) -> Table:
    try:
        return read_table(path, max_mb=ctx.max_upload_mb)
    except StudioError as exc:
        if exc.code != "data.too_large":
            raise
        # the reader's fix names the convert CLI's --max-mb; the studio's limit is launch.py's --max-upload-mb
        raise StudioError.of("data.upload_too_large", **(exc.values or {})) from None


def stats_rows(table: Table, lang: str = "en") -> list[list[Any]]:
    rows = []
    for s in column_stats(table):
        counts = s.get("counts") or {}
        values = ", ".join(f"{k} ({v})" for k, v in list(counts.items())[:8])
        rows.append([s["column"], s["rows"], s["empty"], s["distinct"], msg(f"unit.{s['unit']}", lang), s["mean_len"], s["max_len"],
                     values])
    return rows


def label_map_text(table: Table, label_col: str | None, text_col: str | None) -> str:
    """The suggested label map for the chosen label column, as editable 'value=label' text."""
    if not label_col or label_col not in table.columns:
        return ""
    texts = [cell_str(r.get(text_col)) for r in table.rows[:500]] if text_col in table.columns else []
    return format_label_map(suggest_label_map(table.values(label_col), detect_language(texts)))


def label_check_markdown(table: Table, label_col: str | None, task: str, lang: str,
                         text_col: str | None = None) -> str:
    """Warnings about the label column, shown before Convert ('' when it looks like labels): the conversion's
    own refusal when there is none to use (a file of texts alone), else the label checks of the chosen one."""
    if task != "sentiment":
        return ""
    if not label_col or label_col not in table.columns:  # none to check: say why Convert would refuse, if it would
        problem = label_column_problem(table, text_col, None)
        return f"⚠️ {error_text(problem, 'label_check', lang)}" if problem is not None else ""
    warnings = label_warnings(table.values(label_col), label_col)
    return "\n\n".join(f"⚠️ {msg('label.' + code, lang, **facts)}" for code, facts in warnings)


def inspect(path: str, ctx: AppContext) -> tuple[Any, ...]:
    """Everything shown after a file is picked: summary, preview, stats, guessed task/columns/labels."""
    table = open_table(path, ctx)
    cols, rows = preview(table, n=10, max_chars=120)
    guess = guess_columns(table)
    info = msg("loaded_file", ctx.lang, rows=len(table), cols=len(table.columns), name=Path(path).name)
    if table.warnings:
        info += "\n\n" + "\n".join(f"⚠️ {w.text(ctx.lang)}" for w in table.warnings)
    columns = [gr.update(choices=list(table.columns), value=guess.get(role)) for role in ROLES]
    name = re.sub(r"[^\w.-]+", "_", Path(path).stem).strip("_") or "dataset"
    task = guess_task(table, guess)
    stats = gr.update(value=stats_rows(table, ctx.lang), headers=headers("stats_headers", ctx.lang))
    return (info, gr.update(value=rows, headers=cols), stats, task, *columns,
            label_map_text(table, guess.get("label"), guess.get("text")), name, str(path),
            label_check_markdown(table, guess.get("label"), task, ctx.lang, guess.get("text")))


def _reason(reason: str, lang: str) -> str:
    """A converter's skip reason in ``lang`` (as it is when the table has no wording for it)."""
    return msg(f"skip.{reason}", lang) if has(f"skip.{reason}") else reason


def convert(ctx: AppContext, path: str | None, task: str, cols: dict[str, str | None], label_map: str,
            instruction: str, name: str, replace: bool = False) -> tuple[str, str]:
    """Convert the picked file into workspace/data/<name>.jsonl, register it, and report on it. A dataset of that
    name is replaced only with ``replace=True`` (the page asks first; until it does, the refusal is shown).

    Returns (report markdown, dataset path).

    Raises:
        StudioError: no file, unreadable file, wrong columns, label problems, or a dataset of that name exists.
    """
    if not path:
        raise StudioError.of("page.no_file")
    table = open_table(path, ctx)
    info, since = ctx.data_root / "dataset_info.json", time.time()
    read_state(info, kind="json", expect=dict, empty={})  # garbage is kept aside (the CLI refuses it instead)
    clean = re.sub(r"[^\w.-]+", "_", (name or Path(path).stem)).strip("_.") or "dataset"
    result = convert_table(table, task, text_column=cols.get("text") or None, label_column=cols.get("label") or None,
                           label_map=label_map or None, instruction=instruction or None,
                           instruction_column=cols.get("instruction") or None,
                           input_column=cols.get("input") or None, output_column=cols.get("output") or None,
                           messages_column=cols.get("messages") or None)
    # converting the same file again (a fixed column or label map) replaces its own dataset; another file
    # under a name already taken is refused, so nobody's dataset disappears without asking
    source = Path(path).name
    if not replace and catalog(ctx).get(f"{clean}.jsonl", {}).get("source") != source:
        refuse_replacing(ctx.data_root, clean, ctx.data_root / f"{clean}.jsonl")
    out = write_jsonl(result.rows, ctx.data_root / f"{clean}.jsonl")
    register_dataset(ctx.data_root, clean, out, result.rows)
    remember_dataset(ctx, out, task, len(result.rows), source=source)
    report = validation_report(result.rows, cutoff_len=256)
    lines = [problem_lines(ctx.lang, files=[info], since=since),
             f"✅ {msg('converted', ctx.lang, n=len(result.rows), path=out, name=clean)}", ""]
    lang = ctx.lang
    if result.label_map:
        lines.append(msg("data.label_map_line", lang, map=format_label_map(result.label_map)))
    if result.instruction:
        lines.append(msg("data.instruction_line", lang, text=result.instruction))
    lines += [msg("data.note_line", lang, text=n.text(lang)) for n in result.notes]
    lines += [msg("data.skipped_line", lang, n=len(v), reason=_reason(k, lang))
              for k, v in result.skipped.items()]
    body = "\n\n".join(line for line in lines if line)
    # the report is shared with the CLI: here it names the page's fields, not config keys or flags
    # markdown lines, not a code block: long lines wrap instead of being cut off
    lines = format_report(report, lang, surface="page").splitlines()
    return body + "\n\n" + "\n".join(f"- {ln}" for ln in lines), str(out)


def build_data_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """Components of the Data tab; ``dataset`` holds the converted file's path (Settings listens)."""
    Markdown(T("data.intro"))
    src = gr.State(None)
    with gr.Row():
        upload = gr.File(label=T("data.upload"), file_types=list(SUPPORTED_SUFFIXES), type="filepath",
                         elem_id="data-upload", scale=3)
        with gr.Column(scale=2):
            sample = gr.Button(T("data.sample"), elem_id="sample-btn")
            server_path = gr.Textbox(label=T("data.path"), max_lines=1, elem_id="data-path")
            open_btn = gr.Button(T("data.open"), size="sm")
    info = Markdown(elem_id="data-info")
    table_view = gr.Dataframe(label=T("data.preview"), interactive=False, wrap=True, max_height=300,
                              elem_id="data-preview")
    stats = gr.Dataframe(headers=headers("stats_headers", ctx.lang), label=T("data.stats"), interactive=False,
                         wrap=True, elem_id="data-stats")
    # its empty headers were written in the server's language: each page load re-sends them in the browser's
    stats.studio_localize = lambda lang: gr.update(value={"headers": headers("stats_headers", lang), "data": []},
                                                   headers=headers("stats_headers", lang))
    task = gr.Radio([(T(f"task.{t}"), t) for t in TASKS], value="sentiment", label=T("data.task"), info=T("data.task_info"),
                    elem_id="data-task")
    with gr.Row():
        col = {role: gr.Dropdown(choices=[], value=None, label=T(f"data.col_{role}"), elem_id=f"col-{role}",
                                 visible=role in TASK_ROLES["sentiment"]) for role in ROLES}
    with gr.Row():
        label_map = gr.Textbox(label=T("data.label_map"), info=T("data.label_map_info"), elem_id="label-map",
                               scale=2)
        instruction = gr.Textbox(label=T("data.instruction"), elem_id="instruction")
        name = gr.Textbox(label=T("data.name"), value="dataset", max_lines=1, elem_id="dataset-name")
    label_check = Markdown(elem_id="label-check")
    convert_btn = gr.Button(T("data.convert"), variant="primary", elem_id="convert-btn")
    report = Markdown(elem_id="data-report")
    dataset = gr.Textbox(label=T("data.out"), interactive=False, elem_id="dataset-out")
    loaded = [info, table_view, stats, task, *col.values(), label_map, name, src, label_check]

    # a file's problem stays in `info`, beside the upload, until another file is picked (forget() clears it)
    opened = inline_errors(0, len(loaded))

    @opened
    def on_upload(ctx: AppContext, path: str | None) -> tuple[Any, ...]:
        if not path:
            return tuple(gr.skip() for _ in loaded)
        return inspect(path, ctx)

    @opened
    def on_sample(ctx: AppContext) -> tuple[Any, ...]:
        return inspect(str(SAMPLE), ctx)

    @opened
    def on_open(ctx: AppContext, path: str) -> tuple[Any, ...]:
        return inspect(str(confine(path, ctx.allowed_roots)), ctx)

    def on_label_col(ctx: AppContext, path: str | None, label_col: str | None, text_col: str | None, task_v: str) -> Any:
        if not path or not label_col:
            return gr.skip(), ""
        try:
            table = open_table(path, ctx)
        except StudioError:
            return gr.skip(), gr.skip()
        return label_map_text(table, label_col, text_col), label_check_markdown(table, label_col, task_v, ctx.lang,
                                                                                 text_col)

    @inline_errors(0, 2)  # beside Convert, until the next Convert
    def on_convert(ctx: AppContext, path: str | None, task_v: str, *rest: Any) -> tuple[str, str]:
        cols = dict(zip(ROLES, rest[:len(ROLES)]))
        lm, instr, nm = rest[len(ROLES):]
        return convert(ctx, path, task_v, cols, lm, instr, nm)

    def show_for_task(ctx: AppContext, task_v: str) -> list[Any]:
        return [gr.update(visible=role in TASK_ROLES.get(task_v, ROLES)) for role in ROLES] + [
            gr.update(visible=task_v == "sentiment")]

    task.change(for_each_browser(ctx, show_for_task), task, [*col.values(), label_map], api_visibility="private")
    # forget the previous file first: if the new one is refused, Convert must not quietly use the old one, and the
    # previous Convert's report is about the previous file
    def forget(ctx: AppContext) -> tuple[Any, ...]:
        return None, "", None, ""

    forgotten = [src, info, table_view, report]
    forget = for_each_browser(ctx, forget)
    upload.upload(forget, None, forgotten, api_visibility="private").then(
        for_each_browser(ctx, on_upload), upload, loaded, api_name="upload_data")
    sample.click(forget, None, forgotten, api_visibility="private").then(
        for_each_browser(ctx, on_sample), None, loaded, api_name="sample_data")
    open_btn.click(forget, None, forgotten, api_visibility="private").then(
        for_each_browser(ctx, on_open), server_path, loaded, api_name="open_data")
    server_path.submit(forget, None, forgotten, api_visibility="private").then(
        for_each_browser(ctx, on_open), server_path, loaded, api_visibility="private")
    col["label"].input(for_each_browser(ctx, on_label_col), [src, col["label"], col["text"], task], [label_map, label_check],
                       api_visibility="private")
    def clear_output(ctx: AppContext) -> tuple[str, str]:
        return "", ""

    # a failed Convert must not leave the previous report and dataset on screen
    convert_btn.click(for_each_browser(ctx, clear_output), None, [report, dataset], api_visibility="private").then(
        owner_only(for_each_browser(ctx, on_convert)), [src, task, *col.values(), label_map, instruction, name], [report, dataset],
        api_name="convert")
    return {"dataset": dataset, "report": report, "upload": upload, "src": src}
