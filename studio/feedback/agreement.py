"""How far teammates agree: for each pair of logins who labelled the same inputs, how many they share, how many
they agree on, and Cohen's kappa (agreement beyond what their label frequencies give by chance).

The pairs come from the store's SQL (``FeedbackStore.label_pairs``: a join on the input, each login's latest row),
so nothing here loads a run's rows. Kappa is written out (a few lines) because scikit-learn is not a dependency of
the studio and is not installed: ``cohen_kappa_score`` would pull in scipy and sklearn for one formula.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from .store import FeedbackStore


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items: (po - pe) / (1 - pe); None for no items.
    When chance agreement is total (both gave one and the same label to everything) the agreement is total: 1.0;
    a single shared label against another single label is total disagreement: po = 0 -> (0 - 0) / 1 = 0."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    po = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if pe >= 1.0:
        return 1.0
    return (po - pe) / (1.0 - pe)


def agreement(store: FeedbackStore, run: str) -> list[dict[str, Any]]:
    """[{"pair": (login a, login b), "rows": shared inputs, "agree": same label, "kappa": float | None}, ...]
    for every pair of logins who labelled at least one input of ``run`` in common, in login order."""
    grouped: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for la, lb, xa, xb in store.label_pairs(run):
        left, right = grouped.setdefault((la, lb), ([], []))
        left.append(xa)
        right.append(xb)
    out = []
    for pair, (xs, ys) in grouped.items():
        k = cohen_kappa(xs, ys)
        out.append({"pair": pair, "rows": len(xs), "agree": sum(x == y for x, y in zip(xs, ys)),
                    "kappa": None if k is None else round(k, 4)})
    return out
