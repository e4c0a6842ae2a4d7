"""Will it fit? Memory estimate for one training plan, before pressing Start.

The estimate adds up what the engine (studio/engine, HF Trainer + peft + bitsandbytes +
DeepSpeed) really keeps alive at its peak, from the architecture card alone (no weights
needed, works offline; a model folder's card is counted from its skeleton on the meta device,
studio/memory/meta_count.py). Each term is one function in studio/memory/terms.py:

* precision modes (studio/models/precision.py decides them for the engine): ``fp32``; ``bf16``/``fp16`` = mixed
  precision, the default: trained weights, their gradients and optimizer states in fp32 (master weights), the
  maths autocast to 16 bits, which keeps a 16-bit copy of each trained weight from forward to backward;
  ``pure_bf16``: trained weights, gradients and states in bf16 (LLaMA-Factory's pure_bf16, half the memory).
  Frozen weights (LoRA's base, freeze's lower layers) are 16-bit in every mode but fp32.
* weights: QLoRA keeps linear layers in 4/8 bits and, through peft's ``prepare_model_for_kbit_training``,
  casts the rest (embeddings, head, norms) to fp32.
* gradients and optimizer states of the trainable parameters: AdamW holds 2 states in the
  parameter's dtype, adamw_8bit 2 bytes, LoRA adapters are fp32 (peft's autocast_adapter_dtype); every other
  optimizer RunConfig accepts (paged, Lion, factored, SGD ...): ``optimizer_state_bytes`` in studio/config/vocabulary.py.
  DeepSpeed keeps fp32 master weights + fp32 Adam states whatever the model dtype, and moves
  them to host RAM with the *-offload plans (16-18 bytes/param, DeepSpeed's own estimator).
* activations per token and layer, derived from what autograd saves in the HF Llama block with
  SDPA attention (no seq^2 term); with gradient checkpointing only each layer's input is kept
  plus one layer being recomputed.
* logits: the loss upcasts to fp32, so its backward holds ~12 bytes x vocab per token; with the
  engine's chunked loss (``selective_logits``, studio/engine/loss.py) only one chunk of positions
  (``memory.terms.loss_chunk_rows(vocab)``) is live at a time.
* framework overhead: CUDA context, cuBLAS workspace, allocator fragmentation; on CPU the
  resident size of python + torch + transformers + peft, and glibc's fragmentation (measured).

Units: GB means GiB (2**30 bytes), as nvidia-smi and torch report card memory.
Accuracy: within ~25% of published figures (tests/memory/test_memory.py; 7B full mixed-precision within 15% of
LLaMA-Factory's 120 GB) and within ~15% of peak RSS
measured on CPU (bench/memory_bench.py).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..config.vocabulary import (DEEPSPEED_SHORTCUTS, accepted_optimizers, closest_optimizer,
                                 is_optimizer, short_optimizer)
from ..config.deepspeed import deepspeed_plan
from ..config.run_config import Draft
from ..errors import StudioError
from ..models.precision import device_caps, precision_plan
from ..stages import stage_of
from . import terms
from .advice import suggest_fixes
from .card_memory import detect_gpu_mem_gb
from .cards import CARDS_DIR, ArchCard, available_cards, card_from_hf_config, load_card
from .terms import (CPU_ALLOC_FACTOR, CPU_ALLOC_FACTOR_ADAPTER, CPU_BASELINE_GB, CUDA_CONTEXT_GB,  # noqa: F401
                    CUDA_HOST_BASELINE_GB, FRAGMENTATION, GB, NVME_HOST_BUFFERS, ZERO_HOST_BUFFERS, Setup)

__all__ = ["ArchCard", "CARDS_DIR", "Estimate", "available_cards", "card_from_hf_config",
           "detect_gpu_mem_gb", "estimate", "host_ram_gb", "load_card"]

METHODS = ("full", "freeze", "lora", "qlora")
DEEPSPEED_PLANS = DEEPSPEED_SHORTCUTS          # studio/config/vocabulary.py owns the names
OPTIMS = tuple(accepted_optimizers())        # every name RunConfig accepts, aliases included


# ------------------------------------------------------------------ estimate
@dataclass(frozen=True)
class Machine:
    """What a plan is estimated against: the card's memory (None: no verdict on it), host RAM, the device a run
    trains on ("cuda" or "cpu") and the run's PrecisionPlan when the caller has made it (else the plan for a card
    of this kind, studio/models/precision.py)."""

    gpu_mem_gb: float | None = None
    ram_gb: float | None = None
    device: str = "cuda"
    precision_plan: Any = None


@dataclass
class Estimate:
    """Peak memory of one plan; GB = GiB. ``fits`` is None when no memory size was given."""

    gpu_gb: float
    cpu_gb: float
    fits: bool | None
    breakdown: dict[str, float]
    host_breakdown: dict[str, float]
    disk_gb: float = 0.0   # z3-nvme: what DeepSpeed swaps to offload_nvme_path
    suggestions: list[str] = field(default_factory=list)
    suggestion_details: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)   # what was estimated, as the CLI shows it (_summary)
    card: ArchCard | None = None
    mem_gb: float | None = None
    config: Draft | None = None   # the run config estimated (a Draft or a RunConfig)
    setup: Setup | None = None        # the plan its fields amount to on this machine (_setup)
    machine: Machine = field(default_factory=Machine)

    @property
    def host_short(self) -> bool:
        """The GPU part fits (or was not asked about) but host RAM is the problem (offload plans)."""
        ram = self.machine.ram_gb
        gpu_ok = self.mem_gb is None or self.gpu_gb <= self.mem_gb
        return self.machine.device == "cuda" and ram is not None and self.cpu_gb > ram and gpu_ok

    @property
    def tight(self) -> bool:
        """Fits, but with under 10% headroom: within the estimate's own error."""
        used = self.gpu_gb if self.machine.device == "cuda" else self.cpu_gb
        return bool(self.fits and self.mem_gb and used > 0.9 * self.mem_gb)

    def to_dict(self) -> dict[str, Any]:
        return {"gpu_gb": round(self.gpu_gb, 2), "cpu_gb": round(self.cpu_gb, 2), "disk_gb": round(self.disk_gb, 2),
                "fits": self.fits,
                "tight": self.tight, "host_short": self.host_short,
                "mem_gb": self.mem_gb, "breakdown": {k: round(v, 3) for k, v in self.breakdown.items()},
                "host_breakdown": {k: round(v, 3) for k, v in self.host_breakdown.items()},
                "suggestions": list(self.suggestions), "suggestion_details": list(self.suggestion_details),
                "plan": dict(self.plan), "model": self.card.to_dict() if self.card else None}


