"""Data tab: upload -> preview and column statistics -> choose columns, task and labels -> convert.

Reading, guessing, converting and checking all live in studio/data (readers, convert, report);
this module wires widgets to them and writes the result into the workspace's data folder.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from .text import Markdown

from ..data.convert import TASKS, guess_columns, guess_task, label_column_problem, text_columns
from ..data.label_check import label_warnings
from ..data.labels import format_label_map
from ..data.readers import Table, preview
from ..data.report import column_stats, format_report
from ..errors import StudioError
from ..app.state_problems import problem_lines
from ..workspace import ASSETS_DIR
from .common import error_text, inline_errors
from .handlers import for_each_browser, owner_action
from .inputs import Values, named
from ..app.context import AppContext
from .i18n import headers, msg
from ..words.render import has
from ..app.datasets import convert_upload, label_map_text, model_view, open_table
from ..data.registry import clean_name
from ..workspace import confine

SAMPLE = ASSETS_DIR / "sample_reviews.csv"
ROLES = ("text", "label", "instruction", "input", "output", "messages")
MULTI = ("text",)  # roles that take several columns: a headline and its lead read as one text
TASK_ROLES = {"sentiment": ("text", "label"), "instruction": ("instruction", "input", "output"),
              "chat": ("messages",)}


def stats_rows(table: Table, lang: str = "en") -> list[list[Any]]:
    rows = []
    for s in column_stats(table):
        counts = s.get("counts") or {}
        values = ", ".join(f"{k} ({v})" for k, v in list(counts.items())[:8])
        rows.append([s["column"], s["rows"], s["empty"], s["distinct"], msg(f"unit.{s['unit']}", lang), s["mean_len"], s["max_len"],
                     values])
    return rows


def label_check_markdown(table: Table, label_col: str | None, task: str, lang: str,
                         text: str | list[str] | None = None) -> str:
    """Warnings about the label column, shown before Convert ('' when it looks like labels): the conversion's
    own refusal when there is none to use (a file of texts alone), else the label checks of the chosen one."""
    if task != "sentiment":
        return ""
    text_col = (text_columns(text) or [None])[0]
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
    columns = [gr.update(choices=list(table.columns), value=_picked(role, guess.get(role))) for role in ROLES]
    name = clean_name(Path(path).stem)
    task = guess_task(table, guess)
    stats = gr.update(value=stats_rows(table, ctx.lang), headers=headers("stats_headers", ctx.lang))
    return (info, gr.update(value=rows, headers=cols), stats, task, *columns,
            label_map_text(table, guess.get("label"), guess.get("text")), name, str(path),
            label_check_markdown(table, guess.get("label"), task, ctx.lang, guess.get("text")))


def _picked(role: str, column: str | None) -> Any:
    """A column's value on the form: the text role takes several columns (a list), the others one."""
    return ([column] if column else []) if role in MULTI else column


