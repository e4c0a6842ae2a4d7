"""Greedy answers to many prompts at once: left-padded batches through ``model.generate`` (KV cache on).

Why: the sentiment check's generate mode and batch prediction answered one row per ``generate`` call, so each
decoding step multiplied a single token's hidden state by every weight matrix (matrix-vector work). Batched,
one step serves ``batch`` rows. Prompts are sorted by length so a batch pads little, left-padded (generation
appends on the right; transformers derives position ids from the attention mask), and answers come back in
the rows' order. Greedy decoding of a batch equals row-by-row decoding up to float rounding
(tests/evaluation/test_label_scoring.py checks the texts are the same on the test model).

A batch holds at most ``batch_rows`` rows and, with ``batch_tokens``, at most that many tokens (rows x (longest
prompt + new tokens)): short answers get wide batches (the output head's weights, 168M of Gemma-3-270M's 268M, are
read once per step for the whole batch), long ones narrow batches that fit the KV cache.

The output head sees a contiguous hidden state (``contiguous_head``): ``generate`` asks the model for the last
position's logits only (``logits_to_keep=1``), a strided slice ``hidden[:, -1:]``, and torch multiplies a strided
3-D input by the head as a batched product over a copy of the weight per row (a CPU ``bmm``): measured 3.8 s
against 0.5 s for 32 rows x Gemma's 262k-word head, once per batch. The same numbers, to fp32 rounding.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

BATCH_ROWS = 16


@contextmanager
def contiguous_head(model: Any) -> Iterator[None]:
    """Within the block, the model's output embeddings get a contiguous input (see the module doc)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None:
        yield
        return

    def contiguous(_module: Any, args: tuple) -> tuple | None:
        if args and hasattr(args[0], "is_contiguous") and not args[0].is_contiguous():
            return (args[0].contiguous(), *args[1:])
        return None

    handle = head.register_forward_pre_hook(contiguous)
    try:
        yield
    finally:
        handle.remove()


def batches(lengths: Sequence[int], max_new_tokens: int, batch_rows: int = BATCH_ROWS,
            batch_tokens: int | None = None) -> list[list[int]]:
    """Row indices in batches, shortest prompts first: at most ``batch_rows`` rows, and with ``batch_tokens`` at
    most that many (rows x (longest prompt + ``max_new_tokens``)), at least one row each."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out: list[list[int]] = []
    part: list[int] = []
    for i in order:   # each row is the longest of its batch so far
        if part and (len(part) >= batch_rows or
                     (batch_tokens is not None and (len(part) + 1) * (lengths[i] + max_new_tokens) > batch_tokens)):
            out.append(part)
            part = []
        part.append(i)
    if part:
        out.append(part)
    return out


def generate_batch(model: Any, tokenizer: Any, prompts: Sequence[Sequence[int]], max_new_tokens: int,
                   finish: Callable[[str], str], batch_rows: int = BATCH_ROWS, max_time: float | None = None,
                   batch_tokens: int | None = None) -> list[str]:
    """Greedy answer text of every prompt (token ids), each passed through ``finish`` (cut at the end marker)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    dev = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    pad = 0 if pad is None else int(pad)
    out: list[str] = [""] * len(prompts)
    with contiguous_head(model):
        for part in batches([len(p) for p in prompts], max_new_tokens, batch_rows, batch_tokens):
            width = max(len(prompts[i]) for i in part)
            ids = torch.tensor([[pad] * (width - len(prompts[i])) + list(prompts[i]) for i in part], device=dev)
            mask = torch.tensor([[0] * (width - len(prompts[i])) + [1] * len(prompts[i]) for i in part], device=dev)
            kwargs: dict[str, Any] = dict(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                          pad_token_id=pad, eos_token_id=tokenizer.eos_token_id, do_sample=False,
                                          temperature=None, top_p=None, top_k=None)
            if max_time:   # per BATCH_ROWS rows: a wider batch has as long a time per row as before
                kwargs["max_time"] = max_time * max(1.0, len(part) / BATCH_ROWS)
            with torch.inference_mode():
                new = model.generate(**kwargs)[:, width:]
            for i, row in zip(part, new.tolist()):
                out[i] = finish(tokenizer.decode(_until_eos(row, tokenizer.eos_token_id), skip_special_tokens=False))
    return out


def _until_eos(row: list[int], eos: Any) -> list[int]:
    """A finished row's tokens up to and including its first EOS (generate pads the rest of the batch's steps)."""
    stops = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
    for k, t in enumerate(row):
        if t in stops:
            return row[:k + 1]
    return row
