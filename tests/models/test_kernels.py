"""Liger on a card, the studio's chunked head elsewhere: one decision (studio/models/kernels.py) made beside the
precision plan, handed to Trainer as ``use_liger_kernel``, and shown on the Settings page with its reason.

No GPU here: the card is emulated (torch.cuda.is_available / get_device_properties patched) and liger-kernel,
which needs triton, is stood in for by a module holding its architecture table.
"""
from __future__ import annotations

import sys
import types
from typing import Any

import pytest
import torch
from transformers import LlamaConfig

from studio.config.run_config import Draft, RunConfig
from studio.models import kernels
from studio.models.kernels import KernelPlan, kernel_plan, model_kernel_plan
from studio.models.precision import DeviceCaps


@pytest.fixture
def emulated_card(monkeypatch: pytest.MonkeyPatch) -> None:
    props = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", total_memory=80 * 2**30, major=9, minor=0,
                                  gcnArchName="")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *_a, **_k: props)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *_a, **_k: True)


@pytest.fixture
def liger_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """liger-kernel 'installed': its monkey_patch table, and find_spec answering for it and triton."""
    patch = types.ModuleType("liger_kernel.transformers.monkey_patch")
    patch.MODEL_TYPE_TO_APPLY_LIGER_FN = {"llama": None, "qwen2": None, "gemma2": None}
    for name in ("liger_kernel", "liger_kernel.transformers"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "liger_kernel.transformers.monkey_patch", patch)
    monkeypatch.setattr(kernels, "liger_installed", lambda: True)


def test_a_card_with_liger_and_a_supported_architecture_uses_liger(emulated_card, liger_here) -> None:
    caps = DeviceCaps.detect()
    assert caps.cuda
    plan = model_kernel_plan(caps.device, LlamaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1,
                                                      num_attention_heads=2, intermediate_size=32))
    assert plan.liger and plan.english().startswith("fast kernels: Liger")


def test_refusals_name_their_reason(emulated_card, liger_here) -> None:
    caps = DeviceCaps.detect()
    gpt2 = types.SimpleNamespace(model_type="gpt2")
    assert model_kernel_plan(caps.device, gpt2).reason == "arch"
    gemma2 = types.SimpleNamespace(model_type="gemma2", final_logit_softcapping=30.0)
    assert model_kernel_plan(caps.device, gemma2).reason == "softcap"
    assert kernel_plan("cuda", "llama", None, enabled=False).reason == "off"
    assert kernel_plan("cpu", "llama", None).reason == "cpu"
    assert kernel_plan("cuda", "llama", None, installed=False).reason == "missing"
    for code in ("arch", "softcap", "off", "cpu", "missing", "unknown_arch"):
        plan = KernelPlan(False, code, {"model_type": "gpt2"})
        english, chinese = plan.words("en", "page"), plan.words("zh", "page")
        assert english and chinese and english != chinese and "enable_liger_kernel" not in english + chinese
    assert "enable_liger_kernel is off" in kernel_plan("cuda", "llama", None, enabled=False).english()


def test_without_liger_installed_a_card_keeps_the_chunked_head(emulated_card, monkeypatch) -> None:
    monkeypatch.setattr(kernels.importlib.util, "find_spec", lambda name, *a: None)
    plan = kernel_plan(DeviceCaps.detect().device, "llama", None)
    assert not plan.liger and plan.reason == "missing" and "pip install liger-kernel" in plan.english()


def test_enable_liger_kernel_is_a_field_not_an_ignored_key() -> None:
    from studio.config.lf_keys import NO_EFFECT
    assert "enable_liger_kernel" not in NO_EFFECT
    cfg = Draft.from_dict({"enable_liger_kernel": False})
    assert cfg.enable_liger_kernel is False and not cfg.notices


def test_the_settings_page_says_which_kernels_and_why() -> None:
    from studio.ui.settings_tab import kernel_line
    cfg = Draft()
    assert "Liger" in kernel_line(cfg, "llama", "cpu", "en") and "GPU" in kernel_line(cfg, "llama", "cpu", "en")
    assert "Liger" in kernel_line(cfg, "llama", "cpu", "zh") and "没有 GPU" in kernel_line(cfg, "llama", "cpu", "zh")
    off = kernel_line(cfg.replace(enable_liger_kernel=False), "llama", "cuda", "en")
    assert "'Liger kernels on a GPU' is off" in off and "enable_liger_kernel" not in off  # the page's field, not the key


def test_the_engine_hands_the_plan_to_trainer(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch) -> None:
    """A plan that says Liger reaches Trainer's use_liger_kernel (which applies it), and the studio's own selective
    head steps aside; on this CPU Trainer's apply call is recorded instead of run (Liger needs a GPU)."""
    import transformers.trainer as hf_trainer
    from studio.engine import run_training
    from studio.engine.studio_trainer import StudioTrainer
    applied: list[Any] = []
    seen: dict[str, Any] = {}
    monkeypatch.setattr(kernels, "model_kernel_plan", lambda device, config, enabled=True: kernels.KernelPlan(True))
    monkeypatch.setattr(hf_trainer, "apply_liger_kernel", lambda model, config: applied.append(model))
    real_init = StudioTrainer.__init__

    def init(self: StudioTrainer, *a: Any, **kw: Any) -> None:
        real_init(self, *a, **kw)
        seen["use_liger_kernel"], seen["selective"] = self.args.use_liger_kernel, self.selective_logits
    monkeypatch.setattr(StudioTrainer, "__init__", init)
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), finetuning_type="full", cutoff_len=32, max_steps=2,
                    save_steps=1000, plot_loss=False, gradient_checkpointing=False)
    run_training(cfg)
    assert seen == {"use_liger_kernel": True, "selective": False} and len(applied) == 1
