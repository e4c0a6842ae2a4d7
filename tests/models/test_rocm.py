"""AMD ROCm: an AMD card (torch.version.hip set, the gfx target in the device properties) is recognised by the
precision plan (bf16 on MI200/MI300 and RDNA3, fp16 before that), its library caveats are said before the run,
the fit panel lists AMD cards, and the first reference article's 70B full fine-tune with ZeRO-3 offload on one
MI-class card gets its verdict with the host RAM it needs. No AMD card here: one is emulated."""
from __future__ import annotations

import types

import pytest
import torch

from studio.config.run_config import RunConfig
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
    plan = precision_plan(caps, RunConfig(finetuning_type="lora"))
    assert plan.mode == ("mixed_bf16" if bf16 else "mixed_fp16")


def test_qlora_and_deepspeed_on_rocm_say_what_they_need(monkeypatch) -> None:
    _amd(monkeypatch, "gfx942", 192)
    caps = DeviceCaps.detect()
    qlora = rocm_notices(caps, RunConfig(finetuning_type="lora", quantization_bit=4))
    assert [w.code for w in qlora] == ["rocm_bitsandbytes"] and "ROCm" in qlora[0]
    ds = rocm_notices(caps, RunConfig(finetuning_type="full", deepspeed="z3-offload"))
    assert [w.code for w in ds] == ["rocm_deepspeed"] and "hipcc" in ds[0]
    nvidia = DeviceCaps(cuda=True, bf16=True)
    assert rocm_notices(nvidia, RunConfig(finetuning_type="lora", quantization_bit=4)) == ()
    assert hip_bf16("gfx942") and not hip_bf16("gfx1030")


def test_the_fit_panel_lists_amd_cards() -> None:
    """An MI250X is two GCDs of 64 GB; torch and the vendor's tools see two devices, and a run trains on one: the
    panel plans for one GCD, not the 128 GB of the package."""
    amd = {g.name: g.memory_gb for g in GPUS if g.vendor == "amd"}
    assert amd == {"AMD Instinct MI300X": 192, "AMD Instinct MI250X (one GCD)": 64, "AMD Instinct MI210": 64,
                   "AMD Radeon PRO W7900": 48, "AMD Radeon RX 7900 XTX": 24}
    assert gpu_memory("AMD Instinct MI300X") == 192 and gpu_memory("../../etc/passwd") is None


def test_the_articles_70b_full_finetune_on_one_mi300x_needs_over_a_terabyte_of_host_ram() -> None:
    """Full fine-tuning of a 70B model with ZeRO-3 offload on one MI300X: the card holds only the working set
    (a few GB), but the fp32 masters, Adam states and gradients of 70B parameters live in host RAM, ~1.3 TB. It
    fits a node with 2 TB of RAM, not a workstation; without offload ZeRO-3 on one card keeps all of it on the
    card and does not fit 192 GB."""
    cfg = RunConfig(model_name_or_path="meta-llama/Meta-Llama-3-70B-Instruct", finetuning_type="full",
                    deepspeed="z3-offload", cutoff_len=1024, per_device_train_batch_size=1)
    mi300x = gpu_memory("AMD Instinct MI300X")
    small_host = estimate(cfg, mi300x, ram_gb=512)
    assert small_host.gpu_gb < 20 and small_host.fits is False and small_host.host_short
    assert 1000 < small_host.cpu_gb < 1600
    big_host = estimate(cfg, mi300x, ram_gb=2048)
    assert big_host.fits is True
    on_card = estimate(cfg.replace(deepspeed="z3"), mi300x, ram_gb=2048)
    assert on_card.fits is False and on_card.gpu_gb > 1000
