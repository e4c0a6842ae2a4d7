"""RunConfig.validate(): every problem of a config at once, each naming the field and the fix.

Separate from the fields (studio/config/run_config.py) because it is the one place that knows how settings combine
(which method needs which option, what DeepSpeed excludes); the fields only know their own type.
"""
from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from ..stages import stage_of
from ..words.render import render
from .search import search_rates
from .vocabulary import (DEEPSPEED_SHORTCUTS, LR_SCHEDULERS, accepted_optimizers, clashes_with_deepspeed,
                         closest_optimizer, closest_scheduler, deepspeed_choices, is_optimizer)


class Problem(str):
    """One problem: its command line's English (the text every caller prints, joins and compares) with its code and
    values, which the page words in its own fields and language (studio/words/config_problems.py)."""

    code: str
    params: dict[str, Any]

    def __new__(cls, code: str, **values: Any) -> "Problem":
        self = super().__new__(cls, render(code, values, "en", "cli"))
        self.code, self.params = code, values
        return self


def problem(code: str, **values: Any) -> Problem:
    return Problem(code, **values)


def _unknown(kind: str, name: str, close: str | None, **values: Any) -> Problem:
    """An unknown name among a closed set: the closest accepted one where there is one, else the set."""
    return problem(f"check.{kind}_{'close' if close else 'unknown'}", name=name, close=close, **values)


def problems(cfg: Any) -> list[str]:
    """Every problem of a RunConfig (empty list: valid), each a ``problem``."""
    p: list[str] = []
    if not cfg.model_name_or_path.strip():
        p.append(problem("check.model_empty"))
    if not cfg.dataset.strip():
        p.append(problem("check.dataset_empty"))
    # start-up: the chat templates, 0.003 s at import; `studio estimate --help` and `studio models --help` load
    # this module
    from ..data.templates import TEMPLATE_NAMES, closest_template, known_template
    if not known_template(cfg.template):
        p.append(_unknown("template", cfg.template, closest_template(cfg.template), builtin=", ".join(TEMPLATE_NAMES)))
    if cfg.lr_scheduler_type not in LR_SCHEDULERS:
        p.append(_unknown("scheduler", cfg.lr_scheduler_type, closest_scheduler(cfg.lr_scheduler_type),
                          choices=", ".join(LR_SCHEDULERS)))
    if not is_optimizer(cfg.optim):
        p.append(_unknown("optim", cfg.optim, closest_optimizer(cfg.optim), choices=", ".join(accepted_optimizers())))
    if (cfg.use_dora or cfg.pissa_init or cfg.use_rslora or cfg.loraplus_lr_ratio) and \
            cfg.finetuning_type != "lora":
        p.append(problem("check.lora_extras"))
    if cfg.loraplus_lr_ratio and cfg.deepspeed and cfg.deepspeed != "none":
        p.append(problem("check.loraplus_deepspeed"))
    if cfg.max_steps == 0 or cfg.max_steps < -1:
        p.append(problem("check.max_steps"))
    if cfg.max_steps == -1 and cfg.num_train_epochs <= 0:
        p.append(problem("check.epochs"))
    if 1 <= cfg.val_size != int(cfg.val_size):
        p.append(problem("check.val_size"))
    # keep-best, early stop and the search without held-out rows are no problem here: the CLI judges a config before
    # it derives val_size, and the run says it at its start instead (engine/run.py startup_notices)
    if cfg.learning_rate_search.strip():
        if not search_rates(cfg.learning_rate_search):
            p.append(problem("check.search_values", value=cfg.learning_rate_search))
        if cfg.nproc > 1 or not stage_of(cfg.stage).studio_trainer:
            p.append(problem("check.search_single"))
    if cfg.quantization_bit not in (None, 4, 8):
        p.append(problem("check.quant_bits", value=cfg.quantization_bit))
    if cfg.quantization_bit and cfg.finetuning_type != "lora":
        p.append(problem("check.quant_needs_lora"))
    if cfg.quantization_bit and cfg.deepspeed and "z3" in str(cfg.deepspeed):
        # ZeRO-2 keeps the 4-bit base whole on each rank (one card per rank, models/loading.py _device_map) and
        # partitions only the adapters' states, so QLoRA + z2 on several processes is fine. ZeRO-3 shards the
        # weights themselves, which for 4-bit ones needs bnb_4bit_quant_storage = the compute dtype
        p.append(problem("check.quant_zero3"))
    if cfg.pure_bf16 and (cfg.fp16 or cfg.precision in ("fp16", "fp32")):
        p.append(problem("check.pure_bf16_precision"))
    if cfg.pure_bf16 and cfg.deepspeed and cfg.deepspeed != "none":
        p.append(problem("check.pure_bf16_deepspeed"))
    if cfg.bf16 and cfg.fp16:
        p.append(problem("check.bf16_fp16"))
    if cfg.deepspeed and cfg.deepspeed not in DEEPSPEED_SHORTCUTS and not str(cfg.deepspeed).endswith(".json"):
        p.append(problem("check.deepspeed_choice", choices=deepspeed_choices(), value=cfg.deepspeed))
    if cfg.deepspeed and cfg.layerwise_offload:
        p.append(problem("check.layerwise_deepspeed"))
    if cfg.layerwise_offload and cfg.quantization_bit:
        p.append(problem("check.layerwise_quant"))
    if cfg.deepspeed == "z3-nvme" and not (cfg.offload_nvme_path or "").strip():
        p.append(problem("check.nvme_path_missing"))
    if (cfg.offload_nvme_path or "").strip() and cfg.deepspeed != "z3-nvme":
        p.append(problem("check.nvme_path_unused"))
    if cfg.nproc > 1 and not cfg.deepspeed:
        p.append(problem("check.nproc_deepspeed"))
    if clashes_with_deepspeed(cfg.optim) and cfg.deepspeed and cfg.deepspeed != "none":
        p.append(problem("check.optim_deepspeed", name=cfg.optim))
    if cfg.adapter_name_or_path and cfg.finetuning_type != "lora":
        p.append(problem("check.adapter_needs_lora"))
    if cfg.adapter_name_or_path and cfg.pissa_init:
        p.append(problem("check.adapter_pissa"))
    p += _stage(cfg)
    p += _ranges(cfg, p)
    return p


