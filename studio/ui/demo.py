"""The demo page of one finished run: what a teammate needs to try the model, and nothing else of the studio.

``python -m studio demo RUN`` (``main`` below; its flags are studio/app/server_flags.py's ``add_demo_arguments``)
builds it and serves it with the studio's own flag checks, logins, exposure rule and login guard (studio/ui/app.py).
It reads the run and its base model and writes into the workspace only teammates' feedback
(WORKSPACE/feedback.sqlite3, shared with the studio); the model is loaded once, before the address is printed. The run is fixed on the server when the page is built: no handler takes a
run, a folder or a path from the browser, none trains, exports or deletes; a handler writes a batch prediction's
CSV into a fresh temp folder and teammates' feedback into the workspace's feedback database (studio/feedback).
The page depends on the run's task:

* labels (sentiment): a text box -> the predicted label with every label's score (the evaluator's batched label
  scoring, ``inference.label_probabilities``), a few held-out rows as examples, a file box for batch prediction;
* otherwise: a streaming chat with Stop, in the run's own template (the Evaluate tab's chat handler).
"""
from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import gradio as gr

from ..app.addresses import urls
from .text import Markdown

from ..errors import StudioError
from ..evaluation import inference
from ..evaluation import limits
from .common import ui_errors
from .handlers import in_browser_lang
from .evaluate_tab import DATA_TYPES, labeler, on_chat, on_stop
from .i18n import make_i18n, msg
from ..app.demo_run import EXAMPLES, DemoRun, LiveDemoRun, describe_run
from ..app.uploads import DATA_MB, check_data_upload
from ..app.server_flags import add_demo_arguments as add_arguments  # noqa: F401  # this verb's flags
from ..app.server_flags import check_demo_flags, is_loopback
from ..evaluation.gen_defaults import generation_defaults
from ..feedback.store import FeedbackStore
from .app import launch_kwargs, serving_environment
from .feedback_panel import feedback_row
from .least_sure_box import least_sure_box

BATCH = 16             # texts scored together when many users classify at once
MAX_PREDICT_ROWS = 5000  # one file must not hold the shared model for an hour while everyone else waits


# ------------------------------------------------------------------ handlers (module level: tests call them)
def text_problem(text: Any, lang: str = "en") -> str | None:
    """Why a text cannot be classified (None: it can), in ``lang``."""
    if not isinstance(text, str) or not text.strip():
        return msg("demo.empty", lang)
    if len(text) > inference.MAX_PROMPT_CHARS:
        return msg("demo.too_long", lang, n=len(text), limit=inference.MAX_PROMPT_CHARS)
    try:  # a lone surrogate fails only the text that holds it, never the batch it came in
        limits.check_text("text", text)
    except StudioError as exc:
        return exc.text(lang, "page")
    return None


@ui_errors
def check_text(text: Any, lang: str = "en") -> None:
    """The page's first step: a clear message to the one who typed an empty or oversized text."""
    if not isinstance(text, str) or not text.strip():
        raise StudioError.of("page.demo_empty")
    if len(text) > inference.MAX_PROMPT_CHARS:
        raise StudioError.of("page.demo_too_long", n=len(text), limit=inference.MAX_PROMPT_CHARS)
    limits.check_text("text", text)


@ui_errors
def on_classify_batch(run: DemoRun, texts: list[Any], lang: str = "en") -> list[list[Any]]:
    """Gradio's batching (``batch=True``): the texts every user sent meanwhile, scored in one pass of the
    evaluator's batched label scoring -> for each, {label: probability} for gr.Label (the best label and every
    score). A text that cannot be scored (only an API caller can send one: the page checks first) gets the
    reason as its label, so it never fails the other users' answers in the same batch; Gradio hands a batch the
    first caller's request, so that reason is in ``lang``, the first caller's language."""
    problems = [text_problem(t, lang) for t in texts]
    good = [t for t, problem in zip(texts, problems) if problem is None]
    scores = iter(inference.label_probabilities(run.path, good, run.labels, run.like) if good else [])
    return [[problem if problem is not None else next(scores) for problem in problems]]


