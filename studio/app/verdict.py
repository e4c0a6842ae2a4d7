"""The gate before an improved run reaches teammates: a verdict on a frozen check set.

The check set is frozen when Improve starts (``freeze``): the old run's own held-out rows plus the accepted
feedback kept aside (studio/feedback/check_set.py), written into the new run's folder (``RunDir.check_set``), so
what judges the run cannot drift with later feedback or a moved dataset. After training, ``judge`` answers every
check row with the old run and with the new one through a scorer (studio/evaluation/check_scorers.py: labels,
exact answers, or any scorer with the same two members, such as a generation check), and writes the verdict
into the new run's folder (``RunDir.verdict``): accuracy (and per-label precision / recall / F1 for a labels
scorer) before and after, per part of the set, the rows that flipped right and wrong, and whether it passed.

The gate passes unless the new run gets more check rows wrong than the old one did, or loses more than
FORGET_SLACK of the old run's own held-out rows: on a few hundred rows one or two flips are noise (DESIGN.md,
"Measure the value"), a steady loss is not. A failed verdict is not a ban: the owner may still promote, saying so
(studio/app/versions.py).
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Sequence

from ..errors import StudioError
from ..evaluation.check_scorers import RowScorer, scorer_for
from ..evaluation.evaluate import validation_rows
from ..evaluation.metrics import classification_metrics, normalize
from ..feedback.check_set import aside_rows
from ..feedback.datasets import run_prompt_shape
from ..feedback.store import FeedbackStore
from ..runs.run_dir import RunDir
from ..state_files import read_state
from ..workspace import atomic_write_text

MAX_CHECK_ROWS = 1000   # rows one verdict scores twice: minutes on a CPU at most
LISTED = 50             # flipped rows listed in the verdict (all are counted)
FORGET_SLACK = 0.02     # share of the old run's held-out rows the new run may lose before the gate fails


def freeze(old_run: str | Path, new_run: str | Path, store: FeedbackStore) -> dict[str, int]:
    """Write the new run's check set: the old run's held-out rows, then the feedback kept aside.
    Returns {"held_out": n, "feedback": n}."""
    try:
        held = [{**r, "from": "held_out"} for r in validation_rows(old_run)]
    except StudioError:
        held = []  # the old run kept no held-out rows: the feedback kept aside judges alone
    aside = aside_rows(store, Path(old_run).name, run_prompt_shape(old_run))
    rows = (held + aside)[:MAX_CHECK_ROWS]
    out = RunDir(new_run).ensure()
    atomic_write_text(out.check_set, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return {"held_out": sum(r["from"] == "held_out" for r in rows), "feedback": sum(r["from"] == "feedback" for r in rows)}


def check_rows(new_run: str | Path) -> list[dict[str, Any]]:
    """The frozen check set of an improving run ([] when Improve wrote none)."""
    path = RunDir(new_run).check_set
    if not path.is_file() or path.is_symlink():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if isinstance(r, dict)][:MAX_CHECK_ROWS]


def _side(scores: list[float], answers: list[str], rows: Sequence[dict[str, Any]],
          labels: list[str] | None) -> dict[str, Any]:
    n = len(rows)
    side: dict[str, Any] = {"accuracy": sum(scores) / n if n else 0.0, "right": sum(scores)}
    if labels:
        known = {normalize(lab): lab for lab in labels}
        truth = [known.get(normalize(r.get("output", "")), labels[0]) for r in rows]
        preds = [known.get(normalize(a)) for a in answers]
        m = classification_metrics(truth, preds, labels)
        side["macro_f1"] = m["macro_f1"]
        side["per_label"] = {lab: {k: round(float(v), 4) for k, v in c.items()} for lab, c in m["per_class"].items()}
    return side


def _gate(rows: Sequence[dict[str, Any]], before: list[float], after: list[float]) -> dict[str, Any]:
    if sum(after) < sum(before):
        return {"passed": False, "code": "gate.worse", "before": round(sum(before), 2), "after": round(sum(after), 2),
                "n": len(rows)}
    held = [i for i, r in enumerate(rows) if r.get("from") == "held_out"]
    hb, ha = sum(before[i] for i in held), sum(after[i] for i in held)
    slack = max(1, math.floor(FORGET_SLACK * len(held)))
    if held and ha < hb - slack:
        return {"passed": False, "code": "gate.forgets", "before": round(hb, 2), "after": round(ha, 2),
                "n": len(held), "slack": slack}
    return {"passed": True, "code": "gate.passed", "before": round(sum(before), 2), "after": round(sum(after), 2),
            "n": len(rows)}


def judge(new_run: str | Path, old_run: str | Path, scorer: RowScorer | None = None) -> dict[str, Any]:
    """Score the frozen check set with the old and the new run, write and return the verdict.

    Raises:
        StudioError: the new run has no check set (it was not made by Improve, or before the gate existed).
    """
    rows = check_rows(new_run)
    if not rows:
        raise StudioError.of("improve.no_rows")
    scorer = scorer or scorer_for(str(old_run))
    t = time.perf_counter()
    ans_b = scorer.answers(str(old_run), rows)
    ans_a = scorer.answers(str(new_run), rows)
    sb = [scorer.score(a, r) for a, r in zip(ans_b, rows)]
    sa = [scorer.score(a, r) for a, r in zip(ans_a, rows)]
    labels = scorer.labels

    def flipped(up: bool) -> list[dict[str, Any]]:
        return [{"input": r.get("input") or r.get("instruction", ""), "expected": r.get("output", ""),
                 "before": b, "after": a, "from": r.get("from", "")}
                for r, b, a, x, y in zip(rows, ans_b, ans_a, sb, sa) if (y > x if up else y < x)]

    parts = {}
    for part in ("held_out", "feedback"):
        idx = [i for i, r in enumerate(rows) if r.get("from") == part]
        if idx:
            parts[part] = {"n": len(idx), "before": sum(sb[i] for i in idx) / len(idx),
                           "after": sum(sa[i] for i in idx) / len(idx)}
    right, wrong = flipped(True), flipped(False)
    verdict = {"old_run": Path(old_run).name, "new_run": Path(new_run).name, "scorer": scorer.name,
               "labels": labels, "n": len(rows), "parts": parts,
               "before": _side(sb, ans_b, rows, labels), "after": _side(sa, ans_a, rows, labels),
               "flipped_right": len(right), "flipped_wrong": len(wrong),
               "right_rows": right[:LISTED], "wrong_rows": wrong[:LISTED], "gate": _gate(rows, sb, sa),
               "seconds": round(time.perf_counter() - t, 1), "judged": time.strftime("%Y-%m-%d %H:%M:%S")}
    atomic_write_text(RunDir(new_run).verdict, json.dumps(verdict, ensure_ascii=False))
    return verdict


def stored(new_run: str | Path) -> dict[str, Any] | None:
    """The verdict written with the run (None before it was judged); the page shows it again on reopening."""
    return read_state(RunDir(new_run).verdict)
