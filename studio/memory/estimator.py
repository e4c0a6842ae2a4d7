"""Will it fit? Memory estimate for one training plan, before pressing Start.

The estimate adds up what the engine (studio/engine, HF Trainer + peft + bitsandbytes +
DeepSpeed) really keeps alive at its peak, from the architecture card alone (no weights
needed, works offline):

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
  (``chunk_rows_for(vocab)``) is live at a time.
* framework overhead: CUDA context, cuBLAS workspace, allocator fragmentation; on CPU the
  resident size of python + torch + transformers + peft, and glibc's fragmentation (measured).

Units: GB means GiB (2**30 bytes), as nvidia-smi and torch report card memory.
Accuracy: within ~25% of published figures (tests/test_memory.py; 7B full mixed-precision within 15% of
LLaMA-Factory's 120 GB) and within ~15% of peak RSS
measured on CPU (bench/memory_bench.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.vocabulary import (DEEPSPEED_SHORTCUTS, TORCH_ADAMW, accepted_optimizers, canonical_optimizer,
                                 is_optimizer, optimizer_problem, optimizer_state_bytes, short_optimizer)
from ..errors import StudioError
from .cards import CARDS_DIR, ArchCard, available_cards, card_from_hf_config, load_card

__all__ = ["ArchCard", "CARDS_DIR", "Estimate", "available_cards", "card_from_hf_config", "deepspeed_plan",
           "detect_gpu_mem_gb", "estimate", "estimate_for_config", "host_ram_gb", "load_card"]

GB = 1024 ** 3
METHODS = ("full", "freeze", "lora", "qlora")
DEEPSPEED_PLANS = DEEPSPEED_SHORTCUTS          # studio/config/vocabulary.py owns the names
OPTIMS = tuple(accepted_optimizers())        # every name RunConfig accepts, aliases included
PRECISIONS = ("auto", "bf16", "fp16", "fp32", "pure_bf16")   # bf16/fp16: mixed precision, fp32 master weights

# GPU-side constants are typical values (CUDA 12, Hopper/Ada), not measured by this project yet.
CUDA_CONTEXT_GB = 0.6        # CUDA context + cuBLAS/cuDNN workspaces, outside torch's allocator
FRAGMENTATION = 0.10         # caching allocator: reserved exceeds allocated by ~10% of the churn
# CPU-side constants are measured by bench/memory_bench.py (torch 2.13 CPU wheel, glibc malloc).
CPU_BASELINE_GB = 0.48       # VmRSS after importing python + torch + transformers + peft (0.38), plus the
                             # kernels and thread pools the first training step pages in (~0.10)
# glibc keeps freed activation / activation-gradient buffers fragmented, so peak RSS exceeds the live
# tensors by a factor on the dynamic part; peft's adapter path (extra per-module temporaries in forward
# and backward) churns more. Fitted on the --quick model at seq 128 and 512, checked at seq 256 and on
# the default model (see the bench's table).
CPU_ALLOC_FACTOR = 1.45
CPU_ALLOC_FACTOR_ADAPTER = 2.5   # on layer activations; logits keep CPU_ALLOC_FACTOR
CUDA_HOST_BASELINE_GB = 2.5  # host RSS of a CUDA torch process (driver + kernels mapped)
ZERO_HOST_BUFFERS = 1.1      # pinned staging buffers on top of DeepSpeed's offloaded states
# z3-nvme keeps in host RAM only the swap buffers of presets/deepspeed/ds_z3_nvme.json: offload_param
# buffer_count 5 x buffer_size 1e8 x 2 bytes, and offload_optimizer buffer_count 4 x sub_group_size 1e8 x
# 16 bytes (fp32 master + grad + 2 Adam states of one sub-group)
NVME_HOST_BUFFERS = 5 * 1e8 * 2 + 4 * 1e8 * 16


# ------------------------------------------------------------------ estimate
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
    plan: dict[str, Any] = field(default_factory=dict)
    card: ArchCard | None = None
    mem_gb: float | None = None

    @property
    def host_short(self) -> bool:
        """The GPU part fits (or was not asked about) but host RAM is the problem (offload plans)."""
        ram = self.plan.get("ram_gb")
        gpu_ok = self.mem_gb is None or self.gpu_gb <= self.mem_gb
        return self.plan.get("device") == "cuda" and ram is not None and self.cpu_gb > ram and gpu_ok

    @property
    def tight(self) -> bool:
        """Fits, but with under 10% headroom: within the estimate's own error."""
        used = self.gpu_gb if self.plan.get("device", "cuda") == "cuda" else self.cpu_gb
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
        raise StudioError(f"{name} '{value}' is not known", f"use one of: {', '.join(map(str, choices))}")


