"""RunConfig -> what the Trainer is built with: TrainingArguments (with the DeepSpeed config, the optimizer and the
loggers), the LoRA+ optimizer and the padding or packing collator. run.py assembles the run from these.
"""
from __future__ import annotations

import importlib.util
import os
import socket
from typing import Any

from ..config.run_config import DEMO_MODEL, RunConfig
from ..config.deepspeed import deepspeed_json
from ..errors import StudioError
from ..models.precision import PrecisionPlan, device_caps, precision_plan
from ..runs.run_dir import RunDir
from .attention import restore_sdpa, use_maskless_sdpa
from .batching import HostCounts, pad_collator
from .nvme import with_nvme_path


def _single_process_env() -> None:
    """DeepSpeed wants a process group even for one process on one card."""
    if "RANK" in os.environ:
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")


def make_collator(cfg: RunConfig, model: Any, tok: Any, device: str, selective: bool | None = None,
                  padding_free: bool = False) -> Any:
    """Padding-free packing when asked for, else right padding (to a multiple of 8 on a GPU, for tensor cores);
    either way the batch also carries the counts the step needs, made on the host (batching.HostCounts)."""
    if cfg.packing or cfg.neat_packing or padding_free:
        # start-up: torch, 1.6 s at import; `studio cluster --help` loads this module (engine/run.py)
        from .packing import PackingCollator, uses_flash_attention
        restore_sdpa(model)   # flattened rows need transformers' mask builder (their block-diagonal mask)
        model.config.use_cache = False  # a KV cache turns off transformers' packed-sequence (per-example) mask
        # padding-free (batching.card_batching) keeps every example to itself, as neat packing does
        collate: Any = PackingCollator(neat=cfg.neat_packing or padding_free, flash_kwargs=uses_flash_attention(model))
    else:
        collate = pad_collator(tok, pad_to_multiple_of=8 if device == "cuda" else None)
        # pad_collator pads on the right, so a causal LM needs no mask, except where the mask means more than
        # attention: a mixture of experts' load-balancing loss uses it to leave pads out of the expert counts
        config = getattr(model, "config", None)
        text_cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
        drop = text_cfg is not None and not getattr(text_cfg, "output_router_logits", False) and \
            not getattr(text_cfg, "is_encoder_decoder", False)
        if drop:
            use_maskless_sdpa(model)
        return HostCounts(collate, loss_index=cfg.selective_logits if selective is None else selective, drop_mask=drop)
    return HostCounts(collate, loss_index=cfg.selective_logits if selective is None else selective)


