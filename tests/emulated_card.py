"""An emulated accelerator card, so CPU-only tests can see what is "on the card".

On a CPU machine ``tensor.to("cuda")`` is impossible and ``tensor.to("cpu")`` is a no-op, so a test of
layer-wise offload that only checks the loss proves nothing. Inside ``EmulatedCard()``:

* ``Tensor.to(<card>)`` (``cuda:0`` by default) returns a *separate copy* that the card registers as resident
  (its bytes count until the copy is freed); ``.to("cpu")`` of a resident tensor returns a host copy. All tensors
  are still CPU tensors, so the maths runs, but the card knows which storages it holds.
* ``watch(model, layers)`` installs checks on every module that owns parameters: its forward (including the
  recompute that gradient checkpointing runs during backward) and its backward refuse to run unless all of its
  parameters are resident, exactly as a real card would fail on weights left in host RAM. Each check also records
  how many decoder layers were resident at that moment.
* ``resident_bytes`` / ``peak_bytes`` count the parameter copies placed on the card (activations are ordinary
  tensors and are not counted unless ``watch(..., activations=True)``: then each decoder layer's output counts
  for as long as autograd keeps it alive, so the card's memory grows with the rows of a batch).
* ``EmulatedCard(capacity=N)``: a copy that would take the resident bytes above N raises
  ``torch.OutOfMemoryError`` in the middle of the move, as the CUDA allocator would (activations count towards N
  but are never refused themselves, so the error lands where the code under test moves weights).
* ``transfers()``: the prefetch seam of studio/engine/offload.py (side stream, event, wait, finish) on the
  emulated card. A copy made on the side stream is *in flight* until its event has been waited for (or finished):
  computing with it, like reading a CUDA tensor whose copy is still queued on another stream, is refused.

The patch is confined to the ``with`` block; nothing leaks into other tests.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch.multiprocessing.reductions import StorageWeakRef


class OffCardCompute(RuntimeError):
    """A module computed with weights that were not on the (emulated) card."""


class EmulatedCard:
    def __init__(self, device: str = "cuda:0", capacity: int | None = None):
        self.device = torch.device(device)
        self.capacity = capacity
        self.ooms = 0
        self._live: dict[int, tuple[StorageWeakRef, int]] = {}
        self._in_flight: set[int] = set()  # storages copied on the side stream, not yet waited for
        self._side = False
        self._side_copies: list[int] = []
        self.prefetched = 0
        self.peak_bytes = 0
        self.max_layers_resident = 0
        self.checks = 0
        self._layers: list[torch.nn.Module] = []
        self._handles: list[Any] = []
        self._orig_to: Any = None

    # --- the card's memory -------------------------------------------------------
    def _key(self, t: torch.Tensor) -> int:
        return t.untyped_storage().data_ptr()

    def is_resident(self, t: torch.Tensor) -> bool:
        if t.numel() == 0:
            return False
        entry = self._live.get(self._key(t))
        return entry is not None and not entry[0].expired()

    @property
    def resident_bytes(self) -> int:
        for key in [k for k, (ref, _) in self._live.items() if ref.expired()]:
            del self._live[key]
        return sum(n for _, n in self._live.values())

    def _register(self, t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if self.capacity is not None and self.resident_bytes + storage.nbytes() > self.capacity:
            self.ooms += 1
            raise torch.OutOfMemoryError(f"CUDA out of memory (emulated card): {storage.nbytes()} bytes requested, "
                                         f"{self.resident_bytes} of {self.capacity} in use")
        if self._side:
            self._in_flight.add(storage.data_ptr())
            self._side_copies.append(storage.data_ptr())
        else:  # a fresh allocation may reuse the address of a copy that never finished (an OOM part-way)
            self._in_flight.discard(storage.data_ptr())
        self._live[storage.data_ptr()] = (StorageWeakRef(storage), storage.nbytes())
        self.peak_bytes = max(self.peak_bytes, self.resident_bytes)
        self._count_layers()
        return t

    def reset_peak(self) -> None:
        self.peak_bytes = self.resident_bytes
        self.max_layers_resident = self.layers_resident()

    def hold(self, t: Any) -> None:
        """Count a tensor computed on the card (an activation) for as long as it lives."""
        t = t[0] if isinstance(t, (tuple, list)) and t else t
        if torch.is_tensor(t) and t.numel() and not self.is_resident(t):
            storage = t.untyped_storage()
            self._live[storage.data_ptr()] = (StorageWeakRef(storage), storage.nbytes())
            self.peak_bytes = max(self.peak_bytes, self.resident_bytes)

    def transfers(self) -> "EmulatedTransfers":
        return EmulatedTransfers(self)

    def layers_resident(self) -> int:
        return sum(any(self.is_resident(p) for p in layer.parameters()) for layer in self._layers)

    def _count_layers(self) -> None:
        self.max_layers_resident = max(self.max_layers_resident, self.layers_resident())

    # --- Tensor.to on the emulated card ----------------------------------------
    def __enter__(self) -> "EmulatedCard":
        card = self
        orig = self._orig_to = torch.Tensor.to

        def to(t: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
            device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
            if device is not None and device.type == card.device.type:
                src = orig(t, dtype=dtype) if dtype is not None else t
                if card.is_resident(src):
                    return src
                return card._register(src.clone())
            if device is not None and device.type == "cpu" and card.is_resident(t):
                out = t.clone()
                return orig(out, dtype=dtype) if dtype is not None else out
            return orig(t, *args, **kwargs)

        torch.Tensor.to = to  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        torch.Tensor.to = self._orig_to  # type: ignore[method-assign]
        for h in self._handles:
            h.remove()
        self._handles.clear()

    # --- compute checks ------------------------------------------------------------
    def watch(self, model: torch.nn.Module, layers: list[torch.nn.Module], activations: bool = False) -> None:
        """Refuse forward/backward of any module whose own parameters are not resident (or still in flight)."""
        self._layers = list(layers)
        if activations:
            for layer in self._layers:
                self._handles.append(layer.register_forward_hook(lambda mod, args, out: self.hold(out)))
        for name, module in model.named_modules():
            if not any(True for _ in module.parameters(recurse=False)):
                continue

            def check(mod: torch.nn.Module, *_: Any, _name: str = name, _when: str = "forward") -> None:
                self.checks += 1
                self._count_layers()
                away = [n for n, p in mod.named_parameters(recurse=False) if not self.is_resident(p)]
                if away:
                    raise OffCardCompute(f"{_name} ran its {_when} with {', '.join(away)} in host RAM, not on the card")
                early = [n for n, p in mod.named_parameters(recurse=False) if self._key(p) in self._in_flight]
                if early:
                    raise OffCardCompute(f"{_name} ran its {_when} with {', '.join(early)} still being copied on the "
                                         "side stream (its event was not waited for)")

            self._handles.append(module.register_forward_pre_hook(check))
            self._handles.append(module.register_full_backward_pre_hook(
                lambda mod, grad_out, _name=name: check(mod, _name=_name, _when="backward")))



class _Event:
    def __init__(self, storages: list[int]):
        self.storages = storages


class EmulatedTransfers:
    """studio.engine.offload's transfer seam on the emulated card (see the module docstring)."""

    def __init__(self, card: EmulatedCard):
        self.card = card
        self.waits = 0
        self.pinned: set[int] = set()  # storages handed out as pinned host buffers
        self.pinned_bytes = 0
        self.copies_home = 0
        self.unpinned_copies = 0  # card -> host copies into memory that a real card could not DMA into async
        self.home_waits = 0

    @contextmanager
    def side(self) -> Iterator[None]:
        self.card._side, self.card._side_copies = True, []
        try:
            yield
        finally:
            self.card._side = False

    def record(self) -> _Event:
        self.card.prefetched += 1
        return _Event(list(self.card._side_copies))

    def wait(self, event: _Event, tensors: list[torch.Tensor]) -> None:
        self.waits += 1
        self.card._in_flight.difference_update(event.storages)

    def finish(self, event: _Event) -> None:
        self.card._in_flight.difference_update(event.storages)

    # --- gradients going home: pinned buffers, asynchronous copies, one wait ---
    def host_buffer(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        t = torch.empty(numel, dtype=dtype)
        self.pinned.add(t.untyped_storage().data_ptr())
        self.pinned_bytes += t.untyped_storage().nbytes()
        return t

    def copy_home(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        self.copies_home += 1
        if dst.untyped_storage().data_ptr() not in self.pinned:
            self.unpinned_copies += 1
        dst.copy_(src)

    def home_done(self) -> None:
        self.home_waits += 1
