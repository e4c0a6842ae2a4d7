"""The Feedback tab: what teammates said about a run's answers, reviewed by its owners.

Everyone logged in may look (by run, status, person, label, one page of rows at a time, with counts and conflicting
corrections computed in the database: studio/app/feedback_review.py); accepting,
dropping, editing, making a dataset and exporting are owner actions (``owner_action``: each refuses a viewer itself,
whatever route the call came by). The browser names a run by the name the database lists, never a path: the handlers
check it against the database and the runs folder. Feedback text is shown in a table of plain text and a
Textbox, never as Markdown or HTML.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from ..app import feedback_review as review
from ..app.context import AppContext
from ..feedback.store import STATUSES
from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .i18n import headers, msg


@ui_errors
def list_feedback(ctx: AppContext, run: Any, status: Any, login: Any, label: Any,
                  page: Any = 1) -> tuple[Any, dict, str, Any]:
    """(table, counts, conflicts as text, the page shown) for the picked run and filters: one page of rows."""
    shown = review.listing(ctx, run, status, login, label, page)
    if shown is None:
        return gr.update(value=[]), {}, "", 1
    return (gr.update(value=shown["table"], headers=headers("fb.headers", ctx.lang)), shown["counts"],
            shown["conflicts"], shown["page"])


@ui_errors
def on_review(ctx: AppContext, ids: Any, status: str) -> str:
    return msg("fb.reviewed", ctx.lang, n=review.review(ctx, ids, status), status=msg(f"fb.st_{status}", ctx.lang))


@ui_errors
def on_accept_new(ctx: AppContext, run: Any, status: Any, login: Any, label: Any, page: Any = 1) -> str:
    """Accept every new row of the picked run that the filters show (the common case: the corrections are right)."""
    return msg("fb.reviewed", ctx.lang, n=review.accept_new(ctx, run, status, login, label),
               status=msg("fb.st_accepted", ctx.lang))


@ui_errors
def on_edit(ctx: AppContext, ids: Any, text: Any) -> str:
    return msg("fb.edited", ctx.lang, id=review.edit(ctx, ids, text))


@ui_errors
def on_make(ctx: AppContext, run: Any, name: Any) -> str:
    """Accepted rows -> NAME, NAME_pref, NAME_kto in the data folder, registered for the Settings tab."""
    made = review.make(ctx, run, name)
    parts = ", ".join(f"{made[k]['name']} ({made[k]['rows']})" for k in ("sft", "ranking", "kto") if k in made)
    skipped = msg("fb.made_skipped", ctx.lang, n=made["skipped"]) if made["skipped"] else ""
    return msg("fb.made", ctx.lang, parts=parts, skipped=skipped)


@ui_errors
def on_export(ctx: AppContext, run: Any, suffix: str) -> str:
    """The run's rows as a file in a fresh temp folder (never the workspace), for the browser to download."""
    return review.export(ctx, run, suffix)


@ui_errors
def refresh_runs(ctx: AppContext, current: Any) -> Any:
    """The runs with feedback; the picked one stays picked while it has any, else the newest is."""
    names = review.store_of(ctx).runs()
    return gr.update(choices=names, value=current if current in names else (names[-1] if names else None))


def on_accept(ctx: AppContext, ids: Any) -> str:
    return on_review(ctx, ids, "accepted")


def on_drop(ctx: AppContext, ids: Any) -> str:
    return on_review(ctx, ids, "dropped")


def on_export_csv(ctx: AppContext, run: Any) -> str:
    return on_export(ctx, run, ".csv")


def on_export_jsonl(ctx: AppContext, run: Any) -> str:
    return on_export(ctx, run, ".jsonl")


@dataclass
class FeedbackTab:
    """The Feedback tab's components by name."""

    run: Any
    status: Any
    login: Any
    label: Any
    page: Any
    refresh_btn: Any
    table: Any
    counts: Any
    clash: Any
    ids: Any
    accept: Any
    drop: Any
    accept_new: Any
    edit_text: Any
    edit: Any
    name: Any
    make: Any
    csv_btn: Any
    jsonl_btn: Any
    info: Any
    file: Any

    @property
    def filters(self) -> list[Any]:
        return [self.run, self.status, self.login, self.label, self.page]

    @property
    def listing(self) -> list[Any]:
        return [self.table, self.counts, self.clash, self.page]


def build_feedback_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """The Feedback tab drawn and wired; ``refresh`` reloads the list of runs with feedback."""
    tab = draw_feedback_tab(ctx, T)
    wire_feedback_tab(ctx, tab)
    return {"run": tab.run, "refresh": refresh_runs, "table": tab.table}


