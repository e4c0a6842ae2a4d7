"""Mixed precision as users expect: fp32 master weights + fp32 Adam states with 16-bit
autocast by default; pure bf16 only with ``pure_bf16: true``; the estimator models each mode.

The plan is a pure function of the card's abilities, so a bf16 card is pretended here; the engine runs below on
the CPU with precision bf16, which takes the same mixed-precision path (CPU autocast is real bf16 maths).
"""
from __future__ import annotations

import pytest
import torch

from studio.config.run_config import Draft, RunConfig
from studio.engine import run_training
from studio.errors import StudioError
from studio.memory.estimator import GB, estimate, load_card
from studio.models.precision import PURE_BF16_ON_CPU, PURE_BF16_WARNING, DeviceCaps, precision_plan
from studio.runs.run_dir import RunDir
from tests.helpers import losses, plan

BF16_CARD = DeviceCaps(cuda=True, bf16=True)
FP16_CARD = DeviceCaps(cuda=True, bf16=False)


def test_full_finetuning_on_a_bf16_card_is_mixed_precision_by_default() -> None:
    plan = precision_plan(BF16_CARD, Draft(finetuning_type="full"))
    assert (plan.mode, plan.load_dtype, plan.trainable_dtype, plan.autocast, plan.master_fp32) == \
        ("mixed_bf16", "fp32", "fp32", "bf16", True)
    assert plan.warnings == ()


def test_pure_bf16_only_when_asked_and_it_warns_about_small_learning_rates() -> None:
    plan = precision_plan(BF16_CARD, Draft(finetuning_type="full", pure_bf16=True))
    assert (plan.mode, plan.load_dtype, plan.trainable_dtype, plan.autocast) == ("pure_bf16", "bf16", "bf16", None)
    assert plan.warnings == (PURE_BF16_WARNING,) and "small learning rate" in PURE_BF16_WARNING
    with pytest.raises(StudioError, match="pure_bf16 needs a card that supports bf16"):
        precision_plan(FP16_CARD, Draft(finetuning_type="full", pure_bf16=True))
    assert any(p.startswith("pure_bf16 needs bf16") for p in Draft(pure_bf16=True, fp16=True).validate())
    assert any(p.startswith("pure_bf16 cannot be combined with deepspeed")
               for p in Draft(pure_bf16=True, deepspeed="z2").validate())


def test_other_methods_and_cards() -> None:
    fp16_full = precision_plan(FP16_CARD, Draft(finetuning_type="full"))
    assert (fp16_full.mode, fp16_full.load_dtype, fp16_full.autocast) == ("mixed_fp16", "fp32", "fp16")
    lora = precision_plan(BF16_CARD, Draft(finetuning_type="lora"))
    assert (lora.load_dtype, lora.trainable_dtype, lora.autocast) == ("bf16", "fp32", "bf16")  # frozen base 16-bit
    freeze = precision_plan(BF16_CARD, Draft(finetuning_type="freeze"))
    assert (freeze.load_dtype, freeze.trainable_dtype) == ("bf16", "fp32")
    ds = precision_plan(BF16_CARD, Draft(finetuning_type="full", deepspeed="z2"))
    assert (ds.load_dtype, ds.autocast, ds.master_fp32) == ("bf16", "bf16", True)   # DeepSpeed holds the master
    assert precision_plan(DeviceCaps(cuda=False), Draft(finetuning_type="full")).mode == "fp32"
    # pure_bf16 on a CPU: fp32 like precision auto, and it says so; precision bf16 forces bf16 there
    cpu = precision_plan(DeviceCaps(cuda=False, bf16=True), Draft(finetuning_type="full", pure_bf16=True))
    assert cpu.mode == "fp32" and cpu.warnings == (PURE_BF16_ON_CPU,)
    forced = Draft(finetuning_type="full", pure_bf16=True, precision="bf16")
    assert precision_plan(DeviceCaps(cuda=False, bf16=True), forced).mode == "pure_bf16"


def test_engine_loads_the_plans_dtypes_for_a_pretend_bf16_card(monkeypatch, tiny_model_dir) -> None:
    from studio.models.loading import apply_method, load_base
    monkeypatch.setattr(DeviceCaps, "detect", classmethod(lambda cls: BF16_CARD))
    cfg = Draft(model_name_or_path=str(tiny_model_dir), finetuning_type="full")
    model, _ = load_base(cfg, "cuda")   # no quantization: from_pretrained keeps it on the host, dtype per plan
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    model, _ = load_base(cfg.replace(pure_bf16=True), "cuda")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    freeze = cfg.replace(finetuning_type="freeze", freeze_trainable_layers=1)
    model = apply_method(load_base(freeze, "cuda")[0], freeze, "cuda")
    trained = {p.dtype for p in model.parameters() if p.requires_grad}
    frozen = {p.dtype for p in model.parameters() if not p.requires_grad}
    assert trained == {torch.float32} and frozen == {torch.bfloat16}


