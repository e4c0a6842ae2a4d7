"""👍 / 👎 and "the right answer" under an answer: the demo page's labels and chat pages.

Anyone the page lets in may give feedback (viewers too; on a loopback demo without logins it is recorded as
"local", each visitor counted by its page session); a login may withdraw its own last feedback. What the browser
sends is only what a person typed or pressed: the text, the verdict, the right answer. The run is bound on the
server when the page is built; on a labels page the model's answer and scores are computed again on the server
from the text, and a generated answer (chat, playground) is the one the server kept when it generated it
(app/answers.py), so a caller cannot put words in the model's mouth; a labels run takes only its labels as a
correction (app/feedback_intake.py). Replies are plain text in a Textbox, never Markdown/HTML, since they can quote
what someone typed.
"""
from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import gradio as gr

from ..errors import StudioError
from ..evaluation import inference
from ..evaluation.limits import check_text
from ..feedback.store import LIMITS, FeedbackStore
from ..app import answers
from ..app.context import AppContext
from ..app.feedback_intake import as_correction, last_exchange, record_generated, run_labels
from .common import ui_errors
from .handlers import browser_user, for_each_browser, in_browser_lang
from .i18n import msg


# the demo page's default: each browser's own language, English when it asks for none (the page's --lang: demo.py
# passes its own in_browser_lang)
EACH_BROWSER = functools.partial(in_browser_lang, None, "en")


def _off(store: FeedbackStore | None) -> FeedbackStore:
    if store is None:
        raise StudioError.of("feedback.off")
    return store


@ui_errors
def on_label_feedback(store: FeedbackStore | None, run: Any, text: Any, verdict: str, correction: Any,
                      request: gr.Request, lang: str = "en") -> tuple[str, int | None]:
    """A labels page's feedback on ``text``: the model's answer and scores come from the server, never the
    browser; ``correction`` must be one of the run's labels. Returns (the reply in ``lang``, the new row's id)."""
    store = _off(store)
    if not isinstance(text, str) or not text.strip():
        raise StudioError.of("feedback.no_answer")
    if len(text) > LIMITS["input"]:
        raise StudioError.of("feedback.text_too_long", n=len(text), limit=LIMITS["input"])
    check_text("text", text)
    fix = as_correction(list(run.labels), correction)
    (scores,) = inference.label_probabilities(run.path, [text], run.labels, run.like)
    answer = max(scores, key=scores.get) if scores else ""
    if fix is not None:
        verdict = "up" if fix == answer else "down"
    fid = store.add(run=run.name, login=browser_user(request), input=text, answer=answer, verdict=verdict,
                    correction=fix if verdict == "down" else None, scores={k: round(float(v), 4)
                                                                           for k, v in scores.items()},
                    visitor=answers.session_of(request))
    return msg("fb.thanks_fix" if fix else f"fb.thanks_{verdict}", lang, id=fid), fid


@ui_errors
def on_chat_feedback(store: FeedbackStore | None, run: Any, history: Any, verdict: str, correction: Any,
                     request: gr.Request, source: str = "demo", lang: str = "en") -> tuple[str, int | None]:
    """A chat page's feedback on its last answer (the last user turn and the reply after it, as the server kept
    them: app/answers.py); the reply in ``lang``."""
    store = _off(store)
    asked, shown = last_exchange(history)
    fid, fixed = record_generated(store, kind="chat", run_name=run.name, run_key=run.path, asked=(asked,),
                                  shown=shown, verdict=verdict, correction=correction,
                                  labels=list(getattr(run, "labels", None) or []), login=browser_user(request),
                                  request=request, source=source)
    return msg("fb.thanks_fix" if fixed else f"fb.thanks_{verdict}", lang, id=fid), fid


@ui_errors
def on_withdraw(store: FeedbackStore | None, last_id: Any, request: gr.Request, lang: str = "en") -> tuple[str, None]:
    """Withdraw this session's last feedback; the store checks it is this login's own row."""
    store = _off(store)
    if not isinstance(last_id, int):
        return msg("fb.nothing", lang), None
    store.withdraw(last_id, browser_user(request))
    return msg("fb.withdrawn", lang, id=last_id), None


def feedback_row(store: FeedbackStore | None, run: Any, T: Any, source: gr.components.Component,
                 kind: str, answer: Callable[[Callable], Callable] = EACH_BROWSER) -> None:
    """The row under an answer: 👍, 👎, the right answer (the run's labels, or a box to type one), withdraw.

    ``source`` is the component the feedback is about: the text box of a labels page, the Chatbot of a chat page.
    ``answer`` makes a handler ``fn(lang, *inputs)`` the page's handler of ``*inputs``: the demo page's own
    ``in_browser_lang`` with its --lang, so the replies come in the language of the browser that pressed.
    """
    handler = on_label_feedback if kind == "labels" else on_chat_feedback
    last = gr.State(None)  # this session's last feedback id (server-side: withdraw needs no id from the page)
    with gr.Group(elem_id="feedback"):
        gr.Markdown(T("fb.title"))
        with gr.Row():
            up = gr.Button(T("fb.up"), size="sm", elem_id="fb-up")
            down = gr.Button(T("fb.down"), size="sm", elem_id="fb-down")
            if kind == "labels":
                right = gr.Dropdown(choices=list(run.labels), value=None, label=T("fb.right_label"),
                                    elem_id="fb-right", scale=2)
            else:
                right = gr.Textbox(label=T("fb.right_text"), lines=2, max_length=LIMITS["correction"],
                                   elem_id="fb-right", scale=3)
            send = gr.Button(T("fb.send"), size="sm", elem_id="fb-send")
        with gr.Row():
            reply = gr.Textbox(label=T("fb.reply"), show_label=False, interactive=False, elem_id="fb-reply", scale=4)
            withdraw = gr.Button(T("fb.withdraw"), size="sm", elem_id="fb-withdraw", scale=1)
    for button, verdict, name in ((up, "up", "feedback_up"), (down, "down", "feedback_down")):
        fn = functools.partial(handler, store, run, verdict=verdict, correction=None)
        button.click(_wrap(fn, answer), source, [reply, last], api_name=name, concurrency_limit=4)
    send.click(_wrap(functools.partial(handler, store, run, verdict="down"), answer), [source, right], [reply, last],
               api_name="feedback_right_answer", concurrency_limit=4)

    def withdraw_last(lang: str, last_id: Any, request: gr.Request) -> tuple[str, None]:  # the login: the request's
        return on_withdraw(store, last_id, request, lang)
    withdraw.click(answer(withdraw_last), last, [reply, last], api_name="feedback_withdraw")


