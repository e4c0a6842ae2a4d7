"""The first accuracy number without asking: a finished run with held-out rows is scored once, in the background.

A newcomer's question after Start is "did it work?"; the answer should appear where they are
looking (the Train tab's status), not two tabs and three buttons later. The scoring is the Evaluate
tab's own check (``studio.evaluation.inference.sentiment_check`` on the run's validation rows), run
in a thread so the status poll never waits for it; the result is cached per run folder.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from ..errors import StudioError
from .context import AppContext
from .i18n import msg

log = logging.getLogger("studio.ui")
_LOCK = threading.Lock()


def _results(ctx: AppContext) -> dict[str, Any]:
    return ctx.extra.setdefault("auto_eval", {})


def _score(ctx: AppContext, run: str) -> None:
    from ..evaluation import inference
    try:
        r = inference.sentiment_check(run)
        result: Any = {"accuracy": r["accuracy"], "n": r["n"]}
    except StudioError as exc:   # not a sentiment run, or no held-out rows: nothing to show
        result = {"skip": exc.message}
    except Exception:  # never let scoring break the status poll
        log.exception("automatic accuracy check of %s failed", run)
        result = {"skip": "error"}
    with _LOCK:
        _results(ctx)[run] = result


def accuracy_line(ctx: AppContext, snap: dict[str, Any]) -> str:
    """The held-out accuracy of a finished run ('' while it is computed, or when the run has none)."""
    run = snap.get("run")
    if not run or snap.get("state") != "finished" or not snap.get("final_model"):
        return ""
    if not (Path(run) / "val.jsonl").is_file():
        return msg("auto.no_val", ctx.lang)
    with _LOCK:
        result = _results(ctx).get(run)
        if result is None:
            _results(ctx)[run] = {"pending": True}
            threading.Thread(target=_score, args=(ctx, run), daemon=True, name="auto-eval").start()
            result = {"pending": True}
    if result.get("pending"):
        return msg("auto.pending", ctx.lang)
    if "accuracy" in result:
        return msg("auto.accuracy", ctx.lang, acc=result["accuracy"], n=result["n"])
    return ""
