"""Which dtypes a run keeps its weights, optimizer states and maths in: one pure decision, testable on a CPU.

Why a plan and not just "bf16 on": training bf16 weights with a bf16 Adam rounds every update smaller than
~1/256 of a weight to nothing (bf16 has 8 mantissa bits), so a fine-tune at lr 1e-5 can silently stop learning.
The default is therefore what users expect from "bf16 training" (PyTorch AMP, LLaMA-Factory's default): fp32
master weights and fp32 optimizer states, the matmuls autocast to bf16/fp16. Pure bf16 (half the memory of the
weights, gradients and states) only when asked for with ``pure_bf16: true``, LLaMA-Factory's key.

    method            mixed (default)                               pure_bf16
    full              load fp32, autocast 16-bit                    load bf16, no autocast
    freeze            load 16-bit, trainable layers upcast to fp32  load bf16, no autocast
    lora / qlora      frozen base 16-bit, adapters fp32, autocast   same (adapters stay fp32)
    DeepSpeed         load 16-bit; DeepSpeed keeps the fp32 master and fp32 Adam states itself

This module is the one place that asks what a card can do (``device_caps``) and decides dtypes from it
(``precision_plan``, ``inference_dtype``). A run makes its plan once and hands it to the model load, the
quantization config, TrainingArguments' autocast flag, the estimator and status.json;
tests/models/test_card_decisions.py fails if another module builds ``DeviceCaps`` itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..config.run_config import RunConfig
from ..errors import StudioError
from ..notices import Notice

if TYPE_CHECKING:
    import torch

Dtype = Literal["fp32", "bf16", "fp16"]

PURE_BF16_WARNING = Notice.of("pure_bf16")

PURE_BF16_ON_CPU = Notice.of("pure_bf16_cpu")


# AMD gfx targets with bf16 matrix units: MI200 (gfx90a), MI300 (gfx940-942), MI350 (gfx950), RDNA3 (gfx110x), RDNA4
# (gfx120x). Older Radeons (RDNA2, gfx103x) compute bf16 only by emulation: the plan trains those in fp16.
HIP_BF16_ARCHS = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
                  "gfx1150", "gfx1151", "gfx1200", "gfx1201")


def hip_bf16(arch: str) -> bool:
    """bf16 on an AMD card of gfx target ``arch`` ("gfx90a:sramecc+:xnack-" counts as gfx90a)."""
    return arch.split(":")[0] in HIP_BF16_ARCHS


@dataclass(frozen=True)
class DeviceCaps:
    """What the card can do; ``cuda`` False means a CPU run. ``hip``: an AMD card under ROCm (torch's ROCm build
    keeps the ``torch.cuda`` API and the "cuda" device name), ``arch`` its gfx target."""

    cuda: bool
    bf16: bool = False
    hip: bool = False
    arch: str = ""
    capability: tuple[int, int] = (0, 0)   # NVIDIA: the compute capability (8.0 is Ampere); (0, 0) elsewhere

    @classmethod
    def detect(cls) -> "DeviceCaps":
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        if torch.cuda.is_available():
            if getattr(torch.version, "hip", None):
                arch = str(getattr(torch.cuda.get_device_properties(0), "gcnArchName", "")).split(":")[0]
                return cls(cuda=True, bf16=hip_bf16(arch), hip=True, arch=arch)
            return cls(cuda=True, bf16=torch.cuda.is_bf16_supported(),
                       capability=tuple(torch.cuda.get_device_capability(0)))
        return cls(cuda=False, bf16=True)  # torch runs bf16 on any CPU (slowly): only pure_bf16 asks for it

    @property
    def vendor(self) -> str:
        return "amd" if self.hip else "nvidia" if self.cuda else "cpu"

    @property
    def device(self) -> str:
        return "cuda" if self.cuda else "cpu"


def device_caps(device: str, *, detect: bool = True) -> DeviceCaps:
    """The abilities of ``device`` ("cuda" or "cpu"): the card present is asked, unless ``detect`` is False.

    ``detect=False`` is for a card being planned for rather than used (the memory estimate on a machine that
    may have no card, and never imports torch for it): bf16 is assumed, as on every card since Ampere; bf16
    and fp16 take the same bytes, so the estimate does not depend on it.
    """
    if device != "cuda":
        return DeviceCaps(cuda=False, bf16=True)   # torch runs bf16 on any CPU (slowly): only pure_bf16 asks for it
    return DeviceCaps.detect() if detect else DeviceCaps(cuda=True, bf16=True)


def torch_dtype(name: "Dtype") -> "torch.dtype":
    """The torch dtype of a plan's dtype name."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


