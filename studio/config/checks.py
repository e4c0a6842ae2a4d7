"""RunConfig.validate(): every problem of a config at once, each naming the field and the fix.

Separate from the fields (studio/config/run_config.py) because it is the one place that knows how settings combine
(which method needs which option, what DeepSpeed excludes); the fields only know their own type.
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from .vocabulary import (DEEPSPEED_SHORTCUTS, LR_SCHEDULERS, clashes_with_deepspeed, deepspeed_choices, is_optimizer,
                         optimizer_problem, scheduler_problem)


def problems(cfg: Any) -> list[str]:
    """Every problem of a RunConfig (empty list: valid)."""
    p: list[str] = []
    if not cfg.model_name_or_path.strip():
        p.append("model_name_or_path is empty: use 'tiny-demo', a local folder or a hub id")
    if not cfg.dataset.strip():
        p.append("dataset is empty: give a .jsonl file made by 'python -m studio convert' or a dataset name")
    from ..data.templates import template_fix, known_template
    if not known_template(cfg.template):
        p.append(f"template '{cfg.template}' is not known here: {template_fix(cfg.template)} "
                 "(LLaMA-Factory's names render as there; its others use the model's own chat template)")
    if cfg.lr_scheduler_type not in LR_SCHEDULERS:
        p.append(scheduler_problem(cfg.lr_scheduler_type))
    if not is_optimizer(cfg.optim):
        p.append(optimizer_problem(cfg.optim))
    if (cfg.use_dora or cfg.pissa_init or cfg.use_rslora or cfg.loraplus_lr_ratio) and \
            cfg.finetuning_type != "lora":
        p.append("use_dora / use_rslora / pissa_init / loraplus_lr_ratio need finetuning_type: lora")
    if cfg.loraplus_lr_ratio and cfg.deepspeed and cfg.deepspeed != "none":
        p.append("loraplus_lr_ratio cannot be combined with DeepSpeed (it builds its own optimizer): turn one off")
    if not (0 < cfg.learning_rate < 1):
        p.append(f"learning_rate must be between 0 and 1 (got {cfg.learning_rate}); 1e-5..5e-4 is typical")
    if cfg.max_steps == 0 or cfg.max_steps < -1:
        p.append("max_steps must be -1 (use epochs) or a positive number")
    if cfg.max_steps == -1 and cfg.num_train_epochs <= 0:
        p.append("num_train_epochs must be above 0 when max_steps is -1")
    if 1 <= cfg.val_size != int(cfg.val_size):
        p.append("val_size must be a fraction in (0, 1) or a whole number of rows")
    if cfg.quantization_bit not in (None, 4, 8):
        p.append(f"quantization_bit must be 4, 8 or empty (got {cfg.quantization_bit})")
    if cfg.quantization_bit and cfg.finetuning_type != "lora":
        p.append("quantization_bit needs finetuning_type: lora (QLoRA); quantized weights cannot be trained directly")
    if cfg.quantization_bit and cfg.deepspeed and "z3" in str(cfg.deepspeed):
        # ZeRO-2 keeps the 4-bit base whole on each rank (one card per rank, models/loading.py _device_map) and
        # partitions only the adapters' states, so QLoRA + z2 on several processes is fine. ZeRO-3 shards the
        # weights themselves, which for 4-bit ones needs bnb_4bit_quant_storage = the compute dtype
        p.append("quantization_bit with DeepSpeed ZeRO-3 is not supported here (ZeRO-3 shards the 4-bit weights, "
                 "which needs bnb_4bit_quant_storage; the studio does not set it): use ZeRO-2 or no DeepSpeed")
    if cfg.pure_bf16 and (cfg.fp16 or cfg.precision in ("fp16", "fp32")):
        p.append("pure_bf16 needs bf16: set precision to bf16 or auto, or turn pure_bf16 off")
    if cfg.pure_bf16 and cfg.deepspeed and cfg.deepspeed != "none":
        p.append("pure_bf16 cannot be combined with deepspeed (DeepSpeed keeps its own fp32 master weights): "
                 "turn pure_bf16 off")
    if cfg.bf16 and cfg.fp16:
        p.append("bf16 and fp16 are both on: choose one (or set precision: auto)")
    if cfg.deepspeed and cfg.deepspeed not in DEEPSPEED_SHORTCUTS and not str(cfg.deepspeed).endswith(".json"):
        p.append(f"deepspeed must be one of {deepspeed_choices()} (got '{cfg.deepspeed}')")
    if cfg.deepspeed and cfg.layerwise_offload:
        p.append("layerwise_offload and deepspeed both move weights: choose one")
    if cfg.layerwise_offload and cfg.quantization_bit:
        p.append("layerwise_offload with a quantized model is not supported: turn one off")
    if cfg.deepspeed == "z3-nvme" and not (cfg.offload_nvme_path or "").strip():
        p.append("deepspeed z3-nvme needs offload_nvme_path: a folder on a fast local disk (NVMe)")
    if (cfg.offload_nvme_path or "").strip() and cfg.deepspeed != "z3-nvme":
        p.append("offload_nvme_path is only used by deepspeed z3-nvme: set deepspeed to z3-nvme or clear it")
    if cfg.nproc > 1 and not cfg.deepspeed:
        p.append("nproc > 1 needs deepspeed (z2 or z3) for data-parallel training")
    if clashes_with_deepspeed(cfg.optim) and cfg.deepspeed and cfg.deepspeed != "none":
        p.append(f"optim {cfg.optim} cannot be combined with DeepSpeed (it brings its own optimizer): use adamw_torch")
    p += _ranges(cfg, p)
    return p

def _ranges(cfg: Any, found: list[str]) -> list[str]:
    """Values that pass the type check but break a library far from here (a NaN learning rate, a
    zero batch). The numbers come from each field's ``range`` metadata (studio/config/run_config.py), the one
    place they are written; a field that ``found`` already names is not repeated."""
    p: list[str] = []
    for f in fields(cfg):  # a NaN/inf set in Python (not via YAML/--set, which _coerce checks)
        value = getattr(cfg, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            p.append(f"{f.name} must be a finite number (got {value})")
    named = {q.split(" ", 1)[0].rstrip(":") for q in found + p}
    for f in fields(cfg):
        if "range" in f.metadata and f.name not in named:
            p += _outside_range(f.name, getattr(cfg, f.name), f.metadata, optional=f.default is None)
    for name in ("model_name_or_path", "dataset", "dataset_dir", "output_dir", "deepspeed", "template"):
        value = getattr(cfg, name)
        if value and any(ord(c) < 32 for c in str(value)):
            p.append(f"{name} contains a control character (line break, tab or NUL): type it again on one line")
    return p


def _number_text(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _outside_range(name: str, value: Any, meta: Any, optional: bool = False) -> list[str]:
    """[] when ``value`` is None (unset) or inside ``meta['range']``, else the one sentence naming the field."""
    if value is None:
        return []
    lo, hi = meta["range"]
    opened = meta.get("open", "")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [f"{name} must be a number (got {value!r})"]
    low_ok = value > lo if opened in ("lo", "both") else value >= lo
    high_ok = value < hi if opened in ("hi", "both") else value <= hi
    if low_ok and high_ok:
        return []
    empty = ", or empty" if optional else ""
    if not low_ok:
        return [f"{name} must be {'above' if opened in ('lo', 'both') else 'at least'} {_number_text(lo)}{empty} "
                f"(got {value})"]
    return [f"{name} must be {'below' if opened in ('hi', 'both') else 'at most'} {_number_text(hi)}{empty} "
            f"(got {value})"]