def training_arguments(cfg: RunConfig, run: RunDir, device: str, has_val: bool, universal: bool = False,
                       plan: PrecisionPlan | None = None, args_class: Any = None,
                       best: tuple[str, bool, Any] | None = None, **extra: Any) -> Any:
    """RunConfig -> TrainingArguments; LLaMA-Factory's key names map one to one onto Trainer's.

    ``plan`` is the run's precision plan (engine/run.py makes it once); without one it is made for ``device``.
    ``best``: (metric, greater is better, ...) of a run that keeps its best checkpoint (engine/held_out.py): Trainer
    loads the best at the end (``load_best_model_at_end``), so a checkpoint is saved at every evaluation.
    ``args_class`` / ``extra``: a TrainingArguments subclass (TRL's DPOConfig, KTOConfig) and its own fields, so a
    preference run gets the same steps, saving, precision and logging as an SFT run from one place.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import TrainingArguments
    plan = plan or precision_plan(device_caps(device), cfg)
    autocast = plan.autocast   # fp32 master weights + 16-bit autocast unless pure_bf16
    report = [r.strip() for r in cfg.report_to.split(",") if r.strip() and r.strip().lower() != "none"]
    _check_reporters(report)
    ds = deepspeed_json(cfg.deepspeed)
    if ds is not None and cfg.offload_nvme_path:
        ds = with_nvme_path(ds, cfg.offload_nvme_path)
    if ds is not None and universal:  # resuming shards saved by another world size (see reshard.py)
        ds = {**ds, "checkpoint": {**ds.get("checkpoint", {}), "load_universal": True}}
    if ds is not None:
        _single_process_env()
    eval_steps = cfg.eval_steps or max(cfg.logging_steps, cfg.save_steps // 2 or 1)
    fields = dict(
        output_dir=str(run.checkpoints), per_device_train_batch_size=cfg.per_device_train_batch_size,
        per_device_eval_batch_size=cfg.per_device_eval_batch_size or cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps, learning_rate=cfg.learning_rate,
        num_train_epochs=cfg.num_train_epochs, max_steps=cfg.max_steps, lr_scheduler_type=cfg.lr_scheduler_type,
        warmup_steps=cfg.warmup_ratio, weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm, logging_steps=cfg.logging_steps, save_strategy="steps",
        save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit, seed=cfg.seed, data_seed=cfg.seed,
        eval_strategy="steps" if has_val else "no", eval_steps=eval_steps if has_val else None,
        bf16=autocast == "bf16", fp16=autocast == "fp16", optim=_optimizer(cfg, ds), deepspeed=ds,
        train_sampling_strategy=_sampling(cfg),
        report_to=report, neftune_noise_alpha=cfg.neftune_noise_alpha,
        use_cpu=device == "cpu", remove_unused_columns=False, disable_tqdm=True,
        # workers + pinned memory overlap collation and the host-to-card copy with the step; on a CPU run they
        # only add process start-up and copies
        dataloader_num_workers=2 if device == "cuda" else 0, dataloader_pin_memory=device == "cuda",
        # accelerate copies each batch with non_blocking=False by default: the host then waits for the copy, and
        # so for every queued kernel, once per micro-batch; from pinned memory the copy can simply be queued
        accelerator_config={"non_blocking": device == "cuda"},
        save_only_model=False, logging_first_step=True, ddp_timeout=cfg.ddp_timeout,
        # Trainer's filter asks the card whether each step's loss is NaN (a sync every micro-batch); the studio's
        # divergence guard stops on a non-finite loss anyway (StudioTrainer.check_divergence)
        logging_nan_inf_filter=False,
    )
    if best is not None and has_val:
        fields.update(load_best_model_at_end=True, metric_for_best_model=best[0], greater_is_better=best[1],
                      save_steps=eval_steps)
    return (args_class or TrainingArguments)(**{**fields, **extra})


def _optimizer(cfg: RunConfig, ds: dict | None) -> str:
    """adamw_torch -> the fused AdamW kernel, which plain Trainer itself defaults to on torch >= 2.8.

    Why: torch's unfused AdamW on CPU steps each tensor in a Python loop; bench/engine_overhead.py
    measured it ~7% slower per step than a plain Trainer script (tiny-demo model, short rows). The update
    is the same AdamW. Not under DeepSpeed (ZeRO wraps the optimizer itself). Under layer-wise offload the
    parameters live on two devices (layers in host RAM, the rest on the card): there the unfused AdamW would
    fall back to its per-tensor loop (torch picks foreach only when every parameter is on a CUDA-like device),
    while the fused kernel groups parameters by device and runs its CPU kernel on the host layers
    (tests/engine/test_offload.py steps it on the emulated card).
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import TrainingArguments
    trainer_default = TrainingArguments.__dataclass_fields__["optim"].default
    if cfg.optim == "adamw_torch" and ds is None and \
            str(getattr(trainer_default, "value", trainer_default)) == "adamw_torch_fused":
        return "adamw_torch_fused"
    return cfg.optim


def _sampling(cfg: RunConfig) -> str:
    """Never random padded batches on a real model: without dynamic batching (StudioTrainer's token-budget
    sampler) or packing (rows already full), Trainer's own length grouping, so a batch holds rows of similar
    length.

    tiny-demo keeps random batches: it learns from scratch, its rows are short (little padding to save), and
    length-sorted batches there are nearly one label each; measured with tests/evaluation/test_evaluate_integration.py's
    LoRA run (300 steps, seed 42): 0.833 held-out with length grouping against >= 0.85 with random batches."""
    if cfg.dynamic_batching or cfg.packing or cfg.neat_packing or cfg.model_name_or_path == DEMO_MODEL:
        return "random"
    return "group_by_length"


def _check_reporters(report: list[str]) -> None:
    """Trainer fails deep inside its setup when a logger's package is missing; say it plainly first."""
    needs = {"tensorboard": ("tensorboard", "tensorboardX"), "wandb": ("wandb",), "mlflow": ("mlflow",),
             "swanlab": ("swanlab",), "comet_ml": ("comet_ml",), "clearml": ("clearml",), "dvclive": ("dvclive",),
             "neptune": ("neptune",), "trackio": ("trackio",)}
    for name in report:
        if name == "all":
            continue
        pkgs = needs.get(name)
        if pkgs is None:
            raise StudioError.of("engine.report_to_unknown", name=name, loggers=list(needs))
        if not any(importlib.util.find_spec(p) for p in pkgs):
            raise StudioError.of("engine.report_to_missing", name=name, package=pkgs[0])


def loraplus_optimizer(cfg: RunConfig, model: Any) -> Any:
    """LoRA+ (peft's create_loraplus_optimizer): B matrices learn loraplus_lr_ratio x faster; None when off."""
    if not cfg.loraplus_lr_ratio:
        return None
    # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
    import torch
    from peft.optimizers import create_loraplus_optimizer
    return create_loraplus_optimizer(model=model, optimizer_cls=torch.optim.AdamW, lr=cfg.learning_rate,
                                     loraplus_lr_ratio=cfg.loraplus_lr_ratio, weight_decay=cfg.weight_decay)
