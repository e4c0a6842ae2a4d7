"""run_training: wire a RunConfig into a model, data, Trainer and the run folder.

The hot path is the stock ``transformers.Trainer`` loop; this module only assembles it.
"""
from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
import traceback
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

# Every CLI verb imports this module (studio/engine/__init__.py), so only light studio modules are imported here.
# torch, transformers and deepspeed, and the studio modules that import them at once (callbacks, studio_trainer,
# offload, engine/preference; data/cache needs numpy), stay inside the functions that use them: the CLI's start-up
# time depends on it. precision, kernels and loading are called through their modules, so a function replaced
# there (a test's spy on precision_plan, model_kernel_plan or build_tiny_llama) is the one the engine calls.
from ..config.run_config import DEMO_MODEL, RunConfig
from ..data import templates
from ..data.dataset import check_preference_data, load_rows, split_rows
from ..data.fingerprint import keys_text
from ..data.preference import as_sft_rows
from ..data.tokenize import encode_examples
from ..errors import StudioError
from ..models import kernels, loading, precision
from ..models.precision import PrecisionPlan
from ..models.progress import Progress, Step, print_step
from ..notices import Notice, checked
from ..runs.plots import save_loss_plot
from ..runs.reasons import NO_REASON, Reason, disk_full, reason_fields
from ..runs.run_dir import RunDir
from ..runs.cpu_threads import FreeCores
from ..runs.run_time import busy_mark, others_since, train_parts
from ..stages import Stage, stage_of
from ..workspace import atomic_write_text, is_disk_full
from . import lr_search, reshard
from .arguments import loraplus_optimizer, make_collator, training_arguments
from .batching import card_batching
from .launch import leave_process_group, peer_lost_error
from .nvme import check_nvme_ready
from .stage_trainer import BuiltTrainer, TrainerInputs, build_stage_trainer

log = logging.getLogger("studio.engine")


def is_main_process() -> bool:
    return os.environ.get("RANK", "0") == "0"


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def prepare_data(cfg: RunConfig, tokenizer: Any, rows: list[dict], run: RunDir | None = None
                 ) -> tuple[list, list, dict]:
    """Rows -> tokenized train/val features with label masking; counts for the log.

    The validation rows are also saved into the run folder, so evaluation later checks exactly
    the rows the run never trained on, even if the source file moves.
    """
    template = templates.get_template(cfg.template, tokenizer)
    train_rows, val_rows = split_rows(rows, cfg.val_size, cfg.seed)
    if cfg.max_samples:
        train_rows = train_rows[:cfg.max_samples]
    if run is not None and val_rows and is_main_process():
        atomic_write_text(run.val_data, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in val_rows))
    if run is not None and is_main_process():  # Evaluate's leakage check: which checked rows were trained on
        atomic_write_text(run.train_keys, keys_text(train_rows))

    def encode(batch: list[dict]) -> tuple[list[dict], int, int]:
        out, truncated, last_only = [], 0, 0
        for r, f in zip(batch, encode_examples(tokenizer, template, batch, cfg.cutoff_len, cfg.train_on_prompt,
                                               mask_history=cfg.mask_history)):
            if not str(r.get("output", "")).strip():
                continue  # no answer: only the end marker would carry loss (it taught a run of 300 empty rows)
            truncated += f.pop("truncated")
            last_only += f.pop("history_masked", False)
            if any(label != -100 for label in f["labels"]):
                out.append(f)
        return out, truncated, last_only

    def build() -> tuple[list[dict], dict]:
        train_f, trunc, last_only = encode(train_rows)
        val_f, _, _ = encode(val_rows)
        return train_f + val_f, {"n_train": len(train_f), "truncated": trunc, "history_masked": last_only}

    # tokenize once: the next run on the same rows, tokenizer and settings loads the features instead
    # start-up: the cache needs numpy, 0.14 s at import; `studio cluster --help` loads this module
    from ..data.cache import cache_dir, cached_features, fingerprint
    folder = cache_dir(run.path.parent / ".token_cache") if run is not None else None
    key = fingerprint([train_rows, val_rows], tokenizer, {"template": cfg.template, "cutoff_len": cfg.cutoff_len,
                                                          "train_on_prompt": cfg.train_on_prompt,
                                                          "mask_history": cfg.mask_history}) if folder else ""
    feats, extra, hit = cached_features(folder, key, build)
    train, val, t_trunc = feats[:extra["n_train"]], feats[extra["n_train"]:], extra["truncated"]
    if not train:
        raise StudioError.of("engine.no_trainable_tokens", dataset=cfg.dataset, rows=len(train_rows))
    return train, val, {"train_rows": len(train), "val_rows": len(val), "truncated": t_trunc,
                        "history_masked": extra.get("history_masked", 0), "tokenized_from_cache": hit}


