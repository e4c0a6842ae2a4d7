"""The Feedback tab: what teammates said about a run's answers, reviewed by its owners.

Everyone logged in may look (by run, status, person, label, with counts and conflicting corrections); accepting,
dropping, editing, making a dataset and exporting are owner actions (``owner_action``: each refuses a viewer itself,
whatever route the call came by). The browser names a run by the name the database lists, never a path: the handlers
check it against the database and the runs folder. Feedback text is shown in a table of plain text and a
Textbox, never as Markdown or HTML.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from ..app.context import AppContext
from ..errors import StudioError
from ..feedback.agreement import agreement
from ..feedback.check_set import label_of
from ..feedback.datasets import export_rows, make_datasets, run_prompt_shape, summary
from ..feedback.store import STATUSES, FeedbackStore
from ..workspace import safe_name
from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .i18n import headers, msg
from .text import text_value

MAX_SHOWN = 2000  # rows in the table at once; the export has them all


def _store(ctx: AppContext) -> FeedbackStore:
    return FeedbackStore.in_workspace(ctx.workspace)


def _run(ctx: AppContext, run: Any) -> str:
    """A run the database has feedback for (the only names the tab lists).

    Raises:
        StudioError: no run picked, or one the database does not know.
    """
    if not isinstance(run, str) or run not in _store(ctx).runs():
        raise StudioError.of("feedback.no_run")
    return run


def _ids(text: Any) -> list[int]:
    parts = [p for p in re.split(r"[,\s]+", str(text or "")) if p]
    if not parts or len(parts) > 10_000 or not all(p.isdigit() and len(p) < 12 for p in parts):
        raise StudioError.of("feedback.bad_ids", text=text_value(str(text)[:40]))
    return [int(p) for p in parts]


def list_feedback(ctx: AppContext, run: Any, status: Any, login: Any, label: Any) -> tuple[Any, dict, str]:
    """(table, counts, conflicts as text) for the picked run and filters."""
    store = _store(ctx)
    name = run if isinstance(run, str) and run in store.runs() else None
    if name is None:
        return gr.update(value=[]), {}, ""
    pick = {k: (v if isinstance(v, str) and v.strip() else None) for k, v in
            (("status", status), ("login", login), ("label", label))}
    if pick["status"] not in (None, *STATUSES):
        pick["status"] = None
    # conflicting rows first (the store's SQL), so the owner settles them before anything trains on the run
    rows = store.review_list(name, limit=MAX_SHOWN, **{k: v[:200] if v else None for k, v in pick.items()})
    table = [[r.id, r.status, r.verdict, r.login, r.source, r.input, r.answer, r.correction or "", r.edited or ""]
             for r in rows]
    every = store.list(run=name)
    # the inputs the store's SQL finds in conflict (a 👍 against a correction too): each label with who gave it
    ids, groups = store.conflict_ids(name), {}
    for r in every:
        if r.id in ids:
            groups.setdefault(r.input, []).append(f"{label_of(r)} ({r.login} #{r.id})")
    clash = "\n".join(f"{text[:200]}: " + " | ".join(said) for text, said in groups.items())
    counts = {**summary(every), "conflicts": len(groups), "agreement": [{**p, "pair": " & ".join(p["pair"])} for p in agreement(store, name)]}
    return gr.update(value=table, headers=headers("fb.headers", ctx.lang)), counts, clash


@ui_errors
def on_review(ctx: AppContext, ids: Any, status: str) -> str:
    store = _store(ctx)
    found = _ids(ids)
    for fid in found:
        store.review(fid, reviewer=ctx.user, status=status)
    return msg("fb.reviewed", ctx.lang, n=len(found), status=status)


@ui_errors
def on_accept_new(ctx: AppContext, run: Any, status: Any, login: Any, label: Any) -> str:
    """Accept every new row of the picked run that the filters show (the common case: the corrections are right)."""
    name = _run(ctx, run)
    pick = {k: v.strip()[:200] if isinstance(v, str) and v.strip() else None for k, v in
            (("login", login), ("label", label))}
    store = _store(ctx)
    found = [r.id for r in store.list(run=name, status="new", **pick)] if status in (None, "", "new") else []
    for fid in found:
        store.review(fid, reviewer=ctx.user, status="accepted")
    return msg("fb.reviewed", ctx.lang, n=len(found), status="accepted")


@ui_errors
def on_edit(ctx: AppContext, ids: Any, text: Any) -> str:
    (fid, *rest) = _ids(ids)
    if rest:
        raise StudioError.of("feedback.bad_ids", text=text_value(str(ids)[:40]))
    _store(ctx).review(fid, reviewer=ctx.user, edited=text if isinstance(text, str) else None)
    return msg("fb.edited", ctx.lang, id=fid)


@ui_errors
def on_make(ctx: AppContext, run: Any, name: Any) -> str:
    """Accepted rows -> NAME, NAME_pref, NAME_kto in the data folder, registered for the Settings tab."""
    run = _run(ctx, run)
    folder = ctx.runs_root / safe_name(run, code="name.run")
    made = make_datasets(_store(ctx), run, ctx.data_root, str(name or ""),
                         like=run_prompt_shape(folder) if folder.is_dir() else None)
    parts = ", ".join(f"{made[k]['name']} ({made[k]['rows']})" for k in ("sft", "ranking", "kto") if k in made)
    skipped = msg("fb.made_skipped", ctx.lang, n=made["skipped"]) if made["skipped"] else ""
    return msg("fb.made", ctx.lang, parts=parts, skipped=skipped)


@ui_errors
def on_export(ctx: AppContext, run: Any, suffix: str) -> str:
    """The run's rows as a file in a fresh temp folder (never the workspace), for the browser to download."""
    run = _run(ctx, run)
    out = Path(tempfile.mkdtemp(prefix="studio-feedback-")) / f"feedback-{safe_name(run)}{suffix}"
    return str(export_rows(_store(ctx).list(run=run), out))