@ui_errors
def on_predict_file(run: DemoRun, file: str | None, limit_mb: float = DATA_MB, lang: str = "en") -> tuple[str, str]:
    """A whole uploaded file -> (CSV in a fresh temp folder, for download; a one-line summary)."""
    if not file:
        raise StudioError.of("page.demo_no_file")
    check_data_upload(file, limit_mb, DATA_TYPES)
    out_dir = tempfile.mkdtemp(prefix="studio-demo-")  # never the workspace; Gradio serves it from here
    info = inference.predict_file(run.path, file, out_dir, max_rows=MAX_PREDICT_ROWS)
    acc = msg("ev.predicted_acc", lang, acc=info["accuracy"]) if info["accuracy"] is not None else ""
    return info["path"], msg("demo.predicted", lang, n=info["n"], ms=info["latency_ms_per_row"], acc=acc)


# ------------------------------------------------------------------ layout
def build_demo(run: DemoRun, lang: str | None = None, limit_mb: float = DATA_MB, auth: bool = False,
               store: Any = None) -> Any:
    """The gr.Blocks of the demo page for ``run``; nothing is launched. ``store``: the workspace's feedback
    database (studio/feedback/store.py), where 👍 / 👎 and the right answers go (None: the page says it records
    none)."""
    T = labeler(lang or "en")
    # every handler gets the language of the browser it answers (--lang, else the browser's own: handlers.py)
    answer = functools.partial(in_browser_lang, lang, lang or "en")
    title = "demo.title_labels" if run.task == "labels" else "demo.title_chat"
    with gr.Blocks(title=f"{run.name} · Fine-Tune Studio", analytics_enabled=False) as app:
        with gr.Row():
            Markdown(T(title), elem_id="demo-title")
            if auth:  # Gradio's own /logout route ends the login session
                gr.Button(T("app.logout"), link="/logout", size="sm", scale=0, elem_id="logout")
        # the version teammates see: the line's live run, read at each request (an owner's promotion or rollback
        # reaches the page without a restart); the examples and labels are the run's task, which a version keeps
        live = LiveDemoRun(run, store)
        header = Markdown(_header(run, lang or "en"), elem_id="demo-header")
        app.load(answer(lambda lang: _header(live.now(), lang)), None, header, api_visibility="private")
        if run.task == "labels":
            text = _labels_page(app, live, T, lang or "en", answer, limit_mb)
        else:
            text = _chat_page(live, T, answer)
        feedback_row(store, live, T, text, run.task, answer)
        least_sure_box(T, store, answer, lambda _lang, _value: live.now().path, limit_mb=limit_mb,
                       prefix="least_sure")
    app.studio_demo_run = run  # type: ignore[attr-defined]
    return app


def _header(run: DemoRun, lang: str) -> str:
    if run.task == "labels":
        return msg("demo.header", lang, run=run.name, model=run.model, method=run.method,
                   labels=", ".join(run.labels))
    return msg("demo.header_chat", lang, run=run.name, model=run.model, method=run.method, template=run.template)


def _labels_page(app: Any, run: DemoRun | LiveDemoRun, T: Any, lang: str, answer: Callable[[Callable], Callable],
                 limit_mb: float) -> Any:
    with gr.Row():
        text = gr.Textbox(label=T("demo.text"), lines=4, scale=3, elem_id="demo-text")
        with gr.Column(scale=2):
            go = gr.Button(T("demo.classify"), variant="primary", elem_id="demo-classify")
            scores = gr.Label(label=T("demo.scores"), num_top_classes=len(run.labels), elem_id="demo-scores")
    if run.examples:
        expected = gr.Textbox(label=T("demo.expected"), interactive=False, elem_id="demo-expected")
        examples = gr.Examples([[r.get("input") or r.get("instruction", ""), r.get("output", "")]
                                for r in run.examples], [text, expected], label=T("demo.examples"),
                               cache_examples=False, examples_per_page=EXAMPLES)
        # Dataset headers are sent as plain text (the browser does not translate them): the server's language
        examples.dataset.headers = [msg("demo.text", lang), msg("demo.expected", lang)]
        # ... and each page load re-sends them in its browser's
        app.load(answer(lambda lang: gr.update(headers=[msg("demo.text", lang), msg("demo.expected", lang)])),
                 None, examples.dataset, api_visibility="private")
    # the run is bound here, on the server; the browser sends only the text. One worker takes every request
    # queued meanwhile as one batch (up to BATCH): ten users at once cost about one scoring pass of ten rows
    def classify(lang: str, texts: list[Any]) -> list[list[Any]]:
        return on_classify_batch(run, texts, lang)

    def check(lang: str, text: Any) -> None:
        check_text(text, lang)

    classify, check = answer(classify), answer(check)
    batched = dict(batch=True, max_batch_size=BATCH, concurrency_limit=1)
    go.click(check, text, None, api_visibility="private").success(classify, text, scores, api_name="classify",
                                                                   **batched)
    text.submit(check, text, None, api_visibility="private").success(classify, text, scores,
                                                                     api_visibility="private", **batched)
    with gr.Accordion(T("demo.batch"), open=False):
        batch_file = gr.File(label=T("ev.batch_file"), type="filepath",  # any file: the check refuses in words
                             elem_id="demo-batch-file")
        predict = gr.Button(T("ev.predict"), elem_id="demo-predict")
        batch_out = gr.File(label=T("ev.csv"), interactive=False, elem_id="demo-csv")
        batch_info = Markdown(elem_id="demo-batch-info")
    def predict_file(lang: str, file: str | None) -> tuple[str, str]:
        return on_predict_file(run, file, limit_mb, lang)

    predict.click(answer(predict_file), batch_file, [batch_out, batch_info], api_name="predict_file")
    return text


