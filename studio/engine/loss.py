"""Logits only where the loss is, in chunks: the causal-LM loss without the full ``tokens x vocab`` logits.

Why: with the prompt masked (the default), only the answer tokens carry loss, yet a causal LM's
forward projects every position onto the vocabulary. For classification-style rows that is ~3
positions out of ~90, and in small modern models the LM head is a large share of the compute
(Gemma-3-270M: a 262k vocabulary, ~168M of its 268M parameters). Here the decoder runs on every
position, but only the hidden states whose *shifted* label is not -100 are projected and scored.

The projection + cross-entropy is fused and chunked (what Liger's fused linear cross-entropy and
torchtune's chunked loss do): each chunk's fp32 logits live only inside the loop, and the
gradients of the hidden states and of the head are computed there too, so neither forward nor
backward ever holds more than ``chunk x vocab`` logits. Written here (not Liger) because Liger is
a GPU/Triton package; this runs on CPU and GPU alike and is checked against the full computation
in tests/engine/test_selective_loss.py (loss and every gradient within 1e-5).

Models whose head is not a plain ``lm_head(hidden)`` (logit scaling, custom heads) are caught by
a one-time check against the model's own loss on the first batch; on a mismatch the engine goes
back to the normal forward for the rest of the run.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# the chunk size is a memory rule: the estimator owns it and this loss reads it (one place for both)
from ..memory.terms import LOSS_CHUNK_LOGITS as CHUNK_LOGITS  # noqa: F401  (re-exported for readers of this file)
from ..memory.terms import loss_chunk_rows as chunk_rows_for

IGNORE_INDEX = -100


# config attributes that change the logits after the head; softcapping is applied here, the rest fall back
_UNSUPPORTED_SCALES = ("logit_scale", "logits_scaling", "output_multiplier_scale", "mup_width_scale")


def split_causal_lm(model: nn.Module) -> tuple[nn.Module, nn.Module, float | None] | None:
    """(decoder, lm_head, softcap) of a causal LM, looking through peft; None if it does not apply."""
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    head = causal.get_output_embeddings() if hasattr(causal, "get_output_embeddings") else None
    prefix = getattr(causal, "base_model_prefix", "model")
    decoder = getattr(causal, prefix, None)
    if head is None or decoder is None or not isinstance(decoder, nn.Module) or decoder is causal:
        return None
    cfg = getattr(causal, "config", None)
    text_cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    for name in _UNSUPPORTED_SCALES:
        value = getattr(text_cfg, name, None)
        if value not in (None, 1, 1.0):
            return None
    return decoder, head, getattr(text_cfg, "final_logit_softcapping", None)


def selected_positions(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean mask over ``[batch, seq-1]`` positions whose next-token label counts, and those labels."""
    shifted = labels[:, 1:]
    keep = shifted != IGNORE_INDEX
    return keep, shifted[keep]


def selective_causal_lm_loss(model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any = None,
                             chunk_rows: int | None = None, loss_index: torch.Tensor | None = None
                             ) -> torch.Tensor | None:
    """The model's causal-LM loss (sum over answer tokens / ``num_items_in_batch`` or their count).

    Same value and gradients as ``model(**inputs).loss``; returns None when the model does not split
    into decoder + head (the caller then uses the normal forward). ``loss_index``: the flat positions of
    ``labels[:, 1:]`` that carry loss, found on the host by the collator (batching.HostCounts); with it the
    step gathers those positions without asking the card how many there are (a boolean mask would: its
    result's size is data, so a card must finish every queued kernel and report it before going on).
    """
    parts = split_causal_lm(model)
    if parts is None or "labels" not in inputs:
        return None
    decoder, head, softcap = parts
    labels = inputs["labels"]
    kwargs = {k: v for k, v in inputs.items() if k not in ("labels", "num_items_in_batch")}
    kwargs["use_cache"] = False
    hidden = decoder(**kwargs).last_hidden_state        # [batch, seq, hidden]: every position
    if loss_index is not None:
        index = loss_index.to(hidden.device, non_blocking=True)
        picked = hidden[:, :-1].reshape(-1, hidden.shape[-1]).index_select(0, index)
        targets = labels[:, 1:].reshape(-1).index_select(0, index.to(labels.device))
    else:
        keep, targets = selected_positions(labels)
        picked = hidden[:, :-1][keep]                   # only the positions that carry loss
    rows = chunk_rows or chunk_rows_for(head.weight.shape[0] if hasattr(head, "weight") else 32768)
    total = linear_cross_entropy_sum(picked, head, targets, softcap, rows)
    denom = num_items_in_batch if num_items_in_batch is not None else targets.numel()
    if torch.is_tensor(denom):
        denom = denom.to(total.device)
    return total / denom


def linear_cross_entropy_sum(hidden: torch.Tensor, head: nn.Module, targets: torch.Tensor,
                             softcap: float | None = None, chunk_rows: int = 1024) -> torch.Tensor:
    """Sum of cross-entropies of ``head(hidden)`` against ``targets``, chunked over rows.

    A plain ``nn.Linear`` head takes the fused path (gradients computed chunk by chunk in forward);
    any other head module (LoRA-wrapped, quantized) is called chunk by chunk under activation
    checkpointing, so its chunk logits are recomputed in backward instead of kept.
    """
    if hidden.shape[0] == 0:
        return hidden.sum() * 0.0 + sum(p.sum() * 0.0 for p in head.parameters() if p.requires_grad)
    if type(head) is nn.Linear:
        want = torch.is_grad_enabled() and (hidden.requires_grad or head.weight.requires_grad or
                                            (head.bias is not None and head.bias.requires_grad))
        return _FusedLinearCrossEntropy.apply(hidden, head.weight, head.bias, targets, chunk_rows,
                                              softcap, want)
    total = hidden.new_zeros((), dtype=torch.float32)
    for s in range(0, hidden.shape[0], chunk_rows):
        h, y = hidden[s:s + chunk_rows], targets[s:s + chunk_rows]
        total = total + checkpoint(_module_chunk_loss, h, head, y, softcap, use_reentrant=False)
    return total


