"""A training step never waits for the host: no ``.item()``, ``.tolist()``, ``nonzero()``, boolean-mask
indexing or device-to-host copy inside an optimizer step, except on the steps that log, save or evaluate.

A card runs ahead of Python; every such call stalls it until the queued kernels finish (issue: the studio was
host-bound on an H200, 0.24-0.33 s a step). On a CPU nothing stalls, but the same calls go through torch's
dispatcher, so tests/sync_counter.py counts them during a real engine run of a tiny model, step by step.
This holds the studio's own step (a CPU run, so without Liger): on a card Liger's fused linear cross-entropy adds one
``.item()`` per forward (liger-kernel 0.8.x), which docs/GPU.md names.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from torch.utils.data.dataloader import _BaseDataLoaderIter
from transformers import TrainerCallback

from studio.config.run_config import RunConfig
from studio.engine import run_training
from studio.engine.studio_trainer import StudioTrainer
from tests.sync_counter import SyncCounter, counting_host_reads


class StepWindows(TrainerCallback):
    """Counts from one step's begin to the next one's: the step itself plus whatever follows it (log, save)."""

    def __init__(self, counter: SyncCounter) -> None:
        self.counter = counter
        self.windows: list[tuple[int, bool, Counter]] = []   # (step, may read: logs/saves/evaluates, counts)
        self.stacks: dict[int, list[str]] = {}
        self._open: tuple[int, bool] | None = None

    def _close(self) -> None:
        counts = self.counter.take()
        if self._open is not None:
            self.windows.append((*self._open, counts))
            self.stacks[self._open[0]] = self.counter.last_stacks
        self._open = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.counter.take()   # model load and set-up are not a step

    def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._close()

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        # runs after Trainer's flow callback has decided what this step does next
        reads = control.should_log or control.should_save or control.should_evaluate or \
            control.should_training_stop
        self._open = (state.global_step, bool(reads))

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._close()


CASES = {
    "full-selective": dict(finetuning_type="full"),
    "lora-accumulate": dict(finetuning_type="lora", lora_rank=4, gradient_accumulation_steps=2),
    "checkpointed-dynamic": dict(finetuning_type="full", gradient_checkpointing=True, dynamic_batching=True),
    "full-logits": dict(finetuning_type="full", selective_logits=False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_host_sync_outside_logging_steps(case, tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    counter = SyncCounter(keep_stacks=True)
    probe = StepWindows(counter)
    real_init = StudioTrainer.__init__

    def init(self: StudioTrainer, *a: Any, **kw: Any) -> None:
        real_init(self, *a, **kw)
        self.add_callback(probe)

    real_next = _BaseDataLoaderIter.__next__

    def host_side(self: _BaseDataLoaderIter) -> Any:   # sampler and collator: the host, before the batch moves
        with counter.pause():
            return real_next(self)

    real_start = _BaseDataLoaderIter.__init__

    def host_start(self: _BaseDataLoaderIter, *a: Any, **kw: Any) -> None:   # the epoch's seed: host generator
        with counter.pause():
            real_start(self, *a, **kw)

    monkeypatch.setattr(StudioTrainer, "__init__", init)
    monkeypatch.setattr(_BaseDataLoaderIter, "__next__", host_side)
    monkeypatch.setattr(_BaseDataLoaderIter, "__init__", host_start)
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), cutoff_len=48, per_device_train_batch_size=4,
                    learning_rate=1e-3, max_steps=10, logging_steps=4, save_steps=1000, val_size=0.0,
                    plot_loss=False, **{"gradient_checkpointing": False, **CASES[case]})
    with counter, counting_host_reads(counter):
        run_training(cfg)
    steps = {step: (reads, counts) for step, reads, counts in probe.windows}
    assert sorted(steps) == list(range(1, 11)), sorted(steps)
    quiet = {step: dict(counts) for step, (reads, counts) in steps.items() if not reads and counts}
    assert not quiet, f"host syncs inside steps that neither log nor save: {quiet}\n" + \
        "\n".join(probe.stacks[min(quiet)][:4])
    # the counter sees the reads that logging needs, so a quiet step is quiet for a reason
    assert sum(sum(counts.values()) for reads, counts in steps.values() if reads) > 0
    assert [s for s, (reads, _) in steps.items() if not reads], "no step without logging: nothing was tested"


@pytest.mark.parametrize("dynamic", [True, False])
def test_a_card_run_copies_batches_without_waiting(dynamic, tmp_path, tiny_model_dir) -> None:
    """accelerate copies each batch onto the card with ``non_blocking=False`` unless told otherwise: the host then
    waits for the copy (and so for every queued kernel) once per micro-batch. A card run asks for pinned batches
    and non-blocking copies, on Trainer's loader and on the studio's token-budget one alike."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from studio.engine.arguments import training_arguments
    from studio.engine.batching import pad_collator
    from studio.models.precision import device_caps, precision_plan
    from studio.runs.run_dir import RunDir
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset="d")
    args = training_arguments(cfg, RunDir(tmp_path), "cuda", False, plan=precision_plan(device_caps("cpu"), cfg))
    assert args.dataloader_pin_memory
    args.dataloader_num_workers = 0   # this CPU: no worker processes needed to look at the loader
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    feats = [{"input_ids": [5, 6, 7], "labels": [5, 6, 7]}] * 4
    trainer = StudioTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_model_dir), args=args,
                            train_dataset=feats, data_collator=pad_collator(tok), dynamic_batching=dynamic)
    loader = trainer.get_train_dataloader()
    assert getattr(loader, "_non_blocking", None) is True
    cpu = training_arguments(cfg, RunDir(tmp_path), "cpu", False)
    assert not cpu.dataloader_pin_memory
