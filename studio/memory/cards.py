"""Architecture cards: the few sizes of a model that decide its memory, readable offline.

A card comes from a local model folder's config.json (counted from the model's skeleton on the meta device,
studio/memory/meta_count.py: exact for any architecture transformers knows), or, for models not on disk, from
presets/models/<name>.yaml (published config.json values, matched by name, hub id or alias; the formula below,
checked against the meta count of the same config in tests/memory/test_estimator_meta.py), or is the built-in 'tiny-demo'.
"""
from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import StudioError
from .meta_count import ModelFacts, count_dict
from ..workspace import PRESETS_DIR

CARDS_DIR = PRESETS_DIR / "models"


@dataclass(frozen=True)
class ArchCard:
    """The dimensions of a decoder-only transformer that decide its memory use."""

    name: str
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tie_embeddings: bool = False
    head_dim: int | None = None   # only where it is not hidden/heads (Gemma-2)
    attention_bias: bool = False  # Qwen2 has biases on q/k/v
    hub_id: str = ""
    aliases: tuple[str, ...] = ()  # hub ids of checkpoints with the same architecture
    source: str = ""
    model_type: str = ""          # transformers' model_type: tests build the card's config on meta from it
    # MoE (Mixtral, Qwen-MoE): every layer routes each token to experts_per_token of its experts
    experts: int = 0
    experts_per_token: int = 0
    expert_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    # transformers 5 keeps experts as fused 3D tensors, which bitsandbytes does not quantize and peft's
    # all-linear does not adapt; False models the per-expert nn.Linear layout of transformers 4
    experts_fused: bool = True
    sliding_window: int | None = None
    sliding_layers: int = 0       # layers with local attention (Gemma 3: 5 of every 6)
    exact: ModelFacts | None = None   # counted from the model's skeleton (meta device); overrides the formula

    @property
    def q_dim(self) -> int:
        return self.num_heads * (self.head_dim or self.hidden_size // self.num_heads)

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * (self.head_dim or self.hidden_size // self.num_heads)

    def module_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each nn.Linear in one block, by its usual name (the formula's Llama block)."""
        h, i, q, kv = self.hidden_size, self.intermediate_size, self.q_dim, self.kv_dim
        shapes = {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h)}
        if not self.experts:
            return {**shapes, "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}
        if not self.experts_fused:   # transformers 4's router is an nn.Linear; 5's a TopKRouter weight
            shapes["gate"] = (h, self.experts)
        if self.shared_expert_intermediate_size:
            s = self.shared_expert_intermediate_size
            shapes.update({"gate_proj": (h, s), "up_proj": (h, s), "down_proj": (s, h)})
        return shapes

    def linear_counts(self) -> list[tuple[str, int, int, float]]:
        """(name, in, out, how many per layer) of the nn.Linear modules: what LoRA and bitsandbytes see."""
        if self.exact:
            return [(n, i, o, c / self.num_layers) for n, i, o, c in self.exact.linear_shapes]
        out = [(n, i, o, 1.0) for n, (i, o) in self.module_shapes().items()]
        if self.experts and not self.experts_fused:   # transformers 4: one nn.Linear per expert (w1, w3, w2)
            h, e = self.hidden_size, self.expert_intermediate_size
            out += [("w1", h, e, self.experts), ("w3", h, e, self.experts), ("w2", e, h, self.experts)]
        return out

    @property
    def expert_layer_params(self) -> int:
        """Weights of one layer's routed experts (gate, up, down of each)."""
        if self.exact:
            return self.exact.expert_params // self.num_layers
        return self.experts * 3 * self.hidden_size * self.expert_intermediate_size

    @property
    def layer_linear_params(self) -> int:
        """Weights per layer that bitsandbytes quantizes (nn.Linear; fused experts stay 16-bit)."""
        if self.exact:
            return self.exact.layer_linear // self.num_layers
        return int(sum(i * o * c for _n, i, o, c in self.linear_counts()))

    @property
    def act_intermediate(self) -> int:
        """MLP width one token passes through: a dense MLP, or its experts_per_token experts plus shared ones."""
        if not self.experts:
            return self.intermediate_size
        return self.experts_per_token * self.expert_intermediate_size + self.shared_expert_intermediate_size

    @property
    def layer_params(self) -> int:
        if self.exact:
            return self.exact.layer_total // self.num_layers
        bias = (self.q_dim + 2 * self.kv_dim) if self.attention_bias else 0
        linear = sum(i * o for i, o in self.module_shapes().values())
        router = self.hidden_size * self.experts if self.experts_fused else 0
        return linear + bias + 2 * self.hidden_size + self.expert_layer_params + router

    @property
    def embed_params(self) -> int:
        return self.exact.embed if self.exact else self.vocab_size * self.hidden_size

    @property
    def largest_module(self) -> int:
        """Parameters of the largest module DeepSpeed ZeRO-3 gathers at once (a layer or the embedding)."""
        if self.exact:
            return self.exact.largest_module
        return max(self.layer_params, self.embed_params)

    @property
    def n_params(self) -> int:
        """Total parameters, every expert included (untied models count the output head separately)."""
        if self.exact:
            return self.exact.total
        heads = 1 if self.tie_embeddings else 2
        return self.num_layers * self.layer_params + heads * self.embed_params + self.hidden_size

    @property
    def active_params(self) -> int:
        """Parameters one token passes through: MoE counts experts_per_token of the experts (for FLOPs)."""
        if self.exact:
            return self.exact.active
        idle = self.experts - self.experts_per_token
        return self.n_params - (self.num_layers * self.expert_layer_params * idle // self.experts if idle > 0 else 0)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in dataclasses.asdict(self).items() if k != "exact"}
        return {**d, "n_params": self.n_params, "active_params": self.active_params,
                "counted_on_meta": self.exact is not None}


# ------------------------------------------------------------------ cards
def available_cards() -> list[str]:
    """Names of the cards shipped in presets/models/ (plus the built-in demo)."""
    return ["tiny-demo"] + sorted(p.stem for p in CARDS_DIR.glob("*.yaml"))


def _card_from_yaml(path: Path) -> ArchCard:
    """A shipped card; parsed once per file version (every lookup by name scans all cards, and the Model list
    asks for each of its models on each change of the short form: 7 s of YAML parsing per refresh)."""
    stat = path.stat()
    return _parse_card(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _parse_card(file: str, _mtime_ns: int, _size: int) -> ArchCard:
    path = Path(file)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    names = {f.name for f in dataclasses.fields(ArchCard)}
    unknown = set(data) - names
    if unknown:
        raise StudioError.of("memory.card_keys", file=path.name, keys=sorted(unknown), names=sorted(names))
    data["aliases"] = tuple(data.get("aliases") or ())
    return ArchCard(**{"name": path.stem, "source": f"presets/models/{path.name}", **data})


def card_from_hf_config(cfg: dict[str, Any], name: str = "local") -> ArchCard:
    """Read the sizes out of a transformers config.json (Llama/Qwen/Mistral/Gemma/Phi keys)."""
    cfg = cfg.get("text_config", cfg) if "hidden_size" not in cfg else cfg
    try:
        hidden = int(cfg.get("hidden_size") or cfg["n_embd"])
        heads = int(cfg.get("num_attention_heads") or cfg["n_head"])
        layers = int(cfg.get("num_hidden_layers") or cfg["n_layer"])
        vocab = int(cfg["vocab_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StudioError.of("memory.config_size_missing", name=name, field=str(exc)) from None
    return ArchCard(
        name=name, hidden_size=hidden, intermediate_size=int(cfg.get("intermediate_size") or 4 * hidden),
        num_layers=layers, num_heads=heads, num_kv_heads=int(cfg.get("num_key_value_heads") or heads),
        vocab_size=vocab, tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        head_dim=cfg.get("head_dim") if cfg.get("head_dim") not in (None, hidden // heads) else None,
        attention_bias=bool(cfg.get("attention_bias", cfg.get("model_type") == "qwen2")),
        source=f"{name}/config.json")


def card_config(card: ArchCard) -> dict[str, Any]:
    """The transformers config.json a card stands for (tests build it on meta to check the card's formula)."""
    if not card.model_type:
        raise StudioError.of("memory.card_no_type", card=card.name)
    cfg: dict[str, Any] = {
        "model_type": card.model_type, "hidden_size": card.hidden_size, "intermediate_size": card.intermediate_size,
        "num_hidden_layers": card.num_layers, "num_attention_heads": card.num_heads,
        "num_key_value_heads": card.num_kv_heads, "vocab_size": card.vocab_size,
        "tie_word_embeddings": card.tie_embeddings}
    if card.head_dim:
        cfg["head_dim"] = card.head_dim
    if card.attention_bias and card.model_type != "qwen2":   # Qwen2 always has q/k/v biases
        cfg["attention_bias"] = True
    if card.experts:
        cfg.update(num_experts_per_tok=card.experts_per_token)
        cfg["num_local_experts" if card.model_type == "mixtral" else "num_experts"] = card.experts
        if card.model_type != "mixtral":
            cfg["moe_intermediate_size"] = card.expert_intermediate_size
        if card.shared_expert_intermediate_size:
            cfg["shared_expert_intermediate_size"] = card.shared_expert_intermediate_size
    return cfg


def card_from_facts(facts: ModelFacts, name: str, source: str = "") -> ArchCard:
    """A card whose counts are the skeleton's (``exact``); the sizes fill the activation formula."""
    return ArchCard(
        name=name, hidden_size=facts.hidden, intermediate_size=facts.intermediate, num_layers=facts.layers,
        num_heads=facts.heads, num_kv_heads=facts.kv_heads, vocab_size=facts.vocab, tie_embeddings=facts.head == 0,
        head_dim=facts.head_dim if facts.head_dim != facts.hidden // facts.heads else None,
        attention_bias=facts.linear_bias, model_type=facts.model_type, experts=facts.experts, experts_per_token=facts.experts_per_token,
        expert_intermediate_size=facts.expert_intermediate, shared_expert_intermediate_size=facts.shared_intermediate,
        sliding_window=facts.sliding_window, sliding_layers=facts.sliding_layers, exact=facts,
        source=source or f"{name}/config.json, counted on the meta device")


def card_from_config(cfg: dict[str, Any], name: str = "local") -> ArchCard:
    """The card of a config.json: counted from the model's skeleton on the meta device when transformers knows
    the architecture; else (custom code, no transformers installed) the Llama-block formula of card_from_hf_config."""
    try:
        return card_from_facts(count_dict(cfg), name)
    except (ImportError, ValueError, KeyError, TypeError, AttributeError, RuntimeError):
        # remote-code architectures are never run to count them (their code could do anything)
        return card_from_hf_config(cfg, name)


def _loose(name: str) -> str:
    """'Llama-2-7B', 'llama2-7b' and 'llama_2_7b' name the same card."""
    return "".join(ch for ch in name.lower() if ch.isalnum() or ch in "./")


def load_card(name_or_path: str) -> ArchCard:
    """A card by name (presets/models/<name>.yaml or its hub id), a local model folder, or 'tiny-demo'.

    Raises:
        StudioError: no card of that name and no folder with a config.json there; lists the cards.
    """
    key = str(name_or_path).strip()
    if key == "tiny-demo":
        # start-up: the model loader, 0.01 s at import; `studio estimate --help` loads this module
        from ..models.loading import DEMO_DEFAULTS as d
        return ArchCard("tiny-demo", d["hidden"], d["intermediate"], d["layers"], d["heads"], d["heads"],
                        d["vocab_size"], tie_embeddings=True, source="studio/models/loading.py DEMO_DEFAULTS")
    path = Path(key).expanduser()
    for folder in (path, path / "base_model"):  # a model folder, or a run folder of a demo run
        if (folder / "config.json").is_file():
            try:
                data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StudioError.of("memory.config_unreadable", path=str(folder / "config.json"),
                                     detail=str(exc)) from None
            return card_from_config(data, name=str(folder))
    if path.is_file() and path.name.endswith("config.json"):
        return card_from_config(json.loads(path.read_text(encoding="utf-8")), name=str(path.parent))
    wanted = _loose(key)
    for card_path in sorted(CARDS_DIR.glob("*.yaml")):
        card = _card_from_yaml(card_path)
        ids = [i for i in (card.hub_id, *card.aliases) if i]
        names = (card_path.stem, *ids, *(i.split("/")[-1] for i in ids))
        if wanted in {_loose(n) for n in names}:
            return card
    raise StudioError.of("memory.no_card", model=key, cards=list(available_cards()))
