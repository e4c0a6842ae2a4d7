"""Activation offload (``offload_activations``): the checkpointed activations wait in host RAM.

On a card transformers 5.24 wraps each checkpointed layer in torch's ``save_on_cpu``; a CPU has no pinned memory
(torch refuses it), so the engine turns offload on only for a card. Here the engine's switch is driven for a card
on the CPU, with ``save_on_cpu`` replaced by a recorder (same packing, no pinning): the setting reaches every
checkpointed layer and the gradients are those of plain checkpointing. The estimate moves the saved inputs off
the card into host RAM and counts their PCIe time; the advice offers it where activations dominate.
"""
from __future__ import annotations

from typing import Any

import pytest
import torch
import transformers.modeling_utils as hf_modeling
from transformers import AutoModelForCausalLM

from studio.config.run_config import Draft
from studio.engine.run import enable_checkpointing
from studio.memory.estimator import estimate, load_card


class RecordingSaveOnCpu(torch.autograd.graph.saved_tensors_hooks):
    """torch's save_on_cpu without pinning: counts what it moves."""
    packed = 0

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: torch.Tensor) -> tuple[torch.device, torch.Tensor]:
            RecordingSaveOnCpu.packed += 1
            return t.device, t.detach().to("cpu", copy=True)

        def unpack(packed: tuple[torch.device, torch.Tensor]) -> torch.Tensor:
            return packed[1].to(packed[0])
        super().__init__(pack, unpack)


def _grads(model: Any) -> dict[str, torch.Tensor]:
    model.train()
    ids = torch.randint(3, 60, (2, 12))
    model(input_ids=ids, labels=ids).loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_offload_reaches_every_checkpointed_layer_on_a_card(tiny_model_dir, monkeypatch) -> None:
    monkeypatch.setattr(hf_modeling, "save_on_cpu", RecordingSaveOnCpu)
    cfg = Draft(offload_activations=True, gradient_checkpointing=True)
    torch.manual_seed(0)
    plain = AutoModelForCausalLM.from_pretrained(tiny_model_dir, attn_implementation="eager")
    enable_checkpointing(plain, cfg.replace(offload_activations=False), "cuda")
    torch.manual_seed(1)
    ref = _grads(plain)
    assert RecordingSaveOnCpu.packed == 0
    offloaded = AutoModelForCausalLM.from_pretrained(tiny_model_dir, attn_implementation="eager")
    assert enable_checkpointing(offloaded, cfg, "cuda") is True
    torch.manual_seed(1)
    got = _grads(offloaded)
    layers = offloaded.config.num_hidden_layers
    assert RecordingSaveOnCpu.packed >= layers, "the checkpointed layers saved nothing through the offload hook"
    assert ref.keys() == got.keys() and all(torch.allclose(ref[k], got[k], atol=1e-6) for k in ref)


def test_a_cpu_run_does_not_offload(tiny_model_dir) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert enable_checkpointing(model, Draft(offload_activations=True), "cpu") is False
    assert model.is_gradient_checkpointing


def test_the_estimate_moves_activations_to_host_ram_and_counts_pcie() -> None:
    cfg = Draft(model_name_or_path="meta-llama/Meta-Llama-3-8B-Instruct", finetuning_type="lora",
                    quantization_bit=4, cutoff_len=16384, per_device_train_batch_size=1)
    on_card = estimate(cfg, 24)
    off = estimate(cfg.replace(offload_activations=True), 24)
    card = load_card(cfg.model_name_or_path)
    saved = card.num_layers * 2 * card.hidden_size * 16384 / 2**30   # bf16 layer inputs, GiB
    assert on_card.breakdown["activations"] - off.breakdown["activations"] == pytest.approx(
        saved - 2 * 2 * card.hidden_size * 16384 / 2**30, rel=1e-6)
    assert off.host_breakdown["offloaded_activations"] == pytest.approx(saved, rel=1e-6)
    assert off.cpu_gb > on_card.cpu_gb and off.gpu_gb < on_card.gpu_gb
    assert off.plan["activation_pcie_s"] == pytest.approx(2 * saved * 2**30 / 25e9, abs=1e-3)
    cpu = estimate(cfg.replace(offload_activations=True), device="cpu")
    assert "offloaded_activations" not in cpu.host_breakdown   # a CPU run: nothing to move


def test_the_advice_offers_it_when_activations_dominate() -> None:
    cfg = Draft(model_name_or_path="meta-llama/Meta-Llama-3-8B-Instruct", finetuning_type="lora",
                    quantization_bit=4, cutoff_len=65536, per_device_train_batch_size=1)
    est = estimate(cfg, 24, ram_gb=128)
    assert est.fits is False and est.breakdown["activations"] == max(
        v for k, v in est.breakdown.items() if k != "overhead")
    offer = [d for d in est.suggestion_details if d["settings"].get("offload_activations")]
    assert offer and offer[0]["gpu_gb"] < est.gpu_gb - 1
    assert "PCIe" in offer[0]["text"]
    applied = estimate(cfg.replace(**offer[0]["settings"]), 24, ram_gb=128)
    assert applied.gpu_gb == pytest.approx(offer[0]["gpu_gb"], abs=0.01)
    short = Draft(model_name_or_path="meta-llama/Meta-Llama-3-8B-Instruct", finetuning_type="full",
                      cutoff_len=256)
    assert not any(d["settings"].get("offload_activations")
                   for d in estimate(short, 24, ram_gb=128).suggestion_details)


def test_offload_survives_qlora_through_the_engines_build(tiny_model_dir, monkeypatch) -> None:
    """The engine's own build (load 4-bit, checkpointing, then the method) keeps the offload wrapper and
    ``use_reentrant=False``: peft's ``prepare_model_for_kbit_training(use_gradient_checkpointing=True)`` used to
    re-enable checkpointing with empty kwargs, silently dropping both (the advice offers offload for 8B QLoRA)."""
    from studio.engine import run as engine_run
    from studio.models import loading
    from studio.models.loading import decoder_layers
    from studio.models.precision import device_caps, precision_plan
    monkeypatch.setattr(hf_modeling, "save_on_cpu", RecordingSaveOnCpu)
    monkeypatch.setattr(loading, "_device_map", lambda device: {"": "cpu"})   # a "card" run on this CPU
    cfg = Draft(model_name_or_path=str(tiny_model_dir), finetuning_type="lora", quantization_bit=4,
                    offload_activations=True, gradient_checkpointing=True, lora_rank=4)
    model, _ = engine_run._build_model(cfg, "cuda", precision_plan(device_caps("cpu"), cfg))
    layers = decoder_layers(model)
    funcs = [layer._gradient_checkpointing_func for layer in layers]
    assert all(getattr(f, "keywords", {}).get("use_reentrant") is False for f in funcs), \
        [getattr(f, "keywords", None) for f in funcs]
    RecordingSaveOnCpu.packed = 0
    model.train()
    ids = torch.randint(3, 60, (2, 12))
    model(input_ids=ids, labels=ids).loss.backward()
    assert RecordingSaveOnCpu.packed >= len(layers), "QLoRA's checkpointed layers no longer offload"
    lora = [p for n, p in model.named_parameters() if "lora_" in n]
    assert lora and all(p.grad is not None for p in lora)
