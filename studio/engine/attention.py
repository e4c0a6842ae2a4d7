"""Attention without transformers' mask builder, for the batches that need no mask.

transformers 5.24 builds each forward's mask from the data: with an attention mask it asks whether the mask is all
ones (``masking_utils._ignore_causal_mask_sdpa``), without one whether the position ids restart (packed rows,
``find_packed_sequence_indices``). Each question is a ``.all()`` the host must wait for, every forward. A right-
padded training batch of a full-attention causal LM needs no mask at all (each real token attends only to earlier
real tokens; pads carry no loss), so the studio runs SDPA under its own registered name: transformers skips mask
building for an attention name it has no mask function for, and SDPA gets ``is_causal=True`` and no mask.
The name lives in the in-memory config only (``_attn_implementation`` is not written to config.json).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

CAUSAL_SDPA = "studio_causal_sdpa"


def _text_config(model: Any) -> Any:
    cfg = model.config
    return cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg


def full_causal_attention(model: Any) -> bool:
    """Every layer attends causally to the whole row: no sliding window, no chunks, no bidirectional part."""
    cfg = _text_config(model)
    if not getattr(cfg, "is_causal", True) or getattr(cfg, "is_encoder_decoder", False):
        return False
    window = getattr(cfg, "sliding_window", None)
    if window and getattr(cfg, "use_sliding_window", True) is not False:
        return False
    if getattr(cfg, "attention_chunk_size", None):
        return False
    layer_types = getattr(cfg, "layer_types", None) or []
    return all(t == "full_attention" for t in layer_types)


def use_maskless_sdpa(model: Any) -> bool:
    """Switch an SDPA, full-attention causal LM to SDPA with no mask building; True when switched.

    Only for batches without padding in the middle of a row (the studio's right-padded ones, the mask removed
    by batching.HostCounts); packed rows need their mask and keep transformers' builder.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    cfg = _text_config(model)
    if getattr(cfg, "_attn_implementation", None) not in ("sdpa", CAUSAL_SDPA) or not full_causal_attention(model):
        return False
    AttentionInterface.register(CAUSAL_SDPA, sdpa_attention_forward)
    for c in {id(model.config): model.config, id(cfg): cfg}.values():
        c._attn_implementation = CAUSAL_SDPA
    return True


def restore_sdpa(model: Any) -> None:
    """Undo ``use_maskless_sdpa``: batches with a mask or flattened rows need transformers' mask builder."""
    cfg = _text_config(model)
    for c in {id(model.config): model.config, id(cfg): cfg}.values():
        if getattr(c, "_attn_implementation", None) == CAUSAL_SDPA:
            c._attn_implementation = "sdpa"


@contextmanager
def masked_attention(model: Any) -> Iterator[None]:
    """transformers' own masked SDPA for the ``with`` block, the maskless one again after: a held-out check during
    training (engine/held_out.py) left-pads its batches, whose masks the maskless attention would ignore."""
    cfg = _text_config(model)
    switched = getattr(cfg, "_attn_implementation", None) == CAUSAL_SDPA
    if switched:
        restore_sdpa(model)
    try:
        yield
    finally:
        if switched:
            use_maskless_sdpa(model)
