"""The first accuracy number without asking: a finished run with held-out rows is scored once, in the background.

A newcomer's question after Start is "did it work?"; the answer should appear where they are
looking (the Train tab's status), not two tabs and three buttons later. The scoring is the Evaluate
tab's own check (``studio.evaluation.inference.sentiment_check`` on the run's validation rows), run
in a thread so the status poll never waits for it; the result is cached per run folder.
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..evaluation import inference
from .context import AppContext
from ..words.catalog import msg
from ..workspace import atomic_write_text

log = logging.getLogger("studio.app")
_LOCK = threading.Lock()
ACCURACY_FILE = "studio_accuracy.json"


def _results(ctx: AppContext) -> dict[str, Any]:
    return ctx.extra.setdefault("auto_eval", {})


def _score(ctx: AppContext, run: str) -> None:
    try:
        r = inference.sentiment_check(run)
        result: Any = {"accuracy": r["accuracy"], "n": r["n"]}
    except StudioError as exc:   # not a sentiment run, or no held-out rows: nothing to show
        result = {"skip": exc.page_message}
    except Exception:  # never let scoring break the status poll
        log.exception("automatic accuracy check of %s failed", run)
        result = {"skip": "error"}
    with _LOCK:
        _results(ctx)[run] = result
    if "accuracy" in result:  # kept with the run, so the Runs view and a restarted server know it
        atomic_write_text(Path(run) / ACCURACY_FILE, json.dumps(result))


def stored(run: str) -> dict[str, Any] | None:
    """The accuracy saved in a run folder by an earlier check (None when it was never scored)."""
    try:
        return json.loads((Path(run) / ACCURACY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ensure_scored(ctx: AppContext, run: str) -> dict[str, Any] | None:
    """The run's accuracy if known; else start scoring it (finished runs with held-out rows) and return None."""
    known = stored(run)
    if known:
        return known
    with _LOCK:
        if run in _results(ctx):
            result = _results(ctx)[run]
            return result if "accuracy" in result else None
        if not (Path(run) / "val.jsonl").is_file():
            return None
        _results(ctx)[run] = {"pending": True}
    threading.Thread(target=_score, args=(ctx, run), daemon=True, name="auto-eval").start()
    return None


def accuracy_line(ctx: AppContext, snap: dict[str, Any]) -> str:
    """The held-out accuracy of a finished run ('' while it is computed, or when the run has none)."""
    run = snap.get("run")
    if not run or snap.get("state") != "finished" or not snap.get("final_model"):
        return ""
    if not (Path(run) / "val.jsonl").is_file():
        return msg("auto.no_val", ctx.lang)
    with _LOCK:
        result = _results(ctx).get(run) or stored(run)
        if result is None:
            _results(ctx)[run] = {"pending": True}
            threading.Thread(target=_score, args=(ctx, run), daemon=True, name="auto-eval").start()
            result = {"pending": True}
    if result.get("pending"):
        return msg("auto.pending", ctx.lang)
    if "accuracy" in result:
        return msg("auto.accuracy", ctx.lang, acc=result["accuracy"], n=result["n"])
    return ""
