"""Feedback kept aside: one accepted row in ASIDE_EVERY never trains an improvement and joins the frozen check set
that judges it (studio/app/verdict.py), so "corrections learned" is measured on rows the improvement did not see.

Which rows: decided by the input's own key (``input_key``: its text, spaces and case aside), not by a random draw
or by the order rows came in. So the choice is the same on every Improve of the run, a row held aside once is held
aside forever (the check set stays frozen as feedback grows), the same text typed twice is on one side only, and
nobody, the owner included, picks which rows judge the run.
"""
from __future__ import annotations

from typing import Any

from .datasets import _prompt
from .store import Feedback, FeedbackStore, input_key

ASIDE_EVERY = 5  # one in five: on 100 rows of feedback 20 judge and 80 teach


def is_aside(text: str) -> bool:
    """Whether feedback on ``text`` is kept aside (the same answer for every row of the same input)."""
    return int(input_key(text)[:8], 16) % ASIDE_EVERY == 0


def label_of(row: Feedback) -> str | None:
    """The answer a row says is right: the owner's edit, the correction, or the answer a 👍 confirmed."""
    fixed = row.final_correction
    if fixed and fixed.strip():
        return fixed
    return row.answer if row.verdict == "up" and row.answer.strip() else None


def split_accepted(store: FeedbackStore, run: str) -> dict[str, list[Feedback]]:
    """``run``'s accepted rows that are not in conflict (the store's SQL), as {"teach": [...], "aside": [...]}."""
    clash = store.conflict_keys(run)
    out: dict[str, list[Feedback]] = {"teach": [], "aside": []}
    for r in store.iter_rows(run=run, status="accepted"):
        if input_key(r.input) in clash or label_of(r) is None:
            continue
        out["aside" if is_aside(r.input) else "teach"].append(r)
    return out


def aside_rows(store: FeedbackStore, run: str, like: dict[str, str] | None) -> list[dict[str, Any]]:
    """The held-aside accepted rows as check rows {"instruction", "input", "output", "from": "feedback", "id"}."""
    return [{**_prompt(r.input, like), "output": label_of(r), "from": "feedback", "id": r.id}
            for r in split_accepted(store, run)["aside"]]
