"""The held-out score during training: the Evaluate tab's own check, run at every evaluation, so a run keeps its best.

Trainer already computes ``eval_loss`` over the held-out features; what a person judges a labels run by is its
accuracy, and the number the Evaluate tab shows is ``sentiment_eval``'s (score mode: one batched forward per 32 rows,
labels from the KV cache). A generation run is judged by its answer loss, ``evaluation.answer_loss`` (the generation
check's; no decoding, so it stays cheap at every evaluation). ``HeldOutScore`` adds that number to Trainer's
metrics in ``on_evaluate``, which Trainer calls before it picks its best checkpoint (``metric_for_best_model``,
``load_best_model_at_end``) and before the early stop (``PlateauStop``, transformers' ``EarlyStoppingCallback`` with a
rule for noisy scores) reads the same metrics: the library keeps the best checkpoint, the studio supplies the score.
``kept_best`` says afterwards which step was kept and why.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from transformers import EarlyStoppingCallback, TrainerCallback

from ..config.run_config import RunConfig
from ..evaluation.answer_loss import answer_loss
from ..evaluation.evaluate import sentiment_eval
from ..evaluation.generation_check import task_of
from ..evaluation.metrics import label_set
from ..notices import Notice
from .attention import masked_attention

log = logging.getLogger("studio.engine")


def held_out_metric(rows: Sequence[dict[str, Any]]) -> tuple[str, bool, list[str] | None]:
    """(metric name, greater is better, the labels): ``accuracy`` when the answers are a few labels (the rule the
    Evaluate tab uses, ``task_of``; the labels of all the rows, so a small held-out share missing one is still
    scored against every label), else ``answer_loss``."""
    if task_of(rows) == "sentiment":
        return "accuracy", True, label_set([str(r.get("output", "")) for r in rows])
    return "answer_loss", False, None


# Why the score and not the held-out loss picks the kept checkpoint of a labels run: neither is right on both
# measured runs. Gemma on 400 Chinese reviews (bench/keep_best.py --arms trajectory, every checkpoint scored on 250
# test reviews): the accuracy's peak on 40 held-out rows (0.875, step 28) scored 0.796 on the test set, the lowest
# held-out loss (the last step) 0.832. tiny-demo on the sample reviews (the page's default path, trained from
# scratch): the loss bottoms out early and rises while the accuracy still climbs (its lowest loss kept 0.698 on the
# held-out rows against 0.721 at the accuracy's peak, and the default path fell below its 0.6 bar). The accuracy
# is the number a person judges a labels run by. A smooth score of it, the mean probability of the right label, was
# read off the same 13 Gemma checkpoints: it peaks at step 32 (test 0.800), no better than the accuracy there.


def keeps_best(cfg: RunConfig) -> bool:
    """Whether this run scores its held-out rows at each evaluation and keeps the best checkpoint."""
    return bool(cfg.val_size) and (cfg.load_best_model_at_end or cfg.early_stopping_patience > 0)


class HeldOutScore(TrainerCallback):
    """Adds ``eval_<metric>`` (the Evaluate tab's number on the run's held-out rows) to each evaluation's metrics.

    Must come before ``PlateauStop`` in the callback list: both read the same metrics dict in order."""

    def __init__(self, metric: str, model: Any, tokenizer: Any, template: Any, rows: Sequence[dict[str, str]],
                 emit: Callable[[dict[str, Any]], None], labels: Sequence[str] | None = None) -> None:
        self.metric, self.model, self.tok, self.template = metric, model, tokenizer, template
        self.rows = [{k: str(r.get(k, "")) for k in ("instruction", "input", "output")} for r in rows]
        self.labels = list(labels) if labels else None
        self.emit = emit
        self.history: list[tuple[int, float]] = []

    def score(self) -> float:
        with masked_attention(self.model):  # its batches are left-padded: the mask must count
            return self._score()

    def _score(self) -> float:
        if self.metric == "accuracy":
            return float(sentiment_eval(self.model, self.tok, self.template, self.rows, self.labels, "score",
                                        max_misclassified=0)["accuracy"])
        # merge=False: the weights stay exactly as training left them (merging and unmerging rounds them)
        return float(answer_loss(self.model, self.tok, self.template, self.rows, merge=False).loss)

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: dict | None = None, **kw: Any) -> None:
        if metrics is None:
            return
        # the answer loss is what Trainer's evaluation has just computed over the same held-out features (the
        # studio's loss at the answer tokens; tests/engine/test_keep_best.py holds the kept model's answer_loss()
        # to it): scored again it would double each evaluation's cost for the same number
        loss = metrics.get("eval_loss") if self.metric == "answer_loss" else None
        value = float(loss) if loss is not None else self.score()
        metrics[f"eval_{self.metric}"] = value
        if state.log_history and "eval_loss" in state.log_history[-1]:
            state.log_history[-1][f"eval_{self.metric}"] = value   # trainer_state.json keeps it beside eval_loss
        self.history.append((state.global_step, value))
        self.emit({"type": "held_out", "step": state.global_step, "metric": self.metric, "value": value})


class PlateauStop(EarlyStoppingCallback):
    """transformers' early stop, where a check gains when the held-out score OR the held-out loss improves.

    Why not the stock rule (one metric): on a few dozen held-out rows accuracy moves in steps of several points and
    is noisy. Measured (bench/keep_best.py, Gemma, 400 Chinese reviews, 40 held out): accuracy 0.800 at step 28, then
    0.650 / 0.600 / 0.650 while the learning rate was still high, and 0.825 at step 48; the stock rule with a
    patience of 3 stopped at step 40 and kept a model that scored 0.732 on the test set, against 0.820 for the full
    run's best. The loss is the smooth signal beside it; a run stops when neither has improved for the patience.
    The counter and its state (resume) are EarlyStoppingCallback's."""

    def __init__(self, patience: int, metric: str, greater: bool) -> None:
        super().__init__(early_stopping_patience=patience)
        self.metric, self.greater = f"eval_{metric}", greater
        self.best_score: float | None = None
        self.best_loss: float | None = None

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: dict | None = None, **kw: Any) -> None:
        metrics = metrics or {}
        score, loss = metrics.get(self.metric), metrics.get("eval_loss")
        gained = False
        if score is not None and (self.best_score is None or
                                  (score > self.best_score if self.greater else score < self.best_score)):
            self.best_score, gained = score, True
        if loss is not None and (self.best_loss is None or loss < self.best_loss):
            self.best_loss, gained = loss, True
        self.early_stopping_patience_counter = 0 if gained else self.early_stopping_patience_counter + 1
        if self.early_stopping_patience_counter >= self.early_stopping_patience:
            control.should_training_stop = True


