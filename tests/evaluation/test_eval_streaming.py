"""Streaming chat and playground: the Stop button ends the generation itself (not just the page's reading of it),
closing a stream stops its thread before the model's lock is released, and defaults fit the model."""
from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from studio.evaluation import gen_defaults, inference, streaming

LONG = 300  # tokens a full answer runs to (the random model never says EOS: checked below)


@pytest.fixture(scope="module")
def chatty(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random tiny Llama folder: greedy decoding runs to max_new_tokens without an end-of-answer."""
    from studio.models.loading import build_tiny_llama
    texts = [f"the review number {i} says the kettle is fine and the lamp is broken" for i in range(50)]
    return str(build_tiny_llama(tmp_path_factory.mktemp("m") / "chatty", texts, hidden=32, layers=1, heads=2,
                                vocab_size=300, seed=3))


def test_a_full_answer_runs_to_max_new_tokens(chatty: str) -> None:
    control = streaming.Control()
    pieces = list(inference.chat_stream(chatty, [], "hello", LONG, 0.0, 1.0, control=control))
    assert pieces and control.tokens == LONG and not control.stopped


def test_stop_ends_the_generation_after_the_first_tokens(chatty: str) -> None:
    control = streaming.Control()
    stream = inference.chat_stream(chatty, [], "hello", LONG, 0.0, 1.0, stop_key="s1:chat", control=control)
    first = next(stream)
    assert inference.stop_generation("s1:chat")
    rest = list(stream)
    assert control.stopped and control.tokens is not None and control.tokens < LONG // 3, control.tokens
    assert (rest or [first])[-1].startswith(first)
    assert not inference.stop_generation("s1:chat"), "a finished generation leaves nothing to stop"
    loaded = inference.get_model(chatty)
    assert loaded.lock.acquire(blocking=False)  # released: the next request is not kept waiting
    loaded.lock.release()


def test_closing_the_stream_stops_the_thread_before_the_lock_is_released(chatty: str) -> None:
    control = streaming.Control()
    stream = inference.chat_stream(chatty, [], "hello", LONG, 0.0, 1.0, control=control)
    next(stream)
    stream.close()  # what a cancelled request or a closed page does to the generator
    assert control.event.is_set() and control.tokens is not None and control.tokens < LONG // 3
    assert not [t for t in threading.enumerate() if t.daemon and t.is_alive() and "work" in t.name]


def test_stop_in_the_playground_skips_the_base_answer(chatty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = inference.get_model(chatty)
    monkeypatch.setattr(loaded, "base", (loaded.model, loaded.tokenizer))  # a plain folder names no base: itself
    asked: list[bool] = []
    real = inference._answer
    monkeypatch.setattr(inference, "_answer", lambda loaded, use_base, *a: asked.append(use_base) or real(
        loaded, use_base, *a))
    list(inference.playground(chatty, "hello", "", 8, 0.0, 1.0, compare_base=True))
    assert asked == [False, True]  # without Stop: the fine-tuned answer, then the base's
    asked.clear()
    stream = inference.playground(chatty, "hello", "", LONG, 0.0, 1.0, compare_base=True, stop_key="s2:play")
    next(stream)
    inference.stop_generation("s2:play")
    *_, (_, base) = list(stream)
    assert asked == [False] and base == ""


def test_ui_stop_button_stops_this_sessions_chat_only(chatty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.ui import evaluate_tab as tab
    started: list[streaming.Control] = []
    real = streaming.start
    monkeypatch.setattr(streaming, "start", lambda key, control=None: started.append(real(key, control)) or started[-1])
    me, other = SimpleNamespace(session_hash="me"), SimpleNamespace(session_hash="other")
    assert tab.on_stop("chat", other) is None  # nothing running: no error
    chat = tab.on_chat("hello", [], chatty, LONG, 0.0, 1.0, request=me)
    next(chat)  # the user's message and an empty reply are shown at once
    next(chat)  # the first tokens
    tab.on_stop("chat", other)  # another browser's Stop does not touch this chat
    tab.on_stop("play", me)     # nor does this browser's playground Stop
    assert not started[0].event.is_set()
    tab.on_stop("chat", me)
    *_, (_, history) = list(chat)
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert started[0].stopped and started[0].tokens is not None and started[0].tokens < LONG // 3


def test_defaults_follow_the_model(runs: dict, chatty: str, tmp_path: Path) -> None:
    smol = gen_defaults.generation_defaults(_fake_run(tmp_path / "smol", "smollm2-135m-instruct"))
    assert smol["chat"] == {"max_new_tokens": 256, "temperature": 0.2, "top_p": 0.9}
    assert gen_defaults.generation_defaults(_fake_run(tmp_path / "gemma", "gemma3-270m"))["chat"]["temperature"] == 0.7
    labels = gen_defaults.generation_defaults(str(runs["lora"]))  # a sentiment run answers with one label
    assert labels["play"] == gen_defaults.LABEL_PLAY
    assert gen_defaults.generation_defaults(chatty)["chat"] == gen_defaults.GENERIC_CHAT
    folder = Path(chatty)
    cfg = folder / "generation_config.json"
    saved = cfg.read_text() if cfg.exists() else None
    try:
        cfg.write_text('{"do_sample": true, "temperature": 0.6, "top_p": 0.8}')
        assert gen_defaults.generation_defaults(chatty)["chat"] == {"max_new_tokens": 256, "temperature": 0.6,
                                                                    "top_p": 0.8}
    finally:
        cfg.write_text(saved) if saved is not None else cfg.unlink()


def _fake_run(folder: Path, model: str) -> str:
    from studio.config.run_config import RunConfig
    folder.mkdir(parents=True)
    RunConfig(model_name_or_path=model, dataset="d.jsonl", output_dir=str(folder)).save(folder / "config.yaml")
    return str(folder)