def build_feedback_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """Components of the Feedback tab; ``refresh`` reloads the list of runs with feedback."""
    with gr.Row():
        run = gr.Dropdown(choices=[], label=T("fb.run"), elem_id="fb-run", scale=2)
        status = gr.Dropdown(choices=[("", ""), *[(T(f"fb.st_{st}"), st) for st in STATUSES]], value="",
                             label=T("fb.status"), elem_id="fb-status")
        login = gr.Textbox(label=T("fb.login"), max_lines=1, max_length=200, elem_id="fb-login")
        label = gr.Textbox(label=T("fb.label"), max_lines=1, max_length=200, elem_id="fb-label")
        refresh_btn = gr.Button(T("fb.refresh"), size="sm", elem_id="fb-refresh")
    table = gr.Dataframe(headers=headers("fb.headers", ctx.lang), interactive=False, wrap=True, elem_id="fb-table",
                         datatype="str")
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

    def refresh(ctx: AppContext, current: Any) -> Any:
        names = _store(ctx).runs()
        return gr.update(choices=names, value=current if current in names else (names[-1] if names else None))

    shown = for_each_browser(ctx, list_feedback)
    filters = [run, status, login, label]
    outs = [table, counts, clash]
    refresh_btn.click(for_each_browser(ctx, refresh), run, run, api_name="feedback_runs").then(
        shown, filters, outs, api_visibility="private")
    for comp in (run, status):
        comp.change(shown, filters, outs, api_visibility="private", show_progress="hidden")
    for comp in (login, label):
        comp.submit(shown, filters, outs, api_visibility="private")

    def accept_fn(ctx: AppContext, i: Any) -> str:
        return on_review(ctx, i, "accepted")

    def drop_fn(ctx: AppContext, i: Any) -> str:
        return on_review(ctx, i, "dropped")

    def csv_fn(ctx: AppContext, r: Any) -> str:
        return on_export(ctx, r, ".csv")

    def jsonl_fn(ctx: AppContext, r: Any) -> str:
        return on_export(ctx, r, ".jsonl")

    accept.click(owner_action(ctx, accept_fn), ids, info, api_name="review_accept").success(
        shown, filters, outs, api_visibility="private")
    accept_new.click(owner_action(ctx, on_accept_new), filters, info,
                     api_name="review_accept_new").success(shown, filters, outs, api_visibility="private")
    drop.click(owner_action(ctx, drop_fn), ids, info, api_name="review_drop").success(
        shown, filters, outs, api_visibility="private")
    edit.click(owner_action(ctx, on_edit), [ids, edit_text], info, api_name="review_edit").success(
        shown, filters, outs, api_visibility="private")
    make.click(owner_action(ctx, on_make), [run, name], info, api_name="feedback_make_dataset")
    csv_btn.click(owner_action(ctx, csv_fn), run, file, api_name="feedback_export_csv")
    jsonl_btn.click(owner_action(ctx, jsonl_fn), run, file, api_name="feedback_export_jsonl")
    return {"run": run, "refresh": refresh, "table": table}
