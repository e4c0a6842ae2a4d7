"""Keep every path typed into the UI inside its root (RunConfig's ``root`` metadata).

A shared studio must not become a way to read or overwrite any file on the server, so every path field of a
config from the page is resolved (symlinks too) and refused outside the folders of its root: run folders and
checkpoints in the runs folder, data and models in the workspace and --data-root folders, the NVMe swap folder
only inside a --nvme-root the operator named. The command line never comes here: its user owns the machine.
"""
from __future__ import annotations

import dataclasses
import os
import re
import time
from pathlib import Path
from typing import Any

from ..models import zoo
from ..config.run_config import DEEPSPEED_SHORTCUTS, DEMO_MODEL, RunConfig, field_meta
from ..errors import StudioError
from ..runs.run_dir import RunDir
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


def _folders(root: str, ctx: AppContext) -> list[Path]:
    """The folders a field of ``root`` (RunConfig's PATH_ROOTS) may name from the page."""
    if root == "runs":
        return [ctx.runs_root]
    if root == "nvme":
        return list(getattr(ctx, "nvme_roots", []) or [])
    return list(ctx.allowed_roots)  # data, models: the workspace and every --data-root


def _is_name(kind: str | None, value: str, ctx: AppContext) -> bool:
    """True when ``value`` of a field with ``names=kind`` names no file (see RunConfig's PATH_NAMES)."""
    if kind == "model":
        return _local_model(value, ctx) is None
    if kind == "dataset":
        return not _looks_like_path(value)
    if kind == "deepspeed":
        return value in DEEPSPEED_SHORTCUTS or value == "none"
    return kind == "last" and value == "last"


def _confine_one(name: str, root: str, value: str, ctx: AppContext, base: Path) -> Path:
    """``value`` resolved (relative to ``base``) and refused outside the folders of ``root``.

    Raises:
        StudioError: outside those folders; for the NVMe folder, also when the operator named none.
    """
    folders = _folders(root, ctx)
    if root == "nvme" and not folders:
        raise StudioError.of("app.nvme_root")
    p = Path(os.path.expanduser(value.strip()))
    full = p if p.is_absolute() else base / p
    try:  # the same words whether the folder exists or not: the page is no oracle for what lies outside
        return confine(full, folders)
    except StudioError as exc:  # name the path as the person typed it (a value of its code)
        raise exc.with_values(path=value.strip()) from None


def confine_config(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The page's config with every path field (``root`` in its metadata) resolved and confined to its root.

    The one place a config from the page (Settings, Train, the queue) is confined: a field added tomorrow
    with ``root=`` is covered here without a line of code. Values that name no file (a hub id, a dataset
    name, a DeepSpeed shortcut, 'last') stay as they are.

    Raises:
        StudioError: a path outside its root (the message never says whether it exists).
    """
    changes: dict[str, object] = {}
    dataset_dir = ctx.workspace
    for meta in field_meta():
        root, value = meta["root"], getattr(cfg, meta["name"])
        if not root or value is None or (isinstance(value, str) and not value.strip()):
            continue
        items = [v.strip() for v in str(value).split(",") if v.strip()] if meta["many"] else [str(value).strip()]
        out: list[str] = []
        for item in items:
            if _is_name(meta["names"], item, ctx):
                out.append(item)
                continue
            base = ctx.workspace
            if meta["name"] == "dataset" and not Path(item).is_absolute() and (dataset_dir / item).exists():
                base = dataset_dir  # a file named as in dataset_info.json's folder
            if meta["name"] == "offload_nvme_path" and _folders(root, ctx):
                base = _folders(root, ctx)[0]
            out.append(str(_confine_one(meta["name"], root, item, ctx, base)))
        changes[meta["name"]] = ",".join(out)
        if meta["name"] == "dataset_dir":
            dataset_dir = Path(changes["dataset_dir"])  # type: ignore[arg-type]
    # every change is a str of the field's own type, so no coercion pass (RunConfig.replace) is needed
    return dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]


def estimate_paths(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The config the live estimate may read: every path field confined first (``confine_config``).

    Raises:
        StudioError: a path outside the allowed roots (the message never says whether it exists).
    """
    return confine_config(cfg, ctx)


def resolve_run_paths(cfg: RunConfig, ctx: AppContext) -> RunConfig:
    """The config with every path made absolute and confined; a used run folder gets a fresh name.

    Raises:
        StudioError: a path outside the allowed roots, a local model folder that does not exist, a checkpoint
            to resume that is not one.
    """
    if cfg.trust_remote_code and not getattr(ctx, "allow_remote_code", False):
        raise StudioError.of("app.remote_code")
    if cfg.output_dir.strip() in ("", DEFAULT_OUTPUT):
        cfg = dataclasses.replace(cfg, output_dir=f"runs/{run_name(cfg)}")
    if not (cfg.dataset_dir or "").strip():
        cfg = dataclasses.replace(cfg, dataset_dir="data")
    confined = confine_config(cfg, ctx)
    model = cfg.model_name_or_path.strip()
    if confined.model_name_or_path != model:
        target = Path(confined.model_name_or_path)
        if not target.is_dir() and not (target.is_file() and target.suffix.lower() == ".gguf"):
            raise StudioError.of("app.model_missing", model=model, demo=DEMO_MODEL)
    resume = confined.resume_from_checkpoint
    if resume and resume != "last" and not (Path(resume) / "trainer_state.json").is_file():
        raise StudioError.of("app.checkpoint_incomplete", path=cfg.resume_from_checkpoint)
    out = Path(confined.output_dir)
    if (out / "config.yaml").exists():  # every Start is a new run; old ones stay for comparison
        out = out.with_name(f"{out.name}-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 2
        while out.exists():
            out, n = out.with_name(f"{out.name.rsplit('~', 1)[0]}~{n}"), n + 1
    return dataclasses.replace(confined, output_dir=str(out))


def resume_run(ctx: AppContext, path: str | None) -> Any:
    """Resume a stopped run from the page: the run lives in the runs folder, and the paths its saved config names
    are confined as a Start's are (a config.yaml written by hand or by the CLI may name any folder).

    Raises:
        StudioError: a run outside the runs folder, a path of its config outside its root, or nothing to resume.
    """
    target = confine(path, [ctx.runs_root]) if path else None
    run = RunDir(target) if target else ctx.runner.current
    if run is not None and run.config.is_file():
        confine_config(RunConfig.load(run.config), ctx)
    return ctx.runner.resume(target)
