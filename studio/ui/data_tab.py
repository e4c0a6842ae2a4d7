"""Data tab: upload -> preview and column statistics -> choose columns, task and labels -> convert.

Reading, guessing, converting and checking all live in studio/data (readers, convert, report);
this module wires widgets to them and writes the result into the workspace's data folder.
"""
from __future__ import annotations

from dataclasses import dataclass
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


# the outputs an opened file fills (DataTab.loaded): info, preview, stats, task, a column per role, label map, name,
# the file, the label check; a file's problem stays in the first, beside the upload, until another file is picked
LOADED_OUTPUTS = 4 + len(ROLES) + 4
opened = inline_errors(0, LOADED_OUTPUTS)


@opened
def on_upload(ctx: AppContext, path: str | None) -> tuple[Any, ...]:
    if not path:
        return tuple(gr.skip() for _ in range(LOADED_OUTPUTS))
    return inspect(path, ctx)


@opened
def on_sample(ctx: AppContext) -> tuple[Any, ...]:
    return inspect(str(SAMPLE), ctx)


@opened
def on_open(ctx: AppContext, path: str) -> tuple[Any, ...]:
    return inspect(str(confine(path, ctx.allowed_roots)), ctx)


def on_label_col(ctx: AppContext, v: Values) -> Any:
    """(label map, label check) when the label column changes."""
    if not v.path or not v.label_col:
        return gr.skip(), ""
    try:
        table = open_table(v.path, ctx)
    except StudioError:
        return gr.skip(), gr.skip()
    return (label_map_text(table, v.label_col, v.text_col),
            label_check_markdown(table, v.label_col, v.task, ctx.lang, v.text_col))


def on_standard(ctx: AppContext, v: Values) -> Any:
    """The label map that names the labels the standard way (positive / negative ...)."""
    return label_map_text(open_table(v.path, ctx), v.label_col, v.text_col, standard=True) if v.path else gr.skip()


def show_for_task(ctx: AppContext, task: str) -> list[Any]:
    """The column pickers of the task's roles, and the label map for a labels task."""
    return [gr.update(visible=role in TASK_ROLES.get(task, ROLES)) for role in ROLES] + [
        gr.update(visible=task == "sentiment")]


def forget(ctx: AppContext) -> tuple[Any, ...]:
    """The previous file forgotten before a new one opens: if the new one is refused, Convert must not quietly use
    the old one, and the previous Convert's report is about the previous file."""
    return None, "", None, ""


def clear_output(ctx: AppContext) -> tuple[str, str]:
    """A failed Convert must not leave the previous report and dataset on screen."""
    return "", ""


@dataclass
class DataTab:
    """The Data tab's components by name."""

    viewer_note: Any
    src: Any
    upload: Any
    sample: Any
    server_path: Any
    open_btn: Any
    info: Any
    table_view: Any
    stats: Any
    task: Any
    col: dict[str, Any]
    label_map: Any
    standard: Any
    instruction: Any
    name: Any
    label_check: Any
    view: Any
    convert_btn: Any
    report: Any
    dataset: Any

    @property
    def loaded(self) -> list[Any]:
        return [self.info, self.table_view, self.stats, self.task, *self.col.values(), self.label_map, self.name,
                self.src, self.label_check]


def build_data_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """The Data tab drawn and wired; ``dataset`` holds the converted file's path (Settings listens)."""
    tab = draw_data_tab(ctx, T)
    wire_data_tab(ctx, tab)
    return {"dataset": tab.dataset, "report": tab.report, "upload": tab.upload, "src": tab.src}


def draw_data_tab(ctx: AppContext, T: Any) -> DataTab:
    """The components in their places."""
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
    return DataTab(viewer_note=viewer_note, src=src, upload=upload, sample=sample, server_path=server_path,
                   open_btn=open_btn, info=info, table_view=table_view, stats=stats, task=task, col=col,
                   label_map=label_map, standard=standard, instruction=instruction, name=name,
                   label_check=label_check, view=view, convert_btn=convert_btn, report=report, dataset=dataset)


def wire_data_tab(ctx: AppContext, t: DataTab) -> None:
    """The tab's events: which handler answers which component, with which inputs by name."""
    loaded = t.loaded
    assert len(loaded) == LOADED_OUTPUTS
    t.task.change(for_each_browser(ctx, show_for_task), t.task, [*t.col.values(), t.label_map],
                  api_visibility="private")
    forgotten = [t.src, t.info, t.table_view, t.report]
    forgot = for_each_browser(ctx, forget)
    # a file is opened here only to be converted, which is an owner's: a viewer's page has these controls off and
    # says where a viewer's upload goes (viewer_note); a file to predict is uploaded on the Evaluate tab
    t.upload.upload(forgot, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_upload), t.upload, loaded, api_name="upload_data")
    t.sample.click(forgot, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_sample), None, loaded, api_name="sample_data")
    t.open_btn.click(forgot, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_open), t.server_path, loaded, api_name="open_data")
    t.server_path.submit(forgot, None, forgotten, api_visibility="private").then(
        owner_action(ctx, on_open), t.server_path, loaded, api_visibility="private")
    fn, inputs = named(on_label_col, {"path": t.src, "label_col": t.col["label"], "text_col": t.col["text"],
                                      "task": t.task})
    t.col["label"].input(for_each_browser(ctx, fn), inputs, [t.label_map, t.label_check], api_visibility="private")
    fn, inputs = named(on_standard, {"path": t.src, "label_col": t.col["label"], "text_col": t.col["text"]})
    t.standard.click(for_each_browser(ctx, fn), inputs, t.label_map, api_visibility="private")
    fn, inputs = named(on_view, {"path": t.src, "task": t.task, "columns": t.col, "label_map": t.label_map,
                                 "instruction_text": t.instruction})
    gr.on([t.src.change, t.label_map.input, t.instruction.input, t.task.input, *(c.input for c in t.col.values())],
          for_each_browser(ctx, fn), inputs, t.view, api_visibility="private")
    fn, inputs = named(on_convert, {"path": t.src, "task": t.task, "columns": t.col, "label_map": t.label_map,
                                    "instruction_text": t.instruction, "name": t.name})
    t.convert_btn.click(for_each_browser(ctx, clear_output), None, [t.report, t.dataset],
                        api_visibility="private").then(owner_action(ctx, fn), inputs, [t.report, t.dataset],
                                                       api_name="convert")