def _ensure_demo_base(cfg: RunConfig, run: RunDir, rows: list[dict]) -> None:
    """Build tiny-demo's base into the run folder (rank 0 builds, other ranks wait for it)."""
    if cfg.model_name_or_path == DEMO_MODEL and not run.base_model.exists():
        if is_main_process():
            # the tokenizer learns from the training rows only: held-out rows must stay unseen (prepare_data
            # makes the same seeded split)
            train_rows, _ = split_rows(rows, cfg.val_size, cfg.seed)
            loading.build_tiny_llama(run.base_model, loading.demo_texts(train_rows, cfg.template), seed=cfg.seed,
                                     **loading.DEMO_DEFAULTS)
        else:  # other ranks wait for rank 0's build (the folder appears whole: built under a temp name)
            deadline = time.time() + 600
            while not run.base_model.exists() and time.time() < deadline:
                time.sleep(0.5)


def _build_model(cfg: RunConfig, device: str, plan: PrecisionPlan, progress: Progress | None = None
                 ) -> tuple[Any, Any]:
    model, tok = loading.load_base(cfg, device, plan, progress)
    enable_checkpointing(model, cfg, device)
    model = loading.apply_method(model, cfg, device, plan)
    return model, tok


def enable_checkpointing(model: Any, cfg: RunConfig, device: str) -> bool:
    """Gradient checkpointing as the config asks; True when its activations are offloaded to host RAM.

    Offload: transformers 5.24 wraps each layer's checkpoint in torch's ``save_on_cpu`` (pinned host RAM), so the
    inputs saved for the recompute wait on the host. It is an argument of ``activation_checkpointing_enable``, not
    a checkpoint kwarg (``gradient_checkpointing_kwargs={"offload": True}`` reaches torch.utils.checkpoint, which
    refuses it). Only on a card: on a CPU the activations are in host RAM already, and pinning needs an
    accelerator (torch refuses ``pin_memory`` without one).
    """
    offload = cfg.offload_activations and device == "cuda"
    if cfg.gradient_checkpointing or cfg.layerwise_offload or cfg.offload_activations:
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False},
                                              offload=offload)
        model.config.use_cache = False
    return offload


def parameter_counts(model: Any) -> tuple[int, int]:
    """(trainable, total); under ZeRO-3 each parameter is an empty shard and its real size is ds_numel."""
    def size(p: Any) -> int:
        return int(getattr(p, "ds_numel", 0) or p.numel())
    params = list(model.parameters())
    return sum(size(p) for p in params if p.requires_grad), sum(size(p) for p in params)


def startup_notices(cfg: RunConfig, device: str) -> list[Notice]:
    """What the run log says about keys that do nothing here and where the studio deliberately differs."""
    out = [Notice.of("yaml_key", setting=n) for n in getattr(cfg, "notices", [])]  # LLaMA-Factory keys of a YAML
    if cfg.bf16 and device == "cpu":
        out.append(Notice.of("bf16_cpu"))
    if cfg.finetuning_type == "lora" and cfg.lora_alpha is None:
        out.append(Notice.of("lora_alpha", alpha=cfg.effective_lora_alpha))
    if not cfg.val_size and (cfg.load_best_model_at_end or cfg.early_stopping_patience or
                             cfg.learning_rate_search.strip()):
        out.append(Notice.of("held_out_needed"))
    return out


def labels_preference(cfg: RunConfig, rows: list[dict[str, Any]]) -> bool:
    """A run of a stage that warns on labels (DPO / KTO, the stage table's ``warns_on_labels``) whose answers are a
    few labels (autoconfig.guess_task's rule: at most 10 distinct answers): the case where SFT on the corrections
    measured better (bench/feedback_loop.py)."""
    if not stage_of(cfg.stage).warns_on_labels:
        return False
    answers = {str(r.get(k, "")).strip() for r in rows[:200] for k in ("chosen", "rejected", "output") if k in r}
    return 0 < len(answers) <= 10