def _stage(cfg: Any) -> list[str]:
    """What the run's stage cannot be combined with here, each with the reason: its row of the stage table
    (studio/stages.py) says which methods it allows, whether the studio's own trainer trains it (else TRL's
    trainer batches the rows itself, on one process), and its own checks."""
    stage = stage_of(cfg.stage)
    p: list[str] = []
    if cfg.finetuning_type not in stage.methods:
        p.append(problem("check.pref_needs_lora", stage=stage.name, method=cfg.finetuning_type))
    if not stage.studio_trainer:
        for name in ("packing", "neat_packing", "dynamic_batching", "layerwise_offload"):
            if getattr(cfg, name):
                p.append(problem("check.pref_batching", name=name, stage=stage.name))
        if cfg.deepspeed and cfg.deepspeed != "none" or cfg.nproc > 1:
            p.append(problem("check.pref_one_process", stage=stage.name))
    return p + [problem(code, **values) for code, values in stage.problems(cfg)]

def _ranges(cfg: Any, found: list[str]) -> list[str]:
    """Values that pass the type check but break a library far from here (a NaN learning rate, a
    zero batch). The numbers come from each field's ``range`` metadata (studio/config/run_config.py), the one
    place they are written; a field that ``found`` already names is not repeated."""
    p: list[str] = []
    for f in fields(cfg):  # a NaN/inf set in Python (not via YAML/--set, which _coerce checks)
        value = getattr(cfg, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            p.append(problem("check.not_finite", name=f.name, value=value))
    named = {getattr(q, "params", {}).get("name") or q.split(" ", 1)[0].rstrip(":") for q in found + p}
    for f in fields(cfg):
        if "range" in f.metadata and f.name not in named:
            p += _outside_range(f.name, getattr(cfg, f.name), f.metadata, optional=f.default is None)
    for name in ("model_name_or_path", "dataset", "dataset_dir", "output_dir", "deepspeed", "template",
                 "adapter_name_or_path"):
        value = getattr(cfg, name)
        if value and any(ord(c) < 32 for c in str(value)):
            p.append(problem("check.control_char", name=name))
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
        return [problem("check.not_number", name=name, value=repr(value))]
    low_ok = value > lo if opened in ("lo", "both") else value >= lo
    high_ok = value < hi if opened in ("hi", "both") else value <= hi
    if low_ok and high_ok:
        return []
    empty = "_or_empty" if optional else ""
    if not low_ok:
        kind = "above" if opened in ("lo", "both") else "at_least"
        return [problem(f"check.{kind}{empty}", name=name, bound=_number_text(lo), value=value)]
    kind = "below" if opened in ("hi", "both") else "at_most"
    return [problem(f"check.{kind}{empty}", name=name, bound=_number_text(hi), value=value)]
