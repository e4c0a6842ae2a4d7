"""Which kernels a run uses for the output layer and the blocks: Liger's (on a card) or the studio's own.

Decided once, beside the precision plan (precision.py), from the same facts: the device the run trains on, the
model's architecture and the config. On a card where transformers supports the architecture and liger-kernel
imports, Trainer's own switch (``TrainingArguments(use_liger_kernel=True)``) patches RMSNorm, RoPE, SwiGLU and the
fused linear cross-entropy into the model (2.04x the studio's chunked cross-entropy in tokens/s on an H200,
docs/BENCHMARKS.md "GPU"). Everywhere else the studio's chunked head (engine/loss.py) stays: on a CPU (Liger is
Triton, GPU only), for architectures Liger does not patch, and for softcapped heads (Gemma 2's
``final_logit_softcapping``), whose chunked loss the studio checks against the model's own. Liger's fused loss
reads its count of loss tokens with ``.item()`` in every forward (liger-kernel 0.8.x): with Liger, a step waits for
the card once per micro-batch, which the studio's own step does not (docs/GPU.md).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from ..words.render import render
from .precision import DeviceCaps, device_caps

# liger-kernel 0.8.5's MODEL_TYPE_TO_APPLY_LIGER_FN keys: used only when liger-kernel is not installed here, to
# say on a CPU page whether a card would use Liger for this model. Where it is installed its own table decides.
LIGER_MODEL_TYPES = frozenset(
    "deepseek_v2 deepseek_v3 deepseek_v4 gemma gemma2 gemma3_text gemma3 gemma4_text gemma4 glm4 glm4v glm4v_moe "
    "gpt_oss internvl llama llama4_text llama4 llava granite mllama mllama_text_model ministral mistral mixtral "
    "nemotron olmo2 pixtral olmo3 qwen2 qwen3 qwen3_moe qwen2_vl qwen2_vl_text qwen2_5_vl qwen2_5_vl_text "
    "qwen3_next qwen3_5 qwen3_5_text qwen3_5_moe qwen3_5_moe_text qwen3_vl qwen3_vl_text qwen3_vl_moe "
    "qwen3_vl_moe_text smollm3 phi3 paligemma falcon_h1 smolvlm hunyuan_v1_dense hunyuan_v1_moe exaone4".split())


# architectures whose output layer is softcapped by default (the page plans from a card, not a loaded config)
SOFTCAPPED_MODEL_TYPES = frozenset({"gemma2"})


@dataclass(frozen=True)
class KernelPlan:
    """``liger`` True: Trainer applies Liger; else ``reason`` (a code, ``kernels.<reason>`` in the catalog,
    with ``values``) says why the studio's own kernels run."""

    liger: bool
    reason: str = ""
    values: dict[str, Any] = field(default_factory=dict)

    def words(self, lang: str = "en", surface: str = "cli") -> str:
        """The plan in ``lang`` for ``surface`` (studio/words/settings_words.py ``kernels.*``)."""
        if self.liger:
            return render("kernels.liger", {}, lang, surface)
        return render("kernels.not", {"why": render(f"kernels.{self.reason}", self.values, lang, surface)}, lang,
                      surface)

    def english(self) -> str:
        """The plan in the command line's words."""
        return self.words("en", "cli")


def liger_installed() -> bool:
    """liger-kernel and triton import here (find_spec only: importing triton on a CPU machine is slow)."""
    return importlib.util.find_spec("liger_kernel") is not None and importlib.util.find_spec("triton") is not None


def liger_model_types() -> frozenset[str]:
    """The architectures Liger patches: its own table where installed, else the copy above."""
    if liger_installed():
        try:
            # optional, and slow: liger-kernel imports triton (the docstring above); only where it is installed
            from liger_kernel.transformers.monkey_patch import MODEL_TYPE_TO_APPLY_LIGER_FN
            return frozenset(MODEL_TYPE_TO_APPLY_LIGER_FN)
        except ImportError:
            return frozenset()
    return LIGER_MODEL_TYPES


def kernel_plan(device: str, model_type: str | None, softcap: float | None, enabled: bool = True,
                installed: bool | None = None) -> KernelPlan:
    """The kernel choice for a run on ``device`` ("cuda" or "cpu") of a ``model_type`` model.

    ``installed`` None asks this machine (a run); the page planning for a card it may not have passes what it knows.
    """
    if device != "cuda":
        return KernelPlan(False, "cpu")
    if not enabled:
        return KernelPlan(False, "off")
    if installed is None:
        installed = liger_installed()
    if not installed:
        return KernelPlan(False, "missing")
    if not model_type:
        return KernelPlan(False, "unknown_arch")
    if model_type not in liger_model_types():
        return KernelPlan(False, "arch", {"model_type": model_type})
    if softcap:
        return KernelPlan(False, "softcap", {"model_type": model_type})
    return KernelPlan(True)


# FlashAttention-2's builds: ROCm's (Composable Kernel) runs on MI200 and MI300 only; CUDA's on Ampere and newer
FLASH_ROCM_ARCHS = frozenset({"gfx90a", "gfx940", "gfx941", "gfx942"})
FLASH_CUDA_CAPABILITY = (8, 0)


def flash_attention_runs(caps: DeviceCaps) -> bool:
    """FlashAttention-2's build has kernels for this card (whether flash-attn is installed is asked apart)."""
    if not caps.cuda:
        return False
    return caps.arch in FLASH_ROCM_ARCHS if caps.hip else caps.capability >= FLASH_CUDA_CAPABILITY


def training_attention(device: str) -> str | None:
    """The attention kernel a training load asks for: FlashAttention-2 on a card its build supports, where flash-attn
    imports (its varlen kernel runs padding-free rows without a mask, engine/batching.card_batching), else
    transformers' default (None: SDPA). An import alone is not enough: on a Radeon or a pre-Ampere card the load or
    the first step would fail."""
    if device != "cuda" or importlib.util.find_spec("flash_attn") is None:
        return None
    return "flash_attention_2" if flash_attention_runs(device_caps(device)) else None


def model_kernel_plan(device: str, model_config: Any, enabled: bool = True) -> KernelPlan:
    """``kernel_plan`` from a loaded model's config (its text config for a multimodal model)."""
    text = model_config.get_text_config() if hasattr(model_config, "get_text_config") else model_config
    return kernel_plan(device, getattr(model_config, "model_type", None),
                       getattr(text, "final_logit_softcapping", None), enabled)
