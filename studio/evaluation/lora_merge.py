"""Score a LoRA model with its adapter merged into the weights, then give the weights back.

Why: unmerged, every adapted projection computes ``x W^T + s (x A^T) B^T``: two more thin matrix products, a scale
and an add per layer, on every token (Gemma-3-270M with ``lora_target: all``: 7 projections x 18 layers). Merged,
``W + s B A`` is one product: the same function, to fp32 rounding (tests/evaluation/test_eval_merge.py: label log-probs within
1e-4, the same labels). Label scoring merges for its pass and unmerges after (``merged_lora``).

When: a PEFT model whose tuner layers are all plain LoRA ``Linear`` layers over fp32 ``nn.Linear`` weights, with the
adapter on and not merged yet. Not: inside ``disable_adapter`` (that is how the base side of a before/after check is
scored: it stays the true base), quantized bases (4/8-bit weights cannot hold the sum), 16-bit weights (the sum would
be rounded to bf16/fp16: not the trained function, and unmerging would not give the weights back), other tuners.
Unmerging subtracts the same product, so the weights come back within one fp32 rounding. Callers that share a model
between threads already hold its lock while scoring (inference.py).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator


def can_merge(model: Any) -> bool:
    """True where merging the adapter for a forward pass changes nothing but fp32 rounding (see the module doc)."""
    if not hasattr(model, "peft_config") or not hasattr(model, "merge_adapter"):
        return False
    # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
    # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
    import torch
    from peft.tuners.lora.layer import Linear as LoraLinear
    from peft.tuners.tuners_utils import BaseTunerLayer
    layers = [m for m in model.modules() if isinstance(m, BaseTunerLayer)]
    if not layers:
        return False
    for m in layers:
        base = m.get_base_layer()
        if type(m) is not LoraLinear or type(base) is not torch.nn.Linear or base.weight.dtype != torch.float32:
            return False
        if m.disable_adapters or m.merged:
            return False
    return True


@contextmanager
def merged_lora(model: Any) -> Iterator[bool]:
    """Merge the active LoRA adapter into the weights for the ``with`` block where ``can_merge``; yields whether it
    did. The weights are unmerged on the way out, also after an error."""
    if not can_merge(model):
        yield False
        return
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    with torch.no_grad():
        model.merge_adapter()
    try:
        yield True
    finally:
        with torch.no_grad():
            model.unmerge_adapter()