def _lora_params(card: ArchCard, rank: int, target: str) -> tuple[float, float]:
    """(adapter params, bytes-per-token of module inputs a 16-bit LoRA copies) for one layer.

    ``all`` is peft's all-linear: every nn.Linear / Conv1D of the block (fused MoE experts are not modules)."""
    linears = card.linear_counts()
    if target.strip() in ("all", "", "all-linear"):
        picked = linears
    else:
        names = [t.strip() for t in target.split(",") if t.strip()]
        have = {n for n, *_ in linears}
        # Phi-3's fused names, on a card that lists q/k/v and gate/up apart
        fused = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]}
        wanted = {m for n in names for m in ([n] if n in have else fused.get(n, [n]))}
        picked = [x for x in linears if x[0] in wanted]
    return sum(rank * (a + b) * c for _n, a, b, c in picked), sum(a * c for _n, a, _b, c in picked)


def estimate(card: ArchCard, *, method: str = "lora", quant_bits: int | None = None, deepspeed: str = "none",
             seq_len: int = 1024, batch: int = 1, grad_ckpt: bool = False, optim: str = "adamw",
             chunked_loss: bool = False,
             precision: str = "auto", lora_rank: int = 8, lora_target: str = "all", freeze_layers: int = 2,
             layerwise_offload: bool = False, gpu_mem_gb: float | None = None, ram_gb: float | None = None,
             device: str = "cuda", double_quant: bool = True, suggest: bool = True) -> Estimate:
    """Peak GPU memory and host RAM of a training plan; with ``gpu_mem_gb`` a verdict and fixes.

    ``device='cpu'`` predicts the peak RSS of a CPU run (fp32 unless told otherwise), which is what
    bench/memory_bench.py checks against measurements.

    Raises:
        StudioError: an unknown method / plan / optimizer / precision, or quant_bits without LoRA.
    """
    _check_choice("method", method, METHODS)
    _check_choice("deepspeed", deepspeed or "none", DEEPSPEED_PLANS)
    if not is_optimizer(optim):
        raise StudioError(optimizer_problem(optim), "use a transformers optimizer name such as adamw_torch, "
                          "adamw_8bit or adafactor (RunConfig accepts the same names)")
    _check_choice("precision", precision, PRECISIONS)
    _check_choice("device", device, ("cuda", "cpu"))
    if method == "qlora" and not quant_bits:
        quant_bits = 4
    if quant_bits and method not in ("lora", "qlora"):
        raise StudioError("quant_bits needs method lora or qlora", "pick --method qlora, or drop --quant-bits")
    if quant_bits not in (None, 4, 8):
        raise StudioError(f"quant_bits must be 4 or 8 (got {quant_bits})", "use --quant-bits 4 or 8")
    if seq_len < 1 or batch < 1:
        raise StudioError("seq_len and batch must be at least 1", "give positive numbers")
    ds = "none" if device == "cpu" else (deepspeed or "none")
    if precision == "auto":
        precision = "fp32" if device == "cpu" else "bf16"
    b = 4 if precision == "fp32" else 2          # bytes of frozen weights and of activations
    mixed = precision in ("bf16", "fp16")        # autocast over fp32 master weights
    plan = dict(method="qlora" if quant_bits else method, quant_bits=quant_bits, deepspeed=ds, seq_len=seq_len,
                batch=batch, grad_ckpt=grad_ckpt or layerwise_offload, optim=short_optimizer(optim), precision=precision,
                lora_rank=lora_rank, lora_target=lora_target, freeze_layers=freeze_layers,
                layerwise_offload=layerwise_offload and ds == "none", device=device, ram_gb=ram_gb)
    grad_ckpt = plan["grad_ckpt"]
    layerwise = plan["layerwise_offload"]
    tokens = seq_len * batch
    adapter = quant_bits is not None or method in ("lora", "qlora")
    L, h, n_all = card.num_layers, card.hidden_size, card.n_params
    lora_p, lora_in = _lora_params(card, lora_rank, lora_target) if adapter else (0, 0)
    lora_p *= L

    # --- weights, and which parameters train
    if quant_bits:
        per = quant_bits / 8 + (0.0159 if double_quant else 0.0625) * (quant_bits == 4) + 0.0078 * (quant_bits == 8)
        frozen_w = L * card.layer_linear_params * per + (n_all - L * card.layer_linear_params) * 4
    else:
        frozen_w = n_all * b
    if method == "full" and not adapter:
        trainable = n_all
    elif method == "freeze":
        trainable = min(freeze_layers, L) * card.layer_params
    else:
        trainable = lora_p
    # bytes of each trained parameter (its weight, gradient, and the unit of its optimizer states): adapters are
    # fp32; full/freeze keep fp32 masters under mixed precision, bf16 under pure_bf16; DeepSpeed holds its own
    # fp32 master (below) over 16-bit module weights
    tb = 4 if adapter else (b if ds != "none" or precision == "pure_bf16" else 4)
    if adapter:
        weights = frozen_w + lora_p * 4
    else:
        weights = (n_all - trainable) * b + trainable * tb
    # autocast casts each fp32 trained weight to 16 bits once per forward and autograd keeps the copy for backward
    cast_copies = trainable * 2 if mixed and not adapter and ds == "none" else 0.0
    grads = trainable * tb
    opt_bytes = optimizer_state_bytes(optim, tb)   # 32-bit, 8-bit, paged, factored, SGD: see the vocabulary
    torch_adamw = canonical_optimizer(optim) in TORCH_ADAMW
    optimizer = trainable * opt_bytes
    # On CUDA the engine picks torch's fused AdamW (studio/engine/run.py _optimizer), which updates in place; with
    # layer-wise offload it runs the multi-tensor (foreach) AdamW: one state-sized temporary for all params in
    # step(). On CPU it loops per tensor, so two temporaries of the largest trainable tensor.
    if device == "cuda":
        step_temp = trainable * tb if torch_adamw and layerwise_offload and deepspeed in (None, "none") else 0.0
    else:
        largest_t = max(card.embed_params, h * card.intermediate_size) if method == "full" and not adapter else (
            h * card.intermediate_size if method == "freeze" else 0)
        step_temp = 2 * tb * largest_t if torch_adamw else 0.0

    # --- activations (bytes per token and layer, see module docstring)
    i, q, kv = card.act_intermediate, card.q_dim, card.kv_dim   # MoE: the experts a token passes through
    norm = 4 * h + (0 if adapter else b * h) + b * h
    layer_tok = 2 * norm + b * (3 * q + 2 * kv) + 4 * card.num_heads + 4 * b * i
    if adapter and b == 2:
        layer_tok += b * lora_in   # peft casts each adapted module's input to the fp32 adapter dtype
    layer_act = layer_tok * tokens
    live_layers = L if (adapter or method == "full" or grad_ckpt) else min(freeze_layers, L)
    if grad_ckpt:
        activations = L * b * h * tokens + 1.5 * layer_act
    else:
        activations = live_layers * layer_act + 0.5 * layer_act
    activations += (4 * h + 2 * b * h) * tokens     # final norm + head input
    logits = 12 * card.vocab_size * (min(tokens, _loss_chunk_rows(card.vocab_size)) if chunked_loss else tokens)

    # --- where the states live: DeepSpeed and layer-wise offload
    host_states = disk_states = 0.0
    gpu_weights, gpu_grads, gpu_opt = weights, grads, optimizer
    if ds != "none":
        # DeepSpeed: 16-bit params + fp32 master, fp32 grads, fp32 Adam (estimate_zero*_model_states_mem_needs)
        master = trainable * 16
        frozen = weights - trainable * tb
        largest = 4 * card.largest_module
        step_temp = 0
        if ds == "z2":
            gpu_weights, gpu_grads, gpu_opt = frozen + trainable * 2, trainable * 2, master
        elif ds == "z2-offload":
            gpu_weights, gpu_grads, gpu_opt = frozen + trainable * 2, trainable * 2, 0
            host_states = master
        elif ds == "z3":
            gpu_weights, gpu_grads, gpu_opt = frozen + trainable * 2 + largest, 0, master
        else:  # z3-offload / z3-nvme: parameters gathered one module at a time
            gpu_weights, gpu_grads, gpu_opt = largest, 0, 0
            host_states = (master + frozen + trainable * 2)
        host_states *= ZERO_HOST_BUFFERS
        if ds == "z3-nvme":  # the states go to disk; host RAM keeps the swap buffers
            disk_states, host_states = host_states, min(host_states, NVME_HOST_BUFFERS)
    elif layerwise:
        on_card = n_all - L * card.layer_params
        frac = on_card / n_all
        host_states = (weights + grads + optimizer) * (1 - frac)
        gpu_weights = weights * frac + 2 * card.layer_params * b
        gpu_grads, gpu_opt = grads * frac + card.layer_params * tb, optimizer * frac
        step_temp = step_temp * frac
        cast_copies = cast_copies * frac + 2 * card.layer_params * 2 * (cast_copies > 0)

    dynamic = activations + logits
    if device == "cpu":   # the adapter's extra churn is inside the layers, not in the loss
        dynamic = activations * (CPU_ALLOC_FACTOR_ADAPTER if adapter else CPU_ALLOC_FACTOR) + logits * CPU_ALLOC_FACTOR
    peak_train = max(dynamic + cast_copies, gpu_grads)
    peak = gpu_weights + gpu_opt + max(peak_train, gpu_grads + step_temp)
    if quant_bits:
        peak += b * h * i   # one layer's weight dequantized for its matmul
    breakdown = {"weights": gpu_weights / GB, "gradients": gpu_grads / GB, "optimizer": gpu_opt / GB,
                 "activations": activations / GB, "logits": logits / GB}
    if cast_copies:
        breakdown["autocast_copies"] = cast_copies / GB
    if device == "cuda":
        overhead = CUDA_CONTEXT_GB + FRAGMENTATION * (dynamic + step_temp) / GB
        breakdown["overhead"] = overhead
        gpu_gb = peak / GB + overhead
        host = {"baseline": CUDA_HOST_BASELINE_GB,
                "nvme_swap_buffers" if ds == "z3-nvme" else "offloaded_states": host_states / GB}
        cpu_gb = sum(host.values())
        host_short = ram_gb is not None and cpu_gb > ram_gb
        fits = None if gpu_mem_gb is None and ram_gb is None else (
            (gpu_mem_gb is None or gpu_gb <= gpu_mem_gb) and not host_short)
    else:
        gpu_gb = 0.0
        slack = dynamic - (activations + logits)
        host = {**breakdown, "allocator": slack / GB, "baseline": CPU_BASELINE_GB}
        cpu_gb = peak / GB + CPU_BASELINE_GB
        limit = ram_gb if ram_gb is not None else gpu_mem_gb
        fits = None if limit is None else cpu_gb <= limit
    est = Estimate(gpu_gb=gpu_gb, cpu_gb=cpu_gb, fits=fits, breakdown=breakdown, host_breakdown=host,
                   disk_gb=disk_states / GB, plan=plan, card=card, mem_gb=gpu_mem_gb if device == "cuda" else (ram_gb or gpu_mem_gb))
    if suggest and fits is False:
        from .advice import suggest_fixes
        est.suggestion_details = suggest_fixes(card, est, gpu_mem_gb, ram_gb, estimate)
        est.suggestions = [d["text"] for d in est.suggestion_details]
    return est


