"""How much memory a loaded model's weights take: parameter + buffer bytes, counted from the tensors themselves.

Why not ``PreTrainedModel.get_memory_footprint()``: it does not see bitsandbytes' 4-bit quantization state (the
per-block ``absmax`` scales and the nested double-quantization tensors live on ``weight.quant_state``, not in the
parameters), it counts a PEFT model's adapters with no way to leave them out (the base model of a LoRA scorecard
is the same object with adapters off), and PEFT models do not have it. Tensors shared by several modules (tied
embeddings) are counted once. This is the model's own weight memory, not the process's RSS (which also holds the
libraries, the tokenizer and allocator slack).
"""
from __future__ import annotations

from typing import Any, Iterator


def _quant_tensors(param: Any) -> Iterator[Any]:
    """bitsandbytes' side tensors of a quantized weight: 4-bit quant_state (absmax, nested state), 8-bit SCB."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    state = getattr(param, "quant_state", None)
    while state is not None:
        for name in ("absmax", "code", "offset"):
            value = getattr(state, name, None)
            if torch.is_tensor(value):
                yield value
        state = getattr(state, "state2", None)
    scb = getattr(param, "SCB", None)
    if torch.is_tensor(scb):
        yield scb


def model_bytes(model: Any, adapters: bool = True) -> int:
    """Bytes of the model's parameters, buffers and quantization state; ``adapters=False`` leaves LoRA out."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    seen: set[tuple[int, int]] = set()
    total = 0

    def add(t: Any) -> None:
        nonlocal total
        if not torch.is_tensor(t) or t.device.type == "meta":
            return
        key = (t.data_ptr(), t.numel())
        if key in seen:
            return
        seen.add(key)
        total += t.numel() * t.element_size()

    for name, p in model.named_parameters(remove_duplicate=True):
        if not adapters and "lora_" in name:
            continue
        add(p)
        for extra in _quant_tensors(p):
            add(extra)
    for name, b in model.named_buffers(remove_duplicate=True):
        if not adapters and "lora_" in name:
            continue
        add(b)
    return total


def with_memory(card: dict, model: Any, base: tuple[Any, Any] | None) -> dict:
    """A before/after scorecard with ``memory_bytes`` on both sides (measured on the models it compared).

    ``base=None`` means the base was the same PEFT model with its adapters off.
    """
    card["tuned"]["memory_bytes"] = model_bytes(model)
    card["base"]["memory_bytes"] = model_bytes(model, adapters=False) if base is None else model_bytes(base[0])
    return card
