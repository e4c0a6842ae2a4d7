"""AMD ROCm: an AMD card (torch.version.hip set, the gfx target in the device properties) is recognised by the
precision plan (bf16 on MI200/MI300 and RDNA3, fp16 before that), its library caveats are said before the run,
the fit panel lists AMD cards, and the first reference article's 70B full fine-tune with ZeRO-3 offload on one
MI-class card gets its verdict with the host RAM it needs. No AMD card here: one is emulated."""
from __future__ import annotations

import types

import pytest
import torch

from studio.config.run_config import Draft, RunConfig
from studio.memory.estimator import estimate
from studio.memory.gpus import GPUS, gpu_memory
from studio.models.precision import DeviceCaps, hip_bf16, precision_plan, rocm_notices


def _amd(monkeypatch: pytest.MonkeyPatch, arch: str, memory_gb: int) -> None:
    props = types.SimpleNamespace(name="AMD Instinct", total_memory=memory_gb * 2**30, gcnArchName=arch,
                                  major=9, minor=4)
    monkeypatch.setattr(torch.version, "hip", "6.4.43482", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *_a, **_k: props)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *_a, **_k: pytest.fail("asked CUDA's bf16 check"))


@pytest.mark.parametrize("arch,bf16", [("gfx942:sramecc+:xnack-", True), ("gfx90a:sramecc+:xnack-", True),
                                       ("gfx1100", True), ("gfx1030", False), ("gfx908:sramecc+:xnack-", False)])
def test_an_amd_card_is_recognised_with_its_bf16(monkeypatch, arch, bf16) -> None:
    _amd(monkeypatch, arch, 192)
    caps = DeviceCaps.detect()
    assert (caps.cuda, caps.hip, caps.vendor, caps.arch, caps.bf16) == (True, True, "amd", arch.split(":")[0], bf16)
    plan = precision_plan(caps, Draft(finetuning_type="lora"))
    assert plan.mode == ("mixed_bf16" if bf16 else "mixed_fp16")


def test_qlora_and_deepspeed_on_rocm_say_what_they_need(monkeypatch) -> None:
    _amd(monkeypatch, "gfx942", 192)
    caps = DeviceCaps.detect()
    qlora = rocm_notices(caps, Draft(finetuning_type="lora", quantization_bit=4))
    assert [w.code for w in qlora] == ["rocm_bitsandbytes"] and "ROCm" in qlora[0]
    ds = rocm_notices(caps, Draft(finetuning_type="full", deepspeed="z3-offload"))
    assert [w.code for w in ds] == ["rocm_deepspeed"] and "hipcc" in ds[0]
    nvidia = DeviceCaps(cuda=True, bf16=True)
    assert rocm_notices(nvidia, Draft(finetuning_type="lora", quantization_bit=4)) == ()
    assert hip_bf16("gfx942") and not hip_bf16("gfx1030")


def test_the_fit_panel_lists_amd_cards() -> None:
    """An MI250X is two GCDs of 64 GB; torch and the vendor's tools see two devices, and a run trains on one: the
    panel plans for one GCD, not the 128 GB of the package."""
    amd = {g.name: g.memory_gb for g in GPUS if g.vendor == "amd"}
    assert amd == {"AMD Instinct MI300X": 192, "AMD Instinct MI250X GCD": 64, "AMD Instinct MI210": 64,
                   "AMD Radeon PRO W7900": 48, "AMD Radeon RX 7900 XTX": 24}
    assert gpu_memory("AMD Instinct MI300X") == 192 and gpu_memory("../../etc/passwd") is None


def test_the_articles_70b_full_finetune_on_one_mi300x_needs_over_a_terabyte_of_host_ram() -> None:
    """Full fine-tuning of a 70B model with ZeRO-3 offload on one MI300X: the card holds only the working set
    (a few GB), but the fp32 masters, Adam states and gradients of 70B parameters live in host RAM, ~1.3 TB. It
    fits a node with 2 TB of RAM, not a workstation; without offload ZeRO-3 on one card keeps all of it on the
    card and does not fit 192 GB."""
    cfg = Draft(model_name_or_path="meta-llama/Meta-Llama-3-70B-Instruct", finetuning_type="full",
                    deepspeed="z3-offload", cutoff_len=1024, per_device_train_batch_size=1)
    mi300x = gpu_memory("AMD Instinct MI300X")
    small_host = estimate(cfg, mi300x, ram_gb=512)
    assert small_host.gpu_gb < 20 and small_host.fits is False and small_host.host_short
    assert 1000 < small_host.cpu_gb < 1600
    big_host = estimate(cfg, mi300x, ram_gb=2048)
    assert big_host.fits is True
    on_card = estimate(cfg.replace(deepspeed="z3"), mi300x, ram_gb=2048)
    assert on_card.fits is False and on_card.gpu_gb > 1000


def test_the_rocm_notices_come_before_the_model_load(monkeypatch, tmp_path, tiny_model_dir, sample_reviews_jsonl):
    """The bitsandbytes notice says a QLoRA load may stop on this card: it is in the run's log before the load, so a
    load that fails has its reason above it (it used to be sent with the startup notices, after the load)."""
    from studio.engine import run_training
    from studio.errors import StudioError
    from studio.models import loading, precision
    from studio.notices import Notice
    from studio.runs.run_dir import RunDir
    sent = Notice.of("rocm_bitsandbytes", arch="gfx942", card="AMD ROCm gfx942")
    monkeypatch.setattr(precision, "rocm_notices", lambda caps, cfg: (sent,))

    def failing_load(*_a, **_k):
        raise StudioError.of("model.load_failed", path="base", detail="no bitsandbytes library for gfx942")
    monkeypatch.setattr(loading, "load_base", failing_load)
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), finetuning_type="lora", max_steps=1, val_size=0.0,
                    plot_loss=False)
    with pytest.raises(StudioError):
        run_training(cfg)
    codes = [e.get("code") for e in RunDir(cfg.output_dir).events() if e.get("type") == "notice"]
    assert codes.count("rocm_bitsandbytes") == 1, codes


def _nvidia(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int]) -> None:
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_a, **_k: capability)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *_a, **_k: capability >= (8, 0))


@pytest.mark.parametrize("vendor,card,flash", [
    ("amd", "gfx90a:sramecc+:xnack-", True), ("amd", "gfx942", True),        # MI200, MI300: FA2's ROCm (CK) build
    ("amd", "gfx1100", False), ("amd", "gfx1030", False),                    # Radeon: no FA2 build for them
    ("nvidia", (8, 0), True), ("nvidia", (9, 0), True), ("nvidia", (7, 5), False)])   # FA2 needs Ampere or newer
def test_flash_attention_only_where_its_build_runs_on_the_card(monkeypatch, vendor, card, flash) -> None:
    """flash-attn importing is not enough: its ROCm build runs on MI200/MI300 only, its CUDA build on Ampere and
    newer; elsewhere the load asks for SDPA (a FlashAttention-2 load would fail, or crash in the first step)."""
    import importlib.util
    from studio.models import kernels
    if vendor == "amd":
        _amd(monkeypatch, card, 64)
    else:
        _nvidia(monkeypatch, card)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "flash_attn" else
                        real(name, *a))
    assert kernels.training_attention("cuda") == ("flash_attention_2" if flash else None)
    assert kernels.training_attention("cpu") is None
