"""Architecture cards: the few sizes of a model that decide its memory, readable offline.

A card comes from presets/models/<name>.yaml (published config.json values, matched by name,
hub id or alias), from a local model folder's config.json, or is the built-in 'tiny-demo'.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StudioError
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

    @property
    def q_dim(self) -> int:
        return self.num_heads * (self.head_dim or self.hidden_size // self.num_heads)

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * (self.head_dim or self.hidden_size // self.num_heads)

    def module_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear in one block, by its usual name."""
        h, i, q, kv = self.hidden_size, self.intermediate_size, self.q_dim, self.kv_dim
        return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
                "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}

    @property
    def layer_linear_params(self) -> int:
        return sum(a * b for a, b in self.module_shapes().values())

    @property
    def layer_params(self) -> int:
        bias = (self.q_dim + 2 * self.kv_dim) if self.attention_bias else 0
        return self.layer_linear_params + bias + 2 * self.hidden_size

    @property
    def embed_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def n_params(self) -> int:
        """Total parameters (untied models count the output head separately)."""
        heads = 1 if self.tie_embeddings else 2
        return self.num_layers * self.layer_params + heads * self.embed_params + self.hidden_size

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "n_params": self.n_params}


# ------------------------------------------------------------------ cards
def available_cards() -> list[str]:
    """Names of the cards shipped in presets/models/ (plus the built-in demo)."""
    return ["tiny-demo"] + sorted(p.stem for p in CARDS_DIR.glob("*.yaml"))


def _card_from_yaml(path: Path) -> ArchCard:
    import yaml
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    names = {f.name for f in dataclasses.fields(ArchCard)}
    unknown = set(data) - names
    if unknown:
        raise StudioError(f"Model card '{path.name}' has unknown keys: {', '.join(sorted(unknown))}",
                          f"use only {', '.join(sorted(names))}")
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
        raise StudioError(f"The model config of '{name}' lacks the size field {exc}",
                          "point to a decoder-only language model's folder (config.json with hidden_size, "
                          "num_hidden_layers, num_attention_heads, vocab_size)") from None
    return ArchCard(
        name=name, hidden_size=hidden, intermediate_size=int(cfg.get("intermediate_size") or 4 * hidden),
        num_layers=layers, num_heads=heads, num_kv_heads=int(cfg.get("num_key_value_heads") or heads),
        vocab_size=vocab, tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        head_dim=cfg.get("head_dim") if cfg.get("head_dim") not in (None, hidden // heads) else None,
        attention_bias=bool(cfg.get("attention_bias", cfg.get("model_type") == "qwen2")),
        source=f"{name}/config.json")


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
        from ..models.loading import DEMO_DEFAULTS as d
        return ArchCard("tiny-demo", d["hidden"], d["intermediate"], d["layers"], d["heads"], d["heads"],
                        d["vocab_size"], tie_embeddings=True, source="studio/models/loading.py DEMO_DEFAULTS")
    path = Path(key).expanduser()
    for folder in (path, path / "base_model"):  # a model folder, or a run folder of a demo run
        if (folder / "config.json").is_file():
            try:
                data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StudioError(f"Cannot read {folder / 'config.json'}", "check that it is valid JSON",
                                  why=str(exc)) from None
            return card_from_hf_config(data, name=str(folder))
    if path.is_file() and path.name.endswith("config.json"):
        return card_from_hf_config(json.loads(path.read_text(encoding="utf-8")), name=str(path.parent))
    wanted = _loose(key)
    for card_path in sorted(CARDS_DIR.glob("*.yaml")):
        card = _card_from_yaml(card_path)
        ids = [i for i in (card.hub_id, *card.aliases) if i]
        names = (card_path.stem, *ids, *(i.split("/")[-1] for i in ids))
        if wanted in {_loose(n) for n in names}:
            return card
    raise StudioError(f"No architecture card for model '{key}'",
                      "use one of: " + ", ".join(available_cards()) + "; or give a local model folder that "
                      "holds config.json", code="model_card")
