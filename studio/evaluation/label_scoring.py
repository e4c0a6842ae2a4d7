"""Label scores from a shared prompt: each prompt runs through the model once, every label is scored from its KV cache.

Why: scoring ``L`` candidate labels the plain way runs ``prompt + label`` through the model ``L`` times, and the
prompt (a review, ~90 tokens) is almost all of it while a label is 1-3 tokens. Here a batch of prompts is
left-padded (so every row's last real token sits in the last column) and run once with ``use_cache``; the first
answer token's log-probability comes from that last column; the cache is repeated once per label
(``Cache.batch_repeat_interleave``, what beam search uses) and all labels' remaining tokens run in one small
forward on top of it. Position ids follow the attention mask, so left padding changes nothing but float rounding
(tests/evaluation/test_label_scoring.py: equal to the naive per-label scores within 1e-4).

Rows of one evaluation share their instruction: the template's text up to the review is the same tokens in every
prompt (25 of Gemma's ~45 tokens a row, 44 of SmolLM2's ~75, on the sample reviews). ``shared_prefix_len`` finds that
run of tokens; ``label_logprobs(..., shared=n)`` runs it once per batch as a batch of one, repeats its cache over the
rows and feeds only each row's own tokens on top (the padding then sits between the shared part and the row: the
attention mask hides it and the position ids skip it, so the scores are unchanged within float rounding).

``label_logprobs_naive`` is that plain way (per label, a batch of ``prompt + label`` rows, full logits): the
reference the tests and bench/eval_speed.py compare with. ``label_logprobs_concat`` is the studio's previous way
(every row x label in one padded batch, the head only at the answer tokens) and the fallback for a model whose
forward does not take a cache.

``logits_to_keep=1`` makes transformers hand the output head ``hidden[:, -1:, :]``, a strided view; torch's matmul
of a strided 3-D input against the head's weight takes a batched path that was ~10x slower than the plain matrix
product (torch 2.13, one thread: 1.6 s against 0.17 s for 32 rows x Gemma's 262k vocabulary, over a quarter of the whole
scoring). ``_last_logits`` makes that input contiguous on its way into the head.
"""
from __future__ import annotations

import inspect
from typing import Any, Sequence

from .scoring import token_logprobs


def _device(model: Any) -> Any:
    return next(model.parameters()).device


def _cache_kwarg(model: Any) -> str:
    """The forward's name for the KV cache: ``cache`` in transformers 5.x, ``past_key_values`` before."""
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    try:
        return "cache" if "cache" in inspect.signature(causal.forward).parameters else "past_key_values"
    except (TypeError, ValueError):
        return "past_key_values"


