"""A thin Trainer subclass: the five things transformers.Trainer does not do for us.

1. dynamic batching (token-budget, length-grouped batches),
2. OOM-adaptive micro-batches (split the batch, same effective batch, carry on),
3. a divergence guard (a NaN/inf loss or an exploding gradient stops the run before a checkpoint keeps it),
4. crash-safe checkpoints (write to a staging folder, then rename),
5. logits only where the loss is (studio/engine/loss.py), checked once against the model's own loss.
Everything else (optimizers, DeepSpeed, mixed precision, resume) is the stock Trainer.

None of it waits for the card inside a step: the counts come from the host (batching.HostCounts) and the guard's
values are read in one go on the steps that log, save or evaluate (tests/engine/test_step_sync.py counts the waits).
"""
from __future__ import annotations

import gc
import math
import os
import shutil
import weakref
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Iterator

import torch
from accelerate.utils import AutocastKwargs
from torch.utils.data import DataLoader
from transformers import Trainer, TrainerCallback

from ..notices import Notice, checked
from .batching import ITEMS_KEY, TOKENS_KEY, TokenBudgetBatchSampler, pop_host_counts
from .callbacks import DivergenceError, GradNormGuard
from .loss import check_inputs, model_probe_loss, selective_causal_lm_loss

# Tests set this to simulate a card that cannot fit more than N rows per micro-batch.
INJECT_OOM_ENV = "STUDIO_INJECT_OOM_ABOVE"


def _notify_touched(trainer_ref: "weakref.ref[StudioTrainer]", p: torch.Tensor) -> None:
    """A parameter's post-accumulate hook: note it in the trainer's current slice, if the trainer still exists."""
    trainer = trainer_ref()
    if trainer is not None and trainer._touched is not None:
        trainer._touched.add(p)