def run_training(cfg: RunConfig, resume_from: str | None = None) -> dict[str, Any]:
    """Train one run end to end; the run folder records everything (see studio/runs/run_dir.py).

    Returns the summary written into status.json. A stop request (STOP file or SIGTERM)
    saves a checkpoint and returns with state 'aborted'.

    ``cfg`` is a RunConfig, valid since it was built; a Draft (a Python caller's) is built into one here.

    Raises:
        StudioError: bad config (ConfigError, from a Draft), data or model; also written to status.json as 'failed'.
    """
    if not isinstance(cfg, RunConfig):
        cfg = cfg.build()
    if resume_from is None:  # a preference run that cannot learn is refused before its folder is made
        check_preference_data(stage_of(cfg.stage).rows, cfg.dataset, cfg.dataset_dir)
    run = RunDir(cfg.output_dir).ensure()
    main = is_main_process()
    if main:
        run.stop_flag.unlink(missing_ok=True)
        cfg.save(run.config)
        run.write_status("starting", pid=os.getpid(), started=time.time(), **reason_fields(NO_REASON),
                         model=cfg.model_name_or_path, finetuning_type=cfg.finetuning_type)
    try:
        if cfg.deepspeed == "z3-nvme":  # seconds here instead of a compiler error minutes into the load
            check_nvme_ready(cfg.offload_nvme_path)
        free = FreeCores()
        try:
            summary = _train(cfg, run, resume_from, main, free)
        finally:
            leave_process_group()
            free.restore()
    except StudioError as exc:
        if main:
            _end(run, "failed", exc)
        raise
    except KeyboardInterrupt:
        if main:
            _end(run, "aborted", Reason.of("keyboard"))
        raise
    except Exception as exc:  # a bug or a library failure: keep the traceback in the log, say it plainly
        lost = peer_lost_error(exc) if _world_size() > 1 else None
        if main or lost:  # any survivor reports a lost peer: global rank 0 may be the one that died
            reason: Reason | StudioError = lost or _plain_reason(exc)
            extra = {"code": "peer_lost"} if lost else {}
            if is_disk_full(exc):
                # the half-written checkpoint/model is what filled the disk: drop it so the end state fits
                # (base_model.tmp: tiny-demo's base, built before the first step)
                for partial in (run.checkpoints / ".staging", run.adapter.with_name("adapter.tmp"),
                                run.model.with_name("model.tmp"), run.base_model.with_name("base_model.tmp")):
                    shutil.rmtree(partial, ignore_errors=True)
                reason = disk_full(exc, "disk_full_training")  # the full disk's, whatever else broke with it
            try:
                with open(run.stdout.with_name("error.log"), "a", encoding="utf-8") as fh:
                    fh.write(f"[rank {os.environ.get('RANK', '0')}] " + traceback.format_exc())
            except OSError as log_exc:
                log.error("cannot write error.log: %s", log_exc)
            _end(run, "failed", reason, **extra)
        raise
    return summary


def _plain_reason(exc: BaseException) -> Reason:
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    if isinstance(exc, torch.OutOfMemoryError):
        return Reason.of("card_oom")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return Reason.of("internal_error", kind=type(exc).__name__, detail=first[:300])


def _end(run: RunDir, state: str, reason: Reason | StudioError, **extra: Any) -> None:
    """Record the end (an error that ended the run with its parts, which a page words without flags); a write
    that fails (full disk) is logged, never hides the original error."""
    step = run.read_status().get("step", 0)
    fields = {**reason_fields(reason), **extra}
    try:
        run.append_event({"type": "end", "state": state, "step": step, **fields})
    except OSError as exc:
        log.error("cannot append the end event: %s", exc)
    try:
        run.write_status(state, ended=time.time(), **fields)
    except OSError as exc:
        log.error("cannot write status.json (%s); the run ended: %s", exc, fields["reason"])


def _end_stopped(run: RunDir, step: int, summary: dict[str, Any]) -> None:
    """Record a stop asked for (the STOP flag, SIGTERM) at ``step``: the event says who asked, status.json that a
    resume continues from here."""
    who = run.stopped_by()
    asked = Reason.of("stopped_by", who=who) if who else Reason.of("stopped")
    run.append_event({"type": "end", "state": "aborted", "step": step, **reason_fields(asked)})
    at_step = Reason.of("stopped_by_at_step", who=who, step=step) if who else Reason.of("stopped_at_step", step=step)
    run.write_status("aborted", ended=time.time(), **summary, **reason_fields(at_step))


