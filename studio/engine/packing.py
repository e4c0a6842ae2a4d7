"""Padding-free packing: the micro-batch's examples run as one row, with no pad tokens at all.

Built on transformers' ``DataCollatorWithFlattening``: the examples are concatenated, the first
label of each is masked (so no example learns to predict the next one's start), and with
``neat_packing`` every example's ``position_ids`` restart at 0. transformers' mask builder sees
the restarting position ids (with no 2-D attention mask) and makes attention block-diagonal:
each token attends only inside its own example (SDPA and eager build that mask; FlashAttention-2
uses the same boundaries as varlen sequences). tests/engine/test_packing.py proves the isolation: the
loss of a packed batch equals the sum of the examples' losses computed one by one.

``packing`` without ``neat_packing`` is LLaMA-Factory's plain packing: positions run on across
the row and attention crosses example boundaries (cheaper kernels, some cross-contamination).
"""
from __future__ import annotations

from typing import Any

import torch


class PackingCollator:
    """Features -> ``{"input_ids": [1, total], "labels": [1, total], "position_ids"?}``; no attention_mask."""

    def __init__(self, neat: bool = True, flash_kwargs: bool = False):
        # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
        from transformers import DataCollatorWithFlattening
        self.neat = neat
        self._flatten = DataCollatorWithFlattening(return_position_ids=True, separator_id=-100,
                                                   return_flash_attn_kwargs=flash_kwargs and neat)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = self._flatten([{"input_ids": f["input_ids"], "labels": f["labels"]} for f in features])
        if not self.neat:
            batch.pop("position_ids", None)  # positions run on, attention is one causal block
        return batch


def uses_flash_attention(model: Any) -> bool:
    """FlashAttention-2/3 takes the boundaries as varlen kwargs (cu_seq_lens) instead of a mask."""
    impl = getattr(getattr(model, "config", None), "_attn_implementation", "") or ""
    return "flash" in impl
