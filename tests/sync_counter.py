"""Counts what makes a card wait for the host inside a training step, on any device (a CPU included).

A card runs ahead of Python until something needs a value back or a size that depends on values:
``.item()``, ``float(t)``, ``bool(t)`` (all reach ``aten._local_scalar_dense``), ``equal``/``allclose``; ops whose
output shape depends on the data (``nonzero`` and what calls it: ``where(mask)``, ``argwhere``, ``masked_select``,
boolean-mask indexing; ``unique`` in every form; ``bincount``; ``repeat_interleave`` with a tensor of repeats and no
``output_size``; ``histc`` that finds its range in the data); a copy from the card to the host; and a blocking copy
onto the card (``non_blocking=False``: torch waits for the stream after it). On a CPU none of these waits, but the
same calls go through the dispatcher, so a ``TorchDispatchMode`` sees them and a test on a CPU catches a step that
would stall a card. ``.tolist()``, ``.cpu()`` and ``.numpy()`` of a CPU tensor never dispatch (they read memory
directly), so ``counting_host_reads`` counts them by a wrapper. Not visible here: ``.to("cpu")`` of a CPU tensor
(it dispatches nothing, and on a CPU run it cannot be told from the engine's own ``.to(device)``).
tests/engine/test_sync_counter.py holds every op of this list to being counted, and a few quiet ones to not.
"""
from __future__ import annotations

import traceback
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# ops whose result the host must wait for on a card, whatever their arguments
SYNC_OPS = {"aten._local_scalar_dense.default", "aten.nonzero.default", "aten.masked_select.default",
            "aten.is_nonzero.default", "aten.equal.default", "aten.allclose.default", "aten._unique.default",
            "aten._unique2.default", "aten.unique_dim.default", "aten.unique_consecutive.default",
            "aten.unique_dim_consecutive.default", "aten.bincount.default"}
BOOL_INDEX_OPS = ("aten.index.Tensor", "aten.index_put_.default", "aten.index_put.default")
COPY_OPS = ("aten._to_copy.default", "aten.copy_.default")


def _device_of(x: Any) -> str | None:
    return torch.device(x).type if x is not None and not torch.is_tensor(x) else getattr(
        getattr(x, "device", None), "type", None)


def sync_reason(name: str, args: Any, kwargs: dict[str, Any]) -> str | None:
    """Why the op ``name`` with these arguments waits for the card, or None when it does not."""
    if name in SYNC_OPS:
        return name
    if name == "aten.repeat_interleave.Tensor":
        return None if kwargs.get("output_size") is not None else name + " without output_size"
    if name == "aten.histc.default":
        lo = args[2] if len(args) > 2 else kwargs.get("min", 0)
        hi = args[3] if len(args) > 3 else kwargs.get("max", 0)
        return name + " (range from the data)" if lo == hi else None
    if name in BOOL_INDEX_OPS:
        idx = args[1] if len(args) > 1 else ()
        if any(torch.is_tensor(i) and i.dtype == torch.bool for i in idx if i is not None):
            return name + "[bool mask]"
        return None
    if name in COPY_OPS:
        if name == "aten.copy_.default":
            dst, src = _device_of(args[0]), args[1]
            blocking = not (args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        else:
            src = args[0]
            dst = _device_of(kwargs.get("device")) or _device_of(src)
            blocking = not kwargs.get("non_blocking", False)
        origin = _device_of(src)
        if origin is not None and origin != "cpu" and dst == "cpu":
            return "device-to-host copy"
        if origin == "cpu" and dst not in (None, "cpu") and blocking:
            return "blocking host-to-device copy"
    return None


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
        why = sync_reason(str(func), args, kwargs)
        if why:
            self._hit(why)
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
def counting_host_reads(counter: SyncCounter) -> Iterator[None]:
    """``Tensor.tolist``, ``.cpu()`` and ``.numpy()`` never dispatch on a CPU tensor; count their calls by a wrapper
    (each a copy to the host, and so a wait, when the tensor is on a card)."""
    real = {name: getattr(torch.Tensor, name) for name in ("tolist", "cpu", "numpy")}

    def wrap(name: str) -> Any:
        def read(self: torch.Tensor, *a: Any, **kw: Any) -> Any:
            counter._hit(f"Tensor.{name}")
            with counter.pause():
                return real[name](self, *a, **kw)
        return read

    for name in real:
        setattr(torch.Tensor, name, wrap(name))
    try:
        yield
    finally:
        for name, fn in real.items():
            setattr(torch.Tensor, name, fn)