def model_view_markdown(ctx: AppContext, path: str | None, task: str, cols: dict[str, Any], label_map: str,
                        instruction: str) -> str:
    """The first row as the model will read it, with the choices made so far; the conversion's refusal of them
    in the same words Convert would give."""
    if not path:
        return ""
    try:
        row = model_view(open_table(path, ctx), task, cols, label_map, instruction)
    except StudioError as exc:
        return f"⚠️ {error_text(exc, 'model_view', ctx.lang)}"
    shown = "\n\n".join(f"**{msg(f'data.view_{k}', ctx.lang)}**\n```text\n{row.get(k, '')}\n```"
                         for k in ("instruction", "input", "output") if row.get(k))
    return f"{msg('data.model_view', ctx.lang)}\n\n{shown}"


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
    made = convert_upload(ctx, path, task, cols, label_map, instruction, name, replace)
    result, out, clean, report = made.result, made.path, made.name, made.report
    lines = [problem_lines(ctx.lang, files=[made.registry], since=made.since),
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


@inline_errors(0, 2)  # beside Convert, until the next Convert
def on_convert(ctx: AppContext, v: Values) -> tuple[str, str]:
    """Convert: the file, task, columns by role (``v.columns``), label map, instruction and name, by name."""
    return convert(ctx, v.path, v.task, dict(v.columns), v.label_map, v.instruction_text, v.name)


def on_view(ctx: AppContext, v: Values) -> str:
    """The first row as the model will read it, as the choices change."""
    return model_view_markdown(ctx, v.path, v.task, dict(v.columns), v.label_map, v.instruction_text)


def build_data_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """Components of the Data tab; ``dataset`` holds the converted file's path (Settings listens)."""
    Markdown(T("data.intro"))
    viewer_note = Markdown(visible=False, elem_id="data-viewer-note")  # shown on a viewer's page (app.py)
    viewer_note.studio_role_note = "data.viewer_note"  # type: ignore[attr-defined]  # page_role.NOTE
    src = gr.State(None)
    with gr.Row():
        upload = gr.File(label=T("data.upload"), type="filepath",  # any file: the reader refuses in words, inline
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
        col = {role: gr.Dropdown(choices=[], value=[] if role in MULTI else None, multiselect=role in MULTI,
                                 label=T(f"data.col_{role}"), elem_id=f"col-{role}",
                                 visible=role in TASK_ROLES["sentiment"]) for role in ROLES}
    with gr.Row():
        with gr.Column(scale=2):
            label_map = gr.Textbox(label=T("data.label_map"), info=T("data.label_map_info"), elem_id="label-map")
            standard = gr.Button(T("data.label_standard"), size="sm", elem_id="label-standard")
        instruction = gr.Textbox(label=T("data.instruction"), elem_id="instruction")
        name = gr.Textbox(label=T("data.name"), value="dataset", max_lines=1, elem_id="dataset-name")
    label_check = Markdown(elem_id="label-check")
    view = Markdown(elem_id="model-view")
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

    def on_label_col(ctx: AppContext, path: str | None, label_col: str | None, text_col: Any, task_v: str) -> Any:
        if not path or not label_col:
            return gr.skip(), ""
        try:
            table = open_table(path, ctx)
        except StudioError:
            return gr.skip(), gr.skip()
        return label_map_text(table, label_col, text_col), label_check_markdown(table, label_col, task_v, ctx.lang,
                                                                                 text_col)

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
    # a file is opened here only to be converted, which is an owner's: a viewer's page has these controls off and
    # says where a viewer's upload goes (viewer_note); a file to predict is uploaded on the Evaluate tab
    upload.upload(forget, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_upload), upload, loaded, api_name="upload_data")
    sample.click(forget, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_sample), None, loaded, api_name="sample_data")
    open_btn.click(forget, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_open), server_path, loaded, api_name="open_data")
    server_path.submit(forget, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_open), server_path, loaded, api_visibility="private")
    col["label"].input(for_each_browser(ctx, on_label_col), [src, col["label"], col["text"], task], [label_map, label_check],
                       api_visibility="private")

    def on_standard(ctx: AppContext, path: str | None, label_col: str | None, text_col: Any) -> Any:
        return label_map_text(open_table(path, ctx), label_col, text_col, standard=True) if path else gr.skip()

    standard.click(for_each_browser(ctx, on_standard), [src, col["label"], col["text"]], label_map,
                   api_visibility="private")

    fn, inputs = named(on_view, {"path": src, "task": task, "columns": col, "label_map": label_map,
                                 "instruction_text": instruction})
    gr.on([src.change, label_map.input, instruction.input, task.input, *(c.input for c in col.values())],
          for_each_browser(ctx, fn), inputs, view, api_visibility="private")

    def clear_output(ctx: AppContext) -> tuple[str, str]:
        return "", ""

    # a failed Convert must not leave the previous report and dataset on screen
    fn, inputs = named(on_convert, {"path": src, "task": task, "columns": col, "label_map": label_map,
                                    "instruction_text": instruction, "name": name})
    convert_btn.click(for_each_browser(ctx, clear_output), None, [report, dataset], api_visibility="private").then(
        owner_action(ctx, fn), inputs, [report, dataset], api_name="convert")
    return {"dataset": dataset, "report": report, "upload": upload, "src": src}
