"""Trainer callbacks: progress events into the run folder, graceful stop, checkpoint notices."""
from __future__ import annotations

import math
import resource
import signal
import time
from typing import Any

from transformers import TrainerCallback

from ..runs import RunDir


def memory_in_use_gb() -> float:
    """Accelerator peak when there is one, else this process's peak RSS (what would run out first)."""
    import torch
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class StopRequested:
    """Set by the STOP flag file or SIGTERM: the engine saves a checkpoint and exits cleanly."""

    def __init__(self, run: RunDir):
        self.run = run
        self.signalled = False
        try:
            signal.signal(signal.SIGTERM, self._on_signal)
        except ValueError:  # not the main thread (tests calling the engine from a thread)
            pass

    def _on_signal(self, *_: Any) -> None:
        self.signalled = True

    def __bool__(self) -> bool:
        return self.signalled or self.run.stop_flag.exists()


class EventCallback(TrainerCallback):
    """Writes progress/eval/checkpoint events; turns a stop request into save-and-stop."""

    def __init__(self, run: RunDir, stop: StopRequested, is_main: bool = True):
        self.run = run
        self.stop = stop
        self.is_main = is_main
        self.tokens_seen = 0
        self._t0 = time.time()
        self._tokens0 = 0
        self._step0 = 0
        self.stopped_early = False

    def emit(self, event: dict[str, Any]) -> None:
        if self.is_main:
            self.run.append_event(event)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._t0 = time.time()
        self._step0 = state.global_step
        self._tokens0 = self.tokens_seen
        self.emit({"type": "start", "total_steps": state.max_steps, "step": state.global_step,
                   "resumed": state.global_step > 0})

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if self.stop:
            self.stopped_early = True
            control.should_save = True
            control.should_training_stop = True

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
        logs = logs or {}
        step = state.global_step
        if "eval_loss" in logs:
            self.emit({"type": "eval", "step": step, "eval_loss": logs["eval_loss"]})
            return
        if "loss" not in logs:
            return
        elapsed = max(time.time() - self._t0, 1e-6)
        done = max(step - self._step0, 1)
        loss = float(logs["loss"])
        self.emit({
            "type": "progress", "step": step, "total_steps": state.max_steps,
            "epoch": round(float(state.epoch or 0), 4), "loss": loss if math.isfinite(loss) else None,
            "learning_rate": logs.get("learning_rate"), "grad_norm": logs.get("grad_norm"),
            "tokens_per_s": round((self.tokens_seen - self._tokens0) / elapsed, 1),
            "mem_gb": round(memory_in_use_gb(), 3),
            "eta_s": round(elapsed / done * max(state.max_steps - step, 0), 1),
        })

    def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.emit({"type": "checkpoint", "step": state.global_step,
                   "path": str(self.run.checkpoints / f"checkpoint-{state.global_step}")})
