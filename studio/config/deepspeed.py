"""A run's ``deepspeed`` setting read once: the DeepSpeed JSON it names and the plan it amounts to.

The engine hands the JSON to TrainingArguments; the memory estimate needs only which plan it is (z2, z3-offload,
...). Both read it here, so a file the engine would refuse is refused the same way, with the same words, by the
estimate on the Settings tab before a run starts.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..workspace import PRESETS_DIR
from .lf_keys import resolve_deepspeed_path
from .vocabulary import DEEPSPEED_FILES, DEEPSPEED_SHORTCUTS


def deepspeed_json(spec: str | None) -> dict[str, Any] | None:
    """Shortcut (z2, z3-offload, ...) or JSON path -> the DeepSpeed config (None: no DeepSpeed).

    Raises:
        StudioError: no such file, not JSON, or not a JSON object with a zero_optimization object.
    """
    if not spec or spec == "none":
        return None
    path = PRESETS_DIR / "deepspeed" / DEEPSPEED_FILES[spec] if spec in DEEPSPEED_FILES \
        else Path(resolve_deepspeed_path(spec))
    if not path.is_file():
        raise StudioError.of("engine.deepspeed_missing", spec=spec, choices=list(DEEPSPEED_SHORTCUTS))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise StudioError.of("engine.deepspeed_json", path=path, detail=str(exc)) from None
    if not isinstance(data, dict):
        raise StudioError.of("engine.deepspeed_not_object", path=path, kind=type(data).__name__)
    if not isinstance(data.get("zero_optimization", {}), dict):
        raise StudioError.of("memory.deepspeed_shape", path=path)
    return data


def deepspeed_plan(spec: str | None) -> str:
    """The plan a ``deepspeed`` setting amounts to: one of DEEPSPEED_SHORTCUTS ("none" without DeepSpeed), read
    from the JSON's ZeRO stage and offload devices where it is a file."""
    if not spec or spec in DEEPSPEED_SHORTCUTS:
        return spec or "none"
    zero = (deepspeed_json(spec) or {}).get("zero_optimization", {})
    stage = int(zero.get("stage", 0))
    devices = [(zero.get(k) or {}).get("device", "none") for k in ("offload_optimizer", "offload_param")]
    offload = any(d not in ("none", None) for d in devices)
    if stage >= 3:
        return "z3-nvme" if "nvme" in devices else "z3-offload" if offload else "z3"
    if stage >= 1:
        return "z2-offload" if offload else "z2"
    return "none"
