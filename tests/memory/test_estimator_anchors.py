"""The estimator against published peak-memory figures, each within ±20% under the settings behind the figure.

Where the published setup differs from what this studio's engine does, the difference is named in ANCHORS and
modelled from the estimator's own terms (studio/memory/terms.py), never by a fitted constant. The table with the
ratios is docs/BENCHMARKS.md "Memory estimator anchors"; ``python tests/memory/test_estimator_anchors.py`` prints it.

Sources: LLaMA-Factory README "Hardware Requirement" (GB read as 10^9 bytes; bf16, LoRA rank 8 on all linear
layers, gradient checkpointing, cutoff 1024, batch 1, as LLaMA-Factory runs by default); torchtune README
(Llama-3.1-8B on one RTX 4090: batch 2, seq 2048, activation checkpointing; the full recipe with
PagedAdamW8bit and optimizer_in_bwd) and its memory-optimizations lever table (Llama-3.2-3B, seq 4096 packed,
one packed row per step); torchtune reports torch's peak *allocated* GiB, which leaves out the CUDA context and
the allocator's fragmentation (the estimator's ``overhead`` term).
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

if __name__ == "__main__":  # run as a script, as docs/BENCHMARKS.md does: the studio from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from studio.memory import terms
from studio.memory.estimator import GB, Estimate, estimate, load_card
from tests.helpers import plan

GB10 = 1e9 / GB   # LLaMA-Factory's GB in GiB
# RunConfig settings on top of tests/helpers.PLAIN_PLAN (cutoff 1024, batch 1, every position's logits)
LF = dict(gradient_checkpointing=True, precision="bf16")
TT_LORA = "q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"   # torchtune: q, v, output_proj + MLP
TT8 = dict(cutoff_len=2048, per_device_train_batch_size=2, gradient_checkpointing=True, selective_logits=True,
           precision="bf16", lora_target=TT_LORA)
TT3 = dict(cutoff_len=4096, selective_logits=True)
FULL, LORA = dict(finetuning_type="full"), dict(finetuning_type="lora")
QLORA, QLORA8 = dict(finetuning_type="lora", quantization_bit=4), dict(finetuning_type="lora", quantization_bit=8)


def _gpu(est: Estimate) -> float:
    return est.gpu_gb


def _allocated(est: Estimate) -> float:
    """torch's peak allocated: the estimate without the CUDA context and fragmentation."""
    return est.gpu_gb - est.breakdown["overhead"]


def _torchtune_qlora(est: Estimate) -> float:
    """torchtune keeps embeddings, head and norms in bf16; peft's kbit preparation (this engine) casts them to
    fp32, so 2 bytes per unquantized parameter come off."""
    card = est.card
    unquantized = card.n_params - card.num_layers * card.layer_linear_params
    return _allocated(est) - unquantized * 2 / GB


def _torchtune_full_8b(_est: Estimate) -> float:
    """optimizer_in_bwd frees each gradient as soon as its update ran (one layer's gradients live), and
    PagedAdamW8bit's states are cudaMallocManaged pages outside torch's allocator stats: weights + activations +
    logits + one layer of bf16 gradients, from the estimator's terms."""
    card = load_card("llama3-8b")
    s = terms.Setup(method="full", quant_bits=None, ds="none", precision="pure_bf16", tokens=4096, grad_ckpt=True,
                    layerwise=False, device="cuda", optim="adamw_8bit", lora_rank=8, lora_target="all",
                    freeze_layers=2, double_quant=True, chunked_loss=True)
    return (terms.weights(card, s) + terms.activations(card, s) + terms.logits(card, s)
            + card.layer_params * 2) / GB


def _mixtral(**kw: Any) -> Estimate:
    # LLaMA-Factory's figure predates transformers 5, whose fused 3D experts bitsandbytes does not quantize: model
    # the per-expert nn.Linear layout it was measured with (the studio's own Mixtral QLoRA is in test_moe_qlora...)
    per_expert = dataclasses.replace(load_card("mixtral-8x7b"), experts_fused=False)
    return estimate(plan("mixtral-8x7b", **kw), card=per_expert, suggest=False)


def _est(model: str, **kw: Any) -> Callable[[], Estimate]:
    return lambda: estimate(plan(model, **kw), suggest=False)