def _chat_page(run: DemoRun | LiveDemoRun, T: Any, answer: Callable[[Callable], Callable]) -> Any:
    chat_d = generation_defaults(run.path)["chat"]
    chatbot = gr.Chatbot(height=420, label=T("ev.chat"), show_label=False, elem_id="demo-chat",
                         buttons=["copy", "copy_all"])
    with gr.Row(equal_height=True):
        message = gr.Textbox(label=T("ev.message"), lines=1, scale=6, elem_id="demo-message")
        send = gr.Button(T("ev.chat_send"), variant="primary", scale=1, elem_id="demo-send")
        stop = gr.Button(T("ev.stop"), variant="stop", scale=1, elem_id="demo-stop")
    clear = gr.Button(T("ev.clear"), size="sm")

    # gr.Request says whose generation Stop ends (this browser session's); the run is bound on the server
    def chat_handler(lang: str, text: str, history: list | None, request: gr.Request) -> Iterator[tuple[str, list]]:
        yield from on_chat(text, history, run.path, chat_d["max_new_tokens"], chat_d["temperature"],
                           chat_d["top_p"], lang, request)

    def stop_handler(lang: str, request: gr.Request) -> None:
        on_stop("chat", request)

    chat_handler, stop_handler = answer(chat_handler), answer(stop_handler)
    message.submit(chat_handler, [message, chatbot], [message, chatbot], api_name="chat")
    send.click(chat_handler, [message, chatbot], [message, chatbot], api_visibility="private")
    stop.click(stop_handler, None, None, api_name="stop_chat", queue=False)
    clear.click(answer(lambda lang: []), None, chatbot, api_name="clear_chat")
    return chatbot


# ------------------------------------------------------------------ the verb
def main(args: argparse.Namespace) -> int:
    """Check, load the model, serve until interrupted.

    Raises:
        StudioError: see ``server_flags.check_demo_flags``; a model that cannot be loaded.
    """
    started = time.perf_counter()
    run, auth = check_demo_flags(args)
    serving_environment(args.trusted_proxy)  # as the studio's: X-Forwarded-For only from a --trusted-proxy
    # built-in base models come from the per-user model cache the studio prepared them into (zoo.cache_dir)
    print(f"Loading the model of run '{run.path.name}'…", flush=True)  # type: ignore[attr-defined]
    info = describe_run(run.path)  # type: ignore[attr-defined]
    inference.get_model(info.path)  # once, here: every visitor shares this copy (inference's cache)
    store = FeedbackStore.in_workspace(Path(args.workspace).expanduser().resolve())
    app = build_demo(info, args.lang, args.max_upload_mb, auth=bool(auth), store=store)
    app.queue(default_concurrency_limit=4)
    app.launch(**launch_kwargs(args, make_i18n(), auth), prevent_thread_lock=True)
    port = getattr(app, "server_port", None) or args.port
    print(f"Demo of '{info.name}' ({info.task}) ready in {time.perf_counter() - started:.1f} s. Open it at:\n"
          + "\n".join(f"  {u}" for u in urls(args.host, port)), flush=True)
    if not auth and is_loopback(args.host):
        print("No login: only people on this machine can open it (use --host 0.0.0.0 --auth-file FILE to share it).",
              file=sys.stderr, flush=True)
    app.block_thread()
    return 0