def shared_prefix_len(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt shares, leaving each prompt at least one token of its own."""
    if len(prompts) < 2:
        return 0
    first, n = prompts[0], min(len(p) for p in prompts) - 1
    for p in prompts[1:]:
        k = 0
        while k < n and p[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return max(n, 0)


def _contiguous_input(_module: Any, args: tuple) -> tuple | None:
    hidden = args[0] if args else None
    if hidden is not None and hasattr(hidden, "is_contiguous") and not hidden.is_contiguous():
        return (hidden.contiguous(), *args[1:])
    return None


def _last_logits(model: Any, **forward: Any) -> Any:
    """``model(..., use_cache=True, logits_to_keep=1)`` with the output head fed contiguous hidden states."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    handle = head.register_forward_pre_hook(_contiguous_input) if head is not None else None
    try:
        with torch.no_grad():
            return model(use_cache=True, logits_to_keep=1, **forward)
    finally:
        if handle is not None:
            handle.remove()


def _shared_cache(model: Any, prefix: Sequence[int], n_rows: int) -> Any:
    """The KV cache of ``prefix`` run once, repeated for ``n_rows`` rows (None where the model cannot)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    ids = torch.tensor([list(prefix)], device=_device(model))
    out = _last_logits(model, input_ids=ids)
    cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    if cache is None or not hasattr(cache, "batch_repeat_interleave"):
        return None
    cache.batch_repeat_interleave(n_rows)
    return cache


def label_logprobs(model: Any, prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]],
                   pad_id: int | None, shared: int = 0) -> list[list[float]]:
    """``sum_k log p(answers[j][k] | prompts[i] + answers[j][:k])`` for every row i and label j.

    One forward over the prompts (their KV cache kept), one over all labels' tokens on top of it. ``shared``: the
    first ``shared`` tokens are the same in every prompt (``shared_prefix_len``); they run once, not once a row.
    """
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    if not prompts:
        return []
    if any(len(a) == 0 for a in answers) or any(len(p) == 0 for p in prompts):
        return label_logprobs_concat(model, prompts, answers, pad_id)
    dev = _device(model)
    pad = 0 if pad_id is None else int(pad_id)
    n_rows, n_labels = len(prompts), len(answers)
    shared = max(0, min(int(shared), min(len(p) for p in prompts) - 1))
    try:
        past = _shared_cache(model, prompts[0][:shared], n_rows) if shared else None
    except TypeError:  # a forward without logits_to_keep or a cache
        past = None
    if past is None:
        shared = 0
    own = [p[shared:] for p in prompts]
    width = max(len(p) for p in own)
    ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in own], device=dev)
    own_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in own], device=dev)
    mask = torch.cat([torch.ones(n_rows, shared, dtype=own_mask.dtype, device=dev), own_mask], dim=1)
    positions = shared + (own_mask.cumsum(-1) - 1).clamp(min=0)
    extra = {_cache_kwarg(model): past} if past is not None else {}
    try:
        out = _last_logits(model, input_ids=ids, attention_mask=mask, position_ids=positions, **extra)
    except TypeError:  # a forward without logits_to_keep or a cache: the one-batch way
        return label_logprobs_concat(model, prompts, answers, pad_id)
    cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)            # [rows, vocab]
    firsts = torch.tensor([a[0] for a in answers], device=dev)
    scores = first[:, firsts].clone()                                        # [rows, labels]
    rest = max(len(a) for a in answers) - 1
    if rest > 0:
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            return label_logprobs_concat(model, prompts, answers, pad_id)
        cache.batch_repeat_interleave(n_labels)                              # row i -> rows i*L .. i*L+L-1
        # feed each label's tokens but its last; answer token k+1 is predicted at fed position k
        fed = torch.tensor([list(a[:-1]) + [pad] * (rest - len(a) + 1) for a in answers], device=dev)
        fed_mask = torch.tensor([[1] * (len(a) - 1) + [0] * (rest - len(a) + 1) for a in answers], device=dev)
        a_ids = fed.repeat(n_rows, 1)
        a_mask = torch.cat([mask.repeat_interleave(n_labels, 0), fed_mask.repeat(n_rows, 1)], dim=1)
        a_pos = positions[:, -1:].repeat_interleave(n_labels, 0) + 1 + torch.arange(rest, device=dev)
        which = [(i * n_labels + j, k, tok) for i in range(n_rows) for j, a in enumerate(answers)
                 for k, tok in enumerate(a[1:])]
        logp = token_logprobs(model, a_ids, a_mask, *zip(*which), position_ids=a_pos, use_cache=True,
                              **{_cache_kwarg(model): cache})
        at = 0
        for i in range(n_rows):
            for j, a in enumerate(answers):
                scores[i, j] += logp[at:at + len(a) - 1].sum()
                at += len(a) - 1
    return scores.tolist()


def label_logprobs_concat(model: Any, prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]],
                          pad_id: int | None) -> list[list[float]]:
    """The same scores from one right-padded batch of every ``prompt + label`` (no cache)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    dev = _device(model)
    pad = 0 if pad_id is None else int(pad_id)
    seqs = [list(p) + list(a) for p in prompts for a in answers]
    width = max(len(s) for s in seqs)
    ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs], device=dev)
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], device=dev)
    which = [(i * len(answers) + j, len(p) - 1 + k, tok) for i, p in enumerate(prompts)
             for j, a in enumerate(answers) for k, tok in enumerate(a)]
    logp = token_logprobs(model, ids, mask, *zip(*which)).tolist()
    out, at = [], 0
    for _ in prompts:
        row = []
        for a in answers:
            row.append(float(sum(logp[at:at + len(a)])))
            at += len(a)
        out.append(row)
    return out


def label_logprobs_naive(model: Any, prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]],
                         pad_id: int | None) -> list[list[float]]:
    """The plain way: for each label, one right-padded batch of ``prompt + label``, full logits, log-softmax."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    dev = _device(model)
    pad = 0 if pad_id is None else int(pad_id)
    out = [[0.0] * len(answers) for _ in prompts]
    for j, a in enumerate(answers):
        seqs = [list(p) + list(a) for p in prompts]
        width = max(len(s) for s in seqs)
        ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs], device=dev)
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], device=dev)
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
        for i, p in enumerate(prompts):
            out[i][j] = float(sum(logp[i, len(p) - 1 + k, tok] for k, tok in enumerate(a)))
    return out
