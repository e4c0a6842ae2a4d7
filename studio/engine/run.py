"""run_training: wire a RunConfig into a model, data, Trainer and the run folder.

The hot path is the stock ``transformers.Trainer`` loop; this module only assembles it.
"""
from __future__ import annotations

import json
import logging
import math
import os
import shutil
import socket
import time
import traceback
from pathlib import Path
from typing import Any

from ..config import DEMO_MODEL, RunConfig
from ..errors import StudioError
from ..workspace import PRESETS_DIR
from ..runs import RunDir, atomic_write_text

log = logging.getLogger("studio.engine")
PRESETS = PRESETS_DIR
DS_FILES = {"z2": "ds_z2.json", "z2-offload": "ds_z2_offload.json", "z3": "ds_z3.json",
            "z3-offload": "ds_z3_offload.json"}


def deepspeed_config(spec: str | None) -> dict | None:
    """Shortcut (z2, z3-offload, ...) or JSON path -> DeepSpeed config dict (None = no DeepSpeed)."""
    if not spec or spec == "none":
        return None
    path = PRESETS / "deepspeed" / DS_FILES[spec] if spec in DS_FILES else Path(spec)
    if not path.is_file():
        raise StudioError(f"DeepSpeed config '{spec}' not found", "use z2, z2-offload, z3, z3-offload or a JSON path")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StudioError(f"DeepSpeed config '{path}' is not valid JSON", "fix the file", why=str(exc)) from None


def _single_process_env() -> None:
    """DeepSpeed wants a process group even for one process on one card."""
    if "RANK" in os.environ:
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")


def is_main_process() -> bool:
    return os.environ.get("RANK", "0") == "0"


def prepare_data(cfg: RunConfig, tokenizer: Any, rows: list[dict], run: RunDir | None = None
                 ) -> tuple[list, list, dict]:
    """Rows -> tokenized train/val features with label masking; counts for the log.

    The validation rows are also saved into the run folder, so evaluation later checks exactly
    the rows the run never trained on, even if the source file moves.
    """
    from ..data.dataset import split_rows
    from ..data.templates import get_template
    from ..data.tokenize import encode_examples
    template = get_template(cfg.template, tokenizer)
    train_rows, val_rows = split_rows(rows, cfg.val_size, cfg.seed)
    if cfg.max_samples:
        train_rows = train_rows[:cfg.max_samples]
    if run is not None and val_rows and is_main_process():
        atomic_write_text(run.val_data, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in val_rows))

    def encode(batch: list[dict]) -> tuple[list[dict], int]:
        out, truncated = [], 0
        for f in encode_examples(tokenizer, template, batch, cfg.cutoff_len, cfg.train_on_prompt):
            truncated += f.pop("truncated")
            if any(label != -100 for label in f["labels"]):
                out.append(f)
        return out, truncated

    def build() -> tuple[list[dict], dict]:
        train_f, trunc = encode(train_rows)
        val_f, _ = encode(val_rows)
        return train_f + val_f, {"n_train": len(train_f), "truncated": trunc}

    # tokenize once: the next run on the same rows, tokenizer and settings loads the features instead
    from ..data.cache import cache_dir, cached_features, fingerprint
    folder = cache_dir(run.path.parent / ".token_cache") if run is not None else None
    key = fingerprint([train_rows, val_rows], tokenizer, {"template": cfg.template, "cutoff_len": cfg.cutoff_len,
                                                          "train_on_prompt": cfg.train_on_prompt}) if folder else ""
    feats, extra, hit = cached_features(folder, key, build)
    train, val, t_trunc = feats[:extra["n_train"]], feats[extra["n_train"]:], extra["truncated"]
    if not train:
        raise StudioError("No usable training rows after tokenization",
                          "check that the dataset's 'output' column is filled")
    return train, val, {"train_rows": len(train), "val_rows": len(val), "truncated": t_trunc,
                        "tokenized_from_cache": hit}


