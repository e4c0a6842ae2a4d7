"""How a frozen check set is scored, one row at a time, for the gate before an improved run reaches teammates
(studio/app/verdict.py). A scorer answers each row and says how right the answer is, in [0, 1]; the verdict is
made only of those per-row scores before and after, so any scorer plugs in: the label scorer here, exact answers
for free text, or a generation check (an LLM-free similarity, a judge) that implements the same two members.

    class RowScorer(Protocol):
        name: str                      # said in the verdict
        labels: list[str] | None       # a labels scorer: the verdict adds per-label precision / recall / F1
        def answers(self, run_path, rows) -> list[str]
        def score(self, answer, row) -> float      # 1.0 right ... 0.0 wrong
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from . import inference
from .evaluate import _generate_rows
from .metrics import normalize

BATCH = 16
ANSWER_TOKENS = 128  # a free-text answer scored by exact match: as compare's


class RowScorer(Protocol):
    name: str
    labels: list[str] | None

    def answers(self, run_path: str, rows: Sequence[dict[str, str]]) -> list[str]: ...

    def score(self, answer: str, row: dict[str, str]) -> float: ...


class LabelScorer:
    """A labels run: the most probable of its labels (the demo page's scoring); right when it is the row's."""
    name = "labels"

    def __init__(self, labels: Sequence[str], like: dict[str, str] | None):
        self.labels: list[str] | None = list(labels)
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


class ExactAnswerScorer:
    """A free-text run without a better scorer: the greedy answer equals the expected one, spaces and case aside
    (what ``feedback compare`` reports). Strict: a generation check scores the same rows more kindly."""
    name = "exact answer"
    labels: list[str] | None = None

    def answers(self, run_path: str, rows: Sequence[dict[str, str]]) -> list[str]:
        loaded = inference.get_model(run_path)
        with inference._hold(loaded):
            return _generate_rows(loaded.model, loaded.tokenizer, loaded.template, list(rows), ANSWER_TOKENS)

    def score(self, answer: str, row: dict[str, str]) -> float:
        return float(" ".join(answer.split()).casefold() == " ".join(row.get("output", "").split()).casefold())


def scorer_for(run_path: str) -> Any:
    """The scorer a run's check set gets by default: labels for a labels run, else exact answers."""
    task = inference.label_task(run_path)
    return LabelScorer(task[0], task[1]) if task else ExactAnswerScorer()
