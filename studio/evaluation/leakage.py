"""Leakage check: how many of the rows being checked were also training rows, and the accuracy on the others.

A score on rows the model trained on measures memory, not what it learned; no peer tool says so. The run keeps
one fingerprint per training prompt (``RunDir.train_keys``, written by the engine); a run made before that file
existed re-derives its training rows with the engine's own seeded split, when its data file is still there.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..config.run_config import trained_config
from ..data.dataset import load_rows, split_rows
from ..data.fingerprint import prompt_key
from ..stages import stage_of
from ..errors import StudioError
from ..runs.run_dir import RunDir


def training_keys(run_path: str | Path) -> set[str] | None:
    """The fingerprints of a run's training prompts; None when they cannot be known (not a run, data gone)."""
    run = RunDir(run_path)
    if run.train_keys.is_file() and run.own(run.train_keys):
        return {line.strip() for line in run.train_keys.read_text(encoding="utf-8").splitlines() if line.strip()}
    if not run.config.is_file():
        return None
    try:
        cfg = trained_config(run.config)
        rows = load_rows(cfg.dataset, cfg.dataset_dir, stage_of(cfg.stage).rows)
        train, _ = split_rows(rows, cfg.val_size, cfg.seed)
    except (StudioError, OSError, ValueError):
        return None
    if cfg.max_samples:
        train = train[:cfg.max_samples]
    return {prompt_key(r) for r in train}


def leakage(rows: Sequence[dict[str, Any]], correct: Sequence[bool], keys: set[str] | None) -> dict[str, Any] | None:
    """``{"rows", "seen_rows", "unseen_rows", "unseen_accuracy"}`` for scored rows and whether each was right;
    None when the training rows are unknown. ``unseen_accuracy`` is None when every row was a training row."""
    if keys is None:
        return None
    seen = [prompt_key(r) in keys for r in rows]
    unseen = [ok for ok, s in zip(correct, seen) if not s]
    return {"rows": len(rows), "seen_rows": sum(seen), "unseen_rows": len(unseen),
            "unseen_accuracy": (sum(unseen) / len(unseen)) if unseen else None}
