"""Train tab: Start / Abort / Resume and a live view of the run, polled with gr.Timer.

All state is the job runner's (server-side, derived from the run folder), so a reload or a
second browser shows the same run; closing the tab does not stop it.
"""
from __future__ import annotations

import functools
import re
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any

import gradio as gr

from .text import Markdown

from .page_role import page_role
from ..runs.plots import drawable, loss_figure
from ..app.form_values import values_to_config
from ..app.auto_eval import accuracy_line
from .common import NOBODY, fmt_seconds, info, ui_errors, warning
from ..app.context import AppContext
from . import forms
from .handlers import for_each_browser, owner_action
from .inputs import Values, named
from .i18n import headers, msg
from ..notices import notice_text
from ..words.said import recorded_text
from ..app.state_problems import state_problems_markdown
from ..app.paths import resolve_run_paths, resume_run
from ..runs import queue as run_queue
from ..runs.reasons import reason_text
from ..errors import StudioError
from ..words.error_words import page_message
from .improve_box import build_improve_box

PLOT_EVERY_S = 3.0  # redraw at most this often while training: a figure costs ~0.1 s of a busy CPU
STATE_PROBLEMS_SHOWN_S = 24 * 3600  # a state file moved aside is said on the status for a day


def run_reason(snap: dict[str, Any], lang: str = "en") -> str:
    """Why a run ended, in the page's words and language: the error that ended it (kept as ``page_error`` by the
    engine: its fix in page fields, never a CLI flag) or the plain reason, worded by its codes
    (studio/words/reason_words.py); a run recorded without codes by an older version, as its English text."""
    if isinstance(snap.get("page_error"), dict):
        return page_message(StudioError.from_dict(snap["page_error"]), lang)
    return reason_text(snap, lang, surface="page")


def status_markdown(snap: dict[str, Any], lang: str = "en", role: str = "owner") -> str:
    """One readable block: state, progress bar, speed, memory, and in the end the plain reason. ``role`` is the
    reader's (page_role.py): a viewer, who cannot press Start, is not told to."""
    if snap.get("state") == "idle" or not snap.get("run"):
        return msg("idle_viewer" if role == "viewer" else "idle", lang)
    state = snap["state"]
    icon = {"finished": "✅", "aborted": "⏹️", "failed": "❌"}.get(state, "⏳")
    head = f"### {icon} {msg('state.' + state, lang) if ('state.' + state) in _STATES else state}"
    if snap.get("aborting") and state not in ("finished", "aborted", "failed"):
        head += f" — {msg('aborting', lang)}"
    lines = [head]
    who = who_line(snap, lang)
    if who:
        lines.append(who)
    step, total = snap.get("step") or 0, snap.get("total_steps")
    if total:
        frac = min(step / total, 1.0)
        bar = "█" * int(frac * 20) + "░" * (20 - int(frac * 20))
        lines.append(f"{bar} **{msg('step', lang)} {step} / {total}** ({frac:.0%})"
                     + (f" · {msg('eta', lang)} {fmt_seconds(snap.get('eta_s'), lang)}" if state == "running" else ""))
    facts = []
    if snap.get("loss") is not None:
        facts.append(f"{msg('loss', lang)} {snap['loss']:.4f}")
    if snap.get("tokens_per_s") is not None:
        facts.append(f"{snap['tokens_per_s']:.0f} {msg('speed', lang)}")
    if snap.get("mem_gb") is not None:
        facts.append(f"{msg('mem', lang)} {snap['mem_gb']:.2f} GB")
    if snap.get("final_loss") is not None and state == "finished":
        facts.append(f"{msg('final_loss', lang)} {snap['final_loss']:.4f}")
    if snap.get("eval_loss") is not None:
        facts.append(f"{msg('eval_loss', lang)} {snap['eval_loss']:.4f}")
    if facts:
        lines.append(" · ".join(facts))
    if snap.get("reason") and state in ("finished", "aborted", "failed"):
        lines.append(f"**{msg('reason', lang)}:** {run_reason(snap, lang)}")
    for note in snap.get("notices") or []:  # in the page's words (fields, not config keys) and language
        lines.append(f"ℹ️ {notice_text(note, lang)}")
    lines.append(f"{msg('folder', lang)}: `{snap['run']}`")
    if snap.get("checkpoint"):
        lines.append(f"{msg('checkpoint', lang)}: `{Path(snap['checkpoint']).name}`")
    if snap.get("final_model") and state == "finished":
        lines.append(f"{msg('final_model', lang)}: `{snap['final_model']}`")
    return "\n\n".join(lines)


