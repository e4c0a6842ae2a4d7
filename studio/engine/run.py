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
from ..data.preference import as_sft_rows, stage_kind
from ..data.tokenize import encode_examples
from ..errors import StudioError
from ..models import kernels, loading, precision
from ..models.precision import PrecisionPlan
from ..models.progress import Progress, Step, print_step
from ..notices import Notice, checked
from ..runs.plots import save_loss_plot
from ..runs.reasons import NO_REASON, Reason, disk_full, reason_fields
from ..runs.run_dir import RunDir
from ..runs.run_time import busy_mark, free_threads, others_since, train_parts
from ..workspace import atomic_write_text, is_disk_full
from . import lr_search, reshard
from .arguments import loraplus_optimizer, make_collator, training_arguments
from .batching import card_batching
from .launch import leave_process_group, peer_lost_error
from .nvme import check_nvme_ready

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
    """A DPO / KTO run whose answers are a few labels (autoconfig.guess_task's rule: at most 10 distinct answers):
    the case where SFT on the corrections measured better (bench/feedback_loop.py)."""
    if cfg.stage not in ("dpo", "kto"):
        return False
    answers = {str(r.get(k, "")).strip() for r in rows[:200] for k in ("chosen", "rejected", "output") if k in r}
    return 0 < len(answers) <= 10


class FreeCores:
    """A CPU run computes with one thread per core other processes leave free (run_time.free_threads: with one of
    two cores busy elsewhere, two threads trained SmolLM2 1.9x slower than one). Others' work is measured from the
    run's start until its training begins (the model load is the window: no time spent waiting for it). Never more
    threads than the process was given; nothing changed when the user set OMP_NUM_THREADS or a card trains."""

    def __init__(self) -> None:
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        self.given = torch.get_num_threads()
        self.active = not (os.environ.get("OMP_NUM_THREADS") or torch.cuda.is_available())
        self.mark = busy_mark()

    def apply(self) -> None:
        """Set torch's threads for the training loop."""
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        if not self.active:
            return
        time.sleep(max(0.0, 0.2 - (time.time() - self.mark[0])))   # a window long enough to read
        others = others_since(self.mark) or 0.0
        use = min(self.given, free_threads(others))
        if use != torch.get_num_threads():
            log.info("training with %d of %d CPU threads: other processes keep %.1f cores busy", use, self.given,
                     others)
            torch.set_num_threads(use)

    def restore(self) -> None:
        """An in-process caller (tests, benchmarks) gets its threads back."""
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        if torch.get_num_threads() != self.given:
            torch.set_num_threads(self.given)


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
        check_preference_data(cfg.stage, cfg.dataset, cfg.dataset_dir)
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


def _sft_trainer(cfg: RunConfig, run: RunDir, model: Any, tok: Any, rows: list[dict], device: str, args: Any,
                 callbacks: list[Any], notify: Any, count_tokens: Any, selective: bool, batching: str
                 ) -> tuple[Any, dict[str, Any], list, Any]:
    """The supervised run's StudioTrainer, its counts, its validation features and the layer offloader (if any)."""
    from .studio_trainer import StudioTrainer  # start-up: torch, transformers, peft: 6 s at import (see the top)
    from .held_out import KEEP_BEST  # start-up: as above
    train, val, counts = prepare_data(cfg, tok, rows, run)
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
                            notify=notify, token_counter=count_tokens, selective_logits=selective,
                            packed=cfg.packing or cfg.neat_packing or batching == "padding_free")
    return trainer, counts, val, offloader


def _preference_trainer(cfg: RunConfig, run: RunDir, model: Any, tok: Any, rows: list[dict], device: str,
                        plan: PrecisionPlan, callbacks: list[Any], count_tokens: Any
                        ) -> tuple[Any, dict[str, Any], list]:
    """Stage dpo / kto: TRL's trainer (engine/preference.py); the held-out rows are saved as for SFT (their chosen
    or good answers, so Evaluate checks the tuned model on them) and the training prompts fingerprinted."""
    from .preference import build_trainer  # start-up: torch, transformers, TRL: 6 s at import (see the top)
    train_rows, val_rows = split_rows(rows, cfg.val_size, cfg.seed)
    if cfg.max_samples:
        train_rows = train_rows[:cfg.max_samples]
    if is_main_process():
        if val_rows:
            atomic_write_text(run.val_data, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                    for r in as_sft_rows(val_rows)))
        atomic_write_text(run.train_keys, keys_text(train_rows))
    trainer, counts = build_trainer(cfg, run, model, tok, train_rows, val_rows, device, plan, callbacks, count_tokens)
    return trainer, counts, val_rows


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


