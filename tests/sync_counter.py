"""Counts what makes a card wait for the host inside a training step, on any device (a CPU included).

A card runs ahead of Python until something needs a value back: ``.item()``, ``float(t)``, ``bool(t)``
(all of them reach ``aten._local_scalar_dense``), an op whose output shape depends on values
(``nonzero``, ``masked_select``, boolean-mask indexing, which call nonzero on a card), or a copy from the card
to the host. On a CPU none of these waits for anything, but the same calls go through the dispatcher,
so a ``TorchDispatchMode`` sees them and a test on a CPU catches a step that would stall a card.
``.tolist()`` does not dispatch on a CPU tensor (it reads memory directly), so it is counted by a wrapper.
"""
from __future__ import annotations

import traceback
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# ops whose result the host must wait for on a card
SYNC_OPS = {"aten._local_scalar_dense.default", "aten.nonzero.default", "aten.masked_select.default",
            "aten.is_nonzero.default", "aten.equal.default"}


class SyncCounter(TorchDispatchMode):
    """Per-window counts of host-waiting ops; ``pause()`` excludes host-side work (the collator)."""

    def __init__(self, keep_stacks: bool = False) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.paused = 0
        self.keep_stacks = keep_stacks
        self.stacks: list[str] = []
        self.last_stacks: list[str] = []

    def _hit(self, name: str) -> None:
        if self.paused:
            return
        self.counts[name] += 1
        if self.keep_stacks and len(self.stacks) < 40:
            self.stacks.append(name + "\n" + "".join(traceback.format_stack(limit=14)[:-2]))

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = str(func)
        if name in SYNC_OPS:
            self._hit(name)
        elif name in ("aten.index.Tensor", "aten.index_put_.default", "aten.index_put.default"):
            idx = args[1] if len(args) > 1 else ()
            if any(torch.is_tensor(i) and i.dtype == torch.bool for i in idx if i is not None):
                self._hit(name + "[bool mask]")
        elif name in ("aten._to_copy.default", "aten.copy_.default"):
            src = args[1] if name == "aten.copy_.default" else args[0]
            dst = (args[0].device if name == "aten.copy_.default"
                   else kwargs.get("device") or getattr(src, "device", None))
            if torch.is_tensor(src) and src.device.type != "cpu" and dst is not None and \
                    torch.device(dst).type == "cpu":
                self._hit("device-to-host copy")
        return func(*args, **kwargs)

    def take(self) -> Counter[str]:
        """The counts since the last take (and their stacks, kept in ``last_stacks``)."""
        out, self.counts = self.counts, Counter()
        self.last_stacks, self.stacks = self.stacks, []
        return out

    @contextmanager
    def pause(self) -> Iterator[None]:
        self.paused += 1
        try:
            yield
        finally:
            self.paused -= 1


@contextmanager
def counting_tolist(counter: SyncCounter) -> Iterator[None]:
    """``Tensor.tolist`` never dispatches on a CPU tensor; count its calls by a wrapper instead."""
    real = torch.Tensor.tolist

    def tolist(self: torch.Tensor) -> Any:
        counter._hit("Tensor.tolist")
        with counter.pause():
            return real(self)

    torch.Tensor.tolist = tolist  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.Tensor.tolist = real  # type: ignore[method-assign]