@dataclass(frozen=True)
class PrecisionPlan:
    """Where each kind of number lives. ``mode`` names it for status.json, the UI and the estimator."""

    mode: Literal["fp32", "mixed_bf16", "mixed_fp16", "pure_bf16"]
    load_dtype: Dtype            # dtype from_pretrained loads the weights in
    trainable_dtype: Dtype       # dtype of the parameters the optimizer updates (its states follow it)
    autocast: Dtype | None       # Trainer's bf16/fp16 flag: autocast (and a grad scaler for fp16); None = off
    master_fp32: bool            # an fp32 copy of each trained weight exists (here or inside DeepSpeed)
    warnings: tuple[str, ...] = field(default=())

    @property
    def estimator_precision(self) -> str:
        """The precision mode the memory estimate counts this plan in (memory.terms.Setup.precision)."""
        return {"fp32": "fp32", "mixed_bf16": "bf16", "mixed_fp16": "fp16", "pure_bf16": "pure_bf16"}[self.mode]

    @property
    def compute_dtype(self) -> Dtype:
        """The dtype the matmuls run in: the autocast dtype, else the weights' (bitsandbytes' compute dtype)."""
        return self.autocast or self.load_dtype


def precision_plan(caps: DeviceCaps, cfg: RunConfig) -> PrecisionPlan:
    """Decide the dtypes of one run from the card's abilities and the config (no torch needed).

    Raises:
        StudioError: pure_bf16 on a card without bf16, or combined with fp16/fp32.
    """
    return _precision_plan(caps, cfg)


def rocm_notices(caps: DeviceCaps, cfg: RunConfig) -> tuple[Notice, ...]:
    """What an AMD card changes for this plan (studio/words/notice_words.py ROCM_SUPPORT has the facts); the engine
    sends them before the model load that may stop on them."""
    if not caps.hip:
        return ()
    arch = caps.arch or "gfx?"
    out = []
    if cfg.quantization_bit:
        out.append(Notice.of("rocm_bitsandbytes", arch=arch, card=f"AMD ROCm {arch}"))
    if cfg.deepspeed and cfg.deepspeed != "none":
        out.append(Notice.of("rocm_deepspeed", arch=arch, card=f"AMD ROCm {arch}"))
    return tuple(out)


def _precision_plan(caps: DeviceCaps, cfg: RunConfig) -> PrecisionPlan:
    resolved = cfg.resolved_precision(caps.device, bf16_ok=caps.bf16)
    if cfg.pure_bf16:
        if resolved in ("fp16", "fp32") and (cfg.fp16 or cfg.precision in ("fp16", "fp32")):
            raise StudioError.of("model.pure_bf_precision", precision=resolved)
        if caps.cuda and not caps.bf16:
            raise StudioError.of("model.pure_bf_card")
        if resolved != "bf16":   # a CPU run with precision auto (or the bf16 flag) trains in fp32, and says so
            return PrecisionPlan("fp32", "fp32", "fp32", None, True, (PURE_BF16_ON_CPU,))
        return PrecisionPlan("pure_bf16", "bf16", "bf16" if cfg.finetuning_type != "lora" else "fp32",
                             None, False, (PURE_BF16_WARNING,))
    if resolved == "fp32":
        return PrecisionPlan("fp32", "fp32", "fp32", None, True)
    half: Dtype = "bf16" if resolved == "bf16" else "fp16"
    mode: Literal["mixed_bf16", "mixed_fp16"] = "mixed_bf16" if half == "bf16" else "mixed_fp16"
    if cfg.deepspeed and cfg.deepspeed != "none":
        # DeepSpeed's bf16/fp16 mode casts the module to 16 bits and keeps fp32 master + Adam states itself
        return PrecisionPlan(mode, half, half, half, True)
    if cfg.finetuning_type == "full":
        return PrecisionPlan(mode, "fp32", "fp32", half, True)
    # freeze: the frozen bulk stays 16-bit, the few trainable layers are upcast; lora: peft's adapters are fp32
    return PrecisionPlan(mode, half, "fp32", half, True)


def inference_dtype(caps: DeviceCaps, cfg: RunConfig | None) -> Dtype:
    """The dtype a trained model is loaded in to be served (evaluation, chat, export).

    On a CPU fp32 (16-bit maths there is slow and buys nothing). On a card the dtype the run computed in, which
    is its plan's compute dtype for this card: a full run trained with fp32 masters under bf16 autocast is served
    in bf16, half the memory of its fp32 checkpoint. Without a run config (a plain model folder), or for a run
    this card cannot train (pure_bf16 on an fp16 card), bf16 where the card has it, else fp32: fp16 can overflow
    a model trained in bf16.
    """
    if not caps.cuda:
        return "fp32"
    if cfg is not None:
        try:
            return precision_plan(caps, cfg).compute_dtype
        except StudioError:
            pass
    return "bf16" if caps.bf16 else "fp32"