def _ensure_demo_base(cfg: RunConfig, run: RunDir, rows: list[dict]) -> None:
    """Build tiny-demo's base into the run folder (rank 0 builds, other ranks wait for it)."""
    from ..models import DEMO_DEFAULTS, build_tiny_llama, demo_texts
    if cfg.model_name_or_path == DEMO_MODEL and not run.base_model.exists():
        if is_main_process():
            build_tiny_llama(run.base_model, demo_texts(rows, cfg.template), seed=cfg.seed, **DEMO_DEFAULTS)
        else:  # other ranks wait for rank 0's build (the folder appears whole: built under a temp name)
            deadline = time.time() + 600
            while not run.base_model.exists() and time.time() < deadline:
                time.sleep(0.5)


def _build_model(cfg: RunConfig, device: str) -> tuple[Any, Any]:
    from ..models import apply_method, load_base
    model, tok = load_base(cfg, device)
    if cfg.gradient_checkpointing or cfg.layerwise_offload:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    model = apply_method(model, cfg)
    return model, tok


def make_collator(cfg: RunConfig, model: Any, tok: Any, device: str) -> Any:
    """Padding-free packing when asked for, else right padding (to a multiple of 8 on a GPU, for tensor cores)."""
    if cfg.packing or cfg.neat_packing:
        from .packing import PackingCollator, uses_flash_attention
        model.config.use_cache = False  # a KV cache turns off transformers' packed-sequence (per-example) mask
        return PackingCollator(neat=cfg.neat_packing, flash_kwargs=uses_flash_attention(model))
    from .batching import PadCollator
    return PadCollator(tok.pad_token_id, pad_to_multiple_of=8 if device == "cuda" else None)


