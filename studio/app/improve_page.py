"""What the Train tab's "Improve this run" box does, without drawing it: which runs can be improved, what the
feedback holds, queueing the improving run like every Start, and the before / after comparison as Markdown.

The service (datasets, config, lineage, comparison) is app/improve.py, shared with ``python -m studio feedback``.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..feedback.datasets import dataset_names
from ..feedback.store import FeedbackStore
from ..runs import queue as run_queue
from ..runs.run_dir import RunDir
from ..state_files import read_state
from ..words.catalog import msg
from . import improve
from .context import AppContext
from .paths import resolve_run_paths


# the box's timer asks every few seconds while the comparison (two model loads) may still be running: one
# comparison per finished run, computed once under the lock, then answered from here
_compared: dict[str, dict[str, Any]] = {}
_compare_lock = threading.Lock()


def feedback_runs(ctx: AppContext) -> list[tuple[str, str]]:
    """(label, run name) of the finished LoRA runs with accepted feedback, most feedback first."""
    out = []
    for name, n in FeedbackStore.in_workspace(ctx.workspace).accepted_by_run():
        run = RunDir(ctx.runs_root / name)
        if (run.adapter / "adapter_config.json").is_file():
            out.append((msg("imp.choice", ctx.lang, run=name, n=n), name))
    return out


def plan_text(ctx: AppContext, run: str | None, method: str) -> str:
    """'N corrections, M pairs: method X' for the picked run (or why it cannot be improved that way)."""
    if not run:
        return msg("imp.none", ctx.lang)
    p = improve.plan(ctx.workspace, run, method or "auto")
    counts = msg("imp.counts", ctx.lang, corrections=p["corrections"], pairs=p["pairs"])
    if p["method"] is None:
        return counts + " " + msg("imp.no_corrections" if not p["corrections"] else "imp.no_pairs", ctx.lang)
    return counts + " " + msg("imp.method_" + p["method"], ctx.lang)


def _taken(ctx: AppContext, name: str) -> bool:
    """A run folder of that name, or a dataset (registered or its file) of the names its Improve would make."""
    data = Path(ctx.workspace) / "data"
    names = [*dataset_names(f"{name}_feedback"), f"{name}_feedback_replay"]
    registered = read_state(data / "dataset_info.json", kind="json", expect=dict) or {}
    return (ctx.runs_root / name).exists() or any(n in registered or (data / f"{n}.jsonl").exists() for n in names)


def _free_name(ctx: AppContext, run: str) -> str:
    """RUN-improved, else RUN-improved-2, -3, ...: the page never asks for a name, and never reuses a folder or
    another's dataset."""
    name, n = f"{run}-improved", 1
    while _taken(ctx, name):
        n += 1
        name = f"{run}-improved-{n}"
    return name


def queue_improvement(ctx: AppContext, run: str | None, method: str) -> dict[str, Any]:
    """Make the datasets and the config, then start or queue the run as the Start button does.
    Returns {"run": the new run's folder, "place": 0 when it started now, else its place in the queue}.

    Raises:
        StudioError: no run picked, no accepted feedback, a method the feedback cannot train with, a bad path.
    """
    if not run:
        raise StudioError.of("improve.none_picked")
    cfg = improve.prepare(ctx.workspace, run, _free_name(ctx, run), method or "auto")
    try:
        place = run_queue.start_or_queue(ctx, cfg, lambda c: resolve_run_paths(c, ctx), by=ctx.user)
    except StudioError:  # refused (queue full, already queued): nothing of it stays behind
        improve.discard(cfg)
        raise
    return {"run": str(Path(cfg.output_dir)), "place": place}


def progress_text(ctx: AppContext, new_run: str) -> tuple[str, bool]:
    """(Markdown, done) for an improving run: waiting, failed, or the comparison once it finished."""
    state = RunDir(new_run).read_status().get("state")
    name = Path(new_run).name
    if state in ("failed", "aborted"):
        return msg("imp.ended", ctx.lang, run=name, state=state), True
    if state != "finished":
        return msg("imp.waiting", ctx.lang, run=name), False
    with _compare_lock:
        if new_run not in _compared:
            _compared[new_run] = improve.compare(new_run)
        result = _compared[new_run]
    return comparison_markdown(ctx, result), True


def _pct(v: float) -> str:
    return f"{v:.1%}"


def comparison_markdown(ctx: AppContext, result: dict[str, Any]) -> str:
    """Before / after tables, one per row set: accuracy, then each class's F1 for a labels run."""
    info = result["lineage"]
    lines = [msg("imp.head", ctx.lang, new=result["new_run"], old=result["old_run"],
                 n=info.get("feedback_rows"), method=info.get("method"))]
    for key, side in result["sets"].items():
        lines += ["", f"**{msg('imp.set_' + key, ctx.lang, old=result['old_run'])}** (n={side['old']['n']})", "",
                  "| " + " | ".join(msg("imp.headers", ctx.lang).split("|")) + " |", "|---|---:|---:|---:|",
                  f"| {msg('imp.accuracy', ctx.lang)} | {_pct(side['old']['accuracy'])} | "
                  f"{_pct(side['new']['accuracy'])} | {side['delta']['accuracy']:+.1%} |"]
        for lab, change in side["delta"].get("per_class", {}).items():
            lines.append(f"| F1 {lab} | {side['old']['per_class'][lab]['f1']:.3f} | "
                         f"{side['new']['per_class'][lab]['f1']:.3f} | {change:+.3f} |")
    return "\n".join(lines)


def lineage_line(run_path: str | Path, lang: str) -> str:
    """'improved from A with N feedback rows (method)' for a run "Improve this run" made, else ''."""
    info = improve.lineage(run_path)
    if not info:
        return ""
    return msg("runs.lineage", lang, run=info["run"], n=info.get("feedback_rows"), method=info.get("method"))
