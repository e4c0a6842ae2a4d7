"""Keep every path typed into the UI inside the allowed roots (workspace + --data-root).

A shared studio must not become a way to read or overwrite any file on the server, so model,
data, output and DeepSpeed paths are resolved (symlinks too) and refused outside the roots.
"""
from __future__ import annotations

import dataclasses
import os
import re
import time
from pathlib import Path

from .. import zoo
from ..config import DEMO_MODEL, RunConfig
from ..errors import StudioError
from ..workspace import confine
from .context import AppContext

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", ".", "~")) or text.endswith((".json", ".jsonl", ".csv")) or os.sep in text


def resolve_run_paths(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The config with every path made absolute and confined; a used run folder gets a fresh name.

    Raises:
        StudioError: a path outside the allowed roots, or a local model folder that does not exist.
    """
    roots = ctx.allowed_roots
    changes: dict[str, object] = {}
    model = cfg.model_name_or_path.strip()
    if model != DEMO_MODEL and not zoo.is_builtin(model):
        local = Path(os.path.expanduser(model))
        local = local if local.is_absolute() else ctx.workspace / local
        if model.startswith(("/", ".", "~")) or local.exists() or not _HUB_ID.match(model):
            target = confine(model, roots)
            if not target.is_dir() and not (target.is_file() and target.suffix.lower() == ".gguf"):
                raise StudioError(f"Model folder '{model}' does not exist",
                                  "pick an existing folder with config.json, a hub id such as Qwen/Qwen2.5-0.5B, "
                                  f"or '{DEMO_MODEL}'", code="path")
            changes["model_name_or_path"] = str(target)
    dataset_dir = confine(cfg.dataset_dir or "data", roots)
    changes["dataset_dir"] = str(dataset_dir)
    names = []
    for name in (n.strip() for n in cfg.dataset.split(",") if n.strip()):
        if _looks_like_path(name):
            rel = Path(name)
            base = dataset_dir / rel if not rel.is_absolute() and (dataset_dir / rel).exists() else name
            names.append(str(confine(base, roots)))
        else:
            names.append(name)  # a dataset_info.json entry
    changes["dataset"] = ",".join(names)
    if cfg.deepspeed and str(cfg.deepspeed).endswith(".json"):
        changes["deepspeed"] = str(confine(cfg.deepspeed, roots))
    out = confine(cfg.output_dir or "runs/latest", roots)
    if (out / "config.yaml").exists():  # every Start is a new run; old ones stay for comparison
        out = out.with_name(f"{out.name}-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 2
        while out.exists():
            out, n = out.with_name(f"{out.name.rsplit('~', 1)[0]}~{n}"), n + 1
    changes["output_dir"] = str(out)
    # every change is a str of the field's own type, so no coercion pass (RunConfig.replace) is needed
    return dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]