def who_line(snap: dict[str, Any], lang: str) -> str:
    """'Started by alice · stopped by bob' from the run folder; empty without logins (one user, as before)."""
    started, stopped = snap.get("started_by"), snap.get("stopped_by")
    parts = [msg("who.started", lang, name=started)] if started else []
    if stopped:
        parts.append(msg("who.stopped" if parts else "who.stopped_only", lang, name=stopped))
    return " · ".join(parts)


_STATES = {"state.starting", "state.running", "state.finished", "state.aborted", "state.failed", "state.unknown"}


_PLOT_KEYS = ("loss", "smoothed", "eval", "step", "waiting", "title", "compare")


def plot_lang(lang: str) -> str:
    """The page's language when the plot fonts can draw its words, else English (never empty boxes)."""
    if lang == "en" or drawable(*(msg(f"plot.{k}", lang) for k in _PLOT_KEYS)):
        return lang
    return "en"


def confusion_words(lang: str) -> dict[str, str]:
    """The confusion matrix's title, axes and unparseable column in the page's language (English where no
    installed font can draw it)."""
    keys = ("title", "answer", "truth", "unparseable")
    if lang != "en" and not drawable(*(msg(f"cm.{k}", lang) for k in keys)):
        lang = "en"
    return {k: msg(f"cm.{k}", lang) for k in keys}


def plot_words(lang: str) -> dict[str, str]:
    lang = plot_lang(lang)
    return {k: msg(f"plot.{k}", lang) for k in ("loss", "smoothed", "eval", "step", "waiting")}


def make_plot(events: list[dict[str, Any]], name: str, lang: str = "en") -> Any:
    """The loss plot of run ``name`` worded in ``lang`` (English where no installed font has its glyphs)."""
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib.pyplot as plt
    fig = loss_figure(events, title=msg("plot.title", plot_lang(lang), name=name), labels=plot_words(lang))
    plt.close(fig)  # drop pyplot's reference; gradio still renders the figure object
    return fig


# Lines for developers, not for the person watching the run; the run folder's stdout.log keeps them all.
_NOISE = re.compile(r"^\s*\{.*\}\s*$|.*(\[(WARNING|INFO|DEBUG)\]|real_accelerator|missing keys|UserWarning|"
                    r"FutureWarning|DeprecationWarning|warnings\.warn|Setting accelerator)")


# a progress bar (tqdm and the like): " 45%|████▌     | 9/20 [00:03<00:04,  2.51it/s]"; the events say it plainly
_BAR = re.compile(r"\d+%\|.*\||\|\s*\d+/\d+\s*\[[\d:<?]+|\d+(\.\d+)?\s*(it|s)/(s|it)\]")
LOG_PROGRESS_LINES = 12  # the newest progress events shown as lines


def _said_line(event: dict[str, Any], lang: str) -> str:
    """A notice or a step of the model's preparation, by the code its event keeps, in the page's words."""
    if event.get("type") == "notice":
        return notice_text(event, lang)
    return msg("prepare.line", lang, fraction=event.get("fraction", 0.0),
               step=recorded_text(event, "prepare", lang))


def progress_line(e: dict[str, Any], lang: str = "en") -> str:
    """One progress event as a person reads it: 'step 5 of 40 · loss 1.2345 · 1234 tokens/s'."""
    parts = [msg("log.progress", lang, step=e.get("step", "?"), total=e.get("total_steps") or "?")]
    if e.get("loss") is not None:
        parts.append(f"{msg('loss', lang)} {e['loss']:.4f}")
    if e.get("tokens_per_s") is not None:
        parts.append(f"{e['tokens_per_s']:.0f} {msg('speed', lang)}")
    return " · ".join(parts)