def deepspeed_plan(value: str | None) -> str:
    """A RunConfig ``deepspeed`` value (shortcut or JSON path) as one of DEEPSPEED_PLANS.

    Raises:
        StudioError: a JSON path that cannot be read.
    """
    if not value or value == "none":
        return "none"
    if value in DEEPSPEED_PLANS:
        return value
    try:
        data = json.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise StudioError(f"Cannot read the DeepSpeed config '{value}'", "check the path and that it is JSON",
                          why=str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("zero_optimization", {}), dict):
        raise StudioError(f"DeepSpeed config '{value}' must be a JSON object with a zero_optimization object",
                          "start from presets/deepspeed/ds_z2.json", code="deepspeed")
    zero = data.get("zero_optimization", {})
    stage = int(zero.get("stage", 0))
    offload = any((zero.get(k) or {}).get("device", "none") not in ("none", None)
                  for k in ("offload_optimizer", "offload_param"))
    nvme = any((zero.get(k) or {}).get("device") == "nvme" for k in ("offload_optimizer", "offload_param"))
    if stage >= 3:
        return "z3-nvme" if nvme else "z3-offload" if offload else "z3"
    if stage >= 1:
        return "z2-offload" if offload else "z2"
    return "none"


def estimate_for_config(cfg: Any, gpu_mem_gb: float | None = None, *, device: str = "cuda",
                        ram_gb: float | None = None, plan: Any = None) -> Estimate:
    """Estimate for a RunConfig: maps its LLaMA-Factory fields onto ``estimate``.

    The precision mode is the run's precision plan (studio/models/precision.py): ``plan`` when the caller has
    it, else the plan for ``device``, a card planned for (bf16 assumed; no torch import, so the UI may call it).

    Suggestions carry RunConfig field values in ``suggestion_details[*]['settings']``, so the UI
    can apply one with ``cfg.replace(**settings)``.

    Raises:
        StudioError: no card for ``cfg.model_name_or_path`` (see load_card), or a bad deepspeed path.
    """
    card = load_card(cfg.model_name_or_path)
    if plan is None:
        from ..models.precision import device_caps, precision_plan
        caps = device_caps(device, detect=False)
        try:
            plan = precision_plan(caps, cfg)
        except StudioError:   # pure_bf16 with fp16: validate() reports it; estimate what the rest asks for
            plan = precision_plan(caps, cfg.replace(pure_bf16=False))
    precision = plan.estimator_precision
    est = estimate(card, method=cfg.method, quant_bits=cfg.quantization_bit, deepspeed=deepspeed_plan(cfg.deepspeed),
                   seq_len=cfg.cutoff_len, batch=cfg.per_device_train_batch_size,
                   grad_ckpt=cfg.gradient_checkpointing, optim=cfg.optim, precision=precision,
                   chunked_loss=bool(getattr(cfg, "selective_logits", False)),
                   lora_rank=cfg.lora_rank, lora_target=cfg.lora_target, freeze_layers=cfg.freeze_trainable_layers,
                   layerwise_offload=cfg.layerwise_offload, gpu_mem_gb=gpu_mem_gb, ram_gb=ram_gb, device=device,
                   double_quant=cfg.double_quantization)
    for detail in est.suggestion_details:
        settings = detail.get("settings", {})
        if settings.get("per_device_train_batch_size") == 1:   # keep the effective batch the same
            settings["gradient_accumulation_steps"] = cfg.gradient_accumulation_steps * cfg.per_device_train_batch_size
        if "optim" in settings:   # the advice speaks the short names; a RunConfig field holds transformers'
            settings["optim"] = canonical_optimizer(settings["optim"])
    return est


def detect_gpu_mem_gb() -> float | None:
    """Total memory of GPU 0 in GB via nvidia-smi (no torch import, so the UI may call it); None without one."""
    import shutil
    import subprocess
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=memory.total", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=10).stdout.split()
        return float(out[0]) / 1024 if out else None   # MiB
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def host_ram_gb() -> float | None:
    """Physical RAM of this machine in GB (None where the OS does not say)."""
    import os
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB
    except (ValueError, OSError, AttributeError):
        return None


def _loss_chunk_rows(vocab_size: int) -> int:
    """Positions per chunk of the engine's chunked loss (mirrors studio/engine/loss.py chunk_rows_for)."""
    return max(16, min(4096, 2 ** 24 // max(1, vocab_size)))
