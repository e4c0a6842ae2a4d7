"""The model's last answer on each page session, kept on the server: what 👍 / 👎 / "the right answer" judge.

Why: the playground and the chat used to take "the model's answer" from the browser, so a caller could put any words
in the model's mouth and make them a DPO pair's ``rejected``. The demo's labels page recomputes its answer from the
text (the scores are cheap); a generated answer is not reproducible (sampling), so the handler that generated it
keeps it here, keyed by the page session that asked, and feedback is taken only on an answer kept here.

Bounded: at most ``MAX_SESSIONS`` sessions are remembered (the oldest forgotten first), one answer per session and
kind, each no longer than a feedback row may be.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

MAX_SESSIONS = 2000
_lock = threading.Lock()
_kept: "OrderedDict[tuple[str, str], Answer]" = OrderedDict()


@dataclass(frozen=True)
class Answer:
    """One answer of the model: the run that gave it, what it was asked, what it said."""
    run: str
    asked: tuple[str, ...]   # playground: (instruction, input); chat: (the last user message,)
    answer: str


def session_of(request: Any) -> str | None:
    """The page session a request comes from (Gradio's session hash); None for a direct call without one."""
    session = getattr(request, "session_hash", None)
    return session if isinstance(session, str) and session else None


def keep(request: Any, kind: str, run: Any, asked: tuple[str, ...], answer: str) -> None:
    """Remember ``answer`` as this session's last ``kind`` ("play" or "chat") answer of ``run``."""
    session = session_of(request)
    if session is None or not isinstance(answer, str):
        return
    with _lock:
        _kept[(session, kind)] = Answer(str(run), tuple(str(a) for a in asked), answer)
        _kept.move_to_end((session, kind))
        while len(_kept) > MAX_SESSIONS:
            _kept.popitem(last=False)


def last(request: Any, kind: str) -> Answer | None:
    """This session's last ``kind`` answer, None when it has none."""
    session = session_of(request)
    if session is None:
        return None
    with _lock:
        return _kept.get((session, kind))

