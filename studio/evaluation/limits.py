"""What one request to a model may cost, in one place: every inference service checks here before it reads.

A viewer's batch file with one 4 MB cell made the server try to allocate 17.6 TB (attention over a million
tokens) and keep ~8 GB; a 400 KB prompt once kept a core busy for 7 minutes. So each service entry (the
Evaluate tab's checks, playground, chat and batch prediction, the demo page, the CLI) passes through these
checks before the model is touched, whichever page or handler called it:

- a batch or check file: at most ``MAX_BATCH_MB`` and ``MAX_BATCH_ROWS`` rows; every reader refuses a cell over
  ``studio.data.limits.MAX_CELL_CHARS`` (the spreadsheet reader's limits, the same for every upload path);
- a prompt typed on the page: at most ``MAX_PROMPT_CHARS`` (refused: the person can shorten it);
- a row of a file: its texts are cut to ``MAX_PROMPT_CHARS`` characters *before* tokenizing, and its token ids
  to the model's context (``fit_ids``), so no row costs more than one full context;
- ``max_new_tokens`` between 1 and ``MAX_NEW_TOKENS``;
- a chat history: the last ``MAX_CHAT_TURNS`` messages and ``MAX_HISTORY_CHARS`` characters;
- a chat template's render: steps, characters and seconds (``studio.data.template_budget``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..data.limits import MAX_CELL_CHARS, TEMPLATE_MAX_CHARS, TEMPLATE_MAX_SECONDS, TEMPLATE_MAX_STEPS
from ..errors import StudioError

MAX_PROMPT_CHARS = 20_000      # instruction + input of one request, one chat message, one row's text
MAX_HISTORY_CHARS = 100_000    # chat history kept (oldest turns dropped first); the model's context is smaller
MAX_CHAT_TURNS = 200           # messages of chat history kept (oldest dropped first)
MAX_NEW_TOKENS = 4096
MAX_BATCH_ROWS = 5_000         # rows of one batch-prediction or check file (~4 min of a small model on a CPU)
MAX_BATCH_MB = 50.0            # bytes of one batch-prediction or check file, whatever the page's upload limit
DEFAULT_CONTEXT = 2048         # a model whose config names no context length

__all__ = ["MAX_BATCH_MB", "MAX_BATCH_ROWS", "MAX_CELL_CHARS", "MAX_CHAT_TURNS", "MAX_HISTORY_CHARS",
           "MAX_NEW_TOKENS", "MAX_PROMPT_CHARS", "TEMPLATE_MAX_CHARS", "TEMPLATE_MAX_SECONDS", "TEMPLATE_MAX_STEPS",
           "bound_history", "check_batch_file", "check_batch_rows", "check_new_tokens", "check_prompt",
           "check_text", "context_of", "cut", "fit_ids"]


# the error of a typed text over MAX_PROMPT_CHARS, by what it is
_TOO_LONG = {"prompt": "eval.prompt_too_long", "message": "eval.message_too_long", "text": "eval.text_too_long"}


def check_prompt(what: str, text: str) -> None:
    """Raises StudioError when a typed ``what`` (prompt, message or text) is over MAX_PROMPT_CHARS or is not text
    (a lone surrogate that a script can send in JSON: it cannot be tokenized, nor sent back in an answer)."""
    if len(text) > MAX_PROMPT_CHARS:
        code = _TOO_LONG[what]
        raise StudioError.of(code, n=len(text), limit=MAX_PROMPT_CHARS)
    check_text(what, text)


def check_text(what: str, text: str) -> None:
    """Raises StudioError (eval.<what>_not_unicode, the position) when ``text`` holds a character UTF-8 cannot
    encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StudioError.of(f"eval.{what}_not_unicode", pos=exc.start + 1) from None


def check_new_tokens(max_new_tokens: Any) -> int:
    """``max_new_tokens`` as an int in 1..MAX_NEW_TOKENS; raises StudioError otherwise."""
    try:
        n = int(max_new_tokens)
    except (TypeError, ValueError, OverflowError):
        n = 0
    if not 1 <= n <= MAX_NEW_TOKENS:
        raise StudioError.of("eval.max_new_tokens", limit=MAX_NEW_TOKENS, got=str(max_new_tokens)[:40])
    return n


def bound_history(history: Any) -> list[dict[str, Any]]:
    """The last MAX_CHAT_TURNS messages (dicts only), then the oldest dropped until under MAX_HISTORY_CHARS.
    Cheap: no message is tokenized or rendered before this."""
    items = [m for m in (history if isinstance(history, list) else [])[-MAX_CHAT_TURNS:] if isinstance(m, dict)]
    for m in items:  # an earlier turn is rendered into the prompt too
        if isinstance(m.get("content"), str):
            check_text("message", m["content"])
    sizes = [len(str(m.get("content", ""))[:MAX_HISTORY_CHARS + 1]) for m in items]
    total = sum(sizes)
    start = 0
    while start < len(items) and total > MAX_HISTORY_CHARS:
        total -= sizes[start]
        start += 1
    return items[start:]


def check_batch_file(path: str | Path) -> None:
    """Raises StudioError when a batch or check file is over MAX_BATCH_MB (before a byte of it is parsed)."""
    p = Path(path)
    size = p.stat().st_size if p.is_file() else 0
    if size > MAX_BATCH_MB * 2**20:
        raise StudioError.of("eval.file_too_large", file=p.name, mb=size / 2**20, limit=MAX_BATCH_MB)


def check_batch_rows(n: int, limit: int | None = None) -> None:
    """Raises StudioError when a file to predict or check has more than ``limit`` (MAX_BATCH_ROWS) rows."""
    page = bool(limit) and limit < MAX_BATCH_ROWS  # a page's own smaller limit (the shared demo page)
    limit = min(limit or MAX_BATCH_ROWS, MAX_BATCH_ROWS)
    if n > limit:
        code = "eval.too_many_rows_page" if page else "eval.too_many_rows"  # this page's limit, or the limit
        raise StudioError.of(code, n=n, limit=limit)


def cut(text: Any, limit: int = MAX_PROMPT_CHARS) -> str:
    """A row's text cut to ``limit`` characters before it is templated or tokenized."""
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit]


def context_of(model: Any) -> int:
    """The model's context length in tokens (DEFAULT_CONTEXT when its config names none)."""
    config = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_CONTEXT


def fit_ids(ids: Sequence[int], limit: int) -> list[int]:
    """At most ``limit`` token ids: the middle is dropped, so the prompt's start (BOS, system, instruction) and its
    end (the template's answer cue, which the answer follows) both stay. Why not the tokenizer's truncation: it
    cuts the end, and a prompt without its answer cue gets a wrong answer, not a shorter one."""
    limit = max(int(limit), 1)
    if len(ids) <= limit:
        return list(ids)
    head = min(64, limit // 4)
    return list(ids[:head]) + list(ids[len(ids) - (limit - head):])