def page_log(text: str, events: list[dict[str, Any]] | None = None, lang: str = "en") -> str:
    """The log box: the run's own lines (notices and the model's preparation in the page's words, by the codes
    their events keep), then its progress as plain lines, one per logged step. Library warnings, raw status lines and progress bars (each
    carriage return of a bar is a line of the file) stay in the run folder's stdout.log."""
    lines = []
    said = {e.get("message"): e for e in events or [] if e.get("type") in ("notice", "prepare")}
    for raw in text.split("\n"):
        ln = raw.rsplit("\r", 1)[-1].rstrip()  # what a terminal would show after the carriage returns
        if not ln.strip() or _NOISE.match(ln) or _BAR.search(ln):
            continue
        event = next((e for m, e in said.items() if m and ln.endswith(m)), None)
        # the engine's notice or preparation step as logged (the CLI's words): the page's form of it instead
        lines.append(ln if event is None else _said_line(event, lang))
    progress = [e for e in events or [] if e.get("type") == "progress"]
    lines += [progress_line(e, lang) for e in progress[-LOG_PROGRESS_LINES:]]
    return "\n".join(lines)


def state_word(state: str, lang: str) -> str:
    """A run state ('finished', 'aborted', ...) in the page's language."""
    return msg("state." + state, lang) if ("state." + state) in _STATES else state


def runs_rows(ctx: AppContext, snap: dict[str, Any] | None = None) -> list[list[Any]]:
    """The Past runs table; the run ``snap`` describes gets its state and step from that same read, so the
    table never lags the status above it."""
    def num(v: Any) -> Any:
        return round(v, 4) if isinstance(v, float) else ("" if v is None else v)
    rows = ctx.runner.past_runs()
    if snap and snap.get("run"):
        same = {"state": snap.get("state"), "step": snap.get("step"), "total_steps": snap.get("total_steps")}
        rows = [{**r, **{k: v for k, v in same.items() if v is not None}} if r["path"] == snap["run"] else r
                for r in rows]
    return [[r["name"], state_word(r["state"], ctx.lang), r["model"], r["method"], f"{r['step'] or 0}/{r['total_steps'] or '?'}",
             num(r["final_loss"]), num(r["eval_loss"]), run_reason(r, ctx.lang)[:160], r.get("started_by") or NOBODY]
            for r in rows]


