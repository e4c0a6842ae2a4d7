"""Evaluate tab: what did the model learn? Sentiment check, before/after, playground, chat, batch, export.

Thin by design: handlers turn widget values into calls on ``studio.inference`` (which owns the
models) and format the plain results for display. No torch/transformers import here.
Handlers are module-level functions so tests call them directly; ``draw_evaluate_tab`` places the components,
``wire_evaluate_tab`` connects them to the handlers by name.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
import html
import logging
from pathlib import Path
from typing import Any, Callable, Iterator

import gradio as gr

from ..app import answers
from ..app.downloads import DOWNLOADS, folder_files, owner_of
from .text import Escaped, HTML, Markdown

from .common import ui_errors
from .handlers import for_each_browser, owner_action
from .inputs import Values, named
from .share_demo import build_share_panel
from ..evaluation import inference
from ..errors import StudioError
from .eval_compare import (DATA_TYPES, build_deploy_panel, build_generation_panel, build_quant_panel,  # noqa: F401
                           data_file, defaults_updates)  # DATA_TYPES: the demo page's
from ..app.eval_tables import label_map_line, scorecard_markdown
from .i18n import headers, make_i18n, msg
from .train_tab import confusion_words
from ..evaluation.metrics import confusion_figure
from ..app.uploads import DATA_MB, check_data_upload
from ..evaluation.gen_defaults import generation_defaults
from ..feedback.store import FeedbackStore
from ..web.export_download import link
from .feedback_panel import _finished_run_name, eval_feedback_row
from .least_sure_box import least_sure_box

log = logging.getLogger("studio.ui.evaluate")

PER_CLASS_HEADERS = headers("ev.per_class_headers")
WRONG_HEADERS = headers("ev.wrong_headers")


_user_errors = ui_errors  # one rule for errors in the page (studio/ui/common.py)


def labeler(lang: str) -> Callable[[str], Any]:
    """Static labels: gr.I18n keys the browser translates; plain Chinese when the server language is zh.

    app.py builds this tab without its I18n; with ``--lang zh`` the server's choice wins, so the
    labels are Chinese even where a test reads them from the component.
    """
    if lang == "zh":
        return lambda key: msg(key, "zh")
    return make_i18n()


# ------------------------------------------------------------------ handlers
def run_kinds(lang: str = "en") -> tuple[str, str]:
    """The run picker's words for an adapter run and a full-model run."""
    return msg("ev.kind_lora", lang), msg("ev.kind_full", lang)


def refresh_runs(runs_root: str | Path, current: str | None = None, listed: list[str] | None = None,
                 lang: str = "en") -> Any:
    """The finished runs, newest first, named in ``lang``. The choice stays where it was unless a run finished
    since the page last listed them (``listed``): then the newest new one is chosen (a page opened earlier
    kept the oldest run selected while newer ones existed)."""
    choices = inference.finished_runs(runs_root, kinds=run_kinds(lang))
    values = [v for _, v in choices]
    new = [v for v in values if listed is not None and v not in listed]
    value = new[0] if new else (current if current in values else (values[0] if values else None))
    return gr.update(choices=choices, value=value)


def refresh_runs_and_listed(runs_root: str | Path, current: str | None, listed: list[str] | None,
                            lang: str = "en") -> tuple[Any, list]:
    update = refresh_runs(runs_root, current, listed, lang)
    return update, [v for _, v in update["choices"]]


def _short(text: str, limit: int = 300) -> str:
    text = str(text or "")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fmt(x: float) -> str:
    return f"{x:.3f}"


@_user_errors
def on_check(run: str, source: str, file: str | None, mode: str, max_rows: float | None,
             lang: str = "en", limit_mb: float = DATA_MB) -> tuple[str, list, Any, list]:
    """Sentiment check -> (summary markdown, per-class rows, confusion figure, misclassified rows)."""
    r = inference.sentiment_check(run, data_file(source, file, limit_mb), mode, int(max_rows or 0) or None)
    return check_tables(r, lang)


