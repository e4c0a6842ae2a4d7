"""How a frozen check set is scored, one row at a time, for the gate before an improved run reaches teammates
(studio/app/verdict.py). A scorer answers each row and says how right the answer is, in [0, 1]; the verdict is
made only of those per-row scores before and after, so any scorer plugs in: the label scorer, the generation check's
chrF for written answers, or any other (a judge) that implements the same members.

    class RowScorer(Protocol):
        name: str                      # a words code, said in the verdict
        labels: list[str] | None       # a labels scorer: the verdict adds per-label precision / recall / F1
        graded: bool                   # degrees (a chrF) rather than right / wrong
        def answers(self, run_path, rows) -> list[str]
        def score(self, answer, row) -> float      # 1.0 right ... 0.0 wrong
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from . import inference
from .evaluate import _generate_rows
from .generation_check import answer_budget
from .metrics import normalize
from .text_metrics import sentence_chrf

BATCH = 16
FLIP_MARGIN = 0.10   # a graded row "flipped" when its score moved this much (10 chrF points), not by any wobble


class RowScorer(Protocol):
    name: str                  # a words code (the verdict names its scorer in the page's language)
    labels: list[str] | None
    graded: bool               # True: scores are degrees (0-1), shown as a mean; False: right (1) or wrong (0)

    def answers(self, run_path: str, rows: Sequence[dict[str, str]]) -> list[str]: ...

    def score(self, answer: str, row: dict[str, str]) -> float: ...


class LabelScorer:
    """A labels run: the most probable of its labels (the demo page's scoring); right when it is the row's."""
    name = "scorer.labels"

    def __init__(self, labels: Sequence[str], like: dict[str, str] | None):
        self.labels: list[str] | None = list(labels)
        self.graded = False
        self.like = like

    def answers(self, run_path: str, rows: Sequence[dict[str, str]]) -> list[str]:
        out: list[str] = []
        for at in range(0, len(rows), BATCH):
            texts = [r.get("input") or r.get("instruction", "") for r in rows[at:at + BATCH]]
            out += [max(s, key=s.get) for s in inference.label_probabilities(run_path, texts, self.labels or [],
                                                                             self.like)]
        return out

    def score(self, answer: str, row: dict[str, str]) -> float:
        return float(normalize(answer) == normalize(row.get("output", "")))


class GenerationScorer:
    """An instruction or chat run: the greedy answer (the generation check's decoding and answer budget) scored by
    its sentence chrF against the expected answer, 0-1 (the generation check's headline, ``HEADLINE``), so the
    gate and the Evaluate tab judge a written answer by one rule. Graded, not right or wrong: a row counts as
    flipped only when its score moved by FLIP_MARGIN or more."""
    name = "scorer.generation"
    labels: list[str] | None = None
    graded = True

    def answers(self, run_path: str, rows: Sequence[dict[str, str]]) -> list[str]:
        loaded = inference.get_model(run_path)
        with inference.hold_model(loaded):
            budget = answer_budget(loaded.tokenizer, rows)
            return _generate_rows(loaded.model, loaded.tokenizer, loaded.template, list(rows), budget)

    def score(self, answer: str, row: dict[str, str]) -> float:
        return sentence_chrf(answer, str(row.get("output", ""))) / 100.0


def scorer_for(run_path: str) -> Any:
    """The scorer a run's check set gets by default: labels for a labels run, else the generation check's chrF."""
    task = inference.label_task(run_path)
    return LabelScorer(task[0], task[1]) if task else GenerationScorer()
