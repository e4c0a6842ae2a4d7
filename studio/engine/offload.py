"""Layer-wise offload: decoder layers live in host RAM and visit the card only for their forward and backward.

At most ``max_resident`` decoder layers are on the card at any moment (plus embeddings, final norm, head and
buffers, which stay there). Each offloaded parameter has one home tensor in host RAM (pinned on CUDA, so copies
are asynchronous); visiting the card makes ``param.data`` a card copy, going home swaps the home tensor back and
adds the card gradient into the host gradient. Weights never change on the card, so nothing is copied back. The
optimizer therefore steps offloaded parameters, and keeps their states, in host RAM.

Why hand-written hooks and not FSDP2 ``fully_shard`` + ``CPUOffloadPolicy`` or DeepSpeed ``offload_param``:
CPUOffloadPolicy refuses to run without an accelerator, so it cannot be tested on the machines that build this
project, and ZeRO-3 already exists here as its own option (``deepspeed: z3-offload``). These hooks are proven on
the emulated card in tests/engine/test_offload.py (resident layers, exact gradients, forward and backward, with and
without gradient checkpointing, full and LoRA) and on a real card by tests/engine/test_gpu_offload.py.

Where the hooks fire, and why each is needed:
* the layer's forward pre-hook (normal forward);
* the layer's backward pre-hook: it fires when the gradient reaches the layer's output, before a gradient
  checkpoint recomputes the layer (transformers >= 5.2x checkpoints ``forward`` inside ``__call__``, so the
  recompute itself fires no hook of the layer), and without checkpointing the layer's saved weights are needed
  again in backward; it also queues one end-of-backward callback that sends every layer (and its gradient) home
  before the optimizer step and gradient clipping.
There were also forward pre-hooks on every submodule, meant for the recompute; they never changed a placement
(the backward pre-hook has loaded the layer by then, whether transformers checkpoints the layer's ``forward``
(5.24) or its ``__call__`` (5.17)), and removing them left every offload and OOM test green on both, so they are
gone.
On CUDA the next layer (forward: i+1, backward: i-1) is prefetched on a side stream, overlapping the copy with
the current layer's compute; that needs room for two layers, so ``max_resident`` is 2 there and 1 otherwise.
The streams and events are behind one small seam (``CudaTransfers``; any object with ``side``/``record``/``wait``/
``finish`` will do), so the prefetch path that a card runs is the one that CI runs: tests/emulated_card.py injects
transfers that keep a prefetched copy unusable until its event has been waited for.
"""
from __future__ import annotations

from contextlib import contextmanager
from functools import partial, wraps
from typing import Any, Iterator

import torch

from ..models.loading import decoder_layers


