"""What both arms of bench/gpu_8b.py trained, counted the same way: rows and real tokens per optimizer step, and
the seconds from the end of the warm-up steps to the end of the last step.

Why in the training step: a loader prefetches, so a count in the collator runs one batch ahead (11 collator calls
for 10 steps: +13.6% tokens on the old savvy arm). The collator (on the host, in a loader worker on a card) only
*labels* each batch with its rows' fingerprints and real-token count; the count is taken when ``training_step``
receives that batch, so only batches that were trained count, and nothing is read back from the card.
Why after warm-up: the first steps pay the allocator's growth and any kernel compilation (Triton's Liger kernels,
bitsandbytes' first calls); the clock starts after step ``warmup`` and stops after the last one, each time after a
card synchronise (the only ones the probe adds, outside the timed steps' work).
"""
from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from typing import Any, Iterator

from transformers import TrainerCallback

ROWS_KEY = "bench_rows"
TOKENS_KEY = "bench_tokens"


def fingerprint(ids: Any) -> str:
    """A row's identity: a short hash of its token ids (the same row gives the same print in every arm)."""
    return hashlib.blake2b(",".join(map(str, list(ids))).encode(), digest_size=8).hexdigest()


def _sync() -> None:
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


class StepProbe(TrainerCallback):
    """Attach to a Trainer before ``train()``; ``result()`` afterwards."""

    def __init__(self, warmup: int) -> None:
        self.warmup = warmup
        self.steps: list[tuple[list[str], int]] = []   # per optimizer step: (row prints, real tokens)
        self._pending: tuple[list[str], int] = ([], 0)
        self.t0: float | None = None
        self.t1: float | None = None

    def attach(self, trainer: Any) -> None:
        """Label the trainer's batches on the host and take the labels off in its training step."""
        collate, step = trainer.data_collator, trainer.training_step

        def labelled(features: list[dict[str, Any]]) -> Any:
            batch = collate(features)
            batch[ROWS_KEY] = [fingerprint(f["input_ids"]) for f in features]
            batch[TOKENS_KEY] = sum(len(f["input_ids"]) for f in features)   # real tokens: before padding
            return batch

        def counted(model: Any, inputs: dict[str, Any], num_items_in_batch: Any = None) -> Any:
            rows, tokens = inputs.pop(ROWS_KEY), inputs.pop(TOKENS_KEY)
            self._pending = (self._pending[0] + list(rows), self._pending[1] + int(tokens))
            return step(model, inputs, num_items_in_batch)

        trainer.data_collator = labelled
        trainer.training_step = counted
        trainer.add_callback(self)

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.steps.append(self._pending)
        self._pending = ([], 0)
        if state.global_step == self.warmup:
            _sync()
            self.t0 = time.perf_counter()
        if state.global_step == state.max_steps:
            _sync()
            self.t1 = time.perf_counter()

    def result(self) -> dict[str, Any]:
        """Timed steps' tokens and seconds, every step's rows and tokens (warm-up included, marked by ``warmup``)."""
        timed = self.steps[self.warmup:]
        seconds = (self.t1 - self.t0) if self.t0 is not None and self.t1 is not None else None
        return {"warmup": self.warmup, "timed_steps": len(timed), "tokens": sum(t for _, t in timed),
                "train_s": seconds, "rows": [r for r, _ in self.steps], "step_tokens": [t for _, t in self.steps]}


@contextmanager
def probing(trainer_class: Any, probe: StepProbe) -> Iterator[None]:
    """Every ``trainer_class`` made inside gets ``probe`` attached (the studio arm: the engine makes its trainer)."""
    real = trainer_class.__init__

    def init(self: Any, *a: Any, **kw: Any) -> None:
        real(self, *a, **kw)
        probe.attach(self)

    trainer_class.__init__ = init
    try:
        yield
    finally:
        trainer_class.__init__ = real
