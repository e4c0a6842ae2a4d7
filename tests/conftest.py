"""Shared fixtures: tiny models and labelled review data built locally (no hub access)."""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# tiny models: one thread each is faster than two fighting over small matmuls (and CLI children inherit it)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

INSTRUCTION = "Classify the sentiment of this review as positive or negative."
_POS = ["great", "excellent", "love it", "works well", "very good", "happy with it", "太好了", "很满意", "质量好"]
_NEG = ["terrible", "broke in a week", "awful", "a waste of money", "very bad", "disappointing", "太差了", "不满意",
        "质量差"]
_THINGS = ["phone", "pair of shoes", "book", "kettle", "headset", "手机", "衣服", "外卖"]


def make_review_rows(n: int, seed: int = 0) -> list[dict[str, str]]:
    """Easy labelled reviews: enough signal for a tiny model to learn in a few dozen steps."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        phrase = rng.choice(_POS if positive else _NEG)
        text = f"The {rng.choice(_THINGS)} is {phrase}, {rng.choice(['really', 'honestly', 'overall'])}."
        rows.append({"instruction": INSTRUCTION, "input": text, "output": "positive" if positive else "negative"})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def train_tiny_labels_run(ws: Path, model_dir: Path, name: str = "old") -> Path:
    """ws/runs/NAME: a finished LoRA labels run of the tiny model on 40 reviews (4 steps; 20% held out), the run a
    feedback or Improve test starts from."""
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    (ws / "runs").mkdir(parents=True, exist_ok=True)
    data = write_jsonl(ws / "train.jsonl", make_review_rows(40, seed=2))
    cfg = RunConfig(model_name_or_path=str(model_dir), dataset=str(data), output_dir=str(ws / "runs" / name),
                    finetuning_type="lora", max_steps=4, per_device_train_batch_size=4, logging_steps=1,
                    plot_loss=False, cutoff_len=64, val_size=0.2, gradient_checkpointing=False)
    assert run_training(cfg)["state"] == "finished"
    return Path(cfg.output_dir)


def add_corrections(ws: Path, n: int, accepted: int | None = None, run: str = "old") -> None:
    """n teammates' corrections of wrong answers of ws/runs/RUN in the workspace's feedback store (logins t0, t1,
    ...); the first ``accepted`` (all by default) accepted by the owner, the others left new."""
    from studio.feedback.store import FeedbackStore
    store = FeedbackStore.in_workspace(ws)
    for i, r in enumerate(make_review_rows(n, seed=9)):
        wrong = "negative" if r["output"] == "positive" else "positive"
        fid = store.add(run=run, login=f"t{i}", input=r["input"], answer=wrong, verdict="down",
                        correction=r["output"])
        if accepted is None or i < accepted:
            store.review(fid, reviewer="owner", status="accepted")


@pytest.fixture(scope="session")
def sample_reviews_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("data") / "reviews.jsonl", make_review_rows(240))


@pytest.fixture(scope="session")
def heldout_reviews_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("data") / "heldout.jsonl", make_review_rows(60, seed=99))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama + BPE tokenizer as a normal local model folder, briefly 'pre-trained'.

    A random-init model has tiny embeddings, so adapters (LoRA) on it cannot move the output
    distribution; a short full pre-training on the reviews' text (answers 'yes'/'no', loss on
    the whole text) makes it behave like a real base model that LoRA then adapts to the new labels.
    """
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    root = tmp_path_factory.mktemp("models")
    rows = make_review_rows(300, seed=5)
    base = build_tiny_llama(root / "random-init", demo_texts(rows), hidden=32, layers=2, heads=2,
                            vocab_size=400, seed=0)
    pre = [{**r, "output": "yes" if r["output"] == "positive" else "no"} for r in rows]
    data = write_jsonl(root / "pretrain.jsonl", pre)
    cfg = RunConfig(model_name_or_path=str(base), dataset=str(data), output_dir=str(root / "pretrain"),
                    finetuning_type="full", cutoff_len=64, per_device_train_batch_size=16, learning_rate=3e-3,
                    max_steps=40, logging_steps=20, save_steps=1000, train_on_prompt=True, plot_loss=False)
    run_training(cfg)
    return root / "pretrain" / "model"


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Finished tiny runs (base, LoRA, full, held-out rows) shared by the evaluation and export tests."""
    try:
        from evalkit import build_runs
    except ImportError:  # tests/ as a package
        from tests.evalkit import build_runs
    return build_runs(tmp_path_factory.getbasetemp() / "evalkit")
