"""A QLoRA base too large to draw whole (a 70B shape), built one linear layer at a time where it will train.

Each decoder linear weight is drawn (16-bit, seeded by its index so a test can draw it again), quantized to NF4
by bitsandbytes as it moves to the device, and freed before the next is drawn: neither host RAM nor the card ever
holds the 16-bit model. What is not quantized (embeddings, norms, head, rotary buffers) is made on the device in
place of its meta tensor. Nothing goes through ``to_empty()``: on a model whose linear layers are already NF4 it
swaps every quantized weight for uninitialised memory (tests/bench/test_gpu_layerwise.py).
"""
from __future__ import annotations

from typing import Any

import torch

STD = 0.02


def draw_weight(index: int, shape: tuple[int, int], device: str, dtype: torch.dtype) -> torch.Tensor:
    """Linear weight ``index``'s random draw (the same one every time it is asked for)."""
    g = torch.Generator(device=device).manual_seed(1000 + index)
    return (torch.randn(shape, generator=g, device=device, dtype=torch.float32) * STD).to(dtype)


def decoder_linears(model: Any) -> list[tuple[Any, str, Any]]:
    """(parent module, attribute name, linear layer) of every decoder layer's projections, in order."""
    out = []
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name, lin in list(parent.named_children()):
                if isinstance(lin, torch.nn.Linear):
                    out.append((parent, name, lin))
    return out


def _materialise(module: torch.nn.Module, device: str, dtype: torch.dtype) -> None:
    """Give each parameter ``module`` holds directly on meta a real tensor: norms 1, the rest N(0, STD)."""
    for name, p in list(module.named_parameters(recurse=False)):
        if p.device.type != "meta":
            continue
        t = torch.empty(p.shape, device=device, dtype=dtype)
        t.fill_(1.0) if "norm" in type(module).__name__.lower() else t.normal_(0.0, STD)
        setattr(module, name, torch.nn.Parameter(t, requires_grad=p.requires_grad))


def build_layerwise_qlora(cfg: Any, device: str, dtype: torch.dtype) -> Any:
    """A LlamaForCausalLM of ``cfg`` whose decoder linears are bitsandbytes NF4 (double-quantized, as the studio
    loads a QLoRA base) computing in ``dtype``, everything else in ``dtype``, all on ``device``.

    Raises:
        RuntimeError: a tensor was left on the meta device (a module this builder does not know).
    """
    import bitsandbytes as bnb
    from transformers import LlamaForCausalLM
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg)
    for i, (parent, name, lin) in enumerate(decoder_linears(model)):
        q = bnb.nn.Linear4bit(lin.in_features, lin.out_features, bias=False, compute_dtype=dtype, quant_type="nf4",
                              compress_statistics=True, device="meta")
        w = draw_weight(i, (lin.out_features, lin.in_features), device, dtype)
        q.weight = bnb.nn.Params4bit(w.cpu() if device == "cpu" else w, requires_grad=False, quant_type="nf4",
                                     compress_statistics=True)
        setattr(parent, name, q.to(device))   # quantized here; the 16-bit draw dies with ``w``
        del w, q
    for module in model.modules():
        if not isinstance(module, bnb.nn.Linear4bit):
            _materialise(module, device, dtype)
    with torch.device(device):   # its inv_freq buffer was made on meta: a fresh one
        model.model.rotary_emb = LlamaRotaryEmbedding(config=cfg)
    left = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.device.type == "meta"]
    if left:
        raise RuntimeError(f"left on the meta device: {left[:5]}")
    return model