class GuardedCheckpoints:
    """What every studio trainer shares, SFT or preference (studio/engine/preference.py): the divergence guard reads
    the noted losses and gradient norms before anything is logged or saved, and checkpoints are written to a staging
    folder and then renamed, so a kill or a full disk never leaves a half checkpoint that resume would pick."""

    _staging: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # added after Trainer's and the caller's callbacks, so it sees the flags all of them set for the step
        self.add_callback(_CheckBeforeLogOrSave(self))

    def _get_grad_norm(self, model: Any, grad_norm: Any = None) -> Any:
        """Trainer's gradient norm, noted for the divergence guard (read with the step's loss, see below).

        A private override: no public hook sees the step's norm as the tensor it is. Callbacks get no norm before
        the optimizer step (on_pre_optimizer_step has none), and on_log gets it only on logging steps, as a float
        Trainer has already waited for."""
        norm = super()._get_grad_norm(model, grad_norm)
        if norm is not None:
            self.__dict__.setdefault("_unchecked", []).append((self.state.global_step + 1, None, norm.detach() if torch.is_tensor(norm) else norm))
        return norm

    def check_divergence(self) -> None:
        """Read the losses and gradient norms noted since the last look (one transfer) and stop at the first bad one.

        Called before anything is logged, saved or evaluated, and when training ends: a checkpoint is never
        written from weights that a bad step reached, and the error names the step where it went wrong. The
        price of not stopping the moment it happens (that needs a sync every step) is at most logging_steps
        wasted steps.

        Raises:
            DivergenceError: a loss was not finite, or the guard judged a gradient norm to have exploded.
        """
        pending, self._unchecked = getattr(self, "_unchecked", []), []
        if not pending:
            return
        tensors = [v for _, loss, norm in pending for v in (loss, norm) if torch.is_tensor(v)]
        values = iter(torch.stack([t.float().reshape(()) for t in tensors]).cpu().tolist() if tensors else [])
        guards = [cb for cb in self.callback_handler.callbacks if isinstance(cb, GradNormGuard)]
        for step, loss, norm in pending:
            loss_v = next(values) if torch.is_tensor(loss) else loss
            norm_v = next(values) if torch.is_tensor(norm) else norm
            if loss_v is not None and not math.isfinite(loss_v):
                raise DivergenceError(step, "loss", self.args.output_dir, loss=loss_v)
            for guard in guards:
                guard.check(step, norm_v, self.args.output_dir)

    def _get_output_dir(self, trial: Any) -> str:
        """The staging folder while a checkpoint is written. A private override: where Trainer writes a
        checkpoint has no public setting but args.output_dir, which the rest of Trainer reads too (the final save,
        the model card); on_save comes only after the files are written."""
        return self._staging or super()._get_output_dir(trial)

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        """Write the checkpoint into the staging folder, then rename it into place. A private override: Trainer has
        no public hook around a checkpoint's writing (on_save runs after it, too late to choose the folder or to
        refuse weights a bad step reached)."""
        self.check_divergence()   # never keep weights that a bad step has reached
        root = Path(self.args.output_dir)
        staging = root / ".staging"
        if self.args.should_save:
            shutil.rmtree(staging, ignore_errors=True)
        # Every rank writes into the staging folder (its ZeRO shards, its rng_state_<rank>.pth) and Trainer waits for
        # none of them: no rank may write before the old folder is cleared, nor the folder move before all have written.
        self.accelerator.wait_for_everyone()
        self._staging = str(staging)
        try:
            super()._save_checkpoint(model, trial)
        finally:
            self._staging = None
        self.accelerator.wait_for_everyone()
        if not self.args.should_save:
            return
        name = f"checkpoint-{self.state.global_step}"
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging / name, final)
        shutil.rmtree(staging, ignore_errors=True)
        best = self.state.best_model_checkpoint
        if best and Path(best).parent == staging:  # Trainer named the best where it wrote it: the staging folder
            self.state.best_model_checkpoint = str(root / Path(best).name)
        self._rotate(root)

    def _rotate(self, root: Path) -> None:
        """Keep the newest ``save_total_limit`` checkpoints and, for a run that keeps its best, the best one (as
        Trainer's own rotation does: load_best_model_at_end reads it at the end)."""
        limit = self.args.save_total_limit
        if not limit:
            return
        best = Path(self.state.best_model_checkpoint).name if self.state.best_model_checkpoint else None
        done = sorted((int(p.name.split("-")[1]), p) for p in root.glob("checkpoint-*")
                      if p.name.split("-")[1].isdigit() and (p / "trainer_state.json").exists())
        for _, p in done[:-limit]:
            if p.name != best:
                shutil.rmtree(p, ignore_errors=True)


class _CheckBeforeLogOrSave(TrainerCallback):
    """The divergence check on every step (and epoch end) that logs, saves, evaluates or ends training: Trainer
    calls on_step_end / on_epoch_end just before it logs, evaluates and saves for that step, so a bad loss is never
    logged and a checkpoint never written from it. It reads the flags every earlier callback set (a stop request
    sets should_save), so it is added last. The trainer is held weakly: the trainer holds this callback."""

    def __init__(self, trainer: GuardedCheckpoints) -> None:
        self._trainer = weakref.ref(trainer)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._check(control)

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._check(control)

    def _check(self, control: Any) -> None:
        trainer = self._trainer()
        if trainer is not None and (control.should_log or control.should_save or control.should_evaluate
                                    or control.should_training_stop):
            trainer.check_divergence()