def _train_and_watch(tmp_path, model_dir, data, monkeypatch, **kw) -> tuple[RunConfig, dict]:
    """Run the engine; record the dtypes of weights and of a linear layer's output during a real step."""
    from studio.engine.studio_trainer import StudioTrainer
    seen: dict = {}
    real = StudioTrainer.training_step

    def watch(self, model, inputs, *a, **k):
        if not seen:
            seen["weights"] = {p.dtype for p in model.parameters() if p.requires_grad}
            proj = next(m for n, m in model.named_modules() if n.endswith("q_proj"))
            handle = proj.register_forward_hook(lambda m, i, o: seen.setdefault("matmul", o.dtype) and None)
            try:
                return real(self, model, inputs, *a, **k)
            finally:
                handle.remove()
        return real(self, model, inputs, *a, **k)

    monkeypatch.setattr(StudioTrainer, "training_step", watch)
    cfg = RunConfig(model_name_or_path=str(model_dir), dataset=str(data), output_dir=str(tmp_path / "run"),
                    finetuning_type="full", cutoff_len=64, per_device_train_batch_size=8, learning_rate=3e-3,
                    max_steps=12, logging_steps=3, save_steps=12, lr_scheduler_type="constant", plot_loss=False,
                    precision="bf16", **kw)
    assert run_training(cfg)["state"] == "finished"
    return cfg, seen


def _adam_state_dtypes(cfg: RunConfig) -> set:
    state = torch.load(RunDir(cfg.output_dir).checkpoints / "checkpoint-12" / "optimizer.pt", weights_only=False)
    return {v.dtype for s in state["state"].values() for k, v in s.items() if k in ("exp_avg", "exp_avg_sq")}


def test_bf16_run_keeps_fp32_master_weights_and_states_with_bf16_maths(tmp_path, tiny_model_dir,
                                                                       sample_reviews_jsonl, monkeypatch) -> None:
    cfg, seen = _train_and_watch(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch)
    assert seen["weights"] == {torch.float32}          # master weights
    assert seen["matmul"] == torch.bfloat16            # autocast: the maths in bf16
    assert _adam_state_dtypes(cfg) == {torch.float32}  # Adam states follow the fp32 masters
    run = RunDir(cfg.output_dir)
    assert run.read_status()["precision"] == "mixed_bf16"
    ls = losses(cfg.output_dir)
    assert ls[-1] < ls[0] * 0.85, ls


def test_pure_bf16_run_is_bf16_throughout_and_says_so(tmp_path, tiny_model_dir, sample_reviews_jsonl,
                                                      monkeypatch) -> None:
    cfg, seen = _train_and_watch(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch, pure_bf16=True)
    assert seen["weights"] == {torch.bfloat16} and seen["matmul"] == torch.bfloat16
    assert _adam_state_dtypes(cfg) == {torch.bfloat16}
    notices = [e["message"] for e in RunDir(cfg.output_dir).events() if e["type"] == "notice"]
    assert PURE_BF16_WARNING in notices


# ------------------------------------------------------------------ estimator
def test_estimator_models_each_precision_mode() -> None:
    card = load_card("llama2-7b")
    full = plan("llama2-7b", finetuning_type="full", gradient_checkpointing=True)
    mixed, fp16, pure, fp32 = (estimate(full.replace(**p)) for p in (
        {"precision": "bf16"}, {"precision": "fp16"}, {"precision": "bf16", "pure_bf16": True}, {"precision": "fp32"}))
    # mixed: fp32 weights (4) + fp32 grads (4) + fp32 Adam (8) bytes per parameter
    assert mixed.breakdown["weights"] * GB == pytest.approx(4 * card.n_params)
    assert mixed.breakdown["optimizer"] * GB == pytest.approx(8 * card.n_params)
    assert mixed.breakdown["autocast_copies"] * GB == pytest.approx(2 * card.n_params)
    assert fp16.gpu_gb == pytest.approx(mixed.gpu_gb)           # the fp16 path is modelled, not 64.7 GB
    assert pure.breakdown["weights"] * GB == pytest.approx(2 * card.n_params)
    assert pure.gpu_gb < 0.55 * mixed.gpu_gb
    assert fp32.gpu_gb >= mixed.gpu_gb * 0.99
    # LLaMA-Factory's README table (7B full: AMP 120 GB, pure_bf16 60 GB) counts n_params x bytes in decimal GB
    assert 0.85 * 120 <= mixed.gpu_gb * GB / 1e9 <= 1.15 * 120
    assert 0.85 * 60 <= pure.gpu_gb * GB / 1e9 <= 1.15 * 60


def test_the_estimate_follows_pure_bf16() -> None:
    cfg = Draft(model_name_or_path="llama2-7b", finetuning_type="full", gradient_checkpointing=True,
                    cutoff_len=1024, per_device_train_batch_size=1)
    mixed = estimate(cfg)
    pure = estimate(cfg.replace(pure_bf16=True))
    assert mixed.plan["precision"] == "bf16" and pure.plan["precision"] == "pure_bf16"
    assert pure.gpu_gb < 0.55 * mixed.gpu_gb
