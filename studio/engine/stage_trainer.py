"""What a stage's trainer is built from and what it gives back: the recipe's trainer step hands a ``TrainerInputs``
to the function the stage table names (studio/stages.py ``Stage.trainer``, ``module:function``) and takes a
``BuiltTrainer`` back, as torchtune's setup steps take config parts and return what they build.

Light on purpose (no torch at import): engine/run.py imports it at start-up.
"""
from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from ..config.run_config import RunConfig
from ..data.dataset import split_rows
from ..data.fingerprint import keys_text
from ..data.preference import as_sft_rows
from ..models.precision import PrecisionPlan
from ..runs.run_dir import RunDir
from ..stages import Stage
from ..workspace import atomic_write_text


@dataclass
class TrainerInputs:
    """Everything a stage's trainer may use, built by the recipe's earlier steps.

    rows: the dataset's rows as the stage reads them (its ``rows`` kind), before the held-out split.
    args: the run's TrainingArguments (the studio's own trainer uses them; TRL's trainers build their config
        class from the same fields, engine/arguments.training_arguments).
    callbacks: events, stop requests, the gradient-norm guard and keep-best's, in that order.
    notify: a Notice to the log and the event log; count_tokens: add a batch's tokens to the page's rate.
    selective: the studio's chunked loss applies; batching: engine/batching.card_batching's layout.
    """

    cfg: RunConfig
    stage: Stage
    run: RunDir
    model: Any
    tok: Any
    rows: list[dict[str, Any]]
    device: str
    plan: PrecisionPlan
    args: Any
    callbacks: list[Any]
    notify: Callable[[Any], None]
    count_tokens: Callable[[int], None]
    selective: bool = False
    batching: str = "as_configured"


@dataclass
class BuiltTrainer:
    """A stage's trainer and what the run records of it: counts for status.json (train_rows, val_rows, truncated,
    history_masked, tokenized_from_cache and any of the stage's own), the validation rows or features (None or
    empty: no evaluation), the layer offloader to remove before the final save (SFT's layer-wise offload)."""

    trainer: Any
    counts: dict[str, Any]
    val: list[Any] = field(default_factory=list)
    offloader: Any = None


def build_stage_trainer(inputs: TrainerInputs) -> BuiltTrainer:
    """The stage's own trainer: its table row names the function (imported now: TRL loads only for its stages)."""
    module, _, name = inputs.stage.trainer.partition(":")
    return getattr(importlib.import_module(module), name)(inputs)


def held_out_split(inputs: TrainerInputs) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train rows, held-out rows) of a stage that trains on its rows as read (TRL's trainers): the held-out rows
    are saved into the run folder as instruction rows (their good answers: Evaluate checks the tuned model on them)
    and the training prompts fingerprinted (the leakage check), from the main process, as SFT's prepare_data does."""
    cfg, run = inputs.cfg, inputs.run
    train_rows, val_rows = split_rows(inputs.rows, cfg.val_size, cfg.seed)
    if cfg.max_samples:
        train_rows = train_rows[:cfg.max_samples]
    if os.environ.get("RANK", "0") == "0":
        if val_rows:
            atomic_write_text(run.val_data, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                    for r in as_sft_rows(val_rows)))
        atomic_write_text(run.train_keys, keys_text(train_rows))
    return train_rows, val_rows
