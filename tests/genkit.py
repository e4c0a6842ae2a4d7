"""A tiny generation run, built once per session: a 32-wide model fully fine-tuned to answer reviews as JSON.

The answers are structured (``{"sentiment": "positive"}``), so the generation check has text, fields and a JSON
parse to score; the base (the same re-initialised network, untrained) writes noise. See tests/evalkit.py for why
the weights are re-drawn with a larger std.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

try:
    from evalkit import HELDOUT_THINGS, NEG, POS, TRAIN_THINGS, reinit, write_jsonl
except ImportError:  # tests/ as a package
    from tests.evalkit import HELDOUT_THINGS, NEG, POS, TRAIN_THINGS, reinit, write_jsonl

INSTRUCTION = "Answer with the review's sentiment as JSON."
_BUILT: dict[str, dict[str, Any]] = {}


def json_rows(n: int, seed: int, things: list[str], with_thing: bool = False) -> list[dict[str, str]]:
    """``with_thing``: the answer names the reviewed thing too, so answers are many (a generation task, judged by
    its answer loss) rather than two labels."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        positive = i % 2 == 0
        thing = rng.choice(things)
        answer = {"sentiment": "positive" if positive else "negative", **({"thing": thing} if with_thing else {})}
        rows.append({"instruction": INSTRUCTION, "input": f"The {thing} is {rng.choice(POS if positive else NEG)}.",
                     "output": json.dumps(answer)})
    rng.shuffle(rows)
    return rows


def build_generation_run(root: Path, things: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """{"base", "run", "heldout", "heldout_file", "data"}: a finished full fine-tune and its rows; ``things``: the
    answers name the thing reviewed, one of these (more things, more distinct answers)."""
    key = f"{root}|{things}|{sorted(extra.items())}"
    if key in _BUILT:
        return _BUILT[key]
    import torch
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # see evalkit.build_runs
    try:
        root.mkdir(parents=True, exist_ok=True)
        train, heldout = (json_rows(160, 0, things or TRAIN_THINGS, bool(things)),
                          json_rows(24, 1, things or HELDOUT_THINGS, bool(things)))
        data = write_jsonl(root / "train.jsonl", train)
        base = build_tiny_llama(root / "base", demo_texts(train + heldout), hidden=32, layers=2, heads=2,
                                vocab_size=400, seed=0)
        reinit(base)
        run = root / "runs" / "gen"
        settings = dict(model_name_or_path=str(base), dataset=str(data), output_dir=str(run), finetuning_type="full",
                        per_device_train_batch_size=16, val_size=0.15, logging_steps=10, save_steps=1000,
                        plot_loss=False, lr_scheduler_type="constant", seed=0, max_steps=60, learning_rate=1e-2)
        run_training(RunConfig(**{**settings, **extra}))
    finally:
        torch.set_num_threads(threads)
    _BUILT[key] = {"base": base, "run": run, "data": data, "heldout": heldout,
                   "heldout_file": write_jsonl(root / "heldout.jsonl", heldout), "runs_root": root / "runs"}
    return _BUILT[key]