def _module_chunk_loss(h: torch.Tensor, head: nn.Module, y: torch.Tensor, softcap: float | None) -> torch.Tensor:
    logits = head(h).float()
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    return nn.functional.cross_entropy(logits, y, reduction="sum")


class _FusedLinearCrossEntropy(torch.autograd.Function):
    """sum_i CE(h_i W^T + b, y_i); dL/dh, dL/dW, dL/db are computed per chunk in forward."""

    @staticmethod
    def forward(ctx: Any, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                targets: torch.Tensor, chunk_rows: int, softcap: float | None, want_grad: bool) -> torch.Tensor:
        need_h = want_grad and ctx.needs_input_grad[0]
        need_w = want_grad and ctx.needs_input_grad[1]
        need_b = want_grad and bias is not None and ctx.needs_input_grad[2]
        w = weight if weight.dtype == hidden.dtype else weight.to(hidden.dtype)
        b = None if bias is None else bias.float()
        grad_h = torch.empty_like(hidden) if need_h else None
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_w else None
        grad_b = torch.zeros(bias.shape, dtype=torch.float32, device=bias.device) if need_b else None
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        half = torch.is_autocast_enabled(hidden.device.type) or hidden.dtype != torch.float32
        for s in range(0, hidden.shape[0], chunk_rows):
            h, y = hidden[s:s + chunk_rows], targets[s:s + chunk_rows]
            logits = (h @ w.t()).float()
            if b is not None:
                logits = logits + b
            t = None
            if softcap:
                t = torch.tanh(logits / softcap)
                logits = t * softcap
            lse = torch.logsumexp(logits, dim=-1)
            total += (lse - logits.gather(1, y[:, None]).squeeze(1)).sum()
            if not (need_h or need_w or need_b):
                continue
            g = torch.exp(logits - lse[:, None])              # softmax
            g[torch.arange(g.shape[0], device=g.device), y] -= 1.0
            if t is not None:
                g = g * (1.0 - t * t)                          # d(cap * tanh(z / cap)) / dz
            if need_b:
                grad_b += g.sum(0)
            if need_w:
                if half:
                    # out of place, so this V x H x rows GEMM runs in 16 bits (tensor cores): autocast skips
                    # in-place ops like addmm_, which would run it in fp32. The sum over chunks stays fp32
                    grad_w += g.to(h.dtype).t() @ h
                else:
                    grad_w.addmm_(g.t(), h)   # fp32 throughout: in place, no V x H temporary
            if need_h:
                grad_h[s:s + chunk_rows] = (g.to(h.dtype) @ w)
        ctx.save_for_backward(*(x if x is not None else torch.empty(0) for x in (grad_h, grad_w, grad_b)))
        ctx.has = (need_h, need_w, need_b)
        ctx.dtypes = (weight.dtype, None if bias is None else bias.dtype)
        return total

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple:
        grad_h, grad_w, grad_b = ctx.saved_tensors
        need_h, need_w, need_b = ctx.has
        gh = grad_h * grad_out.to(grad_h.dtype) if need_h else None
        gw = (grad_w * grad_out).to(ctx.dtypes[0]) if need_w else None
        gb = (grad_b * grad_out).to(ctx.dtypes[1]) if need_b else None
        return gh, gw, gb, None, None, None, None


def reference_loss(model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any = None) -> torch.Tensor:
    """The model's own loss (full logits); what the selective path is checked against in the tests."""
    kwargs = dict(inputs)
    if num_items_in_batch is not None:
        kwargs["num_items_in_batch"] = num_items_in_batch
    return model(**kwargs).loss


def check_inputs(inputs: dict[str, Any], max_positions: int = 32) -> tuple[dict[str, Any], torch.Tensor] | None:
    """A small probe for the one-time check: row 0, loss on at most ``max_positions`` positions.

    Returns the probe inputs (labels masked down to those positions) and the hidden-state
    positions whose logits the model must produce for them (for ``logits_to_keep``).
    """
    rows = inputs["labels"].shape[0]
    probe = {k: (v[:1] if torch.is_tensor(v) and v.dim() > 0 and v.shape[0] == rows else v)
             for k, v in inputs.items()}
    labels = probe["labels"].clone()
    keep = (labels[0, 1:] != IGNORE_INDEX).nonzero().flatten()[:max_positions]
    if keep.numel() == 0:
        return None
    masked = torch.full_like(labels, IGNORE_INDEX)
    masked[0, keep + 1] = labels[0, keep + 1]
    probe["labels"] = masked
    return probe, keep


def model_probe_loss(model: nn.Module, probe: dict[str, Any], positions: torch.Tensor) -> torch.Tensor:
    """Mean loss at ``positions`` from the model's own forward, asking it for those logits only.

    ``logits_to_keep`` (a tensor of positions) keeps the check from building the full logits,
    which on a large vocabulary would set the run's memory peak.
    """
    kwargs = {k: v for k, v in probe.items() if k != "labels"}
    kwargs["use_cache"] = False
    try:
        logits = model(**kwargs, logits_to_keep=positions).logits[0]
    except TypeError:  # a model without logits_to_keep: the full logits, once
        logits = model(**kwargs).logits[0, positions]
    targets = probe["labels"][0, positions + 1]
    return nn.functional.cross_entropy(logits.float(), targets)