def _check_choice(name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise StudioError.of("memory.choice_unknown", name=name, value=str(value), choices=[str(c) for c in choices])


def _precision(cfg: Draft, device: str, plan: Any) -> str:
    """The precision mode the estimate counts in: the run's precision plan (studio/models/precision.py) when the
    caller has it, else the plan for a card of this kind (bf16 assumed; no torch import, so the UI may call it)."""
    if plan is None:
        caps = device_caps(device, detect=False)
        try:
            plan = precision_plan(caps, cfg)
        except StudioError:   # pure_bf16 with fp16: validate() reports it; estimate what the rest asks for
            plan = precision_plan(caps, cfg.replace(pure_bf16=False))
    return plan.estimator_precision


def _setup(cfg: Draft, device: str, precision: str) -> Setup:
    """The checked plan a run of ``cfg`` trains on ``device``: the one place RunConfig's fields become the
    estimate's terms (the rows per forward of a preference stage, the effective checkpointing and offloads).

    ``precision`` is the precision plan's mode (fp32, bf16 / fp16 = mixed precision over fp32 masters, pure_bf16);
    a bad ``deepspeed`` setting is refused by deepspeed_plan in the engine's words.

    Raises:
        StudioError: an unknown method / optimizer / device, quantization without LoRA, or a bad deepspeed setting.
    """
    method, quant_bits, stage = cfg.method, cfg.quantization_bit, stage_of(cfg.stage)
    deepspeed = deepspeed_plan(cfg.deepspeed)
    _check_choice("method", method, METHODS)   # a RunConfig built in code is not coerced: its method may be anything
    if not is_optimizer(cfg.optim):
        close = closest_optimizer(cfg.optim)
        raise (StudioError.of("memory.optimizer_close", name=cfg.optim, close=close) if close else
               StudioError.of("memory.optimizer_unknown", name=cfg.optim, names=accepted_optimizers()))
    _check_choice("device", device, ("cuda", "cpu"))
    if quant_bits and method not in ("lora", "qlora"):
        raise StudioError.of("memory.quant_needs_lora")
    if quant_bits not in (None, 4, 8):
        raise StudioError.of("memory.quant_bits", bits=str(quant_bits))
    if cfg.cutoff_len < 1 or cfg.per_device_train_batch_size < 1:
        raise StudioError.of("memory.sizes_positive")
    ds = "none" if device == "cpu" else deepspeed
    # activation offload keeps the checkpointed inputs on the host: it checkpoints, as layer-wise offload does
    grad_ckpt = cfg.gradient_checkpointing or cfg.offload_activations or cfg.layerwise_offload
    return Setup(method=method, quant_bits=quant_bits, ds=ds, precision=precision,
                 tokens=cfg.cutoff_len * stage.sequences_per_forward(cfg.per_device_train_batch_size),
                 grad_ckpt=grad_ckpt, layerwise=cfg.layerwise_offload and ds == "none", device=device,
                 optim=cfg.optim, lora_rank=cfg.lora_rank, lora_target=cfg.lora_target,
                 freeze_layers=cfg.freeze_trainable_layers, double_quant=cfg.double_quantization,
                 chunked_loss=cfg.selective_logits and stage.studio_trainer, offload_act=cfg.offload_activations)


def _rows(cfg: Draft) -> int:
    """Rows per forward the engine runs (a DPO stage halves an even batch; a GRPO forward holds one row's
    generations per ``sequences`` of the batch): the stage table's ``micro_batch`` (studio/stages.py)."""
    stage = stage_of(cfg.stage)
    micro = stage.micro_batch(cfg.per_device_train_batch_size, 1)[0]
    return max(1, micro // stage.sequences) if stage.counts == "sequences" else micro


def _summary(cfg: Draft, s: Setup, card: ArchCard, machine: Machine) -> dict[str, Any]:
    """Estimate.plan: what was estimated, as the CLI's table and its JSON show it."""
    return dict(stage=cfg.stage, method="qlora" if s.quant_bits else s.method, quant_bits=s.quant_bits,
                deepspeed=s.ds, seq_len=cfg.cutoff_len, batch=cfg.per_device_train_batch_size, grad_ckpt=s.grad_ckpt,
                optim=short_optimizer(s.optim), precision=s.precision, lora_rank=s.lora_rank,
                lora_target=s.lora_target, freeze_layers=s.freeze_layers, layerwise_offload=s.layerwise,
                device=machine.device, ram_gb=machine.ram_gb, offload_activations=terms.offloads_activations(s),
                chunked_loss=s.chunked_loss, double_quant=s.double_quant,
                activation_pcie_s=round(terms.activation_pcie_seconds(card, s), 3))


def estimate(cfg: Draft, gpu_mem_gb: float | None = None, *, device: str = "cuda", ram_gb: float | None = None,
             precision_plan: Any = None, card: ArchCard | None = None, suggest: bool = True) -> Estimate:
    """Peak GPU memory and host RAM of a run of ``cfg``; with ``gpu_mem_gb`` (or ``ram_gb``) a verdict and fixes.

    The peak is weights + optimizer states + the larger of (activations + logits + autocast copies) and
    (gradients + step temporaries), since gradients build up while activations are freed; each term is a
    function in studio/memory/terms.py. ``device='cpu'`` predicts the peak RSS of a CPU run (fp32 unless told
    otherwise), which is what bench/memory_bench.py checks against measurements. A stage other than sft (its row
    of the stage table, studio/stages.py): the policy's forward carries the stage's ``sequences`` per row, and its
    forwards without gradients (the reference: same weights, adapter off, no second copy; GRPO's generation) are a
    transient the peak takes the larger of (terms.reference_forward).

    ``precision_plan``: the run's PrecisionPlan when the caller has made it, else the plan for a card of this kind.
    ``card``: the model's architecture card when the caller holds one that is not ``cfg.model_name_or_path``'s
    (a skeleton counted by a test, a benchmark's model built in memory); else load_card finds it.
    Suggestions carry RunConfig settings in ``suggestion_details[*]['settings']``, applied with
    ``cfg.replace(**settings)``.

    Raises:
        StudioError: no card for the model (see load_card), a bad deepspeed path, an unknown method / plan /
            optimizer / precision, or quantization without LoRA.
    """
    card = card if card is not None else load_card(cfg.model_name_or_path)
    machine = Machine(gpu_mem_gb, ram_gb, device, precision_plan)
    s = _setup(cfg, device, _precision(cfg, device, precision_plan))
    reference = terms.reference_forward(card, s, stage_of(cfg.stage).no_grad_sequences, cfg.cutoff_len * _rows(cfg))
    where = terms.placement(card, s)
    act, lg = terms.activations(card, s), terms.logits(card, s)
    dyn, slack = terms.dynamic(card, s)
    peak = where.gpu_weights + where.gpu_opt + max(max(dyn + where.cast_copies, where.gpu_grads),
                                                   where.gpu_grads + where.step_temp, reference)
    peak += terms.dequant_buffer(card, s)
    breakdown = {"weights": where.gpu_weights / GB, "gradients": where.gpu_grads / GB,
                 "optimizer": where.gpu_opt / GB, "activations": act / GB, "logits": lg / GB}
    if where.cast_copies:
        breakdown["autocast_copies"] = where.cast_copies / GB
    if reference:
        breakdown["reference_forward"] = reference / GB
    if device == "cuda":
        overhead = terms.overhead_gb(dyn, where.step_temp)
        breakdown["overhead"] = overhead
        gpu_gb = peak / GB + overhead
        host = {"baseline": CUDA_HOST_BASELINE_GB,
                "nvme_swap_buffers" if s.ds == "z3-nvme" else "offloaded_states": where.host_states / GB}
        if terms.offloads_activations(s):
            host["offloaded_activations"] = terms.offloaded_activations(card, s) / GB
        cpu_gb = sum(host.values())
        host_short = ram_gb is not None and cpu_gb > ram_gb
        fits = None if gpu_mem_gb is None and ram_gb is None else (
            (gpu_mem_gb is None or gpu_gb <= gpu_mem_gb) and not host_short)
    else:
        gpu_gb = 0.0
        host = {**breakdown, "allocator": slack / GB, "baseline": CPU_BASELINE_GB}
        cpu_gb = peak / GB + CPU_BASELINE_GB
        limit = ram_gb if ram_gb is not None else gpu_mem_gb
        fits = None if limit is None else cpu_gb <= limit
    est = Estimate(gpu_gb=gpu_gb, cpu_gb=cpu_gb, fits=fits, breakdown=breakdown, host_breakdown=host,
                   disk_gb=where.disk_states / GB, plan=_summary(cfg, s, card, machine), card=card,
                   mem_gb=gpu_mem_gb if device == "cuda" else (ram_gb or gpu_mem_gb), config=cfg, setup=s,
                   machine=machine)
    if suggest and fits is False:
        est.suggestion_details = suggest_fixes(est, lambda changed: _again(est, changed))
        est.suggestions = [d["text"] for d in est.suggestion_details]
    return est


def _again(est: Estimate, changed: Draft) -> Estimate:
    """The estimate of a changed config on the same machine and card, without suggestions of its own."""
    m = est.machine
    # pure_bf16 decides the precision mode: a change of it is estimated in the plan for this kind of card
    plan = m.precision_plan if changed.pure_bf16 == est.config.pure_bf16 else None
    return estimate(changed, m.gpu_mem_gb, device=m.device, ram_gb=m.ram_gb, precision_plan=plan, card=est.card,
                    suggest=False)


def host_ram_gb() -> float | None:
    """Physical RAM of this machine in GB (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB
    except (ValueError, OSError, AttributeError):
        return None