def training_arguments(cfg: RunConfig, run: RunDir, device: str, has_val: bool) -> Any:
    from transformers import TrainingArguments
    precision = cfg.resolved_precision(device)
    ds = deepspeed_config(cfg.deepspeed)
    if ds is not None:
        _single_process_env()
    eval_steps = cfg.eval_steps or max(cfg.logging_steps, cfg.save_steps // 2 or 1)
    return TrainingArguments(
        output_dir=str(run.checkpoints), per_device_train_batch_size=cfg.per_device_train_batch_size,
        per_device_eval_batch_size=cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps, learning_rate=cfg.learning_rate,
        num_train_epochs=cfg.num_train_epochs, max_steps=cfg.max_steps, lr_scheduler_type=cfg.lr_scheduler_type,
        warmup_steps=cfg.warmup_ratio, weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm, logging_steps=cfg.logging_steps, save_strategy="steps",
        save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit, seed=cfg.seed, data_seed=cfg.seed,
        eval_strategy="steps" if has_val else "no", eval_steps=eval_steps if has_val else None,
        bf16=precision == "bf16", fp16=precision == "fp16", optim=_optimizer(cfg, ds), deepspeed=ds,
        report_to=[], use_cpu=device == "cpu", remove_unused_columns=False, disable_tqdm=True,
        # workers + pinned memory overlap collation and the host-to-card copy with the step; on a CPU run they
        # only add process start-up and copies
        dataloader_num_workers=2 if device == "cuda" else 0, dataloader_pin_memory=device == "cuda",
        save_only_model=False, logging_first_step=True,
    )


def _optimizer(cfg: RunConfig, ds: dict | None) -> str:
    """adamw_torch -> the fused AdamW kernel, which plain Trainer itself defaults to on torch >= 2.8.

    Why: torch's unfused AdamW on CPU steps each tensor in a Python loop; bench/engine_overhead.py
    measured it ~7% slower per step than a plain Trainer script (tiny-demo model, short rows). The update
    is the same AdamW. Not under DeepSpeed (ZeRO wraps the optimizer itself) or layer-wise offload
    (its parameters move between devices during the step).
    """
    from transformers import TrainingArguments
    trainer_default = TrainingArguments.__dataclass_fields__["optim"].default
    if cfg.optim == "adamw_torch" and ds is None and not cfg.layerwise_offload and \
            str(getattr(trainer_default, "value", trainer_default)) == "adamw_torch_fused":
        return "adamw_torch_fused"
    return cfg.optim


def run_training(cfg: RunConfig, resume_from: str | None = None) -> dict[str, Any]:
    """Train one run end to end; the run folder records everything (see studio/runs.py).

    Returns the summary written into status.json. A stop request (STOP file or SIGTERM)
    saves a checkpoint and returns with state 'aborted'.

    Raises:
        StudioError: bad config, data or model; also written to status.json as 'failed'.
    """
    cfg.check()
    run = RunDir(cfg.output_dir).ensure()
    main = is_main_process()
    if main:
        run.stop_flag.unlink(missing_ok=True)
        cfg.save(run.config)
        run.write_status("starting", pid=os.getpid(), started=time.time(), reason="")
    try:
        summary = _train(cfg, run, resume_from, main)
    except StudioError as exc:
        if main:
            _end(run, "failed", exc.message, code=exc.code)
        raise
    except KeyboardInterrupt:
        if main:
            _end(run, "aborted", "interrupted from the keyboard")
        raise
    except Exception as exc:  # a bug or a library failure: keep the traceback in the log, say it plainly
        if main:
            with open(run.stdout.with_name("error.log"), "a", encoding="utf-8") as fh:
                fh.write(traceback.format_exc())
            _end(run, "failed", _plain_reason(exc))
        raise
    return summary


def _plain_reason(exc: BaseException) -> str:
    import torch
    if isinstance(exc, torch.OutOfMemoryError):
        return ("The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller batch / "
                "cutoff_len, or enable DeepSpeed offload (see the memory estimate)")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"Training stopped with an internal error ({type(exc).__name__}: {first[:300]}); see error.log"


def _end(run: RunDir, state: str, reason: str, **extra: Any) -> None:
    step = run.read_status().get("step", 0)
    run.append_event({"type": "end", "state": state, "reason": reason, "step": step, **extra})
    run.write_status(state, reason=reason, ended=time.time(), **extra)


def _train(cfg: RunConfig, run: RunDir, resume_from: str | None, main: bool) -> dict[str, Any]:
    import torch
    from ..data.dataset import load_rows
    from .callbacks import EventCallback, StopRequested
    from .studio_trainer import StudioTrainer

    import transformers
    transformers.logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = load_rows(cfg.dataset, cfg.dataset_dir)
    _ensure_demo_base(cfg, run, rows)  # before the DeepSpeed config exists: it must not be built partitioned
    # TrainingArguments first: with ZeRO-3 it registers the DeepSpeed config, so from_pretrained loads
    # each process's shard directly (zero.Init) instead of the whole model into every process's RAM
    args = training_arguments(cfg, run, device, has_val=bool(cfg.val_size))
    _ = args.device  # sets up the process group now, so zero.Init sees the real world size
    if args.deepspeed and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        import deepspeed
        deepspeed.init_distributed()  # deepspeed.comm keeps its own view of the group; zero.Init reads it
    model, tok = _build_model(cfg, device)
    train, val, counts = prepare_data(cfg, tok, rows, run)
    if not val and cfg.val_size:
        args.eval_strategy = "no"  # the held-out rows had no usable answers
    checkpoint = _resolve_resume(run, resume_from)
    stop = StopRequested(run)
    events = EventCallback(run, stop, is_main=main)

    def notify(message: str) -> None:
        log.warning(message)
        events.emit({"type": "notice", "message": message})

    def count_tokens(n: int) -> None:
        events.tokens_seen += n

    if cfg.layerwise_offload:
        from .offload import LayerwiseOffloader
        LayerwiseOffloader(model, device)
        model.is_parallelizable = True  # tells Trainer not to move the whole model onto the card
        model.model_parallel = True
    trainer = StudioTrainer(model=model, args=args, train_dataset=train, eval_dataset=val or None,
                            data_collator=make_collator(cfg, model, tok, device), processing_class=tok,
                            callbacks=[events], dynamic_batching=cfg.dynamic_batching,
                            max_tokens_per_batch=cfg.max_tokens_per_batch, oom_adaptive=cfg.oom_adaptive,
                            notify=notify, token_counter=count_tokens, selective_logits=cfg.selective_logits,
                            packed=cfg.packing or cfg.neat_packing)
    from transformers import PrinterCallback
    trainer.remove_callback(PrinterCallback)  # progress goes to the event log, not raw dicts on stdout
    if main:
        n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
        n_all = sum(p.numel() for p in model.parameters())
        run.write_status("running", step=trainer.state.global_step, **counts,
                         trainable_params=n_train, total_params=n_all, device=device,
                         precision=cfg.resolved_precision(device))
        if cfg.model_name_or_path == DEMO_MODEL and cfg.finetuning_type != "full":
            notify(f"tiny-demo starts from random weights, so '{cfg.finetuning_type}' (which trains only part of "
                   "the model) learns little on it; choose Method: full (presets/recipes/tiny-demo-cpu.yaml)")
        if counts["truncated"]:
            notify(f"{counts['truncated']} training rows are longer than cutoff_len={cfg.cutoff_len} and were "
                   f"truncated; raise cutoff_len to keep them whole")
    t0 = time.time()
    result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    step = trainer.state.global_step
    aborted = events.stopped_early
    final_loss = _last_loss(trainer.state.log_history)
    summary: dict[str, Any] = {"step": step, "total_steps": trainer.state.max_steps, "train_loss": result.training_loss,
                               "final_loss": final_loss, "train_seconds": round(time.time() - t0, 2),
                               "micro_batch_splits": trainer.splits, **counts}
    evals = [h["eval_loss"] for h in trainer.state.log_history if "eval_loss" in h]
    if val and not aborted:
        summary["eval_loss"] = evals[-1] if evals else trainer.evaluate().get("eval_loss")
    if aborted:
        if main:
            run.append_event({"type": "end", "state": "aborted", "reason": "stopped on request", "step": step})
            run.write_status("aborted", reason=f"stopped on request at step {step}; resume continues from here",
                             ended=time.time(), **summary)
        return {"state": "aborted", **summary}
    _save_final(trainer, cfg, run, tok, main)
    if main:
        if cfg.plot_loss:
            from ..plotting import save_loss_plot
            save_loss_plot(run)
        run.append_event({"type": "end", "state": "finished", "reason": "", "step": step})
        run.write_status("finished", reason="", ended=time.time(), **summary)
    return {"state": "finished", **summary}


def _last_loss(history: list[dict]) -> float | None:
    for h in reversed(history):
        if "loss" in h and isinstance(h["loss"], (int, float)) and math.isfinite(h["loss"]):
            return float(h["loss"])
    return None


def _resolve_resume(run: RunDir, resume_from: str | None) -> Path | None:
    if not resume_from:
        return None
    if resume_from == "last":
        last = run.last_checkpoint()
        if last is None:
            raise StudioError(f"Nothing to resume in '{run.path}': no complete checkpoint",
                              "start a new run, or lower save_steps so checkpoints are written sooner")
        return last
    p = Path(resume_from)
    if not (p / "trainer_state.json").exists():
        raise StudioError(f"'{resume_from}' is not a complete checkpoint", "pick a checkpoints/checkpoint-N folder")
    return p


def _save_final(trainer: Any, cfg: RunConfig, run: RunDir, tok: Any, main: bool) -> None:
    """Adapter or full model, written to a temp folder and renamed, so it is never half there."""
    target = run.adapter if cfg.finetuning_type == "lora" else run.model
    tmp = target.with_name(target.name + ".tmp")
    if main:
        shutil.rmtree(tmp, ignore_errors=True)
    trainer.save_model(str(tmp))
    if main:
        tok.save_pretrained(str(tmp))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        atomic_write_text(target / "studio_run.json", json.dumps({"run": str(run.path), "method": cfg.method,
                                                                   "template": cfg.template}, indent=1))