def keep_best_callbacks(cfg: RunConfig, metric: tuple[str, bool, list[str] | None], model: Any, tokenizer: Any,
                        template: Any, rows: Sequence[dict[str, str]], emit: Callable[[dict[str, Any]], None]
                        ) -> list[Any]:
    """The score first, then the early stop (when a patience is set), which reads it."""
    out: list[Any] = [HeldOutScore(metric[0], model, tokenizer, template, rows, emit, metric[2])]
    if cfg.early_stopping_patience > 0:
        out.append(PlateauStop(cfg.early_stopping_patience, metric[0], metric[1]))
    return out


def kept_best(state: Any, metric: str, score: HeldOutScore, max_steps: int, patience: int) -> tuple[dict, Notice]:
    """What the run kept and why: the best step and its score, the last step's, whether it stopped early."""
    last_step, last_value = score.history[-1] if score.history else (state.global_step, None)
    best = {"metric": metric, "best_step": state.best_global_step, "best_value": state.best_metric,
            "last_step": last_step, "last_value": last_value, "steps": state.global_step, "max_steps": max_steps,
            "stopped_early": patience > 0 and state.global_step < max_steps, "patience": patience,
            "evaluations": len(score.history)}
    code = "kept_best_early" if best["stopped_early"] else "kept_best"
    return best, Notice.of(code, metric=metric, step=best["best_step"], value=best["best_value"],
                           last_step=last_step, last=last_value if last_value is not None else float("nan"),
                           steps=state.global_step, max_steps=max_steps, patience=patience)


KEEP_BEST = (HeldOutScore, EarlyStoppingCallback)   # what a run without held-out features drops again