def check_tables(r: dict, lang: str = "en") -> tuple[str, list, Any, list]:
    """A sentiment check's result (``sentiment_eval``'s, or the fine-tuned side of a before/after) as the tab shows
    it: (summary markdown, per-class rows, confusion figure, misclassified rows)."""
    summary = msg("ev.summary", lang, acc=r["accuracy"], n=r["n"], f1=r["macro_f1"], ms=r["latency_ms_per_row"],
                  mode=r["mode"], bad=r["unparseable"])
    if r.get("skipped_rows"):
        summary += msg("ev.skipped", lang, k=r["skipped_rows"], labels=r["labels"])
    if r.get("label_map"):
        summary += label_map_line(r["label_map"], lang)
    leak = r.get("leakage")
    if leak and leak["seen_rows"]:
        summary += msg("ev.leak", lang, k=leak["seen_rows"], n=leak["rows"]) + (
            msg("ev.leak_none", lang) if leak["unseen_accuracy"] is None else
            msg("ev.leak_unseen", lang, acc=leak["unseen_accuracy"], m=leak["unseen_rows"]))
    table = [[lab, _fmt(c["precision"]), _fmt(c["recall"]), _fmt(c["f1"]), c["support"]]
             for lab, c in r["per_class"].items()]
    wrong = [[_short(m["input"] or m["instruction"]), m["expected"], _short(m["answer"], 80), m["parsed"]]
             for m in r["misclassified"]]
    # the service draws the CLI's English figure; the page redraws it in its own words
    figure = confusion_figure(r["confusion"], words=confusion_words(lang)) if r.get("confusion") else r.get("figure")
    return summary, table, figure, wrong


@_user_errors
def on_scorecard(run: str, source: str, file: str | None, mode: str, max_rows: float | None,
                 lang: str = "en", limit_mb: float = DATA_MB) -> str:
    """Before/after scorecard as a markdown table."""
    return on_before_after(run, source, file, mode, max_rows, lang, limit_mb)[0]


@_user_errors
def on_before_after(run: str, source: str, file: str | None, mode: str, max_rows: float | None,
                    lang: str = "en", limit_mb: float = DATA_MB) -> tuple[str, str, list, Any, list]:
    """Before/after in one pass -> (the scorecard as a markdown table, and the fine-tuned side's summary, per-class
    rows, confusion figure and misclassified rows: the check's own tables, with no second check)."""
    card = inference.scorecard(run, data_file(source, file, limit_mb), mode, int(max_rows or 0) or None)
    return (scorecard_markdown(card, lang),
            *check_tables({**card["tuned"], "label_map": card.get("label_map")}, lang))


def _stop_key(request: Any, what: str) -> str | None:
    """Which generation a Stop button means: this browser session's chat or playground."""
    session = getattr(request, "session_hash", None)
    return f"{session}:{what}" if session else None


def on_stop(what: str, request: Any = None) -> None:
    """Stop button: this session's running ``what`` ("chat" or "play") ends at its next token."""
    inference.stop_generation(_stop_key(request, what))


@_user_errors
def on_generate(run: str, instruction: str, input_text: str, max_new_tokens: float, temperature: float,
                top_p: float, stream: bool, compare: bool, lang: str = "en",
                request: Any = None) -> Iterator[tuple[str, str]]:
    """Yield (fine-tuned answer, base answer) as they grow (or once, at the end, without streaming)."""
    last = ("", "")
    for last in inference.playground(run, instruction, input_text, int(max_new_tokens), float(temperature),
                                     float(top_p), bool(compare), stop_key=_stop_key(request, "play")):
        if stream:
            yield last
    answers.keep(request, "play", run, (instruction, input_text), last[0])  # what feedback may judge
    if not stream:
        yield last


