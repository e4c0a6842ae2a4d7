"""The "least sure" box: upload texts without labels, get the rows the run is least sure about, and confirm or
correct them one by one (viewers too: it only records feedback). On the demo page and the Evaluate tab; the work is
studio/app/least_sure.py. The queue stays on the server (gr.State): the browser sends a file, a number and a
label, never a text or an answer to record."""
from __future__ import annotations

from typing import Any, Callable

import gradio as gr

from ..app import least_sure
from ..app.uploads import DATA_MB
from ..errors import StudioError
from ..feedback.store import FeedbackStore
from .common import info, ui_errors
from .inputs import Values, named
from .handlers import browser_user
from .i18n import msg
from .text import Markdown



def _lang(who: Any) -> str:
    """A demo handler gets its browser's language, a studio handler its ``ctx`` (which holds it)."""
    return who if isinstance(who, str) else getattr(who, "lang", "en")


def _show(queue: Any, lang: str) -> tuple[Any, ...]:
    """(queue, text, scores, progress, correction choices) for the queue's current item."""
    item = least_sure.current(queue)
    if item is None:
        done = msg("ls.done", lang, n=len(queue["items"])) if isinstance(queue, dict) and queue.get("items") else ""
        return queue, "", None, done, gr.update(choices=[], value=None)
    scores = item.get("scores") or {item["answer"]: 1.0}
    return (queue, item["text"], scores,
            msg("ls.progress", lang, i=queue["at"] + 1, n=len(queue["items"]), sure=item["sureness"]),
            gr.update(choices=queue["labels"], value=None))


def least_sure_box(T: Any, store: FeedbackStore | None, wrap: Callable[[Callable], Callable],
                   run_path: Callable[[Any, Any], str], run_input: Any = None, limit_mb: float = DATA_MB,
                   prefix: str = "least_sure") -> dict[str, Any]:
    """Draw the box and wire it. ``wrap`` makes ``fn(who, ...)`` a handler (the demo's ``in_browser_lang``,
    the studio's ``for_each_browser``); ``run_path(who, run_value)`` is the run that answers (the demo: its live
    version; the Evaluate tab: the picked run, checked against the finished runs); ``run_input`` the component
    whose value names it (None on the demo page). ``prefix``: the endpoints' names (PREFIX_find, _right, _correct,
    _skip) and, with dashes, the elements' ids."""
    eid = prefix.replace("_", "-")
    with gr.Accordion(T("ls.title"), open=False, elem_id=f"{eid}-box"):
        with gr.Row():
            file = gr.File(label=T("ls.file"), type="filepath", elem_id=f"{eid}-file", scale=3)
            with gr.Column(scale=1):
                n = gr.Number(value=least_sure.QUEUE, precision=0, minimum=1, maximum=least_sure.MAX_QUEUE,
                              label=T("ls.n"), elem_id=f"{eid}-n")
                find = gr.Button(T("ls.find"), variant="primary", elem_id=f"{eid}-find")
        progress = Markdown(elem_id=f"{eid}-progress")
        with gr.Row():
            text = gr.Textbox(label=T("ls.text"), interactive=False, lines=3, scale=3, elem_id=f"{eid}-text")
            scores = gr.Label(label=T("ls.answer"), scale=2, elem_id=f"{eid}-scores")
        with gr.Row():
            right = gr.Button(T("ls.right"), size="sm", elem_id=f"{eid}-right")
            fix = gr.Dropdown(choices=[], value=None, allow_custom_value=True, label=T("ls.correct"), scale=2,
                              elem_id=f"{eid}-fix")
            send = gr.Button(T("ls.send_fix"), size="sm", elem_id=f"{eid}-send")
            skip = gr.Button(T("ls.skip"), size="sm", elem_id=f"{eid}-skip")
    queue = gr.State(None)
    shown = [queue, text, scores, progress, fix]

    @ui_errors
    def build(who: Any, v: Values) -> tuple[Any, ...]:
        q = least_sure.build_queue(run_path(who, v.get("run")), v.file,
                                   least_sure.QUEUE if v.n in (None, "") else v.n, limit_mb)
        info(msg("ls.ready", _lang(who), n=len(q["items"]), pool=q["pool"]), _lang(who))
        return _show(q, _lang(who))

    def step(verdict: str) -> Callable:
        @ui_errors
        def go(who: Any, q: Any, label: Any, request: gr.Request) -> tuple[Any, ...]:
            if store is None:
                raise StudioError.of("feedback.off")
            q, _ = least_sure.answer(q, store, browser_user(request), verdict, label if verdict == "down" else None)
            return _show(q, _lang(who))
        return go

    fn, inputs = named(build, {**({"run": run_input} if run_input is not None else {}), "file": file, "n": n})
    find.click(wrap(fn), inputs, shown, api_name=f"{prefix}_find")
    right.click(wrap(step("up")), [queue, fix], shown, api_name=f"{prefix}_right")
    send.click(wrap(step("down")), [queue, fix], shown, api_name=f"{prefix}_correct")
    skip.click(wrap(step("skip")), [queue, fix], shown, api_name=f"{prefix}_skip")
    return {"file": file, "find": find, "text": text, "scores": scores, "queue": queue}
