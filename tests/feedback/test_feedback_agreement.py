"""Teammates who disagree (issue 49, item 4): agreement per pair of logins (count and Cohen's kappa), conflicts
computed in SQL, listed first in the owner's review, and never trained on until resolved."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.feedback.agreement import agreement, cohen_kappa
from studio.feedback.datasets import training_rows
from studio.feedback.store import FeedbackStore


def test_cohen_kappa_matches_the_textbook_example() -> None:
    # Cohen (1960)-style 2x2 table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> po 0.7, pe 0.5, kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["p", "n", "p"], ["p", "n", "p"]) == pytest.approx(1.0)
    assert cohen_kappa(["p", "p"], ["p", "p"]) == pytest.approx(1.0)   # one label only: agreement is total
    assert cohen_kappa([], []) is None


def _store(tmp_path: Path) -> FeedbackStore:
    s = FeedbackStore(tmp_path / "ws")
    # text 1: ann and bob agree (both correct to positive); text 2: ann 👍 "negative", bob corrects to positive;
    # text 3: only ann; text 4: ann and bob agree by 👍
    s.add(run="r", login="ann", input="text one", answer="negative", verdict="down", correction="positive")
    s.add(run="r", login="bob", input="Text  ONE", answer="negative", verdict="down", correction="positive")
    s.add(run="r", login="ann", input="text two", answer="negative", verdict="up")
    s.add(run="r", login="bob", input="text two", answer="negative", verdict="down", correction="positive")
    s.add(run="r", login="ann", input="text three", answer="positive", verdict="up")
    s.add(run="r", login="ann", input="text four", answer="positive", verdict="up")
    s.add(run="r", login="bob", input="text four", answer="positive", verdict="up")
    s.add(run="other", login="cy", input="text two", answer="negative", verdict="up")
    return s


def test_conflicts_come_from_sql_and_a_thumbs_up_can_disagree_with_a_correction(tmp_path: Path) -> None:
    s = _store(tmp_path)
    keys = s.conflict_keys("r")
    assert len(keys) == 1   # only "text two": ann's 👍 on negative against bob's positive
    rows = list(s.iter_rows(run="r"))
    assert {r.input for r in rows if r.id in s.conflict_ids("r")} == {"text two"}
    # resolving it (the owner drops one row) clears the conflict
    ann_up = next(r for r in rows if r.input == "text two" and r.login == "ann")
    s.review(ann_up.id, reviewer="o", status="dropped")
    assert s.conflict_keys("r") == set()


def test_agreement_per_pair_counts_shared_rows_and_kappa(tmp_path: Path) -> None:
    s = _store(tmp_path)
    pairs = agreement(s, "r")
    assert [(p["pair"], p["rows"], p["agree"]) for p in pairs] == [(("ann", "bob"), 3, 2)]
    assert pairs[0]["kappa"] == pytest.approx(cohen_kappa(["positive", "negative", "positive"],
                                                          ["positive", "positive", "positive"]))


def test_the_agreement_reads_the_labels_of_shared_inputs_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Inputs only one login sent are no pair's: their label texts are not read (one login's 2,000 rows of 240 KB
    once cost every Feedback listing 4 s of label normalising), and the pairs are the same."""
    import studio.feedback.store as store_module
    s = _store(tmp_path)
    for i in range(20):
        s.add(run="r", login="dee", input=f"dee's own text {i}", answer="negative", verdict="down",
              correction=f"only-dee-{i}")
    want = [(("ann", "bob"), 3, 2)]
    read: list[str] = []
    real = store_module.norm_label
    monkeypatch.setattr(store_module, "norm_label", lambda text: read.append(text) or real(text))
    assert [(p["pair"], p["rows"], p["agree"]) for p in agreement(s, "r")] == want
    assert read and not [t for t in read if t.startswith("only-dee")], read  # the shared inputs' labels only


def test_the_review_lists_conflicts_first(tmp_path: Path) -> None:
    s = _store(tmp_path)
    first = s.page(run="r", per_page=2).rows
    assert {r.input for r in first} == {"text two"}
    assert s.page(run="r", per_page=100).total == 7


def test_a_conflicting_row_is_never_trained_on(tmp_path: Path) -> None:
    s = _store(tmp_path)
    for r in list(s.iter_rows(run="r")):
        s.review(r.id, reviewer="o", status="accepted")
    made = list(training_rows(s.iter_rows(run="r"), {"instruction": "Label it", "input": "x"}, s.conflict_keys("r")))
    assert all(row["input"] != "text two" for _, row in made if row is not None)
    assert sum(kind == "skipped" for kind, _ in made) == 2
