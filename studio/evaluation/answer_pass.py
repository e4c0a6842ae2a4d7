"""The generation check's model work in one pass a batch: greedy answers and the answer loss from one prompt cache.

Why: the check let the model answer every row (``generate_batch``: the prompts through the model, then one step per
new token) and then scored the reference answers (``answer_loss``: the prompts through the model again, with the
reference after them), twice, for the tuned model and the base. On Gemma-3-270M and 200 short held-out rows that
was 6 minutes of a 2-core CPU (445 CPU-s). Here, per batch of rows (sorted by prompt length, left-padded):

1. the instruction's tokens that every prompt shares run once and their KV cache is repeated over the rows
   (``label_scoring._shared_cache``); each row's own prompt tokens but its last run on top of it: the prompt cache;
2. the reference answers run on a copy of that cache (teacher forcing: the last prompt token, then the answer's
   tokens): the answer loss (``answer_loss``'s number: the same tokens, the head only at the answer positions,
   ``scoring.token_logprobs``), and at each position the model's most likely token;
3. greedy decoding picks the most likely token given what it wrote so far, so where the most likely token at every
   reference position is the reference's own, up to its end-of-turn token, greedy decoding writes the reference
   and stops: that row's answer is known without a decoding step (a tuned model's rows, mostly). The other rows
   (a base model's, mostly) are decoded by ``model.generate`` from the prompt cache (the prompt is not run again).

The answers are those of ``generate_batch`` and the loss is ``answer_loss``'s, to float rounding
(tests/evaluation/test_answer_pass.py: the same texts as one-row ``generate`` calls, losses within 1e-4). Where
the model cannot take a cache, or its generation config changes greedy choices (a repetition penalty, suppressed
tokens...), every row is decoded by ``generate``; where it keeps no cache, ``answers_and_loss`` says so (None) and
the caller runs the two passes apart.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

from .answer_loss import MAX_ANSWER_TOKENS, AnswerLoss
from .generation import BATCH_ROWS, _until_eos, batches, contiguous_head
from .label_scoring import _cache_kwarg, _last_logits, _shared_cache, shared_prefix_len
from .scoring import token_logprobs

# generation-config fields that make generate's choice differ from the plain most likely token
_PROCESSORS = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "encoder_repetition_penalty": 1.0,
               "min_length": 0, "min_new_tokens": None, "bad_words_ids": None, "suppress_tokens": None,
               "begin_suppress_tokens": None, "forced_bos_token_id": None, "forced_eos_token_id": None,
               "sequence_bias": None, "exponential_decay_length_penalty": None}


def greedy_is_argmax(model: Any) -> bool:
    """True where ``model.generate(do_sample=False)`` picks the most likely token (no logits processor)."""
    cfg = getattr(model, "generation_config", None)
    if cfg is None:
        return True
    return all(getattr(cfg, k, plain) in (plain, None, 0, 1.0, [], ()) for k, plain in _PROCESSORS.items())


def answers_and_loss(model: Any, tokenizer: Any, prompts: Sequence[Sequence[int]],
                     answers: Sequence[Sequence[int]], max_new_tokens: int, finish: Callable[[str], str],
                     batch_rows: int = BATCH_ROWS, batch_tokens: int | None = None, max_time: float | None = None
                     ) -> tuple[list[str], AnswerLoss] | None:
    """Greedy answer text of every prompt (through ``finish``) and the loss of ``answers`` (reference answer
    tokens, non-empty, the template's end included) after them: what ``generate_batch`` and ``answer_loss`` give.

    None where this pass cannot run (a prompt of fewer than two tokens, an empty answer, a model without a KV
    cache): the caller runs ``generate_batch`` and ``answer_loss`` instead.
    """
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    answers = [list(a)[:MAX_ANSWER_TOKENS] for a in answers]
    if not prompts or min(map(len, prompts)) < 2 or not all(answers):
        return None
    dev = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    pad = 0 if pad is None else int(pad)
    eos = tokenizer.eos_token_id
    stops = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
    argmax_ok = greedy_is_argmax(model)
    texts: list[str] = [""] * len(prompts)
    sums: dict[int, tuple[float, int]] = {}
    longest = max(map(len, answers))
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), contiguous_head(model):
            for part in batches([len(p) for p in prompts], max(max_new_tokens, longest), batch_rows, batch_tokens):
                got = _batch(model, tokenizer, [prompts[i] for i in part], [answers[i] for i in part],
                             max_new_tokens, pad, stops, argmax_ok, dev, max_time)
                if got is None:   # no cache here: the passes apart
                    return None
                for i, (tokens, nll) in zip(part, got):
                    texts[i] = finish(tokenizer.decode(tokens, skip_special_tokens=False))
                    sums[i] = (nll, len(answers[i]))
    finally:
        if was_training:
            model.train()
    total = sum(s for s, _ in sums.values())
    n_tokens = sum(n for _, n in sums.values())
    return texts, AnswerLoss(loss=total / n_tokens, tokens=n_tokens,
                             rows=tuple(sums[i][0] / sums[i][1] for i in range(len(prompts))))


def _batch(model: Any, tokenizer: Any, prompts: list[Sequence[int]], answers: list[list[int]], max_new_tokens: int,
           pad: int, stops: set, argmax_ok: bool, dev: Any, max_time: float | None
           ) -> list[tuple[list[int], float]] | None:
    """(greedy answer tokens, summed answer NLL) of each row of one batch; None where the model keeps no cache."""
    import torch
    n = len(prompts)
    shared = max(0, min(shared_prefix_len(prompts), min(map(len, prompts)) - 2))
    try:
        past = _shared_cache(model, prompts[0][:shared], n) if shared else None
    except TypeError:   # a forward without logits_to_keep or a cache
        return None
    if past is None:
        shared = 0
    key = _cache_kwarg(model)
    # 1. the prompt cache: [shared | padding | own tokens but the last]
    own = [list(p[shared:-1]) for p in prompts]
    width = max(map(len, own))
    ids = torch.tensor([[pad] * (width - len(o)) + o for o in own], device=dev)
    own_mask = torch.tensor([[0] * (width - len(o)) + [1] * len(o) for o in own], device=dev)
    mask = torch.cat([torch.ones(n, shared, dtype=own_mask.dtype, device=dev), own_mask], dim=1)
    positions = shared + (own_mask.cumsum(-1) - 1).clamp(min=0)
    try:
        out = _last_logits(model, input_ids=ids, attention_mask=mask, position_ids=positions,
                           **({key: past} if past is not None else {}))
    except TypeError:
        return None
    cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    if cache is None or not hasattr(cache, "batch_select_indices"):
        return None
    kept = copy.deepcopy(cache)   # for the rows greedy decoding has to write
    # 2. teacher forcing: the last prompt token, then each answer but its last token; position j predicts answer[j]
    span = max(map(len, answers))
    fed = [[p[-1]] + a[:-1] for p, a in zip(prompts, answers)]
    f_ids = torch.tensor([f + [pad] * (span - len(f)) for f in fed], device=dev)
    f_mask = torch.tensor([[1] * len(f) + [0] * (span - len(f)) for f in fed], device=dev)
    f_pos = torch.tensor([len(p) - 1 for p in prompts], device=dev)[:, None] + torch.arange(span, device=dev)
    which = [(b, j, tok) for b, a in enumerate(answers) for j, tok in enumerate(a)]
    logp, best = token_logprobs(model, f_ids, torch.cat([mask, f_mask], dim=1), *zip(*which), argmax=True,
                                position_ids=f_pos, use_cache=True, **{key: cache})
    logp, best = logp.tolist(), best.tolist()
    # 3. where greedy decoding writes the reference (its most likely token at every position) it is known
    results: list[tuple[list[int], float] | None] = []
    nlls: list[float] = []
    at = 0
    for a in answers:
        nll = -sum(logp[at:at + len(a)])
        nlls.append(nll)
        written = None
        if argmax_ok:
            for j, tok in enumerate(a):
                if best[at + j] != tok:
                    break
                if tok in stops or j + 1 >= max_new_tokens:
                    written = a[:j + 1]
                    break
        results.append((written, nll) if written is not None else None)
        at += len(a)
    # 4. the other rows: generate from the prompt cache (it feeds each prompt's last token, then decodes)
    rest = [b for b, r in enumerate(results) if r is None]
    if rest:
        kept.batch_select_indices(torch.tensor(rest, device=dev))
        last = torch.tensor([[p[-1]] for p in prompts], device=dev)
        head = torch.tensor([list(prompts[0][:shared])] * n, device=dev, dtype=ids.dtype).reshape(n, shared)
        g_ids = torch.cat([head, ids, last], dim=1)[rest]
        g_mask = torch.cat([mask, torch.ones(n, 1, dtype=mask.dtype, device=dev)], dim=1)[rest]
        kwargs: dict[str, Any] = dict(input_ids=g_ids, attention_mask=g_mask, max_new_tokens=max_new_tokens,
                                      pad_token_id=pad, eos_token_id=tokenizer.eos_token_id, do_sample=False,
                                      temperature=None, top_p=None, top_k=None, **{key: kept})
        if max_time:   # per BATCH_ROWS rows, as generate_batch
            kwargs["max_time"] = max_time * max(1.0, len(rest) / BATCH_ROWS)
        new = model.generate(**kwargs)[:, g_ids.shape[1]:].tolist()
        for b, row in zip(rest, new):
            results[b] = (_until_eos(row, tokenizer.eos_token_id), nlls[b])
    return [r for r in results if r is not None]