class _TrainingRecipe:
    """One run's training, assembled in named steps as torchtune's recipes are: each step has one job and sets what
    the later ones read. ``_train`` lists the steps; their order is the order the side effects need (each step's
    docstring says why it sits where it does)."""

    def __init__(self, cfg: RunConfig, run: RunDir, main: bool) -> None:
        self.cfg, self.run, self.main = cfg, run, main
        self.search: tuple[dict, Notice] | None = None   # the learning-rate search's record and notice, if one ran
        self.offloader: Any = None   # layer-wise offload's hooks (SFT only); removed before the final save

    def setup_plan(self) -> None:
        """Device, its capabilities and the precision plan: first, because the run makes its precision decision
        once and every later step (arguments, model load, status.json) takes that one plan."""
        # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
        import torch
        import transformers
        transformers.logging.disable_progress_bar()
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.caps = precision.device_caps(self.device)
        self.plan = precision.precision_plan(self.caps, self.cfg)

    def warn_card(self) -> None:
        """What this card changes for the plan (ROCm: bitsandbytes' library, DeepSpeed's ops), into the run's log
        now: before the model load that may stop on it, so a failed load has its reason above it (rank 0 only)."""
        if not self.main:
            return
        notify = _notifier(SimpleNamespace(emit=self.run.append_event))
        for message in precision.rocm_notices(self.caps, self.cfg):
            notify(message)

    def load_rows(self) -> None:
        """The dataset's rows, read as the stage's kind (SFT rows or preference pairs): before anything is built,
        so a bad dataset fails in seconds and tiny-demo's tokenizer can learn from the rows."""
        self.rows = load_rows(self.cfg.dataset, self.cfg.dataset_dir, stage_kind(self.cfg.stage))

    def search_learning_rate(self, resume: str | None) -> bool:
        """The learning-rate search (engine/lr_search.py): after the rows are read (the trials are runs of their
        own, one model at a time) and before anything of this run is built. A resumed run takes the winner its
        first part chose. False: a stop was asked for during the search."""
        cfg, self.search = self.cfg, None
        if resume:
            won = (self.run.read_status().get("lr_search") or {}).get("winner")
            self.cfg = cfg.replace(learning_rate=float(won)) if won else cfg
            return True
        held = cfg.val_size if cfg.val_size >= 1 else round(len(self.rows) * cfg.val_size)
        rows = max(1, len(self.rows) - int(held))
        planned = cfg.max_steps if cfg.max_steps > 0 else \
            math.ceil(rows / (cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps)) * \
            math.ceil(cfg.num_train_epochs)
        found = lr_search.search(cfg, self.run, planned, run_training, stopped=self.run.stop_flag.exists)
        if found is None:
            return False
        self.cfg, record, notice = found
        self.search = (record, notice)
        self.run.write_status("starting", lr_search=record)
        return True

    def build_demo_base(self) -> None:
        """tiny-demo's base model, built from the training rows: before the DeepSpeed config exists (setup_arguments
        registers it), because the base must not be built partitioned."""
        cfg = self.cfg
        _ensure_demo_base(cfg, self.run, self.rows if cfg.stage == "sft" else as_sft_rows(self.rows))

    def setup_arguments(self, resume_from: str | None) -> None:
        """The checkpoint to resume from and TrainingArguments: before the model, because with ZeRO-3 the arguments
        register the DeepSpeed config, so from_pretrained loads each process's shard directly (zero.Init) instead
        of the whole model into every process's RAM."""
        cfg = self.cfg
        self.checkpoint = _resolve_resume(self.run, resume_from or cfg.resume_from_checkpoint)
        universal = reshard.prepare_universal(self.checkpoint, _world_size(), self.main) if cfg.deepspeed else False
        # a preference run builds TRL's own arguments class from the same fields (engine/preference.py); this one
        # still sets up the process group first
        # a run that keeps its best checkpoint is judged by the Evaluate tab's number for its kind of answers
        # start-up: transformers and the evaluator (torch), 6 s at import (see the top of this module)
        from .held_out import held_out_metric, keeps_best
        self.best = held_out_metric(self.rows) if cfg.stage == "sft" and keeps_best(cfg) else None
        self.args = training_arguments(cfg, self.run, self.device, has_val=bool(cfg.val_size), universal=universal,
                                       plan=self.plan, best=self.best)
        _ = self.args.device  # sets up the process group now, so zero.Init sees the real world size
        if self.args.deepspeed and _world_size() > 1:
            # start-up: DeepSpeed, 2.7 s at import; only a DeepSpeed run needs it
            import deepspeed
            # deepspeed.comm keeps its own view of the group; zero.Init reads it. The timeout bounds a stalled peer
            deepspeed.init_distributed(timeout=timedelta(seconds=cfg.ddp_timeout))

    def setup_model(self) -> None:
        """Model and tokenizer, then what depends on the loaded model: the kernel plan (Liger or the studio's
        selective logits) and how batches are laid out on the card."""
        cfg = self.cfg
        self.model, self.tok = _build_model(cfg, self.device, self.plan, _preparer(self.run, self.main))
        # the kernels, decided beside the precision plan: Trainer applies Liger itself (use_liger_kernel); where it
        # does, Liger's fused output layer replaces the studio's chunked one (both compute logits only in chunks)
        self.kernels = kernels.model_kernel_plan(self.device, self.model.config, cfg.enable_liger_kernel)
        self.args.use_liger_kernel = self.kernels.liger
        self.selective = cfg.selective_logits and not self.kernels.liger
        self.batching = card_batching(self.device, getattr(self.model.config, "_attn_implementation", None),
                                      cfg.packing or cfg.neat_packing)
        if self.batching != "as_configured":
            log.info("batches on the card: %s", self.batching.replace("_", " "))
        log.info(self.kernels.english())

    def setup_trainer(self) -> None:
        """The callbacks (events, stop requests, the gradient-norm guard) and the stage's trainer: SFT's
        StudioTrainer or TRL's preference trainer. After the model, which the trainer wraps (the stop request's
        SIGTERM handler is installed here, after the load, as it always was)."""
        # start-up: transformers and the callbacks (torch), 5.8 s at import (see the top of this module)
        from transformers import PrinterCallback
        from .callbacks import EventCallback, GradNormGuard, StopRequested
        from .held_out import keep_best_callbacks
        cfg = self.cfg
        self.events = EventCallback(self.run, StopRequested(self.run), is_main=self.main)
        self.notify = _notifier(self.events)
        count_tokens = _token_counter(self.events)
        callbacks = [self.events, GradNormGuard(clipping=cfg.max_grad_norm > 0, fp16=self.plan.autocast == "fp16")]
        self.keep: list[Any] = []
        if self.best is not None:  # before EarlyStoppingCallback, which reads the score it adds
            _, val_rows = split_rows(self.rows, cfg.val_size, cfg.seed)
            self.keep = keep_best_callbacks(cfg, self.best, self.model, self.tok,
                                            templates.get_template(cfg.template, self.tok), val_rows, self.events.emit)
            callbacks += self.keep
        if cfg.stage != "sft":
            self.trainer, self.counts, self.val = _preference_trainer(cfg, self.run, self.model, self.tok, self.rows,
                                                                      self.device, self.plan, callbacks, count_tokens)
        else:
            self.trainer, self.counts, self.val, self.offloader = _sft_trainer(
                cfg, self.run, self.model, self.tok, self.rows, self.device, self.args, callbacks, self.notify,
                count_tokens, self.selective, self.batching)
        self.trainer.remove_callback(PrinterCallback)  # progress goes to the event log, not raw dicts on stdout

    def announce(self) -> None:
        """status.json says 'running' with the run's counts, then the startup notices: once everything is built, so
        the page never shows a run as running that is still loading (rank 0 only)."""
        cfg, counts, notify = self.cfg, self.counts, self.notify
        n_train, n_all = parameter_counts(self.model)
        # a resumed run is at its checkpoint's step already (the Trainer loads it only inside train())
        self.run.write_status("running", step=_checkpoint_step(self.checkpoint) or self.trainer.state.global_step,
                              **counts, trainable_params=n_train, total_params=n_all, device=self.device,
                              stage=cfg.stage, precision=self.plan.mode,
                              kernels="liger" if self.kernels.liger else self.kernels.reason)
        for message in list(self.plan.warnings) + startup_notices(cfg, self.device) + [
                    m for m in [templates.chat_template_mismatch(cfg.template, self.tok),
                                templates.llamafactory_fallback_notice(cfg.template, self.tok)] if m]:
            notify(message)
        if cfg.model_name_or_path == DEMO_MODEL and cfg.finetuning_type != "full":
            notify(Notice.of("tiny_demo_method", method=cfg.finetuning_type))
        if self.search is not None:
            notify(self.search[1])
        if labels_preference(cfg, self.rows):
            notify(Notice.of("preference_on_labels", stage=cfg.stage.upper()))
        if counts["history_masked"]:
            notify(Notice.of("history_masked", n=counts["history_masked"], name=cfg.template))
        if counts["truncated"]:
            notify(Notice.of("truncated", n=counts["truncated"], cutoff=cfg.cutoff_len))

    def train_and_summarize(self, free: FreeCores) -> dict[str, Any]:
        """Train (or resume), then the summary status.json and the next run's time estimate read. The CPU threads
        are chosen only now: the model load was the window in which other processes' load was measured."""
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        from .held_out import HeldOutScore, kept_best
        trainer, events = self.trainer, self.events
        free.apply()
        mark = busy_mark()
        t0 = mark[0]
        result = train_or_resume(trainer, self.checkpoint)
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
            "threads": torch.get_num_threads() if self.device == "cpu" else None,
            "micro_batch_splits": getattr(trainer, "splits", 1), **self.counts}
        if self.search is not None:
            summary["lr_search"] = self.search[0]
        summary.update(train_parts(self.run.read_status(), seconds, resumed=self.checkpoint is not None))
        self.aborted = events.stopped_early
        evals = [h["eval_loss"] for h in trainer.state.log_history if "eval_loss" in h]
        if self.val and not self.aborted:
            summary["eval_loss"] = evals[-1] if evals else trainer.evaluate().get("eval_loss")
        score = next((c for c in self.keep if isinstance(c, HeldOutScore)), None)
        if score is not None and score.history and not self.aborted and self.best is not None:
            # Trainer has loaded the best checkpoint (load_best_model_at_end): the model saved next is that one
            summary["kept_best"], notice = kept_best(trainer.state, self.best[0], score, trainer.state.max_steps,
                                                     self.cfg.early_stopping_patience)
            if self.main:
                self.notify(notice)
        return summary

    def finish(self, summary: dict[str, Any]) -> dict[str, Any]:
        """The end: a stopped run records 'aborted' (its checkpoint is the resume point) and saves no model; a
        finished one saves the adapter or model, the loss plot, then records 'finished' last, so a finished
        status always has its model on disk."""
        run, step = self.run, summary["step"]
        if self.aborted:
            if self.main:
                _end_stopped(run, step, summary)
            return {"state": "aborted", **summary}
        if self.offloader is not None:
            self.offloader.remove()  # layers stay in host RAM; saving needs no device map
        _save_final(self.trainer, self.cfg, run, self.tok, self.main)
        if self.main:
            if self.cfg.plot_loss:
                save_loss_plot(run)
            run.append_event({"type": "end", "state": "finished", "step": step, **reason_fields(NO_REASON)})
            run.write_status("finished", ended=time.time(), **summary, **reason_fields(NO_REASON))
        return {"state": "finished", **summary}


def _train(cfg: RunConfig, run: RunDir, resume_from: str | None, main: bool, free: FreeCores) -> dict[str, Any]:
    """The run's recipe, step by step (each step's docstring says why it comes where it does)."""
    recipe = _TrainingRecipe(cfg, run, main)
    recipe.setup_plan()
    recipe.warn_card()
    recipe.load_rows()
    if cfg.learning_rate_search.strip() and cfg.val_size and not recipe.search_learning_rate(resume_from or cfg.resume_from_checkpoint):
        summary = {"step": 0}
        _end_stopped(run, 0, summary)
        return {"state": "aborted", **summary}
    recipe.build_demo_base()
    recipe.setup_arguments(resume_from)
    recipe.setup_model()
    recipe.setup_trainer()
    if main:
        recipe.announce()
    summary = recipe.train_and_summarize(free)
    return recipe.finish(summary)


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
    trainer.save_model(str(tmp))
    if main:
        tok.save_pretrained(str(tmp))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        atomic_write_text(target / "studio_run.json", json.dumps({"run": str(run.path), "method": cfg.method,
                                                                   "template": cfg.template}, indent=1))