def button_states(snap: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(Start, Abort, Resume) from one status: Start always (it queues while a run goes), Abort while a run
    goes and was not asked to stop yet, Resume when none goes."""
    busy = bool(snap.get("busy"))
    return (gr.update(interactive=True), gr.update(interactive=busy and not snap.get("aborting")),
            gr.update(interactive=not busy))


def resumable_choices(ctx: AppContext) -> list[tuple[str, str]]:
    return [(f"{r['name']} ({state_word(r['state'], ctx.lang)})", r["path"]) for r in ctx.runner.past_runs()
            if r["state"] in ("aborted", "failed")]


def poll(ctx: AppContext, seen: dict | None) -> tuple[Any, ...]:
    """Timer tick: the status always, the plot and run list only when something changed."""
    seen = dict(seen or {})
    run_queue.start_next(ctx, functools.partial(resolve_run_paths, ctx=ctx))
    snap = ctx.runner.snapshot()
    key = [snap.get("run"), snap.get("events"), snap.get("state")]
    moved = snap.get("state") != seen.get("state") or snap.get("run") != seen.get("run")
    plot: Any = gr.skip()
    runs: Any = gr.skip()
    pick: Any = gr.skip()
    due = time.time() - seen.get("plotted", 0.0) >= PLOT_EVERY_S
    changed = bool(snap.get("run")) and key != seen.get("key") and (moved or due)
    if changed:
        plot = make_plot(ctx.runner.events(), Path(snap["run"]).name, lang=ctx.lang)
        seen.update(key=key, plotted=time.time())
    if changed or moved or "state" not in seen:  # the table follows the same read as the status
        runs = gr.update(value=runs_rows(ctx, snap), headers=headers("runs_headers", ctx.lang))
    if moved or "state" not in seen:
        choices = resumable_choices(ctx)
        current = snap.get("run") if any(v == snap.get("run") for _, v in choices) else None
        pick = gr.update(choices=choices, value=current or (choices[0][1] if choices else None))
    seen.update(state=snap.get("state"), run=snap.get("run"))
    status = status_markdown(snap, ctx.lang, page_role(ctx))
    line = accuracy_line(ctx, snap)
    if line:  # right under the state: the answer to "did it work?"
        head, _, rest = status.partition("\n\n")
        status = f"{head}\n\n{line}\n\n{rest}"
    queued = queue_lines(ctx, ctx.lang)
    if queued:
        status += "\n\n" + queued
    lost = state_problems_markdown(ctx.lang, since=time.time() - STATE_PROBLEMS_SHOWN_S)
    if lost:  # a garbled state file is said on every page, not only in the server log
        status += "\n\n" + lost
    return (status, plot, page_log(snap.get("log_tail") or "", ctx.runner.events(), ctx.lang), snap, runs, pick,
            *button_states(snap), seen)


def queue_lines(ctx: Any, lang: str) -> str:
    """The queue under the status: how many runs wait, and each queued run that could not start lately, why."""
    lines = [msg("queue_dropped", lang, reason=page_message(exc, lang)) for exc in run_queue.dropped(ctx)]
    if run_queue.waiting(ctx):
        lines.append(msg("queue_line", lang, n=run_queue.waiting(ctx)))
    return "\n\n".join(lines)


def start_run(ctx: AppContext, values: list[Any]) -> dict[str, Any]:
    """Form values -> a new run in the background.

    Raises:
        StudioError: invalid settings, a path outside the allowed roots, or a run already going.
    """
    # the RunConfig checks itself as it is built: its ConfigError (a value of the wrong type, else every problem of
    # the settings) is worded on the page by its problems' codes, in the page's field names and language
    cfg = values_to_config(values)
    resolve_run_paths(cfg, ctx)  # refuse a bad path now, not when the queued run comes up
    if cfg.trust_remote_code:
        warning(msg("trust_warning", ctx.lang), ctx.lang)
    place = run_queue.submit(ctx, cfg, functools.partial(resolve_run_paths, ctx=ctx), by=ctx.user)
    snap = ctx.runner.snapshot()
    if place:
        info(msg("queued", ctx.lang, n=place), ctx.lang)
    else:
        info(msg("started", ctx.lang, name=Path(snap["run"]).name), ctx.lang)
    return {**snap, "queued": place}  # this press's own place (0: started now), not the queue's length


def start_line(model: str | None, data: str | None, method: str | None, lang: str) -> str:
    """'Start trains **model** (method) on **data**': the Settings this tab's Start button will use."""
    if not (model or "").strip() or not (data or "").strip():
        return msg("train.will_none", lang)
    names = ", ".join(Path(d.strip()).stem for d in str(data).split(",") if d.strip())
    return msg("train.will", lang, model=Path(str(model).strip().rstrip("/")).name or model, data=names,
               method=method or "")


# ------------------------------------------------------------------ handlers
def next_run_line(ctx: AppContext, model: str | None, dataset: str | None, method: str | None) -> str:
    return start_line(model, dataset, method, ctx.lang)


@ui_errors
def on_start(ctx: AppContext, v: Values) -> dict[str, Any]:
    """Start: the Settings form (``v.form``, field name -> value) becomes a queued run."""
    return start_run(ctx, forms.form_list(v.form))


@ui_errors
def on_abort(ctx: AppContext) -> tuple[Any, ...]:
    """The buttons come back from the same status the press changed, not from the next tick."""
    if not ctx.runner.abort(by=ctx.user):
        info(msg("nothing_running", ctx.lang), ctx.lang)
    else:
        info(msg("abort_sent", ctx.lang), ctx.lang)
    snap_v = ctx.runner.snapshot()
    return (status_markdown(snap_v, ctx.lang, page_role(ctx)), *button_states(snap_v))


@ui_errors
def on_resume(ctx: AppContext, path: str | None) -> tuple[Any, ...]:
    run = resume_run(ctx, path)
    info(msg("started", ctx.lang, name=run.path.name), ctx.lang)
    snap_v = ctx.runner.snapshot()
    return (snap_v, status_markdown(snap_v, ctx.lang, page_role(ctx)), *button_states(snap_v))


def now(ctx: AppContext) -> tuple[Any, ...]:  # refresh right after a button instead of waiting for the next tick
    return poll(ctx, None)


def on_clear(ctx: AppContext) -> None:
    info(msg("queue_cleared", ctx.lang, n=run_queue.clear(ctx)), ctx.lang)


# ------------------------------------------------------------------ components
@dataclass
class TrainTab:
    """The Train tab's components by name (``build_train_tab``); ``form`` is the Settings form its Start reads."""
    form: dict[str, Any]
    will_train: Any     # what Start uses, from the Settings form
    start: Any
    abort: Any
    resume: Any
    status: Any
    plot: Any
    log: Any
    snap: Any
    pick: Any
    runs: Any
    refresh: Any
    clear_queue: Any
    seen: Any
    timer: Any

    @property
    def outputs(self) -> list[Any]:
        """What a tick (``poll``) fills, in its order."""
        return [self.status, self.plot, self.log, self.snap, self.runs, self.pick, self.start, self.abort,
                self.resume, self.seen]

    tick = staticmethod(poll)  # what app.py's page load calls, as the timer does: ``poll(ctx, seen)``


def build_train_tab(ctx: AppContext, T: Any, form: dict[str, Any]) -> TrainTab:
    """Draw the Train tab and wire its events; ``form`` is the Settings form (its values start the run)."""
    tab = draw_train_tab(ctx, T, form)
    wire_train_tab(ctx, tab)
    return tab


def draw_train_tab(ctx: AppContext, T: Any, form: dict[str, Any]) -> TrainTab:
    """The components in their places (the "Improve this run" box draws and wires itself)."""
    Markdown(T("train.intro"))
    will_train = Markdown(elem_id="train-will")
    with gr.Row():
        start = gr.Button(T("train.start"), variant="primary", elem_id="start-btn")
        abort = gr.Button(T("train.abort"), variant="stop", elem_id="abort-btn")
        resume = gr.Button(T("train.resume"), elem_id="resume-btn")
    status = Markdown(msg("idle", ctx.lang), elem_id="train-status")
    plot = gr.Plot(label=T("train.plot"), elem_id="loss-plot", format="png")
    log_box = gr.Textbox(label=T("train.log"), lines=8, max_lines=12, interactive=False, elem_id="train-log",
                         autoscroll=True)
    snap = gr.JSON(visible=False)
    with gr.Accordion(T("train.runs"), open=False, elem_id="past-runs"):
        pick = gr.Dropdown(choices=[], label=T("train.pick"), elem_id="resume-pick")
        runs = gr.Dataframe(headers=headers("runs_headers", ctx.lang), interactive=False, wrap=True)
        refresh = gr.Button(T("train.refresh"), size="sm")
    clear_queue = gr.Button(T("train.clear_queue"), size="sm", elem_id="clear-queue")
    build_improve_box(ctx, T)
    return TrainTab(form=form, will_train=will_train, start=start, abort=abort, resume=resume, status=status,
                    plot=plot, log=log_box, snap=snap, pick=pick, runs=runs, refresh=refresh, clear_queue=clear_queue,
                    seen=gr.State({}), timer=gr.Timer(1.0))


def wire_train_tab(ctx: AppContext, t: TrainTab) -> None:
    """The tab's events: which handler answers which component, with which inputs by name."""
    picks = [t.form[k] for k in ("model_name_or_path", "dataset", "finetuning_type") if k in t.form]
    if len(picks) == 3:
        gr.on([c.change for c in picks], for_each_browser(ctx, next_run_line), picks, t.will_train,
              api_visibility="private", trigger_mode="multiple",
              show_progress="hidden")  # cheap; Settings' estimate is the one always_last
    outputs = t.outputs
    t.timer.tick(for_each_browser(ctx, poll), t.seen, outputs, api_name="poll", show_progress="hidden",
                 concurrency_limit=None)
    refreshed = for_each_browser(ctx, now)
    fn, inputs = named(on_start, {"form": t.form})
    t.start.click(owner_action(ctx, fn), inputs, t.snap, api_name="start").then(
        refreshed, None, outputs, api_visibility="private")
    t.abort.click(owner_action(ctx, on_abort), None, [t.status, t.start, t.abort, t.resume],
                  api_name="abort").then(refreshed, None, outputs, api_visibility="private")
    t.resume.click(owner_action(ctx, on_resume), t.pick, [t.snap, t.status, t.start, t.abort, t.resume],
                   api_name="resume").then(refreshed, None, outputs, api_visibility="private")
    t.refresh.click(refreshed, None, outputs, api_visibility="private")
    t.clear_queue.click(owner_action(ctx, on_clear), None, None, api_name="clear_queue").then(
        refreshed, None, outputs, api_visibility="private")
