"""A labels run is tried the way it was trained (issue 52), in chat and batch prediction as in the playground: a bare
text gets a label and its scores. A check file in another language than the run's data (labels 正面/负面, its own
instruction) is asked with the run's own instruction and its labels read by meaning as the run's label words, so
it scores exactly as the same rows written in the run's words."""
from __future__ import annotations

import csv
from pathlib import Path

from studio.evaluation import inference

ZH = {"positive": "正面", "negative": "负面"}


def _check_file(path: Path, rows: list[dict[str, str]], words: dict[str, str] | None = None) -> str:
    """The rows as a text + label table (what a team's sheet holds), labels renamed by ``words``."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows([[r["input"], (words or {}).get(r["output"], r["output"])] for r in rows])
    return str(path)


def test_labels_are_read_by_meaning() -> None:
    from studio.data.labels import labels_by_meaning
    assert labels_by_meaning(["正面", "负面", "中性", "positive", "spam"], ["positive", "negative", "neutral"]) == {
        "正面": "positive", "负面": "negative", "中性": "neutral", "positive": "positive"}
    assert labels_by_meaning(["好评"], ["积极", "消极"]) == {"好评": "积极"}


def test_chat_answers_a_labels_run_with_a_label_and_its_scores(runs: dict) -> None:
    from studio.ui import evaluate_tab as tab
    run, row = str(runs["full"]), runs["heldout"][0]
    labels, like = inference.label_task(run)  # type: ignore[misc]
    *_, (_, shown) = list(tab.on_chat(row["input"], [], run, 5, 0.0, 1.0))
    reply = shown[-1]["content"]
    probs = inference.label_probabilities(run, [row["input"]], labels, like)[0]
    first, scores = reply.split("\n\n")
    assert first == max(probs, key=lambda lab: probs[lab])  # the playground's and the demo page's answer
    assert all(lab in scores for lab in labels), reply


def test_a_check_file_in_the_teams_words_scores_as_the_runs_own(runs: dict, tmp_path: Path) -> None:
    """正面/负面 and the converter's own instruction: the same accuracy, per-class scores and predictions as the
    same rows in the run's words; the page says how the labels were read."""
    from studio.ui import evaluate_tab as tab
    run, rows = str(runs["full"]), runs["heldout"][:24]
    own = inference.sentiment_check(run, _check_file(tmp_path / "own.csv", rows))
    team = inference.sentiment_check(run, _check_file(tmp_path / "team.csv", rows, ZH))
    assert team["label_map"] == {"正面": "positive", "负面": "negative"} and own["label_map"] == {}
    assert sorted(team["labels"]) == sorted(own["labels"]) == ["negative", "positive"]
    assert team["accuracy"] == own["accuracy"] and team["per_class"] == own["per_class"]
    summary = tab.on_check(run, "upload", str(tmp_path / "team.csv"), "score", 0, "zh")[0]
    assert "正面 → positive" in summary and "按含义" in summary
    # batch prediction of the same file: the run's instruction, its labels, the same right answers
    out = inference.predict_file(run, str(tmp_path / "team.csv"), tmp_path)
    mine = inference.predict_file(run, str(tmp_path / "own.csv"), tmp_path / "own")
    assert out["mode"] == "score" and out["accuracy"] == mine["accuracy"] == own["accuracy"]
    written = list(csv.DictReader(open(out["path"], encoding="utf-8")))
    instruction = inference.label_task(run)[1]["instruction"]  # type: ignore[index]
    assert {r["instruction"] for r in written} == {instruction}
    assert {r["prediction"] for r in written} <= {"positive", "negative"}