def sft_trainer(inputs: TrainerInputs) -> BuiltTrainer:
    """Stage sft (the stage table's trainer, studio/stages.py): the studio's StudioTrainer, its counts, its
    validation features and the layer offloader (if any)."""
    from .studio_trainer import StudioTrainer  # start-up: torch, transformers, peft: 6 s at import (see the top)
    from .held_out import KEEP_BEST  # start-up: as above
    cfg, model, tok, device, args, callbacks = (inputs.cfg, inputs.model, inputs.tok, inputs.device, inputs.args,
                                                inputs.callbacks)
    selective, batching = inputs.selective, inputs.batching
    train, val, counts = prepare_data(cfg, tok, inputs.rows, inputs.run)
    if not val and cfg.val_size:
        args.eval_strategy = "no"  # the held-out rows had no usable answers
        args.load_best_model_at_end = False   # nothing to judge a best by
        callbacks = [c for c in callbacks if not isinstance(c, KEEP_BEST)]
    offloader = None
    if cfg.layerwise_offload:
        from .offload import LayerwiseOffloader  # start-up: torch, 1.7 s at import (see the top)
        # also writes model.hf_device_map (layers on the CPU), from which Trainer and accelerate decide not to
        # move the whole model onto the card
        offloader = LayerwiseOffloader(model, device)
    trainer = StudioTrainer(model=model, args=args, train_dataset=train, eval_dataset=val or None,
                            data_collator=make_collator(cfg, model, tok, device, selective,
                                                        padding_free=batching == "padding_free"), processing_class=tok,
                            callbacks=callbacks, optimizers=(loraplus_optimizer(cfg, model), None),
                            dynamic_batching=cfg.dynamic_batching or batching != "as_configured",
                            max_tokens_per_batch=cfg.max_tokens_per_batch, oom_adaptive=cfg.oom_adaptive,
                            notify=inputs.notify, token_counter=inputs.count_tokens, selective_logits=selective,
                            packed=cfg.packing or cfg.neat_packing or batching == "padding_free")
    return BuiltTrainer(trainer, counts, val, offloader)


def _notifier(events: Any) -> Callable[[Notice], None]:
    """A notice goes to the log in the CLI's words and into the event log with the page's form too
    (studio/notices.py); anything but a Notice is refused (a TypeError: a plain sentence has no page words). A
    closure over the events only: the trainer keeps it, and must not keep the recipe."""
    def notify(message: Notice) -> None:
        checked(message)
        log.warning(message)
        events.emit({"type": "notice", "message": str(message), **message.page_form()})
    return notify


def _preparer(run: RunDir, main: bool) -> Progress:
    """Each step of the model's preparation goes to the log as a line (the CLI's words) and, from the main process,
    into the event log with its code (a "prepare" event), which the Train tab words in the page's language."""
    def say(fraction: float, step: Step) -> None:
        print_step(fraction, step)
        if main:
            run.append_event({"type": "prepare", "fraction": fraction, "message": str(step), **step.page_form()})
    return say


def _token_counter(events: Any) -> Callable[[int], None]:
    """The trainer adds each batch's tokens to the events' count (tokens per second on the page)."""
    def count_tokens(n: int) -> None:
        events.tokens_seen += n
    return count_tokens


# The run's recipe, as torchtune's: each step below takes the parts it needs and returns what it built; ``_train``
# wires them in the order the side effects need (each step's docstring says why it sits where it does).

@dataclass
class LoadedModel:
    """What setup_model built: the model and tokenizer, the kernel plan, whether the studio's chunked loss applies
    and how batches are laid out on the card."""

    model: Any
    tok: Any
    kernels: Any
    selective: bool
    batching: str


@dataclass
class Training:
    """What setup_trainer built: the stage's trainer and its counts (BuiltTrainer), the event log's callback, the
    notifier, the keep-best callbacks."""

    built: BuiltTrainer
    events: Any
    notify: Callable[[Notice], None]
    keep: list[Any] = field(default_factory=list)


