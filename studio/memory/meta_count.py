"""Parameter and shape facts of a model, counted from its skeleton on the meta device.

Why: a formula written for one block (Llama) miscounts GPT-2 (Conv1D, position embeddings, biases), MoE models
(every expert is a weight) and whatever ships next. transformers builds any architecture it knows from its config;
under ``torch.device("meta")`` the tensors have shapes but no storage, so even a 70B model costs no memory and no
weights are read. What bitsandbytes quantizes and what peft's ``all-linear`` adapts are read off the same skeleton
(``nn.Linear`` / ``Conv1D`` modules), so the estimator counts what the engine will really build.

Imports torch and transformers on first use (callers import this module lazily).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


@dataclass(frozen=True)
class ModelFacts:
    """What the skeleton holds. Counts are parameters (not bytes); MoE totals count every expert."""

    model_type: str
    total: int                  # every parameter once (tied head counted once), all experts
    active: int                 # per token: only ``experts_per_token`` of each MoE layer's experts
    embed: int                  # input embedding
    head: int                   # untied output head (0 when tied to the embedding)
    layers: int
    layer_total: int            # all decoder layers together
    layer_linear: int           # weights of nn.Linear / Conv1D in the layers: what bitsandbytes quantizes
    expert_params: int          # fused 3D expert tensors (transformers 5 layout; bitsandbytes leaves them 16-bit)
    largest_module: int         # accelerate's largest layer (calculate_maximum_sizes), in parameters
    linear_shapes: tuple[tuple[str, int, int, int], ...]   # (leaf name, in, out, how many in all layers)
    hidden: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int           # dense MLP width (0 where every layer is MoE)
    experts: int = 0
    experts_per_token: int = 0
    expert_intermediate: int = 0
    shared_intermediate: int = 0
    moe_layers: int = 0
    sliding_window: int | None = None
    sliding_layers: int = 0     # layers with local (sliding-window) attention; the rest attend globally
    linear_bias: bool = False   # some linear of the block has a bias (Qwen2's q/k/v, GPT-2's all)


def _text(config: Any) -> Any:
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _first(cfg: Any, *keys: str, default: Any = 0) -> Any:
    for k in keys:
        v = getattr(cfg, k, None)
        if v:
            return v
    return default


def count(config: Any) -> ModelFacts:
    """Facts of the model ``AutoModelForCausalLM.from_config(config)`` builds (the class the engine loads).

    Raises:
        ValueError / KeyError / ImportError: transformers does not know this architecture (callers fall back).
    """
    # start-up: torch, transformers and accelerate, 1.3 s at import; only counting a model's skeleton needs them
    import torch
    from accelerate.utils import calculate_maximum_sizes
    from transformers import AutoModelForCausalLM
    from transformers.pytorch_utils import Conv1D

    with torch.device("meta"):   # shapes only: no storage, no weights read
        model = AutoModelForCausalLM.from_config(config)
    text = _text(config)
    n_layers = int(_first(text, "num_hidden_layers", "n_layer"))
    total = sum(p.numel() for p in model.parameters())   # parameters() yields a tied weight once
    # the decoder stack: the ModuleList with n_layers entries holding the most parameters
    stacks = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers]
    stack = max(stacks, key=lambda m: sum(p.numel() for p in m.parameters()))
    layer_total = sum(p.numel() for p in stack.parameters())
    shapes: dict[tuple[str, int, int], int] = {}
    layer_linear = expert_params = moe_layers = 0
    bias = False
    for layer in stack:
        has_experts = False
        for name, mod in layer.named_modules():
            if type(mod) is torch.nn.Linear or isinstance(mod, Conv1D):
                i, o = (mod.in_features, mod.out_features) if isinstance(mod, torch.nn.Linear) else \
                    tuple(mod.weight.shape)
                key = (name.rsplit(".", 1)[-1], int(i), int(o))
                shapes[key] = shapes.get(key, 0) + 1
                layer_linear += mod.weight.numel()
                bias = bias or mod.bias is not None
        for _name, p in layer.named_parameters():
            if p.dim() == 3:      # fused experts: (experts, out, in)
                expert_params += p.numel()
                has_experts = True
        moe_layers += has_experts
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings()
    head = out.weight.numel() if out is not None and out.weight is not emb else 0
    experts = int(_first(text, *_EXPERT_KEYS))
    k = int(_first(text, "num_experts_per_tok", "moe_topk"))
    active = total - (expert_params * (experts - k) // experts if experts and k else 0)
    hidden = int(_first(text, "hidden_size", "n_embd"))
    heads = int(_first(text, "num_attention_heads", "n_head"))
    moe_i = int(_first(text, "moe_intermediate_size")) or int(_first(text, "intermediate_size"))
    shared = int(_first(text, "shared_expert_intermediate_size")) or \
        int(_first(text, "n_shared_experts")) * int(_first(text, "moe_intermediate_size"))
    layer_types = list(getattr(text, "layer_types", None) or [])
    window = getattr(text, "sliding_window", None)
    sliding = sum(t == "sliding_attention" for t in layer_types) if layer_types else (n_layers if window else 0)
    _total_bytes, (largest_bytes, _names) = calculate_maximum_sizes(model)
    return ModelFacts(
        model_type=str(getattr(config, "model_type", "")), total=total, active=active, embed=emb.numel(),
        head=head, layers=n_layers, layer_total=layer_total, layer_linear=layer_linear, expert_params=expert_params,
        largest_module=int(largest_bytes) // max(1, emb.element_size()),
        linear_shapes=tuple(sorted((n, i, o, c) for (n, i, o), c in shapes.items())),
        hidden=hidden, vocab=int(text.vocab_size), heads=heads,
        kv_heads=int(_first(text, "num_key_value_heads", default=heads)),
        head_dim=int(_first(text, "head_dim", default=hidden // heads)),
        intermediate=0 if moe_layers == n_layers else int(_first(text, "intermediate_size", "n_inner",
                                                                   default=4 * hidden)),
        experts=experts if moe_layers else 0, experts_per_token=k if moe_layers else 0,
        expert_intermediate=moe_i if moe_layers else 0, shared_intermediate=shared if moe_layers else 0,
        moe_layers=moe_layers, sliding_window=int(window) if window and sliding else None, sliding_layers=sliding,
        linear_bias=bias)


def count_dict(data: dict[str, Any]) -> ModelFacts:
    """Facts from a config.json's contents (``model_type`` picks the architecture)."""
    return _count_json(json.dumps(data, sort_keys=True))


@lru_cache(maxsize=32)
def _count_json(text: str) -> ModelFacts:
    # cached: the page re-estimates on every change, and a 70B skeleton takes a second or two to build
    from transformers import AutoConfig  # start-up: transformers, 1.3 s at import (and torch); as count()
    data = json.loads(text)
    return count(AutoConfig.for_model(data.pop("model_type"), **data))


def count_folder(folder: str | Path) -> ModelFacts:
    """Facts from ``folder/config.json`` (only the config is read; never remote code)."""
    return count_dict(json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")))
