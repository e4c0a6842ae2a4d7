"""Trainer callbacks: progress events into the run folder, graceful stop, checkpoint notices, divergence guard."""
from __future__ import annotations

import math
import resource
import signal
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from ..errors import StudioError
from ..runs.run_dir import RunDir
from .lr_search import outer_stop_asked

# A gradient norm this large (unclipped) means the update will wreck the weights: fine-tuning norms are O(1-100).
GRAD_NORM_LIMIT = 1e4
# ... or this many times the median of the norms seen so far (after GRAD_NORM_WARMUP steps): a sudden explosion.
GRAD_NORM_SPIKE = 100.0
GRAD_NORM_WARMUP = 5
# With clipping on, one spike is clipped harmlessly (loss spikes happen); only a run of them means divergence.
CLIPPED_SPIKES_TO_STOP = 3
# fp16's grad scaler skips steps with inf gradients and lowers its scale: only a long run of them is divergence.
FP16_NONFINITE_TO_STOP = 8


def memory_in_use_gb() -> float:
    """Accelerator peak when there is one, else this process's peak RSS (what would run out first)."""
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class StopRequested:
    """Set by the STOP flag file or SIGTERM: the engine saves a checkpoint and exits cleanly. A learning-rate search's
    trial also stops on its run's flag."""

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
        return self.signalled or self.run.stop_flag.exists() or outer_stop_asked(self.run.path)


class EventCallback(TrainerCallback):
    """Writes progress/eval/checkpoint events; turns a stop request into save-and-stop."""

    def __init__(self, run: RunDir, stop: StopRequested, is_main: bool = True, metrics: tuple[str, ...] = ()):
        self.run = run
        self.stop = stop
        self.is_main = is_main
        self.metrics = metrics   # the stage's trainer's own numbers a progress event keeps (studio/stages.py)
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
            **{k: logs[k] for k in self.metrics if isinstance(logs.get(k), (int, float))},
        })

    def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.emit({"type": "checkpoint", "step": state.global_step,
                   "path": str(self.run.checkpoints / f"checkpoint-{state.global_step}")})


def _checkpoint_advice(checkpoints_dir: str | Path | None) -> dict[str, Any]:
    """The newest complete checkpoint that really exists, or that none does: a coded phrase of the error's fix."""
    last = RunDir(Path(checkpoints_dir).parent).last_checkpoint() if checkpoints_dir else None
    if last is None:
        return {"code": "engine.diverged_none"}
    return {"code": "engine.diverged_kept", "name": last.name, "path": str(last)}


class DivergenceError(StudioError):
    """Training blew up; the message says why (``cause``: a coded phrase, ``engine.diverged_<what>``), how to fix it
    and which checkpoint (if any) is safe."""

    def __init__(self, step: int, cause: str, checkpoints_dir: str | Path | None = None, **values: Any):
        self._worded_by("engine.diverged", {"step": step, "cause": {"code": f"engine.diverged_{cause}", **values},
                                            "kept": _checkpoint_advice(checkpoints_dir)})
        self.step = step


class GradNormGuard(TrainerCallback):
    """Stops before the optimizer applies a non-finite or exploding gradient (the loss can stay finite meanwhile).

    StudioTrainer calls ``check`` with the norm Trainer has just computed, before ``optimizer.step()``, so the
    weights and the last checkpoint stay good. Under DeepSpeed the engine has already stepped by then; the
    check still stops the run at the first bad step.
    """

    def __init__(self, clipping: bool, fp16: bool = False):
        self.clipping = clipping
        self.fp16 = fp16
        self.history: list[float] = []
        self._spikes = 0
        self._nonfinite = 0

    def check(self, step: int, norm: Any, checkpoints_dir: str | Path | None) -> None:
        """Raises: DivergenceError when the norm is non-finite or has exploded (see the module constants)."""
        if norm is None:
            return
        value = float(norm.item() if hasattr(norm, "item") else norm)
        if not math.isfinite(value):
            self._nonfinite += 1
            if not self.fp16 or self._nonfinite >= FP16_NONFINITE_TO_STOP:
                raise DivergenceError(step, "norm", checkpoints_dir, value=value)
            return
        self._nonfinite = 0
        median = statistics.median(self.history) if len(self.history) >= GRAD_NORM_WARMUP else None
        exploded = value > GRAD_NORM_LIMIT or (median is not None and median > 0 and value > GRAD_NORM_SPIKE * median)
        if exploded:
            self._spikes += 1
            if not self.clipping or self._spikes >= CLIPPED_SPIKES_TO_STOP:
                if median:
                    raise DivergenceError(step, "spike_median", checkpoints_dir, value=value, x=value / median,
                                          median=median)
                raise DivergenceError(step, "spike", checkpoints_dir, value=value)
            return   # a clipped spike: not added to the history, so it cannot raise the median
        self._spikes = 0
        self.history.append(value)
