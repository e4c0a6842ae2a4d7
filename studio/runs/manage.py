"""Rename and delete run folders (the Runs tab).

Only folders directly under the runner's runs root that hold a run are touched, never the one training now,
and a renamed run's config.yaml is rewritten to its new folder so Resume and `python -m studio train` follow it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..config.run_config import RunConfig
from ..errors import StudioError
from ..workspace import is_inside, plain_name
from .jobs import JobRunner
from .run_dir import RunDir


def _own_run(runner: JobRunner, path: str | Path) -> RunDir:
    """The run folder ``path`` names, checked: under the runs root, a run, not the one training.

    Raises:
        StudioError: outside the runs folder, not a run, or running now.
    """
    run = RunDir(Path(os.path.realpath(path)))
    root = Path(os.path.realpath(runner.runs_root))
    if run.path.parent != root or not is_inside(run.path, root) or not run.config.is_file():
        raise StudioError.of("run.pick", name=Path(path).name)
    current = runner.current
    if runner.busy and current is not None and Path(os.path.realpath(current.path)) == run.path:
        raise StudioError.of("run.training_now", name=run.path.name)
    return run


def rename_run(runner: JobRunner, path: str | Path, new_name: str) -> RunDir:
    """Give a run a name a person recognises; returns the run at its new place.

    Raises:
        StudioError: a bad or taken name, or a run that may not be touched (see ``_own_run``).
    """
    run = _own_run(runner, path)
    name = plain_name(new_name, code="name.new_run")  # the rule its refusal states, nothing looser
    target = run.path.parent / name
    if target.exists():
        raise StudioError.of("run.name_taken", name=name)
    os.rename(run.path, target)
    moved = RunDir(target)
    try:
        cfg = RunConfig.load(moved.config)
        cfg.replace(output_dir=str(target)).save(moved.config)
    except StudioError:
        pass  # an unreadable config stays as it was; the folder is renamed all the same
    return moved


def delete_runs(runner: JobRunner, paths: list[str]) -> int:
    """Delete the given runs (all checked before any is removed); returns how many were deleted.

    Raises:
        StudioError: one of them may not be touched (nothing is deleted then).
    """
    runs = [_own_run(runner, p) for p in paths or []]
    for run in runs:
        shutil.rmtree(run.path)
    return len(runs)
