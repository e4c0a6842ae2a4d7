"""Streamed generation that a Stop button really stops.

``generate`` runs in a thread and hands tokens to a ``TextIteratorStreamer`` (transformers' own streaming); the
consumer yields the growing answer. Stopping has to reach the thread: a Gradio "cancel" only stops *reading* the
stream, while ``generate`` would keep a core (or the card) busy until max_new_tokens. So every streamed generation
gets a ``Control`` whose event a ``StoppingCriteria`` checks after each token: ``request_stop(key)`` (the Stop
button) or closing the stream (a cancelled request, a closed page) sets it and the generation ends at the next
token. No torch import at module level: the service layer imports this module cheaply.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

JOIN_S = 30.0  # how long a closed stream waits for its generation thread to notice the stop flag


@dataclass
class Control:
    """One generation's stop flag and what it did (tokens generated, whether it was stopped)."""
    event: threading.Event = field(default_factory=threading.Event)
    tokens: int | None = None
    stopped: bool = False

    def stop(self) -> None:
        self.event.set()


_active: dict[str, Control] = {}
_lock = threading.Lock()


def start(key: str | None, control: Control | None = None) -> Control:
    """``control`` (default: a fresh one), registered under ``key`` (e.g. browser session + 'chat') when given."""
    control = control or Control()
    if key:
        with _lock:
            _active[key] = control  # a new request of the same session replaces the finished one
    return control


def finish(key: str | None, control: Control) -> None:
    if key:
        with _lock:
            if _active.get(key) is control:
                del _active[key]


def request_stop(key: str | None) -> bool:
    """Stop the generation running under ``key``; False when none is running."""
    with _lock:
        control = _active.get(key or "")
    if control is None:
        return False
    control.stop()
    return True


def stopping_criteria(control: Control) -> Any:
    """A StoppingCriteriaList that ends ``generate`` once ``control`` is stopped (checked after every token)."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _Flag(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), control.event.is_set(), dtype=torch.bool,
                              device=input_ids.device)

    return StoppingCriteriaList([_Flag()])


def stream_text(run: Callable[[Any], Any], tokenizer: Any, cut: Callable[[str], str],
                control: Control) -> Iterator[str]:
    """Yield ``cut(answer so far)`` while ``run(streamer)`` (a ``generate`` call returning the new ids) works.

    Closing this iterator early stops the generation and waits for its thread, so the caller's model lock is
    never released while the model is still generating.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import TextIteratorStreamer
    streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, timeout=600.0)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            out = run(streamer)
            control.tokens = int(out.shape[-1])
            control.stopped = control.event.is_set()
        except BaseException as exc:  # surfaced in the consumer below, not lost in the thread
            errors.append(exc)
            streamer.end()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    text = ""
    finished = False
    try:
        for piece in streamer:
            text += piece
            yield cut(text)
        finished = True
    finally:
        if not finished:
            control.stop()
        thread.join(JOIN_S)
    if errors:
        raise errors[0]
