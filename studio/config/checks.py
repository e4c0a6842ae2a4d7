"""RunConfig.validate(): every problem of a config at once, each naming the field and the fix.

Separate from the fields (studio/config/run_config.py) because it is the one place that knows how settings combine
(which method needs which option, what DeepSpeed excludes); the fields only know their own type.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import fields
from typing import Any

from .lf_keys import LR_SCHEDULERS, OPTIMIZERS

DEEPSPEED_SHORTCUTS = ("none", "z2", "z2-offload", "z3", "z3-offload", "z3-nvme")


def problems(cfg: Any) -> list[str]:
    """Every problem of a RunConfig (empty list: valid)."""
    p: list[str] = []
    if not cfg.model_name_or_path.strip():
        p.append("model_name_or_path is empty: use 'tiny-demo', a local folder or a hub id")
    if not cfg.dataset.strip():
        p.append("dataset is empty: give a .jsonl file made by 'python -m studio convert' or a dataset name")
    positive = ["per_device_train_batch_size", "gradient_accumulation_steps", "cutoff_len", "logging_steps",
                "save_steps", "lora_rank", "nproc", "save_total_limit"]
    for name in positive:
        if getattr(cfg, name) < 1:
            p.append(f"{name} must be at least 1 (got {getattr(cfg, name)})")
    if cfg.lora_alpha is not None and cfg.lora_alpha < 1:
        p.append(f"lora_alpha must be at least 1 (got {cfg.lora_alpha}); leave it empty for 2x the rank")
    from ..data.templates import template_fix, known_template
    if not known_template(cfg.template):
        p.append(f"template '{cfg.template}' is not known here: {template_fix(cfg.template)} "
                 "(LLaMA-Factory's names render as there; its others use the model's own chat template)")
    if cfg.lr_scheduler_type not in LR_SCHEDULERS:
        close = difflib.get_close_matches(cfg.lr_scheduler_type, LR_SCHEDULERS, n=1)
        p.append(f"lr_scheduler_type '{cfg.lr_scheduler_type}' is not a transformers scheduler"
                 + (f" (did you mean '{close[0]}'?)" if close else f"; use one of {', '.join(LR_SCHEDULERS)}"))
    if cfg.optim not in OPTIMIZERS:
        close = difflib.get_close_matches(cfg.optim, OPTIMIZERS, n=1)
        p.append(f"optim '{cfg.optim}' is not a transformers optimizer"
                 + (f" (did you mean '{close[0]}'?)" if close else f"; use one of {', '.join(OPTIMIZERS)}"))
    if (cfg.use_dora or cfg.pissa_init or cfg.use_rslora or cfg.loraplus_lr_ratio) and \
            cfg.finetuning_type != "lora":
        p.append("use_dora / use_rslora / pissa_init / loraplus_lr_ratio need finetuning_type: lora")
    if cfg.loraplus_lr_ratio is not None and cfg.loraplus_lr_ratio <= 0:
        p.append("loraplus_lr_ratio must be above 0 (16 is typical) or empty")
    if cfg.loraplus_lr_ratio and cfg.deepspeed and cfg.deepspeed != "none":
        p.append("loraplus_lr_ratio cannot be combined with DeepSpeed (it builds its own optimizer): turn one off")
    if cfg.neftune_noise_alpha is not None and cfg.neftune_noise_alpha <= 0:
        p.append("neftune_noise_alpha must be above 0 (5 is typical) or empty")
    if not (0 < cfg.learning_rate < 1):
        p.append(f"learning_rate must be between 0 and 1 (got {cfg.learning_rate}); 1e-5..5e-4 is typical")
    if cfg.max_steps == 0 or cfg.max_steps < -1:
        p.append("max_steps must be -1 (use epochs) or a positive number")
    if cfg.max_steps == -1 and cfg.num_train_epochs <= 0:
        p.append("num_train_epochs must be above 0 when max_steps is -1")
    if not (0 <= cfg.warmup_ratio < 1):
        p.append("warmup_ratio must be in [0, 1)")
    if cfg.val_size < 0 or (cfg.val_size >= 1 and cfg.val_size != int(cfg.val_size)):
        p.append("val_size must be a fraction in (0, 1) or a whole number of rows")
    if cfg.quantization_bit not in (None, 4, 8):
        p.append(f"quantization_bit must be 4, 8 or empty (got {cfg.quantization_bit})")
    if cfg.quantization_bit and cfg.finetuning_type != "lora":
        p.append("quantization_bit needs finetuning_type: lora (QLoRA); quantized weights cannot be trained directly")
    if cfg.quantization_bit and cfg.deepspeed and "z3" in str(cfg.deepspeed):
        p.append("quantization_bit with DeepSpeed ZeRO-3 is not supported here: use ZeRO-2 or no DeepSpeed")
    if cfg.pure_bf16 and (cfg.fp16 or cfg.precision in ("fp16", "fp32")):
        p.append("pure_bf16 needs bf16: set precision to bf16 or auto, or turn pure_bf16 off")
    if cfg.pure_bf16 and cfg.deepspeed and cfg.deepspeed != "none":
        p.append("pure_bf16 cannot be combined with deepspeed (DeepSpeed keeps its own fp32 master weights): "
                 "turn pure_bf16 off")
    if cfg.bf16 and cfg.fp16:
        p.append("bf16 and fp16 are both on: choose one (or set precision: auto)")
    if cfg.deepspeed and cfg.deepspeed not in DEEPSPEED_SHORTCUTS and not str(cfg.deepspeed).endswith(".json"):
        p.append(f"deepspeed must be one of {', '.join(DEEPSPEED_SHORTCUTS)} or a .json path (got '{cfg.deepspeed}')")
    if cfg.deepspeed and cfg.layerwise_offload:
        p.append("layerwise_offload and deepspeed both move weights: choose one")
    if cfg.layerwise_offload and cfg.quantization_bit:
        p.append("layerwise_offload with a quantized model is not supported: turn one off")
    if cfg.deepspeed == "z3-nvme" and not (cfg.offload_nvme_path or "").strip():
        p.append("deepspeed z3-nvme needs offload_nvme_path: a folder on a fast local disk (NVMe)")
    if (cfg.offload_nvme_path or "").strip() and cfg.deepspeed != "z3-nvme":
        p.append("offload_nvme_path is only used by deepspeed z3-nvme: set deepspeed to z3-nvme or clear it")
    if cfg.ddp_timeout < 10:
        p.append(f"ddp_timeout must be at least 10 seconds (got {cfg.ddp_timeout})")
    if cfg.nproc > 1 and not cfg.deepspeed:
        p.append("nproc > 1 needs deepspeed (z2 or z3) for data-parallel training")
    if "8bit" in cfg.optim and cfg.deepspeed and cfg.deepspeed != "none":
        p.append("optim adamw_8bit cannot be combined with DeepSpeed (it brings its own optimizer): use adamw_torch")
    if cfg.finetuning_type == "freeze" and cfg.freeze_trainable_layers < 1:
        p.append("freeze_trainable_layers must be at least 1")
    p += _ranges(cfg)
    return p

def _ranges(cfg: Any) -> list[str]:
    """Values that pass the type check but break a library far from here (issue 14 findings 8, 9)."""
    p: list[str] = []
    for f in fields(cfg):  # a NaN/inf set in Python (not via YAML/--set, which _coerce checks)
        value = getattr(cfg, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            p.append(f"{f.name} must be a finite number (got {value})")
    if not 0 <= cfg.seed <= 2 ** 32 - 1:
        p.append(f"seed must be between 0 and {2 ** 32 - 1} (got {cfg.seed})")
    if isinstance(cfg.lora_dropout, float) and not 0 <= cfg.lora_dropout < 1:
        p.append(f"lora_dropout must be in [0, 1) (got {cfg.lora_dropout})")
    if cfg.max_samples is not None and cfg.max_samples < 0:
        p.append(f"max_samples must be at least 1, or empty for all rows (got {cfg.max_samples})")
    for name in ("model_name_or_path", "dataset", "dataset_dir", "output_dir", "deepspeed", "template"):
        value = getattr(cfg, name)
        if value and any(ord(c) < 32 for c in str(value)):
            p.append(f"{name} contains a control character (line break, tab or NUL): type it again on one line")
    return p