class CudaTransfers:
    """Prefetch copies on a CUDA side stream; the compute stream waits for a copy's event before using it."""

    def __init__(self, device: torch.device):
        self.device = device
        self.stream = torch.cuda.Stream(device)

    @contextmanager
    def side(self) -> Iterator[None]:
        """Copies issued inside run on the side stream, after everything already queued on the compute stream."""
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.stream):
            yield

    def record(self) -> Any:
        event = torch.cuda.Event()
        event.record(self.stream)
        return event

    def wait(self, event: Any, tensors: list[torch.Tensor]) -> None:
        """The compute stream waits for the copy; the copies' memory now belongs to the compute stream too."""
        current = torch.cuda.current_stream(self.device)
        current.wait_event(event)
        for t in tensors:
            t.record_stream(current)

    def finish(self, event: Any) -> None:
        event.synchronize()

    # --- gradients going home ---
    def host_buffer(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """Pinned host memory: a card-to-host copy into it is one asynchronous DMA, not a staged pageable copy."""
        return torch.empty(numel, dtype=dtype, pin_memory=True)

    def copy_home(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        dst.copy_(src, non_blocking=True)

    def home_done(self) -> None:
        """One wait for all of a layer's gradient copies (they were queued on the compute stream)."""
        torch.cuda.current_stream(self.device).synchronize()


class HostCopies:
    """The gradient-home seam without a card stream (CPU runs, a card with prefetch turned off elsewhere):
    plain host buffers, synchronous copies, nothing to wait for."""

    def __init__(self, home: torch.device):
        self.home = home

    def host_buffer(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.empty(numel, dtype=dtype, device=self.home)

    def copy_home(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        dst.copy_(src)

    def home_done(self) -> None:
        pass


class LayerwiseOffloader:
    """Keeps decoder layers in host RAM; installs the hooks that bring each to ``device`` when it computes.

    ``transfers`` turns on prefetching (default: ``CudaTransfers`` on a CUDA device, none elsewhere).
    """

    def __init__(self, model: Any, device: torch.device | str, offload_device: str = "cpu",
                 max_resident: int | None = None, transfers: Any = None):
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None and torch.cuda.is_available():
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.home = torch.device(offload_device)
        self.layers = decoder_layers(model)
        self._cuda = self.device.type == "cuda" and torch.cuda.is_available()
        if transfers is None and self._cuda:
            transfers = CudaTransfers(self.device)
        self._transfers = transfers
        self.prefetch = transfers is not None
        # gradients go home through the same seam as the prefetch (pinned buffers and one wait per layer on a
        # card); a transfers object without the gradient methods, or none, copies synchronously
        self._home_io = transfers if hasattr(transfers, "host_buffer") else HostCopies(self.home)
        self._grad_home: dict[tuple[int, torch.dtype], torch.Tensor] = {}  # a layer's host gradients, reused
        self._staging: dict[torch.dtype, torch.Tensor] = {}  # one layer's worth, for accumulation steps
        self.max_resident = max(max_resident or (2 if self.prefetch else 1), 2 if self.prefetch else 1)
        self.moves_in = 0
        self.moves_out = 0
        self._resident: list[int] = []  # least recently used first
        self._on_card: dict[int, tuple[int, torch.nn.Parameter]] = {}  # card storage -> (layer, parameter)
        self._host: dict[torch.nn.Parameter, torch.Tensor] = {}
        self._host_grad: dict[torch.nn.Parameter, torch.Tensor] = {}
        self._ready: dict[int, Any] = {}  # layer -> event of its prefetch copy
        self._graph_task = -2
        self._handles: list[Any] = []
        self._model = model
        in_layers = {id(p) for layer in self.layers for p in layer.parameters()}
        for p in model.parameters():  # everything outside the layers stays on the card
            if id(p) not in in_layers:
                p.data = p.data.to(self.device)
        for module in model.modules():  # buffers (rotary tables, ...) are small: all on the card
            for name, buf in list(module._buffers.items()):
                if buf is not None:
                    module._buffers[name] = buf.to(self.device)
        for i, layer in enumerate(self.layers):
            for p in layer.parameters():
                host = p.data.to(self.home)
                if self._cuda and self.home.type == "cpu":
                    host = host.pin_memory()
                p.data = self._host[p] = host
            layer.forward = _keep_weights_out_of_saved(layer.forward, self)
            self._handles.append(layer.register_forward_pre_hook(partial(self._on_forward, i)))
            self._handles.append(layer.register_full_backward_pre_hook(partial(self._on_backward, i)))
        self._handles.append(model.register_forward_hook(self._after_model_forward))
        # Trainer and accelerate decide whether to move the whole model from hf_device_map (not from
        # is_parallelizable); a map with the layers on the CPU makes both leave placement to us.
        model.hf_device_map = self.device_map(model)
        model.studio_offloader = self  # StudioTrainer sends layers home after an out-of-memory error

    def device_map(self, model: Any) -> dict[str, str]:
        layer_names = {id(m): n for n, m in model.named_modules() if any(m is layer for layer in self.layers)}
        card = str(self.device)
        out: dict[str, str] = {}
        for name, module in model.named_modules():
            if id(module) in layer_names:
                out[name] = "cpu" if self.home.type == "cpu" else str(self.home)
            elif any(True for _ in module.parameters(recurse=False)) and not _inside(name, layer_names.values()):
                out[name] = card
        return out

    # --- hooks ---------------------------------------------------------------------
    def _on_forward(self, i: int, module: Any, args: Any) -> None:
        self._ensure(i, +1)

    def _on_backward(self, i: int, module: Any, grad_output: Any) -> None:
        task = torch._C._current_graph_task_id()
        if task != self._graph_task:  # first layer of this backward: send all home when it ends
            self._graph_task = task
            torch.autograd.Variable._execution_engine.queue_callback(self.send_all_home)
        self._ensure(i, -1)

    def _after_model_forward(self, module: Any, args: Any, output: Any) -> None:
        if not (torch.is_grad_enabled() and module.training):  # evaluation / generation: no backward follows
            self.send_all_home()

    # --- moves -------------------------------------------------------------------
    def _ensure(self, i: int, direction: int) -> None:
        if i in self._resident:
            self._resident.remove(i)
            self._resident.append(i)
            event = self._ready.pop(i, None)
            if event is not None:
                self._transfers.wait(event, [p.data for p in self.layers[i].parameters()])
        else:
            self._load(i, keep=i)
        j = i + direction
        if self.prefetch and 0 <= j < len(self.layers) and j not in self._resident:
            self._load(j, keep=i, side_stream=True)

    def _load(self, i: int, keep: int, side_stream: bool = False) -> None:
        while len(self._resident) >= self.max_resident:
            victim = next(k for k in self._resident if k != keep)
            self._send_home(victim)
        params = list(self.layers[i].parameters())
        self._resident.append(i)  # first, so an OOM half-way through the copies still sends it all home
        self.moves_in += 1
        for p in params:  # the host gradient waits at home; the card accumulates a fresh one
            if p.grad is not None:
                self._host_grad[p] = p.grad
                p.grad = None
        if side_stream:
            with self._transfers.side():
                for p in params:
                    p.data = self._host[p].to(self.device, non_blocking=True)
                    self._on_card[_storage_key(p.data)] = (i, p)
                self._ready[i] = self._transfers.record()
        else:
            for p in params:
                p.data = self._host[p].to(self.device, non_blocking=self._cuda)
                self._on_card[_storage_key(p.data)] = (i, p)

    def _send_home(self, i: int) -> None:
        event = self._ready.pop(i, None)
        if event is not None:  # a prefetch nobody used: let the copy finish before its memory is reused
            self._transfers.finish(event)
        params = list(self.layers[i].parameters())
        on_card: list[tuple[torch.nn.Parameter, torch.Tensor, torch.Tensor | None]] = []
        for p in params:
            self._on_card.pop(_storage_key(p.data), None)
            grad = p.grad
            p.grad = None
            p.data = self._host[p]
            held = self._host_grad.pop(p, None)
            if grad is None:
                p.grad = held
            elif grad.device == self.home and self.device == self.home:  # no card: nothing to move
                p.grad = grad if held is None else held.add_(grad)
            else:
                on_card.append((p, grad, held))
        if on_card:
            self._grads_home(i, on_card, layer_has_host_grads=any(p.grad is not None for p in params))
        self._resident.remove(i)
        self.moves_out += 1

    def _grads_home(self, i: int, items: list[tuple[Any, torch.Tensor, torch.Tensor | None]],
                    layer_has_host_grads: bool) -> None:
        """A layer's card gradients -> host RAM: asynchronous copies into slices of one reused (pinned) buffer per
        dtype, then one wait for the whole layer, instead of a synchronous pageable copy per parameter. (No
        ``torch.cat`` on the card first: that would need a second copy of the layer's gradients on the card at
        the moment memory is tightest.)

        The first backward after the optimizer cleared the gradients copies straight into the layer's own host
        buffer, whose views become ``p.grad``; a later micro-batch (gradient accumulation) copies into a shared
        staging buffer and adds it to the gradient already at home.
        """
        fresh = not layer_has_host_grads and all(held is None for _, _, held in items)
        by_dtype: dict[torch.dtype, list[tuple[Any, torch.Tensor, torch.Tensor | None]]] = {}
        for item in items:
            by_dtype.setdefault(item[1].dtype, []).append(item)
        landed = []
        for dtype, group in by_dtype.items():
            n = sum(g.numel() for _, g, _ in group)
            pool, key = (self._grad_home, (i, dtype)) if fresh else (self._staging, dtype)
            dst = pool.get(key)  # type: ignore[call-overload]
            if dst is None or dst.numel() < n:
                dst = pool[key] = self._home_io.host_buffer(n, dtype)  # type: ignore[index]
            offset = 0
            for _, g, _ in group:
                self._home_io.copy_home(dst[offset:offset + g.numel()].view(g.shape), g)
                offset += g.numel()
            landed.append((group, dst))
        self._home_io.home_done()
        for group, dst in landed:
            offset = 0
            for p, g, held in group:
                view = dst[offset:offset + g.numel()].view(g.shape)
                offset += g.numel()
                p.grad = view if fresh else (held.add_(view) if held is not None else view.clone())

    def send_all_home(self) -> None:
        """Every layer (and its gradient) back to host RAM: before the optimizer step, or after an error."""
        for i in list(self._resident):
            self._send_home(i)

    # --- without checkpointing, autograd saves weights for backward ------------------------
    def pack(self, t: torch.Tensor) -> Any:
        """A saved card weight (or a view of it) is remembered by parameter, so going home really frees it."""
        key = _storage_key(t)
        found = self._on_card.get(key)
        if found is None or found[1].data.device != t.device or _storage_key(found[1].data) != key:
            return t
        i, p = found
        return _SavedWeight(i, p, t.size(), t.stride(), t.storage_offset() - p.data.storage_offset(),
                            t.requires_grad)

    def unpack(self, packed: Any) -> torch.Tensor:
        if not isinstance(packed, _SavedWeight):
            return packed
        self._ensure(packed.layer, -1)
        data = packed.param.data
        return data.as_strided(packed.size, packed.stride, data.storage_offset() + packed.offset)

    def remove(self) -> None:
        self.send_all_home()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._grad_home.clear()
        self._staging.clear()
        for layer in self.layers:
            layer.__dict__.pop("forward", None)
        for attr in ("hf_device_map", "studio_offloader"):
            self._model.__dict__.pop(attr, None)


class _SavedWeight:
    __slots__ = ("layer", "param", "size", "stride", "offset", "requires_grad")

    def __init__(self, layer: int, param: torch.nn.Parameter, size: Any, stride: Any, offset: int,
                 requires_grad: bool):
        self.layer, self.param, self.size, self.stride = layer, param, size, stride
        self.offset, self.requires_grad = offset, requires_grad


def _keep_weights_out_of_saved(forward: Any, offloader: LayerwiseOffloader) -> Any:
    """Run a layer's forward with saved-tensor hooks that store card weights by reference.

    Without them autograd would keep every layer's card copy alive until backward (the whole model on the card
    again). Under gradient checkpointing the checkpoint's own hooks are innermost and nothing is saved anyway.
    """
    @wraps(forward)
    def run(*args: Any, **kwargs: Any) -> Any:
        with torch.autograd.graph.saved_tensors_hooks(offloader.pack, offloader.unpack):
            return forward(*args, **kwargs)
    return run


def _storage_key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _inside(name: str, prefixes: Any) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)

