"""Which version of a shared run teammates see, and the owner's promote / roll back.

A *line* is a run and everything "Improve this run" made from it (improved_from.json, followed back to the root).
Teammates see the line's live version: the demo page of the line answers with it, and their feedback is recorded
against it. The live version changes only by an owner's promotion (or rollback), recorded in the workspace's
database (FeedbackStore.record_version: who, when), never by Improve finishing. Promotion comes after the verdict
(studio/app/verdict.py): a run without one is refused, and one the gate failed needs the owner to say so
(``anyway``). The role check is the caller's: the page wraps these in ``owner_action``; the command line is the
machine's own user.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..feedback.store import FeedbackStore
from ..runs.run_dir import RunDir
from ..workspace import safe_name
from . import improve, verdict

MAX_DEPTH = 100  # improvements of improvements: a lineage loop (hand-edited files) must not hang a page


def _run_folder(runs_root: str | Path, run: str) -> Path:
    name = safe_name(run, code="name.run")
    folder = Path(runs_root) / name
    if not RunDir(folder).config.is_file():
        raise StudioError.of("improve.no_run", name=name, folder=Path(runs_root))
    return folder


def line_of(runs_root: str | Path, run: str) -> str:
    """The root run of ``run``'s lineage (``run`` itself when it was not made by Improve)."""
    name, seen = run, {run}
    for _ in range(MAX_DEPTH):
        info = improve.lineage(Path(runs_root) / name)
        parent = str(info["run"]) if info else ""
        if not parent or parent in seen:
            return name
        seen.add(parent)
        name = parent
    return name


def stack(store: FeedbackStore, line: str) -> list[str]:
    """The line's versions as teammates saw them, oldest first; the last is live. A promotion adds one, a rollback
    takes the live one off."""
    out = [line]
    for h in store.version_history(line):
        if h["action"] == "promote":
            out.append(h["run"])
        elif len(out) > 1:
            out.pop()
    return out


def live(store: FeedbackStore, runs_root: str | Path, line: str) -> str:
    """The run teammates of ``line`` see now: the newest version whose run folder still has a model."""
    for name in reversed(stack(store, line)):
        if RunDir(Path(runs_root) / name).final_model() is not None:
            return name
    return line


def promote(store: FeedbackStore, runs_root: str | Path, run: str, login: str | None,
            anyway: bool = False) -> dict[str, Any]:
    """Make ``run`` (an improved, finished, judged run) the live version of its line.

    Raises:
        StudioError: not an improved run, not finished, not judged yet, already live, or judged worse without
            ``anyway``.
    """
    folder = _run_folder(runs_root, run)
    if improve.lineage(folder) is None:
        raise StudioError.of("improve.not_improved", name=run)
    if RunDir(folder).final_model() is None:
        raise StudioError.of("improve.unfinished", name=run)
    judged = verdict.stored(folder)
    if judged is None:
        raise StudioError.of("gate.not_judged", run=run)
    if not judged["gate"]["passed"] and not anyway:
        raise StudioError.of("gate.refused", run=run, **{k: judged["gate"][k] for k in ("before", "after", "n")})
    line = line_of(runs_root, run)
    if live(store, runs_root, line) == run:
        raise StudioError.of("gate.already_live", run=run, line=line)
    store.record_version(line, run, "promote", login)
    return {"line": line, "live": run}


def rollback(store: FeedbackStore, runs_root: str | Path, run: str, login: str | None) -> dict[str, Any]:
    """Give ``run``'s line back its previous version (``run``: any run of the line).

    Raises:
        StudioError: the line has no earlier version to go back to.
    """
    line = line_of(runs_root, _run_folder(runs_root, run).name)
    versions = stack(store, line)
    if len(versions) < 2:
        raise StudioError.of("gate.nothing_to_undo", line=line)
    store.record_version(line, versions[-2], "rollback", login)
    return {"line": line, "live": live(store, runs_root, line), "was": versions[-1]}


def lines(store: FeedbackStore, runs_root: str | Path) -> list[dict[str, Any]]:
    """Every line with a promotion: {"line", "live", "versions", "history"} (the Runs tab and the CLI)."""
    return [{"line": line, "live": live(store, runs_root, line), "versions": stack(store, line),
             "history": store.version_history(line)} for line in store.version_lines()]