class StudioTrainer(GuardedCheckpoints, Trainer):
    def __init__(self, *args: Any, dynamic_batching: bool = False, max_tokens_per_batch: int | None = None,
                 oom_adaptive: bool = True, notify: Any = None, token_counter: Any = None,
                 selective_logits: bool = False, packed: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.selective_logits = selective_logits and not self.is_deepspeed_enabled and not self.is_fsdp_enabled
        self._selective_checked = False
        self.packed = packed
        self.dynamic_batching = dynamic_batching
        self.max_tokens_per_batch = max_tokens_per_batch
        self.oom_adaptive = oom_adaptive
        self.splits = 1  # each micro-batch is run as this many slices (grows after an OOM)
        self._send_notice = notify or (lambda message: None)
        self.token_counter = token_counter
        self._staging: str | None = None
        self._hooked: set[int] = set()
        self._touched: set[torch.Tensor] | None = None
        self._loss_index: torch.Tensor | None = None   # the whole micro-batch's loss positions (host-made)
        self._step_loss: torch.Tensor | None = None    # this optimizer step's loss so far, on the card
        # (step, loss or None, grad norm or None) not yet looked at: read on the next logging/saving step
        self._unchecked: list[tuple[int, Any, Any]] = []
        if getattr(self.model, "studio_offloader", None) is not None:
            # Layer-wise offload under mixed precision: autocast caches the 16-bit copy of every weight it casts
            # until the forward ends, so all layers' copies piled up on the card however few layers were
            # resident (an H200 run peaked at 0.74 of the whole fp32 model; docs/BENCHMARKS.md "GPU"). Without
            # the cache a layer's copy dies with its forward; the price is re-casting a weight used twice.
            self.accelerator.autocast_handler = AutocastKwargs(cache_enabled=False)

    # 1. dynamic batching ------------------------------------------------------
    def get_train_dataloader(self) -> DataLoader:
        if not self.dynamic_batching:
            return super().get_train_dataloader()
        lengths = [len(f["input_ids"]) for f in self.train_dataset]
        # default budget: the batch size's worth of rows of average length, so a run makes about as many
        # optimizer steps of about as many rows as with random batches (the plan's epochs and learning rate
        # stay right), with little padding; a longest-row budget packed ~2x the rows into half the steps and
        # tiny-demo's data-only plan fell from 0.72 to 0.60 held-out (tests/config/test_cli_defaults.py)
        budget = self.max_tokens_per_batch or self.args.per_device_train_batch_size * -(-sum(lengths) // len(lengths))
        sampler = TokenBudgetBatchSampler(lengths, budget, seed=self.args.seed, packed=self.packed)
        loader = DataLoader(self.train_dataset, batch_sampler=sampler, collate_fn=self.data_collator,
                            num_workers=self.args.dataloader_num_workers,
                            pin_memory=self.args.dataloader_pin_memory and torch.cuda.is_available())
        return self.accelerator.prepare(loader)

    # 2 + 3. OOM-adaptive step with divergence guard --------------------------------
    def training_step(self, model: torch.nn.Module, inputs: dict[str, Any],
                      num_items_in_batch: Any = None) -> torch.Tensor:
        host = pop_host_counts(inputs)
        if self.token_counter is not None and "input_ids" in inputs:
            # a batch from another collator has no host count: the sync it costs is that collator's
            self.token_counter(host[TOKENS_KEY] if TOKENS_KEY in host else
                               int(inputs["attention_mask"].sum()) if "attention_mask" in inputs
                               else inputs["input_ids"].numel())  # packed rows have no padding, no mask
        if num_items_in_batch is None and "labels" in inputs:
            # per-token normalisation over the whole batch keeps sliced and unsliced steps identical
            items = host[ITEMS_KEY] if ITEMS_KEY in host else int((inputs["labels"] != -100).sum())
            num_items_in_batch = items * self.args.gradient_accumulation_steps
        rows = inputs["input_ids"].shape[0]
        self._watch_grads(model)
        boundary = self.accelerator.sync_gradients
        # each slice: (start, end, parameters that already hold these rows' gradient from a failed attempt)
        pending: list[tuple[int, int, frozenset]] = [(s, e, frozenset()) for s, e in _slices(rows, self.splits)]
        total = None
        while pending:
            start, end, done = pending.pop(0)
            part = {k: (v[start:end] if torch.is_tensor(v) and v.dim() > 0 and v.shape[0] == rows else v)
                    for k, v in inputs.items()}
            self._touched = set()
            failed = False
            try:
                # only the batch's last slice may end DeepSpeed's accumulation window (and step its optimizer)
                with _sync_gradients(self.accelerator, boundary and not pending), _frozen(done):
                    _maybe_inject_oom(end - start)
                    # the host's positions index the whole micro-batch; a slice (after an OOM) finds its own
                    self._loss_index = host.get("studio_loss_index") if end - start == rows else None
                    loss = super().training_step(model, part, num_items_in_batch)
            except torch.OutOfMemoryError:
                if not self.oom_adaptive or end - start <= 1 or (self.is_deepspeed_enabled and self._touched):
                    raise  # ZeRO's gradient buckets cannot be taken back half-way through a backward
                failed = True
            if failed:  # outside the except block: its traceback (and the activations it holds) is gone
                self._recover_from_oom(model)
                # Parameters whose gradient already received this slice's rows before the OOM keep it and sit
                # out the redo; the rest get it from the two halves, so no row counts twice or goes missing.
                done = done | frozenset(self._touched)
                mid = start + (end - start) // 2
                pending[:0] = [(start, mid, done), (mid, end, done)]
                old = self.splits
                self.splits = max(self.splits, -(-rows // (mid - start)))
                _free_cache()
                now, steps = -(-rows // self.splits), self.splits * self.args.gradient_accumulation_steps
                self.notify(Notice.of("oom_split", rows=end - start, step=self.state.global_step + 1, now=now,
                                      steps=steps, old=old))
                continue
            total = loss if total is None else total + loss
        self._touched = None
        self._loss_index = None
        assert total is not None
        # noted, not read: reading it here would make the host wait for the card every micro-batch
        step_loss = total.detach()
        self._step_loss = step_loss if self._step_loss is None else self._step_loss + step_loss
        if boundary:
            self._unchecked.append((self.state.global_step + 1, self._step_loss, None))
            self._step_loss = None
        return total

    # 5. logits only where the loss is (studio/engine/loss.py) ------------------------
    def compute_loss(self, model: torch.nn.Module, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        if not self.selective_logits or "labels" not in inputs or self.label_smoother is not None or \
                self.compute_loss_func is not None:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if not self._selective_checked:
            self._check_selective(model, inputs)
            if not self.selective_logits:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        n_items = num_items_in_batch if self.model_accepts_loss_kwargs else None
        # accelerate applies mixed precision by wrapping model.forward; the selective path calls the decoder and
        # the head directly, so it must enter the same autocast itself (else bf16/fp16 runs compute in fp32)
        with self.accelerator.autocast():
            loss = selective_causal_lm_loss(model, inputs, n_items, loss_index=self._loss_index)
        if loss is None:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if self.args.average_tokens_across_devices and self.model_accepts_loss_kwargs and n_items is not None:
            loss = loss * self.accelerator.num_processes  # as Trainer.compute_loss does for the model's loss
        return (loss, {"loss": loss}) if return_outputs else loss

    def _check_selective(self, model: torch.nn.Module, inputs: dict[str, Any]) -> None:
        """Once, on the first batch: the selective loss must equal the model's own; else use the normal path.

        Why: a model whose head does more than ``lm_head(hidden)`` (scaling, extra heads) would be
        trained on a different loss; one forward without gradients rules that out.
        """
        self._selective_checked = True
        mine = ref = None
        probe = check_inputs(inputs)
        if probe is None:  # no loss positions in this batch: check on the next one
            self._selective_checked = False
            return
        try:  # same seed for both forwards: dropout draws the same masks (eval mode would change the kernels)
            with torch.no_grad(), torch.random.fork_rng(), self.accelerator.autocast():
                torch.manual_seed(self.args.seed)
                mine = selective_causal_lm_loss(model, probe[0])
                torch.manual_seed(self.args.seed)
                ref = model_probe_loss(model, *probe) if mine is not None else None
        except (RuntimeError, TypeError, ValueError, AttributeError, IndexError):  # an architecture this does not fit
            mine = None
        half = next(model.parameters()).dtype in (torch.float16, torch.bfloat16) or self.args.bf16 or self.args.fp16
        tol = 2e-2 if half else 1e-4
        if mine is None or ref is None or not torch.isfinite(ref) or \
                abs(float(mine) - float(ref)) > tol * max(1.0, abs(float(ref))):
            self.selective_logits = False
            self.notify(Notice.of("selective_logits_off"))

    def notify(self, message: Notice) -> None:
        """Send a notice to the run (the engine's notify); anything but a Notice is refused (a TypeError: a plain
        sentence has no page words), with or without a run to send it to."""
        self._send_notice(checked(message))

    def _watch_grads(self, model: torch.nn.Module) -> None:
        """Note which parameters' .grad each slice has added to (AccumulateGrad runs once per parameter per
        backward, with that parameter's whole share), so an OOM part-way through backward can be undone exactly
        without copying every gradient before every slice."""
        for p in model.parameters():
            if p.requires_grad and id(p) not in self._hooked:
                self._hooked.add(id(p))
                # a weak reference to this trainer: a parameter's hook is held from C++ (its grad accumulator),
                # where the garbage collector cannot see a cycle, so a bound method here kept the trainer, the
                # model and its optimizer alive after train() returned (on a card: ~70% of the run's peak stayed
                # allocated, measured on an H200; tests/engine/test_engine_release.py)
                p.register_post_accumulate_grad_hook(partial(_notify_touched, weakref.ref(self)))


    def _recover_from_oom(self, model: torch.nn.Module) -> None:
        offloader = getattr(model, "studio_offloader", None)
        if offloader is not None:  # layer-wise offload: gradients and weights back home before the redo
            offloader.send_all_home()

    def _get_num_items_in_batch(self, batch_samples: list, device: Any) -> Any:
        """The label count from the host (batching.HostCounts), so no count is made on the card; Trainer's own
        where a batch lacks it or several processes must agree on it (a gather).

        A private override: the public get_batch_samples makes the count by calling this, on the card; overriding
        it instead would mean copying how Trainer draws the step's batches, to change only the count."""
        if batch_samples and all(ITEMS_KEY in b for b in batch_samples) and self._loss_shifts_labels and \
                self.args.world_size == 1 and self.args.n_gpu <= 1 and (
                    self.model_accepts_loss_kwargs or self.compute_loss_func is not None):
            return sum(int(b[ITEMS_KEY]) for b in batch_samples)
        return super()._get_num_items_in_batch(batch_samples, device)

    def prediction_step(self, model: torch.nn.Module, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> Any:
        pop_host_counts(inputs)   # evaluation batches carry them too; the model's forward must not
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)


def _slices(rows: int, splits: int) -> list[tuple[int, int]]:
    size = max(1, -(-rows // max(1, splits)))
    return [(s, min(s + size, rows)) for s in range(0, rows, size)]


@contextmanager
def _sync_gradients(accelerator: Any, sync: bool) -> Iterator[None]:
    """accelerate's DeepSpeed wrapper steps the engine after every backward that has sync_gradients set."""
    state = accelerator.gradient_state
    before = state.sync_gradients
    state._set_sync_gradients(sync)
    try:
        yield
    finally:
        state._set_sync_gradients(before)


@contextmanager
def _frozen(params: frozenset) -> Iterator[None]:
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


def _maybe_inject_oom(rows: int) -> None:
    limit = os.environ.get(INJECT_OOM_ENV)
    if limit and rows > int(limit):
        raise torch.OutOfMemoryError(f"injected out-of-memory: {rows} rows > {limit}")


def _free_cache() -> None:
    gc.collect()  # reference cycles left by the failed step (autograd graph, frames) before the cache is emptied
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
