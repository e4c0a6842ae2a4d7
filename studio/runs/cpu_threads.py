"""Threads for work on a loaded model on a CPU: one per core other processes leave free.

The rule (``run_time.free_threads``) is the one the run-time estimate assumes: torch's threads wait for each other
at every operation, so a thread that has lost its core to another process holds the others up (with one of two
cores busy elsewhere, two threads trained SmolLM2 1.9x slower than one; the generation check's base side on 64
Gemma rows took 76 s with 2 threads against 28 s with 1). A training run, ``studio eval`` and the page's checks
(which run inside the server, beside other requests) all go through ``FreeCores``.
"""
from __future__ import annotations

import logging
import os
import threading
import time

from .run_time import busy_mark, free_threads, others_since

log = logging.getLogger("studio.engine")

# torch's thread count is one setting of the whole process: the page's checks may overlap, so the count the process
# was given is read once, and it comes back only when the last user leaves (a second user's "given" would otherwise
# be the first one's reduced count, and the process would keep it)
_lock = threading.Lock()
_users = 0
_given: int | None = None


class FreeCores:
    """Others' work is measured from construction until ``apply`` (a model load is the natural window: no time
    spent waiting for it). Never more threads than the process was given; nothing changed when the user set
    OMP_NUM_THREADS or a card computes."""

    def __init__(self) -> None:
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        self.active = not (os.environ.get("OMP_NUM_THREADS") or torch.cuda.is_available())
        self.mark = busy_mark()
        self.applied = False

    def apply(self, others: float | None = None) -> None:
        """Set torch's threads for the work that follows; ``others``: others' work already measured (the page's
        sample, ``run_time.others_load``), else what ran beside this process since construction."""
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        global _users, _given
        if not self.active or self.applied:
            return
        if others is None:
            time.sleep(max(0.0, 0.2 - (time.time() - self.mark[0])))   # a window long enough to read
            others = others_since(self.mark) or 0.0
        with _lock:
            if _users == 0:
                _given = torch.get_num_threads()
            _users += 1
            self.applied = True
            use = min(_given, free_threads(others))
            if use != torch.get_num_threads():
                log.info("computing with %d of %d CPU threads: other processes keep %.1f cores busy", use, _given,
                         others)
                torch.set_num_threads(use)

    def restore(self) -> None:
        """The process gets its threads back once no other user is computing (the server, tests, benchmarks)."""
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        global _users, _given
        with _lock:
            if not self.applied:
                return
            self.applied = False
            _users -= 1
            if _users == 0 and _given is not None:
                if torch.get_num_threads() != _given:
                    torch.set_num_threads(_given)
                _given = None


__all__ = ["FreeCores"]
