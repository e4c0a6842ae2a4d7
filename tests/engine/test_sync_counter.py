"""tests/sync_counter.py counts every op that makes a card wait for the host, and nothing that does not.

A step test (tests/engine/test_step_sync.py) is only as good as this list: an op the counter misses is a stall
on the card that passes on the CPU. Each case runs on CPU tensors; on a card the same call waits for every queued
kernel: a value read back (``.item()``, ``bool``), an output whose size depends on the values (``nonzero``,
``unique``, ``bincount``, ``repeat_interleave`` without ``output_size``, boolean-mask indexing), or a copy to the host
(``.cpu()``, ``.numpy()``, ``.tolist()``) or a blocking copy onto the card (``non_blocking=False``).
"""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from tests.sync_counter import SyncCounter, counting_host_reads

x = torch.arange(6.0)
r = torch.tensor([1, 2, 0, 1, 1, 1])
m = x > 2

SYNCS: dict[str, Callable[[], Any]] = {
    "item": lambda: x.sum().item(),
    "float()": lambda: float(x.sum()),
    "bool()": lambda: bool(m.any()),
    "tolist": lambda: r.tolist(),
    "cpu()": lambda: x.cpu(),
    "numpy()": lambda: x.numpy(),
    "nonzero": lambda: m.nonzero(),
    "where(mask)": lambda: torch.where(m),
    "argwhere": lambda: torch.argwhere(m),
    "masked_select": lambda: x.masked_select(m),
    "bool-mask read": lambda: x[m],
    "bool-mask write": lambda: x.clone().__setitem__(m, 0.0),
    "repeat_interleave(tensor repeats)": lambda: torch.repeat_interleave(x, r),
    "repeat_interleave(repeats only)": lambda: torch.repeat_interleave(r),
    "unique": lambda: torch.unique(r),
    "unique(dim)": lambda: torch.unique(r.view(2, 3), dim=0),
    "unique_consecutive": lambda: torch.unique_consecutive(r),
    "bincount": lambda: torch.bincount(r),
    "histc(range from the data)": lambda: torch.histc(x),
    "equal": lambda: torch.equal(x, x),
    "allclose": lambda: torch.allclose(x, x),
    "blocking copy onto a device": lambda: x.to("meta"),
    "blocking copy_ onto a device": lambda: torch.empty(6, device="meta").copy_(x),
}

QUIET: dict[str, Callable[[], Any]] = {
    "sum": lambda: x.sum(),
    "repeat_interleave(output_size)": lambda: torch.repeat_interleave(x, r, output_size=6),
    "repeat_interleave(int)": lambda: torch.repeat_interleave(x, 2),
    "nonzero_static": lambda: torch.nonzero_static(r, size=3),
    "masked_fill": lambda: x.masked_fill(m, 0.0),
    "histc(fixed range)": lambda: torch.histc(x, bins=4, min=0, max=6),
    "non-blocking copy onto a device": lambda: x.to("meta", non_blocking=True),
    "index by integer tensor": lambda: x[r],
}


def _count(fn: Callable[[], Any]) -> int:
    counter = SyncCounter()
    with counter, counting_host_reads(counter):
        fn()
    return sum(counter.take().values())


@pytest.mark.parametrize("name", list(SYNCS))
def test_an_op_that_waits_for_the_card_is_counted(name: str) -> None:
    assert _count(SYNCS[name]) >= 1, f"{name} syncs on a card but was not counted"


@pytest.mark.parametrize("name", list(QUIET))
def test_an_op_that_does_not_wait_is_not_counted(name: str) -> None:
    assert _count(QUIET[name]) == 0, f"{name} does not sync on a card but was counted"


def test_paused_work_is_not_counted() -> None:
    counter = SyncCounter()
    with counter, counting_host_reads(counter), counter.pause():
        r.tolist(), x.sum().item(), torch.unique(r)
    assert not counter.take()
