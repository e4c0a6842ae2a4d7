"""Which rows are worth a teammate's time: the ones the run is least sure about.

A labels run: the margin between its two most probable labels (``inference.label_probabilities``, the demo page's
own scores); a small margin is a near coin-flip, where a correction moves the decision boundary most (margin
sampling, Scheffer et al. 2001). A free-text run: the mean log-likelihood per token of its own greedy answer; a
low one is an answer the model itself found unlikely. Both answer "least sure first" for a bounded pool of texts.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import inference
from .evaluate import _generate_rows
from .limits import context_of
from .prompts import prompt_token_ids
from .scoring import token_logprobs

BATCH = 16          # texts scored in one forward: the demo page's batch
MAX_TEXT_ROWS = 50  # a free-text pool is generated row by row: bounded harder than a labels pool
ANSWER_TOKENS = 64  # a free-text answer long enough to judge its likelihood


def margin(scores: dict[str, float]) -> float:
    """Probability of the best label minus the second best (1.0 for a single label)."""
    top = sorted(scores.values(), reverse=True)
    return top[0] - top[1] if len(top) > 1 else 1.0


def least_sure_labels(run_path: str, texts: Sequence[str], labels: Sequence[str],
                      like: dict[str, str] | None = None, k: int = 10) -> list[dict[str, Any]]:
    """The ``k`` texts with the smallest margin: [{"index", "text", "answer", "scores", "sureness"}], least sure
    first (``sureness`` is the margin). Ties keep file order."""
    scored: list[dict[str, Any]] = []
    for at in range(0, len(texts), BATCH):
        chunk = list(texts[at:at + BATCH])
        for i, (text, scores) in enumerate(zip(chunk, inference.label_probabilities(run_path, chunk, labels, like))):
            scored.append({"index": at + i, "text": text, "answer": max(scores, key=scores.get),
                           "scores": {lab: round(float(p), 4) for lab, p in scores.items()},
                           "sureness": round(margin(scores), 4)})
    return sorted(scored, key=lambda r: (r["sureness"], r["index"]))[:max(0, k)]


def answer_likelihoods(run_path: str, rows: Sequence[dict[str, str]]) -> list[tuple[str, float]]:
    """(greedy answer, mean log-probability per answer token) of each row, the run's own answer scored by the
    run; an empty answer gets -inf (nothing the model would stand behind)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    loaded = inference.get_model(run_path)
    rows = list(rows)[:MAX_TEXT_ROWS]
    out: list[tuple[str, float]] = []
    with inference.hold_model(loaded):
        model, tok = loaded.model, loaded.tokenizer
        answers = _generate_rows(model, tok, loaded.template, rows, ANSWER_TOKENS)
        prompts = prompt_token_ids(tok, loaded.template, rows,
                                   max_tokens=context_of(model) - ANSWER_TOKENS)
        dev = next(model.parameters()).device
        for ids, answer in zip(prompts, answers):
            ans = tok.encode(answer, add_special_tokens=False)[:ANSWER_TOKENS] if answer.strip() else []
            if not ans:
                out.append((answer, float("-inf")))
                continue
            seq = torch.tensor([list(ids) + ans], device=dev)
            lp = token_logprobs(model, seq, torch.ones_like(seq), [0] * len(ans),
                                [len(ids) - 1 + j for j in range(len(ans))], ans)
            out.append((answer, float(lp.mean())))
    return out


def least_sure_answers(run_path: str, rows: Sequence[dict[str, str]], k: int = 10) -> list[dict[str, Any]]:
    """The ``k`` rows whose own answer the run finds least likely: [{"index", "text", "answer", "sureness"}]
    (``sureness``: mean log-probability per token), least sure first."""
    scored = [{"index": i, "text": r.get("input") or r.get("instruction", ""), "answer": a, "sureness": round(s, 4)}
              for i, (r, (a, s)) in enumerate(zip(rows, answer_likelihoods(run_path, rows)))]
    return sorted(scored, key=lambda r: (r["sureness"], r["index"]))[:max(0, k)]
