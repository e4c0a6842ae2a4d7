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
from . import improve, verdict, versions
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
    text = " ".join([counts, msg("imp.method_" + p["method"], ctx.lang),
                     msg("imp.taught", ctx.lang, confirmed=p["confirmed"], aside=p["aside"])])
    return text + ("\n\n" + msg(p["warning"], ctx.lang) if p["warning"] else "")


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
        place = run_queue.submit(ctx, cfg, lambda c: resolve_run_paths(c, ctx), by=ctx.user)
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
        judged = verdict.stored(new_run) or _judge(new_run)
    return comparison_markdown(ctx, result) + ("\n\n" + verdict_markdown(ctx, judged) if judged else ""), True


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


# ---- issue 49: the verdict (the gate), promotion and rollback, versions (studio/app/verdict.py, versions.py)
def _judge(new_run: str) -> dict[str, Any] | None:
    """The verdict of a finished improving run, made once (a run made before the gate has no check set: None)."""
    info = improve.lineage(new_run)
    if not info or not verdict.check_rows(new_run):
        return None
    return verdict.judge(new_run, Path(new_run).parent / str(info["run"]))


def verdict_markdown(ctx: AppContext, v: dict[str, Any]) -> str:
    """The gate's line, the flips, per-label F1 before / after and the first flipped rows."""
    g = v["gate"]
    change = v["after"]["accuracy"] - v["before"]["accuracy"]
    lines = [msg(g["code"], ctx.lang, **{k: x for k, x in g.items() if k not in ("passed", "code")}),
             "", verdict.flips_line(v, ctx.lang), "",
             "| " + " | ".join(msg("imp.headers", ctx.lang).split("|")) + " |", "|---|---:|---:|---:|",
             f"| {'chrF' if v.get('graded') else msg('imp.accuracy', ctx.lang)} | {verdict.score_text(v, 'before')} | "
             f"{verdict.score_text(v, 'after')} | {f'{100 * change:+.1f}' if v.get('graded') else f'{change:+.1%}'} |"]
    for lab, c in (v["before"].get("per_label") or {}).items():
        after = v["after"]["per_label"][lab]["f1"]
        lines.append(f"| F1 {lab} | {c['f1']:.3f} | {after:.3f} | {after - c['f1']:+.3f} |")
    flips = [("✅", r) for r in v["right_rows"][:5]] + [("❌", r) for r in v["wrong_rows"][:5]]
    if flips:
        lines += ["", "| " + " | ".join(msg("gate.flipped_head", ctx.lang).split("|")) + " |", "|---|---|---|---|---|"]
        lines += [f"| {mark} | {_cell(r['input'])} | {_cell(r['expected'])} | {_cell(r['before'])} | "
                  f"{_cell(r['after'])} |" for mark, r in flips]
    return "\n".join(lines)


def _cell(text: Any) -> str:
    """A table cell of plain text: no pipe or line break ends the cell (ui/text.py escapes the rest)."""
    return " ".join(str(text).split()).replace("|", "/")[:80]


def latest_judged(ctx: AppContext, run: str | None) -> tuple[str, str | None]:
    """(Markdown, folder) of the newest improved run made from ``run`` with a stored verdict, so reopening the
    box shows the before / after again; ("", None) when there is none."""
    if not run:
        return "", None
    made = [p.path for p in (RunDir(d) for d in ctx.runs_root.iterdir() if d.is_dir())
            if (improve.lineage(p.path) or {}).get("run") == run and verdict.stored(p.path)]
    if not made:
        return "", None
    newest = max(made, key=lambda d: RunDir(d).verdict.stat().st_mtime)
    return verdict_markdown(ctx, verdict.stored(newest) or {}), str(newest)


def promote(ctx: AppContext, new_run: str | None, anyway: bool) -> str:
    """The owner's promotion of the improved run the box shows (the caller checked the role).

    Raises:
        StudioError: nothing judged to promote, or versions.promote's refusals."""
    if not new_run:
        raise StudioError.of("gate.not_judged", run="")
    done = versions.promote(FeedbackStore.in_workspace(ctx.workspace), ctx.runs_root, Path(new_run).name, ctx.user,
                            anyway=bool(anyway))
    return msg("gate.live", ctx.lang, **done)


def rollback(ctx: AppContext, run: str | None) -> str:
    """The owner's rollback of the picked run's line (the caller checked the role)."""
    if not run:
        raise StudioError.of("improve.none_picked")
    done = versions.rollback(FeedbackStore.in_workspace(ctx.workspace), ctx.runs_root, run, ctx.user)
    return msg("gate.live", ctx.lang, line=done["line"], live=done["live"])


def versions_markdown(ctx: AppContext) -> str:
    """Each shared line: its versions in order, the live one, who promoted or rolled back (the Runs tab)."""
    lines = versions.lines(FeedbackStore.in_workspace(ctx.workspace), ctx.runs_root)
    if not lines:
        return msg("runs.no_versions", ctx.lang)
    out = []
    for line in lines:
        chain = " → ".join(line["versions"])
        who = "; ".join(f"{h['action']} {h['run']} ({h['login']})" for h in line["history"][-5:])
        out.append("- " + msg("runs.version_line", ctx.lang, line=line["line"], chain=chain, live=line["live"])
                   + f" · {who}")
    return "\n".join(out)