def draw_feedback_tab(ctx: AppContext, T: Any) -> FeedbackTab:
    """The components in their places."""
    with gr.Row():
        run = gr.Dropdown(choices=[], label=T("fb.run"), elem_id="fb-run", scale=2)
        status = gr.Dropdown(choices=[("", ""), *[(T(f"fb.st_{st}"), st) for st in STATUSES]], value="",
                             label=T("fb.status"), elem_id="fb-status")
        login = gr.Textbox(label=T("fb.login"), max_lines=1, max_length=200, elem_id="fb-login")
        label = gr.Textbox(label=T("fb.label"), max_lines=1, max_length=200, elem_id="fb-label")
        page = gr.Number(value=1, minimum=1, precision=0, label=T("fb.page"), elem_id="fb-page", scale=0)
        refresh_btn = gr.Button(T("fb.refresh"), size="sm", elem_id="fb-refresh")
    table = gr.Dataframe(headers=headers("fb.headers", ctx.lang), interactive=False, wrap=True, elem_id="fb-table",
                         datatype="str")
    # its empty headers were written in the server's language: each page load re-sends them in the browser's
    table.studio_localize = lambda lang: gr.update(value={"headers": headers("fb.headers", lang), "data": []},
                                                   headers=headers("fb.headers", lang))
    with gr.Row():
        counts = gr.JSON(label=T("fb.counts"), elem_id="fb-counts")
        clash = gr.Textbox(label=T("fb.conflicts"), interactive=False, lines=4, elem_id="fb-conflicts")
    with gr.Row():
        ids = gr.Textbox(label=T("fb.ids"), max_lines=1, max_length=2000, elem_id="fb-ids", scale=2)
        accept = gr.Button(T("fb.accept"), size="sm", elem_id="fb-accept")
        drop = gr.Button(T("fb.drop"), size="sm", variant="stop", elem_id="fb-drop")
        accept_new = gr.Button(T("fb.accept_new"), size="sm", elem_id="fb-accept-new")
    with gr.Row():
        edit_text = gr.Textbox(label=T("fb.edit_text"), max_lines=3, elem_id="fb-edit-text", scale=3)
        edit = gr.Button(T("fb.edit"), size="sm", elem_id="fb-edit")
    with gr.Row():
        name = gr.Textbox(label=T("fb.dataset_name"), max_lines=1, max_length=120, elem_id="fb-dataset-name",
                          scale=2)
        make = gr.Button(T("fb.make"), variant="primary", size="sm", elem_id="fb-make")
        csv_btn = gr.Button(T("fb.export_csv"), size="sm", elem_id="fb-export-csv")
        jsonl_btn = gr.Button(T("fb.export_jsonl"), size="sm", elem_id="fb-export-jsonl")
    info = gr.Textbox(label=T("fb.result"), interactive=False, elem_id="fb-info")
    file = gr.File(label=T("fb.file"), interactive=False, elem_id="fb-file")
    return FeedbackTab(run=run, status=status, login=login, label=label, page=page, refresh_btn=refresh_btn,
                       table=table, counts=counts, clash=clash, ids=ids, accept=accept, drop=drop,
                       accept_new=accept_new, edit_text=edit_text, edit=edit, name=name, make=make, csv_btn=csv_btn,
                       jsonl_btn=jsonl_btn, info=info, file=file)


def wire_feedback_tab(ctx: AppContext, t: FeedbackTab) -> None:
    """The tab's events: which handler answers which component, with which inputs."""
    shown = for_each_browser(ctx, list_feedback)
    filters, outs = t.filters, t.listing
    t.refresh_btn.click(for_each_browser(ctx, refresh_runs), t.run, t.run, api_name="feedback_runs").then(
        shown, filters, outs, api_visibility="private")
    for comp in (t.run, t.status):
        comp.change(shown, filters, outs, api_visibility="private", show_progress="hidden")
    for comp in (t.login, t.label, t.page):
        comp.submit(shown, filters, outs, api_visibility="private")
    t.accept.click(owner_action(ctx, on_accept), t.ids, t.info, api_name="review_accept").success(
        shown, filters, outs, api_visibility="private")
    t.accept_new.click(owner_action(ctx, on_accept_new), filters, t.info,
                       api_name="review_accept_new").success(shown, filters, outs, api_visibility="private")
    t.drop.click(owner_action(ctx, on_drop), t.ids, t.info, api_name="review_drop").success(
        shown, filters, outs, api_visibility="private")
    t.edit.click(owner_action(ctx, on_edit), [t.ids, t.edit_text], t.info, api_name="review_edit").success(
        shown, filters, outs, api_visibility="private")
    t.make.click(owner_action(ctx, on_make), [t.run, t.name], t.info, api_name="feedback_make_dataset")
    t.csv_btn.click(owner_action(ctx, on_export_csv), t.run, t.file, api_name="feedback_export_csv")
    t.jsonl_btn.click(owner_action(ctx, on_export_jsonl), t.run, t.file, api_name="feedback_export_jsonl")
