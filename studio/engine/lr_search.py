"""A small learning-rate search before a run: a few short trials scored on the held-out rows, then the winner.

Why: on a CPU the time budget buys few epochs, and a learning rate off by 2x costs more than an epoch (the derived
plan's 2e-4 under-trained Gemma on 400 Chinese reviews). ``best`` spends part of its time on trying
``learning_rate_search``'s rates for ``search_steps`` updates each, from the same start, each a short run of its own
(``run_training`` on the same rows and seed, in ``<run>/search/lr-<rate>``, scored at its last step by the held-out
check the run itself keeps its best by: engine/held_out.py). The winner has the best held-out score; a tie (accuracy
on a few rows often ties) goes to the lower held-out loss, then to the rate closest to the configured one. The
trials' weights are deleted after; their status and logs stay beside the run.

Not Optuna or Trainer.hyperparameter_search: both need a model_init and run trials in-process on one Trainer,
while a trial here is the studio's whole run (derived batching, token cache, divergence guard, checkpoints) with
its own folder a person can look at.
"""
from __future__ import annotations

import logging
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..config.search import search_rates, trial_steps
from ..config.run_config import RunConfig
from ..notices import Notice
from ..runs.run_dir import RunDir

log = logging.getLogger("studio.engine")
# a trial training in this process (its folder) -> the STOP flag of the run it searches for: a trial is a run of its
# own, with its own flag, so without this Abort on the run waited for the trial to end or for the runner's SIGTERM
_SEARCHING: dict[Path, Path] = {}


def outer_stop_asked(trial: Path) -> bool:
    """True when ``trial`` (a run folder) is a search's trial and a stop was asked for on the run it searches for
    (engine/callbacks.StopRequested)."""
    flag = _SEARCHING.get(Path(trial))
    return flag is not None and flag.exists()


@dataclass(frozen=True)
class Trial:
    learning_rate: float
    metric: str
    score: float
    eval_loss: float | None
    steps: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"learning_rate": self.learning_rate, "metric": self.metric, "score": self.score,
                "eval_loss": self.eval_loss, "steps": self.steps, "seconds": round(self.seconds, 2)}


def trial_config(cfg: RunConfig, run: RunDir, rate: float, steps: int) -> RunConfig:
    """One trial: the run's settings at ``rate`` for ``steps`` updates, scored once at its end."""
    return cfg.replace(learning_rate=rate, learning_rate_search="", search_steps=0, max_steps=steps,
                       output_dir=str(run.path / "search" / f"lr-{rate:g}"), load_best_model_at_end=True,
                       early_stopping_patience=0, eval_steps=steps, save_steps=steps, save_total_limit=1,
                       plot_loss=False, resume_from_checkpoint=None, overwrite_output_dir=True)


def _better(a: Trial, b: Trial, greater: bool, configured: float) -> bool:
    """Whether trial ``a`` beats ``b``: the score, then the held-out loss, then nearness to the configured rate."""
    if a.score != b.score:
        return a.score > b.score if greater else a.score < b.score
    la, lb = a.eval_loss if a.eval_loss is not None else math.inf, b.eval_loss if b.eval_loss is not None else math.inf
    if la != lb:
        return la < lb
    return abs(math.log(a.learning_rate / configured)) < abs(math.log(b.learning_rate / configured))


def search(cfg: RunConfig, run: RunDir, planned_steps: int, train: Callable[[RunConfig], dict[str, Any]],
           stopped: Callable[[], bool] = lambda: False) -> tuple[RunConfig, dict[str, Any], Notice] | None:
    """Run the trials of ``cfg.learning_rate_search`` with ``train`` (``run_training``) and return the config with
    the winning rate, the search's record for status.json and the notice that says what was tried; None when a stop
    was asked for (a trial that trains then stops at its next step; the run ends as stopped)."""
    rates = search_rates(cfg.learning_rate_search)
    steps = trial_steps(cfg, planned_steps)
    trials: list[Trial] = []
    for rate in rates:
        if stopped():
            return None
        started = time.time()
        trial_cfg = trial_config(cfg, run, rate, steps)
        _SEARCHING[Path(trial_cfg.output_dir)] = run.stop_flag
        try:
            summary = train(trial_cfg)
        finally:
            _SEARCHING.pop(Path(trial_cfg.output_dir), None)
        kept = summary.get("kept_best") or {}
        trial = Trial(rate, kept.get("metric", "answer_loss"), float(kept.get("best_value", math.nan)),
                      summary.get("eval_loss"), int(summary.get("step", steps)), time.time() - started)
        trials.append(trial)
        run.append_event({"type": "search", **trial.to_dict()})
        folder = RunDir(trial_config(cfg, run, rate, steps).output_dir)
        for weights in (folder.checkpoints, folder.adapter, folder.model, folder.base_model):
            shutil.rmtree(weights, ignore_errors=True)   # the trial's numbers stay, its weights go
    metric = trials[0].metric
    greater = metric == "accuracy"
    winner = trials[0]
    for t in trials[1:]:
        if _better(t, winner, greater, cfg.learning_rate):
            winner = t
    tied = [t for t in trials if t.score == winner.score]
    why = "score" if len(tied) == 1 else "loss" if winner.eval_loss is not None and \
        len({t.eval_loss for t in tied}) > 1 else "near"
    record = {"trials": [t.to_dict() for t in trials], "winner": winner.learning_rate, "why": why, "steps": steps,
              "metric": metric}
    tried = ", ".join(f"{t.learning_rate:g} → {t.score:.4f}" for t in trials)
    notice = Notice.of(f"lr_search_{why}", tried=tried, winner=f"{winner.learning_rate:g}", metric=metric,
                       value=winner.score, steps=steps,
                       loss=winner.eval_loss if winner.eval_loss is not None else math.nan)
    log.info("learning-rate search: %s", notice)
    return cfg.replace(learning_rate=winner.learning_rate), record, notice
