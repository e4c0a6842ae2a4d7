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

from ..models import zoo
from ..config.run_config import DEMO_MODEL, RunConfig
from ..errors import StudioError
from ..workspace import confine
from .context import AppContext

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", ".", "~")) or text.endswith((".json", ".jsonl", ".csv")) or os.sep in text


def _local_model(model: str, ctx: AppContext) -> Path | None:
    """The confined folder a model name means, or None for a hub id / tiny-demo.

    A relative name is looked up in the workspace only: a name that exists relative to the server's
    own working folder (e.g. 'studio/assets') would otherwise be read from there by the libraries.
    """
    if model == DEMO_MODEL or zoo.is_builtin(model):
        return None
    local = Path(os.path.expanduser(model))
    local = local if local.is_absolute() else ctx.workspace / local
    if model.startswith(("/", ".", "~")) or local.exists() or not _HUB_ID.match(model) or os.path.lexists(model):
        return confine(model, ctx.allowed_roots)
    return None


DEFAULT_OUTPUT = "runs/latest"  # RunConfig's default: the page names the run after its model and data instead


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^\w.-]+", "-", text).strip("-._")[:limit] or "run"


def run_name(cfg: RunConfig) -> str:
    """A run folder name a person recognises: '<model>-<data>' (every run was 'latest…').

    A used name gets the start time appended by ``resolve_run_paths``.
    """
    model = Path(cfg.model_name_or_path.strip().rstrip("/")).name or "model"
    data = Path((cfg.dataset.split(",")[0] or "data").strip()).stem
    return f"{_slug(model)}-{_slug(data)}"


def estimate_paths(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The config the live estimate may read: model folder and DeepSpeed JSON confined first.

    Raises:
        StudioError: a path outside the allowed roots (the message never says whether it exists).
    """
    changes: dict[str, object] = {}
    target = _local_model(cfg.model_name_or_path.strip(), ctx)
    if target is not None:
        changes["model_name_or_path"] = str(target)
    if cfg.deepspeed and str(cfg.deepspeed).endswith(".json"):
        changes["deepspeed"] = str(confine(cfg.deepspeed, ctx.allowed_roots))
    return dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]


def resolve_run_paths(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The config with every path made absolute and confined; a used run folder gets a fresh name.

    Raises:
        StudioError: a path outside the allowed roots, or a local model folder that does not exist.
    """
    roots = ctx.allowed_roots
    if cfg.trust_remote_code and not getattr(ctx, "allow_remote_code", False):
        raise StudioError("Trust remote code is off for this studio",
                          "untick Trust remote code; whoever runs the server can allow it by starting it with "
                          "'python launch.py --trust-remote-code' (the model's own code would run on the server)",
                          code="remote_code", page_fix="untick Trust remote code on the Settings tab; only whoever "
                          "runs the studio can allow a model's own code to run on the server")
    changes: dict[str, object] = {}
    model = cfg.model_name_or_path.strip()
    target = _local_model(model, ctx)
    if target is not None:
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
    out = confine(cfg.output_dir if cfg.output_dir and cfg.output_dir != DEFAULT_OUTPUT else
                  f"runs/{run_name(cfg)}", roots)
    if (out / "config.yaml").exists():  # every Start is a new run; old ones stay for comparison
        out = out.with_name(f"{out.name}-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 2
        while out.exists():
            out, n = out.with_name(f"{out.name.rsplit('~', 1)[0]}~{n}"), n + 1
    changes["output_dir"] = str(out)
    # every change is a str of the field's own type, so no coercion pass (RunConfig.replace) is needed
    return dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]
