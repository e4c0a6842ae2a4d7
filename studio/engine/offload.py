"""Layer-wise offload: decoder layers live in host RAM and visit the accelerator one at a time.

Only one layer's weights are on the card at any moment (plus embeddings, final norm and
head). It relies on gradient checkpointing: the forward pass saves only each layer's input,
and the backward pass re-runs the layer's forward, which brings the layer back to the card
through the same pre-forward hook. After the layer's backward its weights and gradients go
back to host memory, where the optimizer steps them.
"""
from __future__ import annotations

from typing import Any

import torch

from ..models import decoder_layers


class LayerwiseOffloader:
    """Installs hooks that move each decoder layer to ``device`` for its forward/backward."""

    def __init__(self, model: Any, device: torch.device | str, offload_device: str = "cpu"):
        self.device = torch.device(device)
        self.home = torch.device(offload_device)
        self.layers = decoder_layers(model)
        self.moves_in = 0
        self.moves_out = 0
        self._handles: list[Any] = []
        layer_ids = {id(p) for layer in self.layers for p in layer.parameters()}
        for p in model.parameters():  # everything outside the layers stays on the card
            if id(p) not in layer_ids:
                p.data = p.data.to(self.device)
        for buf_owner in model.modules():
            for name, buf in list(buf_owner.named_buffers(recurse=False)):
                if buf is not None and not any(buf_owner is layer or _is_child(layer, buf_owner)
                                               for layer in self.layers):
                    setattr(buf_owner, name, buf.to(self.device))
        for layer in self.layers:
            layer.to(self.home)
            self._handles.append(layer.register_forward_pre_hook(self._bring_in))
            self._handles.append(layer.register_forward_hook(self._after_forward))
            self._handles.append(layer.register_full_backward_hook(self._after_backward))

    def _bring_in(self, module: torch.nn.Module, args: Any) -> None:
        module.to(self.device)
        self.moves_in += 1

    def _after_forward(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        # With checkpointing nothing from this forward keeps references to the weights, so they
        # can leave the card now; the backward pass re-runs forward and brings them back.
        if not _inside_recompute():
            self._send_home(module)

    def _after_backward(self, module: torch.nn.Module, grad_input: Any, grad_output: Any) -> None:
        self._send_home(module)

    def _send_home(self, module: torch.nn.Module) -> None:
        for p in module.parameters():
            p.data = p.data.to(self.home)
            if p.grad is not None:
                p.grad = p.grad.to(self.home)
        self.moves_out += 1

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


def _is_child(parent: torch.nn.Module, module: torch.nn.Module) -> bool:
    return any(m is module for m in parent.modules())


def _inside_recompute() -> bool:
    # torch.utils.checkpoint re-runs forward during backward; there the weights must stay until
    # the layer's own backward has used them (the backward hook sends them home).
    return torch._C._current_graph_task_id() != -1
