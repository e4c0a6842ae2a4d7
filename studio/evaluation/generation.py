"""Greedy answers to many prompts at once: left-padded batches through ``model.generate`` (KV cache on).

Why: the sentiment check's generate mode and batch prediction answered one row per ``generate`` call, so each
decoding step multiplied a single token's hidden state by every weight matrix (matrix-vector work). Batched,
one step serves ``batch`` rows. Prompts are sorted by length so a batch pads little, left-padded (generation
appends on the right; transformers derives position ids from the attention mask), and answers come back in
the rows' order. Greedy decoding of a batch equals row-by-row decoding up to float rounding
(tests/evaluation/test_label_scoring.py checks the texts are the same on the test model).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

BATCH_ROWS = 16


def generate_batch(model: Any, tokenizer: Any, prompts: Sequence[Sequence[int]], max_new_tokens: int,
                   finish: Callable[[str], str], batch_rows: int = BATCH_ROWS, max_time: float | None = None
                   ) -> list[str]:
    """Greedy answer text of every prompt (token ids), each passed through ``finish`` (cut at the end marker)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    dev = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    pad = 0 if pad is None else int(pad)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    out: list[str] = [""] * len(prompts)
    for start in range(0, len(order), batch_rows):
        part = order[start:start + batch_rows]
        width = max(len(prompts[i]) for i in part)
        ids = torch.tensor([[pad] * (width - len(prompts[i])) + list(prompts[i]) for i in part], device=dev)
        mask = torch.tensor([[0] * (width - len(prompts[i])) + [1] * len(prompts[i]) for i in part], device=dev)
        kwargs: dict[str, Any] = dict(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                      pad_token_id=pad, eos_token_id=tokenizer.eos_token_id, do_sample=False,
                                      temperature=None, top_p=None, top_k=None)
        if max_time:
            kwargs["max_time"] = max_time
        with torch.no_grad():
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
