"""The held-out answer loss: how likely the model finds each reference answer, token by token, given its prompt.

It is the training loss on rows the run never trained on (prompt built by ``prompt_token_ids``, the answer as the
template ends it, ``template.answer``: the same tokens training put the loss on), one forward per batch of rows with
the output head only at the answer positions (``scoring.token_logprobs``). Cheap enough to run during training:
no generation, one pass. The Evaluate tab's generation check and the engine's held-out score both call it, so the
number a run kept its best checkpoint by is the number the page shows.
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Sequence

from ..data.templates import Template
from .limits import context_of
from .lora_merge import merged_lora
from .prompts import prompt_token_ids
from .scoring import token_logprobs

BATCH_ROWS = 16
MAX_ANSWER_TOKENS = 512   # a longer reference is scored on its first 512 tokens (as a cutoff would train it)


@dataclass(frozen=True)
class AnswerLoss:
    """Mean negative log-likelihood per answer token over all rows (``loss``), its ``perplexity``, and each row's
    mean (``rows``, None for a row without an answer)."""

    loss: float
    tokens: int
    rows: tuple[float | None, ...]

    @property
    def perplexity(self) -> float:
        return math.exp(min(self.loss, 50.0))


def answer_loss(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                batch_rows: int = BATCH_ROWS, merge: bool = True) -> AnswerLoss:
    """The answer loss of ``rows`` (instruction, input, output) under ``model``; ``merge``: a LoRA adapter merged
    for the pass (lora_merge.py: faster, the same numbers to fp32 rounding).

    Raises:
        ValueError: no row has an answer.
    """
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    answers = [tokenizer.encode(template.answer(str(r.get("output", ""))), add_special_tokens=False)
               [:MAX_ANSWER_TOKENS] if str(r.get("output", "")).strip() else [] for r in rows]
    keep = [i for i, a in enumerate(answers) if a]
    if not keep:
        raise ValueError("no row has a reference answer")
    longest = max(len(answers[i]) for i in keep)
    prompts = prompt_token_ids(tokenizer, template, [rows[i] for i in keep],
                               max_tokens=max(1, context_of(model) - longest))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    dev = next(model.parameters()).device
    sums: dict[int, tuple[float, int]] = {}
    order = sorted(range(len(keep)), key=lambda k: len(prompts[k]) + len(answers[keep[k]]))
    was_training = model.training
    model.eval()
    try:
        with merged_lora(model) if merge else nullcontext():
            for start in range(0, len(order), batch_rows):
                part = order[start:start + batch_rows]
                seqs = [list(prompts[k]) + list(answers[keep[k]]) for k in part]
                width = max(map(len, seqs))
                ids = torch.tensor([s + [int(pad)] * (width - len(s)) for s in seqs], device=dev)
                mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], device=dev)
                which = [(b, len(prompts[k]) - 1 + j, tok) for b, k in enumerate(part)
                         for j, tok in enumerate(answers[keep[k]])]
                logp = token_logprobs(model, ids, mask, *zip(*which)).tolist()
                at = 0
                for k in part:
                    n = len(answers[keep[k]])
                    sums[keep[k]] = (-sum(logp[at:at + n]), n)
                    at += n
    finally:
        if was_training:
            model.train()
    total = sum(s for s, _ in sums.values())
    tokens = sum(n for _, n in sums.values())
    per_row = tuple(sums[i][0] / sums[i][1] if i in sums else None for i in range(len(rows)))
    return AnswerLoss(loss=total / tokens, tokens=tokens, rows=per_row)