# (name, published, unit in GiB, how the estimate is made, what is read off it)
ANCHORS: list[tuple[str, float, Callable[[], Estimate], Callable[[Estimate], float]]] = [
    ("LLaMA-Factory 7B full, bf16 mixed", 120 * GB10, _est("llama2-7b", **FULL, **LF), _gpu),
    ("LLaMA-Factory 7B full, pure bf16", 60 * GB10, _est("llama2-7b", **FULL, pure_bf16=True, **LF), _gpu),
    ("LLaMA-Factory 7B LoRA", 16 * GB10, _est("llama2-7b", **LORA, **LF), _gpu),
    ("LLaMA-Factory 7B QLoRA 8-bit", 10 * GB10, _est("llama2-7b", **QLORA8, **LF), _gpu),
    ("LLaMA-Factory 7B QLoRA 4-bit", 6 * GB10, _est("llama2-7b", **QLORA, **LF), _gpu),
    ("LLaMA-Factory 70B LoRA", 160 * GB10, _est("llama3-70b", **LORA, **LF), _gpu),
    ("LLaMA-Factory 70B QLoRA 4-bit", 48 * GB10, _est("llama3-70b", **QLORA, **LF), _gpu),
    ("LLaMA-Factory Mixtral-8x7B QLoRA 4-bit", 30 * GB10, lambda: _mixtral(**QLORA, **LF), _gpu),
    ("torchtune Llama-3.1-8B full (8-bit paged, opt-in-bwd)", 18.9, _est("llama3-8b", **FULL, **TT8),
     _torchtune_full_8b),
    ("torchtune Llama-3.1-8B LoRA", 16.2, _est("llama3-8b", **LORA, **TT8), _allocated),
    ("torchtune Llama-3.1-8B QLoRA", 7.4, _est("llama3-8b", **QLORA, **TT8), _torchtune_qlora),
    ("torchtune Llama-3.2-3B + activation checkpointing", 24.9,
     _est("llama3.2-3b", **FULL, pure_bf16=True, gradient_checkpointing=True, **TT3), _allocated),
    ("torchtune Llama-3.2-3B + 8-bit AdamW", 17.6,
     _est("llama3.2-3b", **FULL, pure_bf16=True, gradient_checkpointing=True, optim="adamw_8bit", **TT3),
     _allocated),
    ("torchtune Llama-3.2-3B LoRA", 8.5,
     _est("llama3.2-3b", **LORA, precision="bf16", gradient_checkpointing=True, lora_target=TT_LORA, **TT3),
     _allocated),
    ("torchtune Llama-3.2-3B QLoRA", 4.6,
     _est("llama3.2-3b", **QLORA, precision="bf16", gradient_checkpointing=True, lora_target=TT_LORA, **TT3),
     _torchtune_qlora),
]
# Published rows the estimator does not reproduce, with the reason (docs/BENCHMARKS.md); the test keeps each on the
# safe side (the estimate above the figure), so a change that makes "fits" optimistic there goes red.
KNOWN_GAPS: list[tuple[str, float, Callable[[], Estimate], Callable[[Estimate], float], str]] = [
    ("torchtune Llama-3.2-3B baseline (no checkpointing)", 25.5,
     _est("llama3.2-3b", **FULL, pure_bf16=True, **TT3), _allocated,
     "HF eager block activations (fp32 norm inputs, unfused SwiGLU) vs torchtune's own modules"),
]


def ratios() -> list[tuple[str, float, float, float]]:
    return [(name, pub, read(make()), read(make()) / pub) for name, pub, make, read in ANCHORS]


@pytest.mark.parametrize("name", [a[0] for a in ANCHORS])
def test_estimate_is_within_20_percent_of_the_published_figure(name: str) -> None:
    _n, pub, make, read = next(a for a in ANCHORS if a[0] == name)
    assert read(make()) / pub == pytest.approx(1.0, abs=0.20), name


def test_known_gaps_stay_on_the_safe_side() -> None:
    for name, pub, make, read, _why in KNOWN_GAPS:
        assert 1.0 < read(make()) / pub < 1.6, name


def test_moe_qlora_under_transformers_5_keeps_the_experts_unquantized() -> None:
    """This engine's Mixtral QLoRA: fused experts are not nn.Linear, so bitsandbytes leaves them and peft's kbit
    preparation casts them to fp32: the estimate says so instead of promising LLaMA-Factory's 30 GB."""
    fused = estimate(plan("mixtral-8x7b", **QLORA, **LF), suggest=False)
    per_expert = _mixtral(**QLORA, **LF)
    expert_bytes = load_card("mixtral-8x7b").expert_layer_params * 32 * 4
    assert fused.breakdown["weights"] - per_expert.breakdown["weights"] == pytest.approx(
        expert_bytes * (1 - 0.5 / 4 - 0.0159 / 4) / GB, rel=0.01)


if __name__ == "__main__":
    for name, pub, got, r in ratios():
        print(f"| {name} | {pub:.1f} | {got:.1f} | {r:.2f} |")
    for name, pub, make, read, why in KNOWN_GAPS:
        print(f"| {name} | {pub:.1f} | {read(make()):.1f} | {read(make()) / pub:.2f} | gap: {why}")
