"""Real-card checks (marked ``gpu``; skipped without CUDA): each method's CUDA peak against the estimator, and
bf16 mixed precision as the engine really runs it. bench/gpu_check.sh runs these and collects the numbers.

The model is a ~0.5B-parameter Llama built locally with random weights (no hub): big enough that weights,
gradients and optimizer states dominate the peak, as on a real fine-tune, small enough for a few minutes in all.
Measured peaks go to $OUT/gpu_memory.json when OUT is set.
"""
from __future__ import annotations

import gc
import json
import os
import random
from pathlib import Path

import pytest
import torch

from studio.config.run_config import RunConfig
from studio.runs.run_dir import RunDir

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA card")]

SEQ, BATCH = 512, 4
# hidden 2048, 8 layers, MLP 5632: 0.43B in the layers + embeddings of a ~3k vocabulary
DIMS = dict(hidden=2048, layers=8, heads=16, intermediate=5632, vocab_size=3000)
METHODS = {
    "full": dict(finetuning_type="full", learning_rate=1e-5),
    "full+ckpt": dict(finetuning_type="full", learning_rate=1e-5, gradient_checkpointing=True),
    "full+pure_bf16": dict(finetuning_type="full", learning_rate=1e-5, pure_bf16=True),
    "full+adamw_8bit": dict(finetuning_type="full", learning_rate=1e-5, optim="adamw_8bit"),
    "freeze": dict(finetuning_type="freeze", freeze_trainable_layers=2, learning_rate=1e-5),
    "lora": dict(finetuning_type="lora", learning_rate=1e-4),
    "qlora4": dict(finetuning_type="lora", quantization_bit=4, learning_rate=1e-4, gradient_checkpointing=True),
}
_RESULTS: dict[str, dict] = {}


def _rows(n: int, seed: int = 0) -> list[dict[str, str]]:
    """Rows long enough that every one is cut at cutoff_len: every step sees exactly SEQ x BATCH tokens."""
    rng = random.Random(seed)
    words = ["great", "kettle", "broke", "delivery", "colour", "manual", "price", "service", "box", "daily"]
    return [{"instruction": "Summarise the review.", "input": " ".join(rng.choice(words) for _ in range(900)),
             "output": "fine"} for _ in range(n)]


@pytest.fixture(scope="module")
def gpu_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from studio.models.loading import build_tiny_llama, demo_texts
    root = tmp_path_factory.mktemp("gpu")
    rows = _rows(64)
    data = root / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    model = build_tiny_llama(root / "model", demo_texts(rows[:16]), init_std=0.02, **DIMS)
    return model, data


def _cfg(gpu_model: tuple[Path, Path], out: Path, **kw) -> RunConfig:
    model, data = gpu_model
    base = dict(model_name_or_path=str(model), dataset=str(data), output_dir=str(out), cutoff_len=SEQ,
                per_device_train_batch_size=BATCH, train_on_prompt=True, max_steps=6, logging_steps=1,
                save_steps=1000, lr_scheduler_type="constant", plot_loss=False, oom_adaptive=False)
    base.update(kw)
    return RunConfig(**base)


def _record(name: str, row: dict) -> None:
    _RESULTS[name] = row
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "gpu_memory.json").write_text(json.dumps(_RESULTS, indent=1), encoding="utf-8")


@pytest.mark.parametrize("name", list(METHODS))
def test_cuda_peak_matches_the_estimate(name: str, gpu_model, tmp_path) -> None:
    from studio.engine import run_training
    from studio.memory.estimator import GB, estimate
    cfg = _cfg(gpu_model, tmp_path / name, **METHODS[name])
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()   # what earlier runs in this process left on the card, if anything
    summary = run_training(cfg)
    peak = (torch.cuda.max_memory_allocated() - base) / GB
    reserved = torch.cuda.max_memory_reserved() / GB
    gc.collect()
    left = (torch.cuda.memory_allocated() - base) / GB   # what this run left allocated after it returned
    est = estimate(cfg.replace(model_name_or_path=str(gpu_model[0])))
    predicted = est.gpu_gb - est.breakdown["overhead"]   # the estimator's tensors, without context/fragmentation
    tokens = [e["tokens_per_s"] for e in RunDir(cfg.output_dir).events() if e["type"] == "progress"]
    _record(name, {"peak_allocated_gb": round(peak, 3), "peak_reserved_gb": round(reserved, 3),
                   "estimate_gb": round(est.gpu_gb, 3), "estimate_tensors_gb": round(predicted, 3),
                   "ratio": round(peak / predicted, 3), "tokens_per_s": tokens[-1] if tokens else None,
                   "left_after_run_gb": round(left, 3), "base_gb": round(base / GB, 3),
                   "state": summary["state"]})
    assert summary["state"] == "finished"
    assert 0.75 <= peak / predicted <= 1.25, _RESULTS[name]


def test_bf16_mixed_precision_on_the_card(gpu_model, tmp_path, monkeypatch) -> None:
    """Default on a bf16 card: fp32 master weights and Adam states, bf16 matmuls; the loss falls."""
    from studio.engine import run_training
    from studio.engine.studio_trainer import StudioTrainer
    assert torch.cuda.is_bf16_supported(), "this check needs a bf16 card (Ampere or newer)"
    seen: dict = {}
    real = StudioTrainer.training_step

    def watch(self, model, inputs, *a, **k):
        if not seen:
            seen["weights"] = {p.dtype for p in model.parameters() if p.requires_grad}
            seen["device"] = {p.device.type for p in model.parameters()}
            proj = next(m for n, m in model.named_modules() if n.endswith("q_proj"))
            handle = proj.register_forward_hook(lambda m, i, o: seen.setdefault("matmul", o.dtype) and None)
            try:
                return real(self, model, inputs, *a, **k)
            finally:
                handle.remove()
        return real(self, model, inputs, *a, **k)

    monkeypatch.setattr(StudioTrainer, "training_step", watch)
    cfg = _cfg(gpu_model, tmp_path / "bf16", finetuning_type="full", learning_rate=1e-4, max_steps=12,
               save_steps=12, cutoff_len=128)
    assert run_training(cfg)["state"] == "finished"
    assert seen["device"] == {"cuda"} and seen["weights"] == {torch.float32} and seen["matmul"] == torch.bfloat16
    state = torch.load(RunDir(cfg.output_dir).checkpoints / "checkpoint-12" / "optimizer.pt", weights_only=False,
                       map_location="cpu")
    assert {v.dtype for s in state["state"].values() for k, v in s.items() if k.startswith("exp_avg")} == \
        {torch.float32}
    assert RunDir(cfg.output_dir).read_status()["precision"] == "mixed_bf16"
    losses = [e["loss"] for e in RunDir(cfg.output_dir).events() if e["type"] == "progress" and e["loss"]]
    assert losses[-1] < losses[0], losses
