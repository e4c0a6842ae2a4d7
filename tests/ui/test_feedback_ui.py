"""The demo page's feedback row, through its handlers as wired (no server): what reaches the database, who it is
recorded as, that the model's answer comes from the server, and that a login withdraws only its own."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from studio.feedback.store import FeedbackStore

RUN = "reviews-lora"


@pytest.fixture(scope="module")
def ws(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("fbui") / "ws"
    shutil.copytree(runs["lora"], ws / "runs" / RUN)
    return ws


def _page(ws: Path, task: str = "labels") -> tuple[dict, FeedbackStore, object]:
    from studio.app.demo_run import describe_run
    from studio.ui.demo import build_demo
    info = describe_run(ws / "runs" / RUN)
    if task != info.task:  # a chat run: no labels
        info = replace(info, task=task, labels=[] if task == "chat" else info.labels)
    store = FeedbackStore.in_workspace(ws)
    app = build_demo(info, "en", store=store)
    return {fn.api_name: fn.fn for fn in app.fns.values() if fn.api_name}, store, info


def _req(user: str | None) -> SimpleNamespace:
    return SimpleNamespace(session_hash="s-" + str(user), headers={}, username=user)


def _said(request: SimpleNamespace, kind: str, run: str, asked: tuple[str, ...], answer: str) -> None:
    """What the model answered this session, as the generating handler keeps it on the server (app/answers.py)."""
    from studio.app import answers
    answers.keep(request, kind, run, asked, answer)


def test_labels_page_records_verdicts_and_the_right_label(ws: Path) -> None:
    from studio.evaluation import inference
    fns, store, info = _page(ws)
    assert {"feedback_up", "feedback_down", "feedback_right_answer", "feedback_withdraw"} <= set(fns)
    text = "The kettle broke in a week, awful."
    (scores,) = inference.label_probabilities(info.path, [text], info.labels, info.like)  # type: ignore[attr-defined]
    model_says = max(scores, key=scores.get)
    other = next(lab for lab in info.labels if lab != model_says)  # type: ignore[attr-defined]
    reply, fid = fns["feedback_right_answer"](text, other, _req("bob"))  # a viewer may give feedback
    row = store.get(fid)
    assert row is not None and (row.login, row.input, row.answer, row.verdict, row.correction) == (
        "bob", text, model_says, "down", other)
    assert row.scores and set(row.scores) == set(info.labels)  # type: ignore[attr-defined]
    assert f"#{fid}" in reply
    _, up = fns["feedback_up"](text, _req(None))  # a loopback demo without logins
    assert store.get(up).login == "local" and store.get(up).verdict == "up"  # type: ignore[union-attr]
    import gradio as gr
    with pytest.raises(gr.Error, match="not one of this run's labels"):
        fns["feedback_right_answer"](text, "<img src=x onerror=alert(1)>", _req("bob"))


def test_a_login_withdraws_its_own_feedback_only(ws: Path) -> None:
    fns, store, _ = _page(ws)
    _, mine = fns["feedback_down"]("Lovely shoes.", _req("ann"))
    import gradio as gr
    with pytest.raises(gr.Error):
        fns["feedback_withdraw"](mine, _req("mallory"))
    assert store.get(mine) is not None
    reply, last = fns["feedback_withdraw"](mine, _req("ann"))
    assert store.get(mine) is None and last is None and "withdrawn" in reply


def test_chat_page_records_the_last_exchange_and_a_typed_answer(ws: Path) -> None:
    fns, store, info = _page(ws, "chat")
    _said(_req("ann"), "chat", info.path, ("Write a line about rain",), "Rain is dry.")  # type: ignore[attr-defined]
    history = [{"role": "user", "content": "Write a line about rain"},
               {"role": "assistant", "content": [{"type": "text", "text": "Rain is dry."}]}]
    _, fid = fns["feedback_right_answer"](json.loads(json.dumps(history)), "Rain taps the roof.", _req("ann"))
    row = store.get(fid)
    assert row is not None and (row.input, row.answer, row.correction, row.verdict) == (
        "Write a line about rain", "Rain is dry.", "Rain taps the roof.", "down")
    import gradio as gr
    with pytest.raises(gr.Error, match="no answer"):
        fns["feedback_up"]([], _req("ann"))


def test_owner_panel_lists_reviews_makes_and_exports(tmp_path: Path) -> None:
    import gradio as gr
    from studio.app.context import AppContext
    from studio.data.dataset import load_rows
    from studio.ui.feedback_tab import list_feedback, on_export, on_make, on_review
    ctx = AppContext.create(tmp_path / "ws")
    store = FeedbackStore.in_workspace(ctx.workspace)
    a = store.add(run="r1", login="ann", input="<script>alert(1)</script> late", answer="neutral", verdict="down",
                  correction="negative")
    store.add(run="r1", login="bob", input="fine", answer="positive", verdict="up")
    table, counts, clash, _ = list_feedback(ctx, "r1", "", "", "")
    assert [row[0] for row in table["value"]] == [a, a + 1] and counts["login"] == {"ann": 1, "bob": 1}
    assert table["value"][0][5] == "<script>alert(1)</script> late"  # plain text in a str table, never rendered
    assert list_feedback(ctx, "../../etc", "", "", "")[1] == {}  # a name the database does not list shows nothing
    assert "1 row" in on_review(ctx, str(a), "accepted")
    with pytest.raises(gr.Error, match="is not a list of row ids"):  # the coded error, not a bug's message
        on_review(ctx, "1; DROP TABLE feedback", "accepted")
    with pytest.raises(gr.Error):
        on_make(ctx, "/etc", "fb")  # a run is named only as the database lists it
    said = on_make(ctx, "r1", "fb")
    assert "fb (1)" in said
    assert load_rows("fb", str(ctx.data_root))[0]["output"] == "negative"
    path = Path(on_export(ctx, "r1", ".csv"))
    assert not str(path).startswith(str(ctx.workspace)) and path.read_text().count("\n") == 3


def test_the_studio_has_the_feedback_tab_and_its_owner_actions_are_marked(tmp_path: Path) -> None:
    from studio.app.roles import is_owner_only
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    app = build_app(AppContext.create(tmp_path / "ws"))
    named = {fn.api_name: fn.fn for fn in app.fns.values() if fn.api_name}
    owner = {"review_accept", "review_accept_new", "review_drop", "review_edit", "feedback_make_dataset", "feedback_export_csv",
             "feedback_export_jsonl"}
    assert owner <= set(named) and all(is_owner_only(named[n]) for n in owner)
    assert not is_owner_only(named["feedback_runs"])


def test_evaluate_playground_and_chat_feedback(ws: Path) -> None:
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    ctx = AppContext.create(ws)
    app = build_app(ctx)
    fns = {fn.api_name: fn.fn for fn in app.fns.values() if fn.api_name}
    run_v = str((ws / "runs" / RUN).resolve())
    _said(_req("carol"), "play", run_v, ("Classify", "nice bag"), "negative")
    _said(_req("carol"), "chat", run_v, ("hi",), "hello")
    reply, fid = fns["playground_feedback_right_answer"](run_v, "Classify", "nice bag", "negative", " Positive ",
                                                          _req("carol"))  # the run's spelling of the label is kept
    store = FeedbackStore.in_workspace(ws)
    row = store.get(fid)
    assert row is not None and (row.run, row.login, row.input, row.answer, row.correction, row.source) == (
        RUN, "carol", "nice bag", "negative", "positive", "playground")
    _, up = fns["chat_feedback_up"](run_v, [{"role": "user", "content": "hi"},
                                            {"role": "assistant", "content": "hello"}], _req("carol"))
    assert store.get(up).source == "chat" and store.get(up).verdict == "up"  # type: ignore[union-attr]
    with pytest.raises(gr.Error):  # the run is one the server lists, never a path the browser names
        fns["playground_feedback_up"]("/etc", "a", "b", "c", _req("carol"))
    with pytest.raises(gr.Error, match="not one of this run's labels"):  # a labels run takes its labels only
        fns["playground_feedback_right_answer"](run_v, "Classify", "nice bag", "negative", "meh", _req("carol"))


def test_accept_all_new_accepts_only_the_picked_runs_new_rows_that_match_the_filters(tmp_path: Path) -> None:
    """One click for the common case (every new correction of a run is right): new rows of the picked run that
    match the filters become accepted; dropped rows, other runs and rows filtered out are left as they were."""
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.feedback_tab import on_accept_new
    ctx = AppContext.create(tmp_path / "ws")
    store = FeedbackStore.in_workspace(ctx.workspace)
    a = store.add(run="r1", login="ann", input="late", answer="neutral", verdict="down", correction="negative")
    b = store.add(run="r1", login="bob", input="fine", answer="positive", verdict="up")
    c = store.add(run="r1", login="ann", input="meh", answer="positive", verdict="down", correction="neutral")
    d = store.add(run="r2", login="ann", input="ok", answer="negative", verdict="down", correction="positive")
    store.review(c, reviewer="owner", status="dropped")
    assert "1 row" in on_accept_new(ctx, "r1", "", "ann", "")  # the login filter leaves bob's row new
    assert {r.id: r.status for r in store.iter_rows()} == {a: "accepted", b: "new", c: "dropped", d: "new"}
    assert "1 row" in on_accept_new(ctx, "r1", "", "", "")
    assert list(store.iter_rows(run="r1", status="new")) == [] and next(store.iter_rows(run="r2")).status == "new"
    with pytest.raises(gr.Error):
        on_accept_new(ctx, "../../etc", "", "", "")  # a run is named only as the database lists it


def _zh(user: str | None) -> SimpleNamespace:
    """A request from a browser whose page is switched to Chinese."""
    return SimpleNamespace(session_hash="s-" + str(user), headers={"cookie": "studio_lang=zh"}, username=user)


def test_every_feedback_reply_is_in_the_language_of_the_browser_that_pressed(ws: Path) -> None:
    """One page serves browsers in either language: the Evaluate tab's rows, the Feedback tab and the demo page
    answer each in its own, whatever the page was built in."""
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    ctx = AppContext.create(ws, lang="en")
    fns = {fn.api_name: fn.fn for fn in build_app(ctx).fns.values() if fn.api_name}
    run_v = str((ws / "runs" / RUN).resolve())
    _said(_zh("carol"), "play", run_v, ("Classify", "nice bag"), "positive")
    _said(_zh("carol"), "chat", run_v, ("hi",), "hello")
    reply, fid = fns["playground_feedback_up"](run_v, "Classify", "nice bag", "positive", _zh("carol"))
    assert reply == f"谢谢：已记为正确（#{fid}）"
    reply, _ = fns["chat_feedback_up"](run_v, [{"role": "user", "content": "hi"},
                                                {"role": "assistant", "content": "hello"}], _zh("carol"))
    assert reply.startswith("谢谢")
    assert fns["review_accept"](str(fid), _zh("olga")) == "1 行已标记为已接受"  # the status in its words too (issue 52)
    assert FeedbackStore.in_workspace(ws).get(fid).reviewer == "olga"  # type: ignore[union-attr]  # who asked
    assert fns["review_accept"](str(fid), _req("olga")) == "1 row(s) marked accepted"  # the next browser: its own
    demo, store, _ = _page(ws)
    reply, mine = demo["feedback_up"]("Lovely shoes.", _zh("ann"))
    assert reply == f"谢谢：已记为正确（#{mine}）"
    assert demo["feedback_withdraw"](mine, _zh("ann"))[0] == f"你的反馈 #{mine} 已撤回"


def _last(gen: object) -> object:
    out = None
    for out in gen:  # type: ignore[attr-defined]
        pass
    return out


def test_the_models_answer_is_the_one_the_server_kept_not_the_browsers(ws: Path) -> None:
    """The playground and the chat took "the model's answer" from the browser: a forged answer became a DPO
    ``rejected``. Feedback now judges the answer this page session got, kept by the handler that generated it."""
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    fns = {fn.api_name: fn.fn for fn in build_app(AppContext.create(ws)).fns.values() if fn.api_name}
    store = FeedbackStore.in_workspace(ws)
    run_v = str((ws / "runs" / RUN).resolve())
    me = SimpleNamespace(session_hash="s-forger", headers={}, username="mallory")
    with pytest.raises(gr.Error, match="no answer"):  # nothing generated on this page yet
        fns["playground_feedback_down"](run_v, "Classify", "nice bag", "I am the model, trust me", me)
    tuned, _ = _last(fns["on_generate"](run_v, "Classify", "nice bag", 4, 0.0, 1.0, False, False, me))
    with pytest.raises(gr.Error, match="not the one the model gave"):
        fns["playground_feedback_down"](run_v, "Classify", "nice bag", "I am the model, trust me", me)
    with pytest.raises(gr.Error, match="not the one the model gave"):  # nor for another question
        fns["playground_feedback_down"](run_v, "Classify", "other bag", tuned, me)
    _, fid = fns["playground_feedback_down"](run_v, "Classify", "nice bag", tuned, me)
    assert store.get(fid).answer == tuned  # type: ignore[union-attr]
    _, history = _last(fns["on_chat"]("hi there", [], run_v, 4, 0.0, 1.0, me))
    forged = [*history[:-1], {"role": "assistant", "content": "something the model never said"}]
    with pytest.raises(gr.Error, match="not the one the model gave"):
        fns["chat_feedback_down"](run_v, forged, me)
    _, fid = fns["chat_feedback_down"](run_v, history, me)
    assert store.get(fid).answer == history[-1]["content"].split("\n\n")[0]  # type: ignore[union-attr]  # its label
    with pytest.raises(gr.Error, match="not one of this run's labels"):  # a labels run, through the chat too
        fns["chat_feedback_right_answer"](run_v, history, "a free-text answer", me)


def test_a_text_that_is_not_text_is_refused_plainly_on_every_page(ws: Path) -> None:
    """A lone surrogate (a script can send one in JSON) was an internal error on the demo page, anonymous or not."""
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    fns, store, _ = _page(ws)
    bad = "great \ud800 shoes"
    for call in (lambda: fns["feedback_up"](bad, _req(None)),
                 lambda: fns["feedback_right_answer"]("fine", "neg\udfffative", _req(None))):
        with pytest.raises(gr.Error) as err:
            call()
        message = str(err.value.message)
        message.encode("utf-8")  # it can be sent back
        assert "not text" in message and "inside the studio" not in message, message
    (scores,) = fns["classify"](["good shoes", bad, "bad shoes"])
    assert isinstance(scores[0], dict) and isinstance(scores[2], dict) and "not text" in scores[1]
    studio = {fn.api_name: fn.fn for fn in build_app(AppContext.create(ws)).fns.values() if fn.api_name}
    run_v = str((ws / "runs" / RUN).resolve())
    with pytest.raises(gr.Error, match="not text"):
        _last(studio["on_chat"]("hi \ud83d", [], run_v, 4, 0.0, 1.0, _req("carol")))
    with pytest.raises(gr.Error, match="not text"):
        _last(studio["on_generate"](run_v, "Classify \udc00", "", 4, 0.0, 1.0, False, False, _req("carol")))


def test_a_chat_answer_judged_after_the_page_showed_it(ws: Path) -> None:
    """The Chatbot strips the spacing around what it shows: the answer sent back is the model's all the same."""
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    fns = {fn.api_name: fn.fn for fn in build_app(AppContext.create(ws)).fns.values() if fn.api_name}
    run_v = str((ws / "runs" / RUN).resolve())
    me = _req("dora")
    _, history = _last(fns["on_chat"]("  hello there \n", [], run_v, 6, 0.0, 1.0, me))
    shown = gr.Chatbot().preprocess(gr.Chatbot().postprocess(history))  # the round trip through the browser
    _, fid = fns["chat_feedback_up"](run_v, json.loads(json.dumps(shown, default=lambda o: o.__dict__)), me)
    row = FeedbackStore.in_workspace(ws).get(fid)
    # a labels run's chat shows its label, then the scores: the label is the answer judged
    assert row is not None and row.answer == history[-1]["content"].split("\n\n")[0] and row.input == "  hello there \n"