@_user_errors
def on_chat(message: str, history: list[dict[str, Any]] | None, run: str, max_new_tokens: float,
            temperature: float, top_p: float, lang: str = "en",
            request: Any = None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield ("" for the textbox, the chat history with the reply growing at its end)."""
    if not (message or "").strip():
        raise StudioError.of("page.empty_message")
    history = list(history or [])
    shown = history + [{"role": "user", "content": message}, {"role": "assistant", "content": ""}]
    yield "", shown
    for reply in inference.chat_stream(run, history, message, int(max_new_tokens), float(temperature),
                                       float(top_p), stop_key=_stop_key(request, "chat")):
        shown[-1] = {"role": "assistant", "content": reply}
        yield "", shown
    answers.keep(request, "chat", run, (message,), shown[-1]["content"])  # what feedback may judge


@_user_errors
def on_predict(run: str, file: str | None, out_dir: str | Path, lang: str = "en",
               limit_mb: float = DATA_MB) -> tuple[str, str]:
    """Batch prediction -> (CSV path for download, summary)."""
    check_data_upload(file, limit_mb, DATA_TYPES)
    info = inference.predict_file(run, file or "", out_dir)
    acc = msg("ev.predicted_acc", lang, acc=info["accuracy"]) if info["accuracy"] is not None else ""
    return info["path"], msg("ev.predicted", lang, n=info["n"], mode=info["mode"], ms=info["latency_ms_per_row"],
                             acc=acc, path=info["path"])


@_user_errors
def on_export(run: str, merge: bool, overwrite: bool, name: str, exports_dir: str | Path,
              lang: str = "en", fmt: str = "folder") -> tuple[str, str]:
    """Export the run -> (message for the page, the export folder for server-side state).

    ``fmt``: "folder" (a model or adapter folder), or "f16" / "q8_0" (a GGUF for llama.cpp and Ollama).
    The folder goes into a ``gr.State`` (held on the server, never sent to the browser), so the zip
    step below is told the folder by the server and not by text the browser sends back.
    """
    info = inference.export_run(run, exports_dir, bool(merge), bool(overwrite), name, fmt=fmt or "folder")
    if "gguf_type" in info:
        extra = msg("ev.exported_no_modelfile", lang, why=info["no_modelfile"]) if info.get("no_modelfile") \
            else msg("ev.exported_modelfile", lang)
        return (msg("ev.exported_gguf", lang, gtype=info["gguf_type"].upper(), path=info["path"], mb=info["size_mb"],
                    template=info["template_name"], extra=extra), str(info["path"]))
    return (msg("ev.exported", lang, kind=info["kind"], path=info["path"], mb=info["size_mb"], what=info["what"]),
            str(info["path"]))


def export_links(folder: str | None, exports_dir: str | Path, owner: str | None = None, lang: str = "en",
                 downloads: Any = None, progress: Any = None) -> str:
    """Download links for the export folder (from server-side state, confined to the exports folder), as HTML.

    Nothing is copied to make them: a folder downloads as a zip written while it is sent, a GGUF
    export also as its ``model.gguf`` itself; the links name server-side tokens bound to this login
    session (studio/app/downloads.py). An empty string when the folder is not a finished export inside exports/.
    """
    reg = downloads if downloads is not None else DOWNLOADS
    if progress is not None:
        progress(0.0, desc=msg("ev.download_making", lang))
    token = reg.add(folder, exports_dir, owner)
    if token is None:
        return ""
    entry = reg.get(token, owner)
    if entry is None or not entry.path.is_dir():
        return ""
    files = folder_files(entry.path)
    mb = round(sum(f.stat().st_size for f in files) / 2**20, 1)
    items = [(token, entry.name, msg("ev.download_zip", lang, name=entry.name, mb=mb))]
    for f in files:
        if f.suffix.lower() == ".gguf" and f.parent == entry.path:  # the one file llama.cpp / Ollama need
            saved = f"{entry.path.name}.gguf"  # not model.gguf: two runs' files would share the name
            one = reg.add(f, exports_dir, owner, saved)
            if one is not None:
                # the Modelfile names ./model.gguf: it works beside the zip's copy, not beside a renamed file
                key = "ev.download_file_modelfile" if (entry.path / "Modelfile").is_file() else "ev.download_file"
                items.insert(0, (one, saved, msg(key, lang, name=saved, mb=round(f.stat().st_size / 2**20, 1))))
    return Escaped("".join(f'<p><a href="{html.escape(link(t, name))}" download="{html.escape(name)}" class="export-link">'
                   f"{html.escape(text)}</a></p>" for t, name, text in items))


def _defaults(runs: list[tuple[str, str]]) -> dict[str, Any]:
    """Sampling defaults for the run shown first (the sliders start there; a change of run resets them)."""
    return generation_defaults(runs[0][1] if runs else None)


def merge_visible(run: str | None, fmt: str = "folder") -> Any:
    """The merge choice only means something for a LoRA run exported as a folder (a full run is already one
    model; a GGUF is always merged)."""
    return gr.update(visible=bool(run) and (Path(run) / "adapter").is_dir() and (fmt or "folder") == "folder")


# ------------------------------------------------------------------ the tab's handlers
# Each takes the browser's ``ctx`` and its inputs by name: its own parameters, or ``v`` (studio/ui/inputs.py) where
# they are many; ``wire_evaluate_tab`` says which components they are. The folders come from ``ctx``.
def _places(ctx: Any) -> tuple[str, str, str, float]:
    """(runs folder, exports folder, predictions folder, the data upload limit in MB) of ``ctx``'s workspace."""
    workspace = Path(getattr(ctx, "workspace", ".") or ".")
    return (str(getattr(ctx, "runs_root", None) or workspace / "runs"), str(workspace / "exports"),
            str(workspace / "predictions"), float(getattr(ctx, "max_upload_mb", DATA_MB)))


def relist_runs(ctx: Any, run: str | None = None, listed: list[str] | None = None) -> tuple[Any, list]:
    """The run picker's choices again (Refresh, and each time the tab is picked: app.py)."""
    return refresh_runs_and_listed(_places(ctx)[0], run, listed, ctx.lang)


def check_handler(ctx: Any, v: Values) -> tuple:
    return on_check(v.run, v.source, v.file, v.mode, v.max_rows, ctx.lang, _places(ctx)[3])


def scorecard_handler(ctx: Any, v: Values) -> tuple:
    return on_before_after(v.run, v.source, v.file, v.mode, v.max_rows, ctx.lang, _places(ctx)[3])


# gr.Request (the browser session) says whose generation a Stop button ends; Gradio fills it in by annotation
def generate_handler(ctx: Any, v: Values, request: gr.Request) -> Iterator[tuple[str, str]]:
    yield from on_generate(v.run, v.instruction, v.input_text, v.max_new_tokens, v.temperature, v.top_p, v.stream,
                           v.compare, ctx.lang, request)


def stop_play_handler(ctx: Any, request: gr.Request) -> None:
    on_stop("play", request)


def chat_handler(ctx: Any, v: Values, request: gr.Request) -> Iterator[tuple[str, list]]:
    yield from on_chat(v.message, v.history, v.run, v.max_new_tokens, v.temperature, v.top_p, ctx.lang, request)


def stop_chat_handler(ctx: Any, request: gr.Request) -> None:
    on_stop("chat", request)


def clear_chat(ctx: Any) -> list:
    return []


def sampling_defaults(ctx: Any, run: str | None) -> list[Any]:
    """The six sliders start at the picked run's model's own sampling defaults."""
    return defaults_updates(run)


def predict_handler(ctx: Any, run: str, file: str | None) -> tuple[str, str]:
    _, _, predictions, limit = _places(ctx)
    return on_predict(run, file, predictions, ctx.lang, limit)


def picked_run(ctx: Any, run: Any) -> str:  # a finished run this server lists, never a path as sent
    runs_root = _places(ctx)[0]
    return str(Path(runs_root) / _finished_run_name(runs_root, run))


def export_handler(ctx: Any, run: str, merge: bool, overwrite: bool, name: str, fmt: str = "folder") -> tuple[str, str]:
    return on_export(run, merge, overwrite, name, _places(ctx)[1], ctx.lang, fmt)


def links_handler(ctx: Any, folder: str | None, request: gr.Request, progress: Any = gr.Progress()) -> str:
    return export_links(folder, _places(ctx)[1], owner_of(request), ctx.lang, progress=progress)


def merge_shown(ctx: Any, run: str | None, fmt: str) -> Any:
    return merge_visible(run, fmt)


# ------------------------------------------------------------------ components
@dataclass
class EvaluateTab:
    """The Evaluate tab's own components by name (``build_evaluate_tab``); the boxes inside it (full vs quantized,
    deploy report, generation check, feedback, rows worth checking, share a demo) draw and wire themselves, and
    what they return is in ``boxes``."""
    run: Any
    listed: Any         # the runs this page has shown (server-side)
    refresh: Any
    source: Any         # the sentiment check: which rows, how scored, how many
    mode: Any
    max_rows: Any
    data_file: Any
    check_btn: Any
    score_btn: Any
    summary: Any
    per_class: Any
    confusion: Any
    scorecard: Any
    wrong: Any
    prompt: Any         # the playground
    input_text: Any
    max_new: Any
    temperature: Any
    top_p: Any
    stream: Any
    compare: Any
    send: Any
    stop_play: Any
    tuned_out: Any
    base_out: Any
    chatbot: Any        # the chat
    message: Any
    chat_send: Any
    stop_chat: Any
    chat_tokens: Any
    chat_temp: Any
    chat_top_p: Any
    clear: Any
    batch_file: Any     # batch prediction
    predict_btn: Any
    batch_out: Any
    batch_info: Any
    export_format: Any  # export
    merge: Any
    overwrite: Any
    export_name: Any
    export_btn: Any
    export_info: Any
    export_file: Any
    exported: Any       # the folder just exported: server-side, the browser never names it
    boxes: dict[str, Any]

    def check_inputs(self) -> dict[str, Any]:
        return {"run": self.run, "source": self.source, "file": self.data_file, "mode": self.mode,
                "max_rows": self.max_rows}

    def __getitem__(self, name: str) -> Any:
        """A component by name, the boxes' too (``tab["gen_out"]``)."""
        return self.boxes[name] if name in self.boxes else getattr(self, name)

    def __contains__(self, name: str) -> bool:
        return name in self.boxes or name in self.__dataclass_fields__


def build_evaluate_tab(ctx: Any) -> EvaluateTab:
    """Draw the tab inside the caller's ``gr.Tab`` and wire its events; its components by name."""
    tab = draw_evaluate_tab(ctx)
    wire_evaluate_tab(ctx, tab)
    return tab


def draw_evaluate_tab(ctx: Any) -> EvaluateTab:
    """The tab's components in their places (the boxes inside it wire themselves)."""
    runs_root, exports_dir, _, limit = _places(ctx)
    lang = getattr(ctx, "lang", "en")
    T = labeler(lang)
    runs = inference.finished_runs(runs_root, kinds=run_kinds(lang))
    with gr.Row():
        run = gr.Dropdown(choices=runs, value=runs[0][1] if runs else None, label=T("ev.run"), scale=4)
        refresh = gr.Button(T("ev.refresh"), scale=1)
    listed = gr.State([v for _, v in runs])

    with gr.Accordion(T("ev.check"), open=True):
        with gr.Row():
            # choice names are not translated by the browser: the server language picks them
            source = gr.Radio([(msg("ev.val", lang), "validation"), (msg("ev.upload", lang), "upload")],
                              value="validation", label=T("ev.source"))
            mode = gr.Radio([(msg("ev.mode_score", lang), "score"), (msg("ev.mode_generate", lang), "generate")],
                            value="score", label=T("ev.mode"), info=T("ev.mode_help"))
            max_rows = gr.Number(value=0, precision=0, minimum=0, label=T("ev.max_rows"))
        data_file = gr.File(label=T("ev.file"), type="filepath")  # any file: the check refuses in words
        with gr.Row():
            check_btn = gr.Button(T("ev.run_check"), variant="primary")
            score_btn = gr.Button(T("ev.scorecard"))
        summary = Markdown()
        with gr.Row():
            per_class = gr.Dataframe(headers=headers("ev.per_class_headers", lang), interactive=False,
                                     label=T("ev.per_class"))
            confusion = gr.Plot(label=T("ev.confusion"))
        card = Markdown()
        # the text gets half the width, so expected label and answer stay on screen beside it
        wrong = gr.Dataframe(headers=headers("ev.wrong_headers", lang), interactive=False, label=T("ev.wrong"),
                             wrap=True, column_widths=["50%", "15%", "20%", "15%"], elem_id="ev-wrong")

    rows = {"source": source, "file": data_file, "max_rows": max_rows, "mode": mode}
    boxes: dict[str, Any] = {}
    boxes.update(build_quant_panel(T, ctx, exports_dir, run, rows))
    boxes.update(build_deploy_panel(T, ctx, run, rows))
    boxes.update(build_generation_panel(T, ctx, run, rows))
    defaults = _defaults(runs)
    play_d, chat_d = defaults["play"], defaults["chat"]

    with gr.Accordion(T("ev.play"), open=False):
        prompt = gr.Textbox(label=T("ev.prompt"), lines=2)
        input_text = gr.Textbox(label=T("ev.input"), lines=2)
        with gr.Row():
            max_new = gr.Slider(1, 1024, value=play_d["max_new_tokens"], step=1, label=T("ev.max_new"))
            temperature = gr.Slider(0.0, 2.0, value=play_d["temperature"], step=0.05, label=T("ev.temp"))
            top_p = gr.Slider(0.05, 1.0, value=play_d["top_p"], step=0.05, label=T("ev.top_p"))
        with gr.Row():
            stream = gr.Checkbox(value=True, label=T("ev.stream"))
            compare = gr.Checkbox(value=True, label=T("ev.compare"))
            send = gr.Button(T("ev.send"), variant="primary")
            stop_play = gr.Button(T("ev.stop"), variant="stop", elem_id="ev-stop-play")
        with gr.Row():
            tuned_out = gr.Textbox(label=T("ev.tuned"), lines=6)
            base_out = gr.Textbox(label=T("ev.base"), lines=6)
    store = FeedbackStore.in_workspace(Path(getattr(ctx, "workspace", ".") or "."))  # reviewed on the Feedback tab
    with gr.Accordion(T("fb.title"), open=False):
        eval_feedback_row(store, runs_root, T, run, [prompt, input_text, tuned_out], "playground", ctx)

    with gr.Accordion(T("ev.chat"), open=False):
        # no floating label, and the toolbar gets its own strip (studio/ui/app.py, CSS)
        chatbot = gr.Chatbot(height=360, label=T("ev.chat"), show_label=False, elem_id="ev-chat",
                             buttons=["copy", "copy_all"])
        with gr.Row(equal_height=True):
            message = gr.Textbox(label=T("ev.message"), lines=1, scale=6)
            chat_send = gr.Button(T("ev.chat_send"), variant="primary", scale=1, elem_id="ev-chat-send")
            stop_chat = gr.Button(T("ev.stop"), variant="stop", scale=1, elem_id="ev-stop-chat")
        with gr.Row():
            chat_tokens = gr.Slider(1, 1024, value=chat_d["max_new_tokens"], step=1, label=T("ev.max_new"))
            chat_temp = gr.Slider(0.0, 2.0, value=chat_d["temperature"], step=0.05, label=T("ev.temp"))
            chat_top_p = gr.Slider(0.05, 1.0, value=chat_d["top_p"], step=0.05, label=T("ev.top_p"))
            clear = gr.Button(T("ev.clear"))
        Markdown(T("ev.defaults_note"))
    with gr.Accordion(T("fb.title"), open=False):
        eval_feedback_row(store, runs_root, T, run, [chatbot], "chat", ctx)

    with gr.Accordion(T("ev.batch"), open=False):
        # its own label: the same one on both boxes sent a first upload into the wrong one
        batch_file = gr.File(label=T("ev.batch_file"), type="filepath", elem_id="ev-batch-file")
        predict_btn = gr.Button(T("ev.predict"))
        batch_out = gr.File(label=T("ev.csv"), interactive=False)
        batch_info = Markdown()
    boxes["least_sure"] = least_sure_box(T, store, functools.partial(for_each_browser, ctx), picked_run,
                                         run_input=run, limit_mb=limit, prefix="eval_least_sure")

    with gr.Accordion(T("ev.export"), open=False):
        # choice names are messages: the server language picks them, localize.py re-sends them per browser
        export_format = gr.Radio([(msg(f"ev.fmt_{v}", lang), v) for v in inference.EXPORT_FORMATS], value="folder",
                                 label=T("ev.export_format"), info=T("ev.export_format_info"), elem_id="export-format")
        with gr.Row():
            merge = gr.Checkbox(value=True, label=T("ev.merge"))
            overwrite = gr.Checkbox(value=False, label=T("ev.overwrite"))
            export_name = gr.Textbox(label=T("ev.name"), placeholder=f"{exports_dir}/<run>-merged")
        export_btn = gr.Button(T("ev.do_export"), elem_id="export-btn")
        export_info = Markdown()
        export_file = HTML(elem_id="export-download")  # links only: nothing is copied to make them
    boxes["share"] = build_share_panel(T, lang, run, ctx)  # a teammate's page for the picked run (share_demo.py)
    return EvaluateTab(
        run=run, listed=listed, refresh=refresh, source=source, mode=mode, max_rows=max_rows, data_file=data_file,
        check_btn=check_btn, score_btn=score_btn, summary=summary, per_class=per_class, confusion=confusion,
        scorecard=card, wrong=wrong, prompt=prompt, input_text=input_text, max_new=max_new, temperature=temperature,
        top_p=top_p, stream=stream, compare=compare, send=send, stop_play=stop_play, tuned_out=tuned_out,
        base_out=base_out, chatbot=chatbot, message=message, chat_send=chat_send, stop_chat=stop_chat,
        chat_tokens=chat_tokens, chat_temp=chat_temp, chat_top_p=chat_top_p, clear=clear, batch_file=batch_file,
        predict_btn=predict_btn, batch_out=batch_out, batch_info=batch_info, export_format=export_format, merge=merge,
        overwrite=overwrite, export_name=export_name, export_btn=export_btn, export_info=export_info,
        export_file=export_file, exported=gr.State(None), boxes=boxes)


def wire_evaluate_tab(ctx: Any, t: EvaluateTab) -> None:
    """The tab's own events: which handler answers which component, with which inputs by name. The api_names are
    the endpoints' and the input names their parameters', so an API caller's call stays as it was."""
    t.refresh.click(for_each_browser(ctx, relist_runs), inputs=[t.run, t.listed], outputs=[t.run, t.listed],
                    api_name="refresh_runs")
    fn, inputs = named(check_handler, t.check_inputs())
    t.check_btn.click(for_each_browser(ctx, fn), inputs, [t.summary, t.per_class, t.confusion, t.wrong],
                      api_name="on_check")
    fn, inputs = named(scorecard_handler, t.check_inputs())
    t.score_btn.click(for_each_browser(ctx, fn), inputs, [t.scorecard, t.summary, t.per_class, t.confusion, t.wrong],
                      api_name="on_scorecard")

    fn, inputs = named(generate_handler, {
        "run": t.run, "instruction": t.prompt, "input_text": t.input_text, "max_new_tokens": t.max_new,
        "temperature": t.temperature, "top_p": t.top_p, "stream": t.stream, "compare": t.compare})
    t.send.click(for_each_browser(ctx, fn), inputs, [t.tuned_out, t.base_out], api_name="on_generate")
    t.stop_play.click(for_each_browser(ctx, stop_play_handler), None, None, api_name="stop_generate", queue=False)

    fn, inputs = named(chat_handler, {"message": t.message, "history": t.chatbot, "run": t.run,
                                      "max_new_tokens": t.chat_tokens, "temperature": t.chat_temp,
                                      "top_p": t.chat_top_p})
    chatted = for_each_browser(ctx, fn)
    t.message.submit(chatted, inputs, [t.message, t.chatbot], api_name="on_chat")
    t.chat_send.click(chatted, inputs, [t.message, t.chatbot], api_visibility="private")
    t.stop_chat.click(for_each_browser(ctx, stop_chat_handler), None, None, api_name="stop_chat", queue=False)
    t.clear.click(for_each_browser(ctx, clear_chat), None, t.chatbot, api_name="clear_chat")
    # a run pick has several cheap listeners: "multiple", as no two "always_last" listeners may share a change
    t.run.change(for_each_browser(ctx, sampling_defaults), t.run,
                 [t.max_new, t.temperature, t.top_p, t.chat_tokens, t.chat_temp, t.chat_top_p],
                 api_visibility="private", show_progress="hidden", trigger_mode="multiple")
    t.predict_btn.click(for_each_browser(ctx, predict_handler), [t.run, t.batch_file], [t.batch_out, t.batch_info],
                        api_name="predict_file")
    # the format is the last input, so a caller of /export_run written before it existed still means "folder"
    t.export_btn.click(owner_action(ctx, export_handler),
                       [t.run, t.merge, t.overwrite, t.export_name, t.export_format], [t.export_info, t.exported],
                       api_name="export_run").success(
        for_each_browser(ctx, links_handler), t.exported, t.export_file, api_visibility="private")
    shown = for_each_browser(ctx, merge_shown)
    t.run.change(shown, [t.run, t.export_format], t.merge, api_visibility="private", trigger_mode="multiple")
    t.export_format.change(shown, [t.run, t.export_format], t.merge, api_visibility="private")