def _wrap(fn: Any, answer: Callable[[Callable], Callable]) -> Any:
    """Gradio reads a handler's signature for its inputs and gr.Request: give the partial one with only the page's
    inputs (and the browser's language first, which ``answer`` fills)."""
    if "correction" in getattr(fn, "keywords", {}):
        def one(lang: str, value: Any, request: gr.Request) -> tuple[str, int | None]:
            return fn(value, request=request, lang=lang)
        return answer(one)

    def two(lang: str, value: Any, correction: Any, request: gr.Request) -> tuple[str, int | None]:
        return fn(value, correction=correction, request=request, lang=lang)
    return answer(two)


# ------------------------------------------------------------------ the Evaluate tab's playground and chat
def _finished_run_name(runs_root: Any, run_v: Any) -> str:
    """The picked run's folder name, if it is one of the finished runs the server lists (the dropdown's value is
    compared with that list, never opened as a path)."""
    listed = {path: Path(path).name for _, path in inference.finished_runs(runs_root)}
    if not isinstance(run_v, str) or run_v not in listed:
        raise StudioError.of("feedback.no_run")
    return listed[run_v]


@ui_errors
def on_playground_feedback(store: FeedbackStore, runs_root: Any, run_v: Any, prompt: Any, input_text: Any,
                           answer: Any, verdict: str, correction: Any, request: gr.Request,
                           lang: str = "en") -> tuple[str, int]:
    """The playground's last answer judged (the answer this session got, kept on the server): the typed input (else
    the instruction) is the row's input; the reply in ``lang``."""
    name = _finished_run_name(runs_root, run_v)
    asked = (prompt if isinstance(prompt, str) else "", input_text if isinstance(input_text, str) else "")
    fid, fixed = record_generated(store, kind="play", run_name=name, run_key=run_v, asked=asked,
                                  shown=answer if isinstance(answer, str) else None, verdict=verdict,
                                  correction=correction, labels=run_labels(Path(runs_root) / name),
                                  login=browser_user(request), request=request, source="playground")
    return msg("fb.thanks_fix" if fixed else f"fb.thanks_{verdict}", lang, id=fid), fid


def eval_feedback_row(store: FeedbackStore, runs_root: Any, T: Any, run: Any, inputs: list[Any], kind: str,
                      ctx: AppContext) -> None:
    """👍 / 👎 / the right answer under the Evaluate tab's playground (``inputs``: prompt, input, tuned answer) or
    chat (``inputs``: the Chatbot). Each reply is in the language of the browser that pressed (``for_each_browser``
    with ``ctx``)."""
    last = gr.State(None)
    with gr.Row():
        up = gr.Button(T("fb.up"), size="sm")
        down = gr.Button(T("fb.down"), size="sm")
        right = gr.Textbox(label=T("fb.right_text"), lines=1, max_length=LIMITS["correction"], scale=3)
        send = gr.Button(T("fb.send"), size="sm")
        reply = gr.Textbox(label=T("fb.reply"), show_label=False, interactive=False, scale=2)

    def record(verdict: str, typed: bool) -> Any:
        """The handler for one button; Gradio reads its signature, so each shape is written out."""
        if kind == "playground":
            if typed:
                def play_fix(ctx: AppContext, run_v: Any, p: Any, i: Any, a: Any, c: Any,
                             request: gr.Request) -> tuple[str, int]:
                    return on_playground_feedback(store, runs_root, run_v, p, i, a, verdict, c, request, ctx.lang)
                return play_fix

            def play(ctx: AppContext, run_v: Any, p: Any, i: Any, a: Any, request: gr.Request) -> tuple[str, int]:
                return on_playground_feedback(store, runs_root, run_v, p, i, a, verdict, None, request, ctx.lang)
            return play

        def chat_fix(ctx: AppContext, run_v: Any, history: Any, c: Any, request: gr.Request) -> tuple[str, int | None]:
            name = _finished_run_name(runs_root, run_v)
            picked = SimpleNamespace(name=name, path=run_v, labels=run_labels(Path(runs_root) / name))
            return on_chat_feedback(store, picked, history, verdict, c, request, source="chat", lang=ctx.lang)
        if typed:
            return chat_fix

        def chat(ctx: AppContext, run_v: Any, history: Any, request: gr.Request) -> tuple[str, int | None]:
            return chat_fix(ctx, run_v, history, None, request)
        return chat

    prefix = f"{kind}_feedback"
    for button, verdict in ((up, "up"), (down, "down")):
        button.click(for_each_browser(ctx, record(verdict, False)), [run, *inputs], [reply, last],
                     api_name=f"{prefix}_{verdict}")
    send.click(for_each_browser(ctx, record("down", True)), [run, *inputs, right], [reply, last],
               api_name=f"{prefix}_right_answer")
