"""The training run that improves a finished LoRA run with its teammates' feedback (the service under "Improve
this run" on the Train tab and ``python -m studio feedback improve``).

It continues the old run's adapter (``adapter_name_or_path``) on the same base, template and token budget, by one
of two methods:

* ``sft``: SFT on the corrections mixed with a seeded replay of the old run's own training rows, so the run does
  not forget what it knew;
* ``dpo``: DPO on (correction, the model's answer) pairs, its reference being the old adapter.

``auto`` (the default everywhere) picks SFT with replay for a labels run and DPO for an instruction / chat run
that has preference pairs (SFT when it has none). Why: a label is one token or two, so a pair of labels pushes one
label up against the other, and without the replay that push is not held back: on 49 label corrections of a
Gemma-3-270M review run, DPO gave every held-out row one label (0.50 on a balanced set) while SFT with replay kept
0.85 and learned 38 of the 49 corrections (bench/feedback_loop.py; docs/BENCHMARKS.md, "Improving a run from
feedback"). Free text has many right answers, where "this one, not that one" is the clearer signal. DPO also runs
the chosen and the rejected answer of each pair and a reference pass, so it costs more per row.

The new run folder records where it came from (RunDir.lineage, improved_from.json).
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from ..config.run_config import DEMO_MODEL, RunConfig
from ..data.convert import write_jsonl
from ..data.registry import register_dataset
from ..data.dataset import load_rows, split_rows
from ..errors import StudioError
from ..runs.run_dir import RunDir
from ..workspace import atomic_write_text

REPLAY_PER_CORRECTION = 4  # old training rows replayed per correction (at most all of them)
METHODS = ("auto", "sft", "dpo")


def pick_method(made: dict[str, Any], method: str = "auto", labels_run: bool = False) -> str:
    """"sft" or "dpo" for ``method`` (auto / sft / dpo); see the module docstring for why auto picks as it does.
    ``labels_run``: the old run answers with a few labels (the caller knows: evaluation's label_task, a layer up).

    Raises:
        StudioError: an unknown method, or one the feedback has no rows for.
    """
    if method not in METHODS:
        raise StudioError.of("feedback.method", method=method)
    if method == "auto":
        return "dpo" if "ranking" in made and not labels_run else "sft"
    if method == "dpo" and "ranking" not in made:
        raise StudioError.of("feedback.no_pair")
    return method


def improvement_config(run_path: str | Path, made: dict[str, Any], data_dir: str | Path, output_dir: str | Path,
                       *, seed: int = 42, method: str = "auto", labels_run: bool = False) -> RunConfig:
    """The config of the improving run, from ``made`` (feedback.datasets.make_datasets' answer for this run),
    ``method`` (auto / sft / dpo) and whether the old run is a labels run (both for pick_method).

    Raises:
        StudioError: the run is not a finished LoRA run, or ``made`` holds no correction.
    """
    run = RunDir(run_path)
    old = RunConfig.load(run.config)
    if old.finetuning_type != "lora" or not (run.adapter / "adapter_config.json").is_file():
        raise StudioError.of("feedback.no_adapter", run=run.path.name)
    base = str(run.base_model) if old.model_name_or_path == DEMO_MODEL else old.model_name_or_path
    common: dict[str, Any] = {**old.to_dict(), "model_name_or_path": base, "adapter_name_or_path": str(run.adapter),
                              "dataset_dir": str(data_dir), "output_dir": str(output_dir), "val_size": 0.0,
                              "resume_from_checkpoint": None, "overwrite_output_dir": False, "seed": seed}
    chosen = pick_method(made, method, labels_run) if ("sft" in made or "ranking" in made) else ""
    if chosen == "dpo":
        cfg = RunConfig.from_dict({**common, "stage": "dpo", "dataset": made["ranking"]["name"],
                                   "packing": False, "neat_packing": False, "dynamic_batching": False})
        rows = made["ranking"]["rows"]
    elif chosen == "sft" and "sft" in made:
        name = made["sft"]["name"] + "_replay"
        fixes = load_rows(made["sft"]["name"], str(data_dir))
        try:
            old_rows, _ = split_rows(load_rows(old.dataset, old.dataset_dir), old.val_size, old.seed)
        except StudioError:
            old_rows = []  # the old data moved: corrections alone (said in the lineage)
        replay = random.Random(seed).sample(old_rows, min(len(old_rows), REPLAY_PER_CORRECTION * len(fixes)))
        mixed = fixes + replay
        random.Random(seed).shuffle(mixed)
        path = write_jsonl(mixed, Path(data_dir) / f"{name}.jsonl")
        register_dataset(data_dir, name, path, mixed)
        cfg = RunConfig.from_dict({**common, "stage": "sft", "dataset": name})
        rows = len(fixes)
        cfg.notices = [f"replay: {len(replay)} of the old run's training rows mixed with {len(fixes)} corrections"]
    else:
        raise StudioError.of("feedback.no_correction", run=run.path.name)
    # the feedback rows (always the corrections) are named so that the comparison can score both runs on them
    cfg.lineage = {"run": run.path.name, "method": cfg.stage, "feedback_rows": rows,  # type: ignore[attr-defined]
                   "feedback_data": made["sft"]["name"] if "sft" in made else None, "data_dir": str(data_dir)}
    return cfg


def record_lineage(cfg: RunConfig) -> None:
    """Write the improving run's origin into its folder (the Runs tab and the CLI read it)."""
    lineage = getattr(cfg, "lineage", None)
    if lineage:
        out = RunDir(cfg.output_dir).ensure()
        atomic_write_text(out.lineage, json.dumps(lineage, ensure_ascii=False))
