"""Sensible sampling defaults for the playground and the chat, per model (read without loading any weights).

Order: the built-in model's own entry below; else the model folder's ``generation_config.json`` when its publisher
set sampling values there; else generic values. A run trained to answer with a label gets a short, greedy
playground (its answers are one word; sampling would only add noise to them).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config.run_config import trained_config
from ..errors import StudioError
from ..runs.run_dir import RunDir
from .evaluate import validation_rows
from .metrics import label_set

GENERIC_CHAT = {"max_new_tokens": 256, "temperature": 0.7, "top_p": 0.9}
GENERIC_PLAY = {"max_new_tokens": 128, "temperature": 0.0, "top_p": 1.0}
LABEL_PLAY = {"max_new_tokens": 16, "temperature": 0.0, "top_p": 1.0}

# chat, playground. Why these values:
# - tiny-demo learns labels and a few words: short greedy answers (sampling a random-init model is noise).
# - SmolLM2-135M-Instruct: its model card's example generates with temperature=0.2, top_p=0.9.
# - Gemma 3 270M is a base (continuation) model: Google's generation_config says temperature 1.0, top_p 0.95,
#   top_k 64; at 270M parameters 1.0 wanders off quickly, so the chat starts cooler (0.7) with the same top_p.
BUILTIN: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "tiny-demo": ({"max_new_tokens": 32, "temperature": 0.0, "top_p": 1.0},
                  {"max_new_tokens": 32, "temperature": 0.0, "top_p": 1.0}),
    "smollm2-135m-instruct": ({"max_new_tokens": 256, "temperature": 0.2, "top_p": 0.9},
                              {"max_new_tokens": 128, "temperature": 0.0, "top_p": 1.0}),
    "gemma3-270m": ({"max_new_tokens": 128, "temperature": 0.7, "top_p": 0.95},
                    {"max_new_tokens": 96, "temperature": 0.0, "top_p": 1.0}),
}


def _from_generation_config(folder: Path) -> dict[str, Any] | None:
    """Sampling values the model's publisher put in generation_config.json (None when it sets none)."""
    try:
        data = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("do_sample") or "temperature" not in data:
        return None
    return {"max_new_tokens": int(data.get("max_new_tokens") or GENERIC_CHAT["max_new_tokens"]),
            "temperature": float(data["temperature"]), "top_p": float(data.get("top_p") or 1.0)}


def _base_name(path: Path) -> tuple[str, Path | None]:
    """(the configured base model name, the folder holding the weights to read) of a run or model folder."""
    run = RunDir(path)
    if run.config.exists():
        try:
            cfg = trained_config(run.config)
        except StudioError:
            return "", run.final_model()
        return cfg.model_name_or_path.strip(), run.final_model()
    return "", path


def generation_defaults(path: str | Path | None) -> dict[str, dict[str, Any]]:
    """``{"chat": {max_new_tokens, temperature, top_p}, "play": {...}, "source": why}`` for a run/model folder."""
    if not path:
        return {"chat": dict(GENERIC_CHAT), "play": dict(GENERIC_PLAY), "source": "generic"}
    p = Path(path)
    name, folder = _base_name(p)
    if not name and (p / "studio_gguf.json").is_file() and p.name in BUILTIN:  # a built-in's prepared folder
        name = p.name
    if name in BUILTIN:
        chat, play = (dict(d) for d in BUILTIN[name])
        source = name
    else:
        found = None
        for candidate in (folder, Path(name) if name else None):
            if candidate is not None and candidate.is_dir():
                found = found or _from_generation_config(candidate)
        chat, play = (found or dict(GENERIC_CHAT)), dict(GENERIC_PLAY)
        source = "generation_config.json" if found else "generic"
    if _answers_with_labels(p):
        play = dict(LABEL_PLAY)
    return {"chat": chat, "play": play, "source": source}


def _answers_with_labels(path: Path) -> bool:
    """True when the run's held-out answers are a small label set (a classification run); what
    ``inference.run_labels`` says, read here without importing inference (which imports the GGUF export, which
    reads these defaults for its Modelfile)."""
    try:
        return bool(label_set([r["output"] for r in validation_rows(str(path))]))
    except (StudioError, OSError, ValueError, KeyError):
        return False