def setup_plan(cfg: RunConfig) -> tuple[str, Any, PrecisionPlan]:
    """(device, its capabilities, the precision plan): first, because the run makes its precision decision once and
    every later step (arguments, model load, status.json) takes that one plan."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    import transformers
    transformers.logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    caps = precision.device_caps(device)
    return device, caps, precision.precision_plan(caps, cfg)


def warn_card(run: RunDir, caps: Any, cfg: RunConfig) -> None:
    """What this card changes for the plan (ROCm: bitsandbytes' library, DeepSpeed's ops), into the run's log now
    (rank 0): before the model load that may stop on it, so a failed load has its reason above it."""
    notify = _notifier(SimpleNamespace(emit=run.append_event))
    for message in precision.rocm_notices(caps, cfg):
        notify(message)


def read_rows(cfg: RunConfig, stage: Stage) -> list[dict[str, Any]]:
    """The dataset's rows, read as the stage reads them (its row of the stage table: instruction rows or preference
    pairs): before anything is built, so a bad dataset fails in seconds and tiny-demo's tokenizer can learn from
    the rows."""
    return load_rows(cfg.dataset, cfg.dataset_dir, stage.rows)


def search_learning_rate(cfg: RunConfig, run: RunDir, rows: list[dict[str, Any]], resume: str | None
                         ) -> tuple[RunConfig, tuple[dict, Notice] | None] | None:
    """The learning-rate search (engine/lr_search.py): after the rows are read (the trials are runs of their own,
    one model at a time) and before anything of this run is built. Returns the config with the winner's rate and
    the search's record and notice; a resumed run takes the winner its first part chose (no record); None: a stop
    was asked for during the search."""
    if resume:
        won = (run.read_status().get("lr_search") or {}).get("winner")
        return (cfg.replace(learning_rate=float(won)) if won else cfg), None
    held = cfg.val_size if cfg.val_size >= 1 else round(len(rows) * cfg.val_size)
    n_rows = max(1, len(rows) - int(held))
    planned = cfg.max_steps if cfg.max_steps > 0 else \
        math.ceil(n_rows / (cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps)) * \
        math.ceil(cfg.num_train_epochs)
    found = lr_search.search(cfg, run, planned, run_training, stopped=run.stop_flag.exists)
    if found is None:
        return None
    searched, record, notice = found
    run.write_status("starting", lr_search=record)
    return searched, (record, notice)


def build_demo_base(cfg: RunConfig, run: RunDir, rows: list[dict[str, Any]]) -> None:
    """tiny-demo's base model, built from the training rows (a preference stage's good answers): before the
    DeepSpeed config exists (setup_arguments registers it), because the base must not be built partitioned."""
    _ensure_demo_base(cfg, run, as_sft_rows(rows))


def setup_arguments(cfg: RunConfig, run: RunDir, rows: list[dict[str, Any]], stage: Stage, device: str,
                    plan: PrecisionPlan, resume_from: str | None, main: bool
                    ) -> tuple[Path | None, Any, tuple[str, bool, Any] | None]:
    """(the checkpoint to resume from, TrainingArguments, the held-out metric a keep-best run is judged by): before
    the model, because with ZeRO-3 the arguments register the DeepSpeed config, so from_pretrained loads each
    process's shard directly (zero.Init) instead of the whole model into every process's RAM."""
    checkpoint = _resolve_resume(run, resume_from or cfg.resume_from_checkpoint)
    universal = reshard.prepare_universal(checkpoint, _world_size(), main) if cfg.deepspeed else False
    # a TRL stage builds TRL's own arguments class from the same fields (engine/preference.py, engine/online_rl.py);
    # these still set up the process group first
    # a run that keeps its best checkpoint is judged by the Evaluate tab's number for its kind of answers
    # start-up: transformers and the evaluator (torch), 6 s at import (see the top of this module)
    from .held_out import held_out_metric, keeps_best
    best = held_out_metric(rows) if stage.studio_trainer and keeps_best(cfg) else None
    args = training_arguments(cfg, run, device, has_val=bool(cfg.val_size), universal=universal, plan=plan,
                              best=best)
    _ = args.device  # sets up the process group now, so zero.Init sees the real world size
    if args.deepspeed and _world_size() > 1:
        # start-up: DeepSpeed, 2.7 s at import; only a DeepSpeed run needs it
        import deepspeed
        # deepspeed.comm keeps its own view of the group; zero.Init reads it. The timeout bounds a stalled peer
        deepspeed.init_distributed(timeout=timedelta(seconds=cfg.ddp_timeout))
    return checkpoint, args, best


def setup_model(cfg: RunConfig, run: RunDir, device: str, plan: PrecisionPlan, args: Any, main: bool
                ) -> LoadedModel:
    """Model and tokenizer, then what depends on the loaded model: the kernel plan (Liger or the studio's
    selective logits, set on ``args``) and how batches are laid out on the card."""
    # the run's seed decides the adapter's starting weights too: peft draws them from torch's generator, which a
    # process seeds at random (Trainer seeds only once the model exists), so one config trained two different runs
    # start-up: transformers, already imported by the model's load below
    from transformers import set_seed
    set_seed(cfg.seed)
    model, tok = _build_model(cfg, device, plan, _preparer(run, main))
    # the kernels, decided beside the precision plan: Trainer applies Liger itself (use_liger_kernel); where it
    # does, Liger's fused output layer replaces the studio's chunked one (both compute logits only in chunks)
    kernel_plan = kernels.model_kernel_plan(device, model.config, cfg.enable_liger_kernel)
    args.use_liger_kernel = kernel_plan.liger
    batching = card_batching(device, getattr(model.config, "_attn_implementation", None),
                             cfg.packing or cfg.neat_packing)
    if batching != "as_configured":
        log.info("batches on the card: %s", batching.replace("_", " "))
    log.info(kernel_plan.english())
    return LoadedModel(model, tok, kernel_plan, cfg.selective_logits and not kernel_plan.liger, batching)


def setup_trainer(cfg: RunConfig, stage: Stage, run: RunDir, rows: list[dict[str, Any]], device: str,
                  plan: PrecisionPlan, args: Any, loaded: LoadedModel, best: tuple[str, bool, Any] | None,
                  main: bool) -> Training:
    """The callbacks (events, stop requests, the gradient-norm guard, keep-best's) and the stage's trainer, built
    by the function its row of the stage table names (SFT's StudioTrainer, TRL's trainers) from these parts. After
    the model, which the trainer wraps (the stop request's SIGTERM handler is installed here, after the load, as it
    always was)."""
    # start-up: transformers and the callbacks (torch), 5.8 s at import (see the top of this module)
    from transformers import PrinterCallback
    from .callbacks import EventCallback, GradNormGuard, StopRequested
    from .held_out import keep_best_callbacks
    events = EventCallback(run, StopRequested(run), is_main=main, metrics=stage.metrics)
    notify = _notifier(events)
    count_tokens = _token_counter(events)
    callbacks = [events, GradNormGuard(clipping=cfg.max_grad_norm > 0, fp16=plan.autocast == "fp16")]
    keep: list[Any] = []
    if best is not None:  # before EarlyStoppingCallback, which reads the score it adds
        _, val_rows = split_rows(rows, cfg.val_size, cfg.seed)
        keep = keep_best_callbacks(cfg, best, loaded.model, loaded.tok,
                                   templates.get_template(cfg.template, loaded.tok), val_rows, events.emit)
        callbacks += keep
    built = build_stage_trainer(TrainerInputs(
        cfg=cfg, stage=stage, run=run, model=loaded.model, tok=loaded.tok, rows=rows, device=device, plan=plan,
        args=args, callbacks=callbacks, notify=notify, count_tokens=count_tokens, selective=loaded.selective,
        batching=loaded.batching))
    built.trainer.remove_callback(PrinterCallback)  # progress goes to the event log, not raw dicts on stdout
    return Training(built, events, notify, keep)


def announce(cfg: RunConfig, run: RunDir, rows: list[dict[str, Any]], device: str, plan: PrecisionPlan,
             loaded: LoadedModel, training: Training, checkpoint: Path | None,
             search: tuple[dict, Notice] | None) -> None:
    """status.json says 'running' with the run's counts, then the startup notices: once everything is built, so
    the page never shows a run as running that is still loading (rank 0 only)."""
    counts, notify, trainer = training.built.counts, training.notify, training.built.trainer
    n_train, n_all = parameter_counts(loaded.model)
    # a resumed run is at its checkpoint's step already (the Trainer loads it only inside train())
    run.write_status("running", step=_checkpoint_step(checkpoint) or trainer.state.global_step,
                     **counts, trainable_params=n_train, total_params=n_all, device=device,
                     stage=cfg.stage, precision=plan.mode,
                     kernels="liger" if loaded.kernels.liger else loaded.kernels.reason)
    for message in list(plan.warnings) + startup_notices(cfg, device) + [
                m for m in [templates.chat_template_mismatch(cfg.template, loaded.tok),
                            templates.llamafactory_fallback_notice(cfg.template, loaded.tok)] if m]:
        notify(message)
    if cfg.model_name_or_path == DEMO_MODEL and cfg.finetuning_type != "full":
        notify(Notice.of("tiny_demo_method", method=cfg.finetuning_type))
    if search is not None:
        notify(search[1])
    if labels_preference(cfg, rows):
        notify(Notice.of("preference_on_labels", stage=cfg.stage.upper()))
    if counts["history_masked"]:
        notify(Notice.of("history_masked", n=counts["history_masked"], name=cfg.template))
    if counts["truncated"]:
        notify(Notice.of("truncated", n=counts["truncated"], cutoff=cfg.cutoff_len))


def train_and_summarize(cfg: RunConfig, run: RunDir, training: Training, checkpoint: Path | None,
                        search: tuple[dict, Notice] | None, best: tuple[str, bool, Any] | None, device: str,
                        main: bool, free: FreeCores) -> tuple[dict[str, Any], bool]:
    """Train (or resume); returns the summary status.json and the next run's time estimate read, with
    ``aborted``: a stop was asked for. The CPU threads are chosen only now: the model load was the window in
    which other processes' load was measured."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    from .held_out import HeldOutScore, kept_best
    trainer, events = training.built.trainer, training.events
    free.apply()
    mark = busy_mark()
    t0 = mark[0]
    result = train_or_resume(trainer, checkpoint)
    trainer.check_divergence()   # the steps since the last logging step, before the model is saved
    # other processes' share of the CPU meanwhile: the next run's time estimate corrects this run's speed by it
    others = others_since(mark)
    seconds = time.time() - t0  # read once: this part's time and its entry in train_parts must be one number
    summary: dict[str, Any] = {
        "step": trainer.state.global_step, "total_steps": trainer.state.max_steps,
        "train_loss": result.training_loss, "final_loss": _last_loss(trainer.state.log_history),
        "train_seconds": round(seconds, 2),
        # what the next run's time estimate learns from (studio/runs/run_time.py)
        "train_started": round(t0, 2), "train_tokens": events.tokens_seen, "others_load": others,
        "threads": torch.get_num_threads() if device == "cpu" else None,
        "micro_batch_splits": getattr(trainer, "splits", 1), **training.built.counts}
    if search is not None:
        summary["lr_search"] = search[0]
    summary.update(train_parts(run.read_status(), seconds, resumed=checkpoint is not None))
    aborted = events.stopped_early
    evals = [h["eval_loss"] for h in trainer.state.log_history if "eval_loss" in h]
    if training.built.val and not aborted:
        summary["eval_loss"] = evals[-1] if evals else trainer.evaluate().get("eval_loss")
    score = next((c for c in training.keep if isinstance(c, HeldOutScore)), None)
    if score is not None and score.history and not aborted and best is not None:
        # Trainer has loaded the best checkpoint (load_best_model_at_end): the model saved next is that one
        summary["kept_best"], notice = kept_best(trainer.state, best[0], score, trainer.state.max_steps,
                                                 cfg.early_stopping_patience)
        if main:
            training.notify(notice)
    return summary, aborted


def finish(cfg: RunConfig, run: RunDir, training: Training, tok: Any, summary: dict[str, Any], aborted: bool,
           main: bool) -> dict[str, Any]:
    """The end: a stopped run records 'aborted' (its checkpoint is the resume point) and saves no model; a
    finished one saves the adapter or model, the loss plot, then records 'finished' last, so a finished status
    always has its model on disk."""
    step = summary["step"]
    if aborted:
        if main:
            _end_stopped(run, step, summary)
        return {"state": "aborted", **summary}
    if training.built.offloader is not None:
        training.built.offloader.remove()  # layers stay in host RAM; saving needs no device map
    _save_final(training.built.trainer, cfg, run, tok, main)
    if main:
        if cfg.plot_loss:
            save_loss_plot(run)
        run.append_event({"type": "end", "state": "finished", "step": step, **reason_fields(NO_REASON)})
        run.write_status("finished", ended=time.time(), **summary, **reason_fields(NO_REASON))
    return {"state": "finished", **summary}


def _train(cfg: RunConfig, run: RunDir, resume_from: str | None, main: bool, free: FreeCores) -> dict[str, Any]:
    """The run's recipe: each step takes what it needs and returns what it built (the steps above say why each
    comes where it does)."""
    device, caps, plan = setup_plan(cfg)
    if main:
        warn_card(run, caps, cfg)
    stage = stage_of(cfg.stage)   # its row of the stage table (studio/stages.py)
    rows = read_rows(cfg, stage)
    search: tuple[dict, Notice] | None = None
    if cfg.learning_rate_search.strip() and cfg.val_size:
        searched = search_learning_rate(cfg, run, rows, resume_from or cfg.resume_from_checkpoint)
        if searched is None:   # a stop asked for during the search
            summary = {"step": 0}
            _end_stopped(run, 0, summary)
            return {"state": "aborted", **summary}
        cfg, search = searched
    build_demo_base(cfg, run, rows)
    checkpoint, args, best = setup_arguments(cfg, run, rows, stage, device, plan, resume_from, main)
    loaded = setup_model(cfg, run, device, plan, args, main)
    training = setup_trainer(cfg, stage, run, rows, device, plan, args, loaded, best, main)
    if main:
        announce(cfg, run, rows, device, plan, loaded, training, checkpoint, search)
    summary, aborted = train_and_summarize(cfg, run, training, checkpoint, search, best, device, main, free)
    return finish(cfg, run, training, loaded.tok, summary, aborted, main)


_CHECKPOINT_ERRORS = ("SafetensorError", "UnpicklingError", "EOFError")
_CHECKPOINT_WORDS = ("PytorchStreamReader", "invalid load key", "zip archive", "deserializ", "Ran out of input")


def train_or_resume(trainer: Any, checkpoint: Path | None) -> Any:
    """trainer.train(), resuming from ``checkpoint``; a checkpoint the loaders cannot read (tampered, truncated by a
    full disk or a kill, from another model) becomes a StudioError naming it. Other errors pass unchanged.

    Raises:
        StudioError: the checkpoint's files cannot be loaded.
    """
    if not checkpoint:
        return trainer.train(resume_from_checkpoint=None)
    try:
        return trainer.train(resume_from_checkpoint=str(checkpoint))
    except Exception as exc:  # noqa: BLE001 - only loader errors are re-raised as the user's to fix
        seen: BaseException | None = exc
        for _ in range(4):  # torch and transformers wrap the loader's error
            if seen is None:
                break
            if type(seen).__name__ in _CHECKPOINT_ERRORS or any(w in str(seen) for w in _CHECKPOINT_WORDS):
                raise StudioError.of("engine.checkpoint_damaged", checkpoint=checkpoint, error=type(seen).__name__,
                                     detail=str(seen)[:120]) from None
            seen = seen.__cause__ or seen.__context__
        raise


def _last_loss(history: list[dict]) -> float | None:
    for h in reversed(history):
        if "loss" in h and isinstance(h["loss"], (int, float)) and math.isfinite(h["loss"]):
            return float(h["loss"])
    return None


def _checkpoint_step(checkpoint: Path | None) -> int:
    """The step a checkpoint-N folder was saved at (0 for none or another name)."""
    name = checkpoint.name if checkpoint else ""
    return int(name.rsplit("-", 1)[1]) if name.startswith("checkpoint-") and name.rsplit("-", 1)[1].isdigit() else 0


def _resolve_resume(run: RunDir, resume_from: str | None) -> Path | None:
    if not resume_from:
        return None
    if resume_from == "last":
        last = run.last_checkpoint()
        if last is None:
            raise StudioError.of("engine.nothing_to_resume", path=run.path)
        return last
    p = Path(resume_from)
    if not (p / "trainer_state.json").exists():
        raise StudioError.of("engine.not_a_checkpoint", path=resume_from)
    return p


def _save_final(trainer: Any, cfg: RunConfig, run: RunDir, tok: Any, main: bool) -> None:
    """Adapter or full model, written to a temp folder and renamed, so it is never half there."""
    target = run.adapter if cfg.finetuning_type == "lora" else run.model
    tmp = target.with_name(target.name + ".tmp")
    if main:
        shutil.rmtree(tmp, ignore_errors=True)
    trainer.accelerator.wait_for_everyone()  # as for a checkpoint: every rank may write here (ZeRO-3's shards)
    trainer.save_model(str(tmp))
    trainer.accelerator.wait_for_everyone()
    if main:
        tok.save_pretrained(str(tmp))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        atomic_write_text(target / "studio_run.json", json.dumps({"run": str(run.path), "method": cfg.method,
                                                                   "template": cfg.template}, indent=1))
