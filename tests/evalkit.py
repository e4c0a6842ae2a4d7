"""Shared builders for the evaluate/export/CLI/UI tests: tiny trained runs, made once per session.

Why the re-initialisation: with transformers' default init (std 0.02) a 32-wide random model
sits on a plateau (learns the answer format, not the label) for well over 160 steps; with
std 0.1 it learns this one-word task in ~40 steps of the real engine, so the suite stays fast. Runs are cached in a
module global because each test module imports these helpers separately.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

INSTRUCTION = "Is this review positive or negative?"
POS = ["great", "excellent", "lovely", "perfect"]
NEG = ["awful", "terrible", "broken", "useless"]
TRAIN_THINGS = ["phone", "book", "kettle", "lamp"]
HELDOUT_THINGS = ["bag", "chair", "watch"]  # unseen nouns: the model must use the sentiment word

_BUILT: dict[str, dict[str, Any]] = {}


def easy_rows(n: int, seed: int, things: list[str]) -> list[dict[str, str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        positive = i % 2 == 0
        word = rng.choice(POS if positive else NEG)
        rows.append({"instruction": INSTRUCTION, "input": f"The {rng.choice(things)} is {word}.",
                     "output": "positive" if positive else "negative"})
    rng.shuffle(rows)
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def reinit(model_dir: Path, std: float = 0.1, seed: int = 0) -> Path:
    """Re-draw every weight matrix with a larger std (norm weights stay 1) and save in place."""
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, std)
    model.save_pretrained(model_dir)
    return model_dir


def build_runs(root: Path) -> dict[str, Any]:
    """A tiny base model, a full fine-tune that learned the task, and a briefly trained LoRA run."""
    key = str(root)
    if key in _BUILT:
        return _BUILT[key]
    import torch
    threads = torch.get_num_threads()
    # one thread: for a 32-wide model, thread sync costs more than it saves, and on a busy
    # 2-core box two spinning threads made these 100 steps 6x slower (36 s vs 5.5 s measured)
    torch.set_num_threads(1)
    try:
        _BUILT[key] = _build(root)
    finally:
        torch.set_num_threads(threads)
    return _BUILT[key]


def _build(root: Path) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts

    root.mkdir(parents=True, exist_ok=True)
    train = easy_rows(160, 0, TRAIN_THINGS)
    heldout = easy_rows(30, 1, HELDOUT_THINGS)
    data = write_jsonl(root / "train.jsonl", train)
    heldout_file = write_jsonl(root / "heldout.jsonl", heldout)
    base = build_tiny_llama(root / "base", demo_texts(train + heldout), hidden=32, layers=2, heads=2,
                            vocab_size=400, seed=0)
    reinit(base)
    common = dict(model_name_or_path=str(base), dataset=str(data), per_device_train_batch_size=16,
                  val_size=0.2, logging_steps=10, save_steps=1000, plot_loss=False, lr_scheduler_type="constant",
                  seed=0)
    full = root / "runs" / "full"
    run_training(RunConfig(**common, output_dir=str(full), finetuning_type="full", max_steps=60,
                           learning_rate=1e-2))
    lora = root / "runs" / "lora"
    run_training(RunConfig(**common, output_dir=str(lora), finetuning_type="lora", max_steps=40,
                           learning_rate=1e-2, lora_rank=8, lora_alpha=16))
    return {"root": root, "base": base, "data": data, "heldout": heldout, "heldout_file": heldout_file,
            "full": full, "lora": lora, "runs_root": root / "runs"}


def spread_out_tiny_model(root: Path) -> tuple[Any, Any]:
    """(model, tokenizer): a tiny Llama built under ``root`` whose weights are spread out (std 0.3), so scores and
    greedy answers differ between rows; the same model for every seed-fixed test that compares two computations."""
    import torch
    from transformers import AutoModelForCausalLM
    from studio.models.loading import build_tiny_llama, demo_texts, load_tokenizer
    from tests.conftest import make_review_rows
    folder = build_tiny_llama(root / "m", demo_texts(make_review_rows(60, seed=3)), hidden=64, layers=2, heads=4,
                              vocab_size=400, seed=1)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" not in name:
                p.normal_(0, 0.3)
    return model, load_tokenizer(str(folder))
