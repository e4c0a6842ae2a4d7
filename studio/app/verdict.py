"""The gate before an improved run reaches teammates: a verdict on a frozen check set.

The check set is frozen when Improve starts (``freeze``): the old run's own held-out rows plus the accepted
feedback kept aside (studio/feedback/check_set.py), written into the new run's folder (``RunDir.check_set``), so
what judges the run cannot drift with later feedback or a moved dataset. After training, ``judge`` answers every
check row with the old run and with the new one through a scorer (studio/evaluation/check_scorers.py: labels
for a labels run, the generation check's chrF for an instruction or chat run, or any scorer with the same members),
and writes the verdict into the new run's folder (``RunDir.verdict``): accuracy or mean chrF (and per-label
precision / recall / F1 for a labels scorer) before and after, per part of the set, the rows that flipped right
and wrong, and whether it passed.

The gate passes unless the new run scores less on the check set than the old one did (more rows wrong; a lower
mean chrF), or loses more than FORGET_SLACK of the old run's own held-out rows (one row's worth at least): on a
few hundred rows one or two flips are noise (DESIGN.md, "Measure the value"), a steady loss is not. A failed verdict is not a ban: the owner may still promote, saying so
(studio/app/versions.py).
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Sequence

from ..errors import StudioError
from ..evaluation.check_scorers import FLIP_MARGIN, RowScorer, scorer_for
from ..evaluation.evaluate import validation_rows
from ..evaluation.metrics import classification_metrics, normalize
from ..feedback.check_set import aside_rows
from ..feedback.datasets import run_prompt_shape
from ..feedback.store import FeedbackStore
from ..runs.run_dir import RunDir
from ..state_files import read_state
from ..words.catalog import msg
from ..words.render import has
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


def _gate(rows: Sequence[dict[str, Any]], before: list[float], after: list[float], graded: bool = False
          ) -> dict[str, Any]:
    """One rule for every scorer: the new run may not score less on the whole set, nor lose more than the slack on
    the old run's own held-out rows. A graded scorer's sums are said as mean points (a chrF of 0-100)."""
    def said(total: float, n: int) -> float:
        return round(100 * total / n, 1) if graded else round(total, 2)

    kind = "_graded" if graded else ""
    if sum(after) < sum(before):
        return {"passed": False, "code": "gate.worse" + kind, "before": said(sum(before), len(rows)),
                "after": said(sum(after), len(rows)), "n": len(rows)}
    held = [i for i, r in enumerate(rows) if r.get("from") == "held_out"]
    hb, ha = sum(before[i] for i in held), sum(after[i] for i in held)
    slack = max(1, math.floor(FORGET_SLACK * len(held)))
    if held and ha < hb - slack:
        return {"passed": False, "code": "gate.forgets" + kind, "before": said(hb, len(held)),
                "after": said(ha, len(held)), "n": len(held), "slack": slack}
    return {"passed": True, "code": "gate.passed" + kind, "before": said(sum(before), len(rows)),
            "after": said(sum(after), len(rows)), "n": len(rows)}


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
    labels, graded = scorer.labels, bool(getattr(scorer, "graded", False))
    margin = FLIP_MARGIN if graded else 0.0

    def flipped(up: bool) -> list[dict[str, Any]]:
        moved = [(y - x, r, b, a) for r, b, a, x, y in zip(rows, ans_b, ans_a, sb, sa)
                 if (y - x if up else x - y) > 0 and abs(y - x) >= margin]
        moved.sort(key=lambda m: -abs(m[0]))   # the biggest changes first (all the same for right / wrong)
        return [{"input": r.get("input") or r.get("instruction", ""), "expected": r.get("output", ""),
                 "before": b, "after": a, "from": r.get("from", "")} for _, r, b, a in moved]

    parts = {}
    for part in ("held_out", "feedback"):
        idx = [i for i, r in enumerate(rows) if r.get("from") == part]
        if idx:
            parts[part] = {"n": len(idx), "before": sum(sb[i] for i in idx) / len(idx),
                           "after": sum(sa[i] for i in idx) / len(idx)}
    right, wrong = flipped(True), flipped(False)
    verdict = {"old_run": Path(old_run).name, "new_run": Path(new_run).name, "scorer": scorer.name,
               "graded": graded, "labels": labels, "n": len(rows), "parts": parts,
               "before": _side(sb, ans_b, rows, labels), "after": _side(sa, ans_a, rows, labels),
               "flipped_right": len(right), "flipped_wrong": len(wrong),
               "right_rows": right[:LISTED], "wrong_rows": wrong[:LISTED], "gate": _gate(rows, sb, sa, graded),
               "seconds": round(time.perf_counter() - t, 1), "judged": time.strftime("%Y-%m-%d %H:%M:%S")}
    atomic_write_text(RunDir(new_run).verdict, json.dumps(verdict, ensure_ascii=False))
    return verdict


def flips_line(v: dict[str, Any], lang: str) -> str:
    """The verdict's sentence on what flipped and how it was scored, in ``lang`` (the page and the CLI say it alike;
    a verdict stored before scorers were named by code keeps its English name)."""
    graded = bool(v.get("graded"))
    scorer = str(v.get("scorer", ""))
    return msg("gate.flips_graded" if graded else "gate.flips", lang, right=v["flipped_right"],
               wrong=v["flipped_wrong"], n=v["n"], held=v["parts"].get("held_out", {}).get("n", 0),
               fb=v["parts"].get("feedback", {}).get("n", 0), old=v["old_run"],
               scorer=msg(scorer, lang) if has(scorer) else scorer, points=round(100 * FLIP_MARGIN))


def score_text(v: dict[str, Any], side: str) -> str:
    """One side's whole-set score as shown: a percentage right, or a graded scorer's mean chrF (0-100)."""
    value = float(v[side]["accuracy"])
    return f"{100 * value:.1f}" if v.get("graded") else f"{value:.1%}"


def stored(new_run: str | Path) -> dict[str, Any] | None:
    """The verdict written with the run (None before it was judged); the page shows it again on reopening."""
    return read_state(RunDir(new_run).verdict)
