"""The held-out split: one seeded rule shared by training, the data report and evaluation,
so the rows Evaluate scores are exactly the rows training never saw."""
from __future__ import annotations

import random

from ..errors import StudioError


def split_rows(rows: list[dict], val_size: float, seed: int) -> tuple[list[dict], list[dict]]:
    """Seeded shuffle, then hold out a fraction (0<v<1) or a count (v>=1) for validation."""
    if not val_size:
        return list(rows), []
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    n_val = int(round(len(rows) * val_size)) if val_size < 1 else int(val_size)
    if val_size >= 1 and n_val >= len(rows):
        raise StudioError.of("data.val_rows", n=n_val, rows=len(rows))
    n_val = min(max(n_val, 1), len(rows) - 1)
    val = [rows[i] for i in order[:n_val]]
    train = [rows[i] for i in order[n_val:]]
    return train, val
