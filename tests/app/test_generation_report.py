"""The generation check's words: one scorecard for the page and the CLI, every score named in both languages."""
from __future__ import annotations

from studio.app import generation_report
from studio.words.registry import CATALOG

RESULT = {"n": 3, "tuned": {"exact_match": 0.5, "chrf": 61.23, "bleu": 40.0, "rouge_l": 0.7, "answer_loss": 0.4,
                            "perplexity": 1.49, "length_ratio": 1.1, "latency_ms_per_row": 12.0, "tokenize": "zh",
                            "structure": {"kind": "label_reason", "parses": 1.0, "fields_match": 2 / 3,
                                          "per_field": {"label": 2 / 3}}},
          "base": None, "changed": [],
          "worst": [{"instruction": "i", "input": "a | b", "reference": "positive: x", "tuned": "negative: y",
                     "tuned_chrf": 10.0}]}


def test_without_a_base_the_card_has_one_column_and_no_change() -> None:
    rows = generation_report.scorecard(RESULT, "en")
    assert rows[1] == ["chrF (0-100)", "", "61.2", ""]
    assert rows[-2][0] == "starts with a label" and rows[-1][2] == "66.7%"
    md = generation_report.markdown(RESULT, "zh")
    assert "| 微调后 |" in md and "| 基础模型 |" not in md
    assert "a / b" in md   # a cell's pipe would split the row


def test_every_score_has_both_languages() -> None:
    keys = [k for k in CATALOG if k.startswith("gen.")]
    assert len(keys) > 15
    for k in keys:
        en, zh = CATALOG[k].page
        assert en and zh and (en != zh or k in ("gen.rouge_l",)), k


def test_the_cli_table_has_the_pages_numbers() -> None:
    lines: list[str] = []
    generation_report.text(RESULT, lines.append)
    assert any(line.startswith("chrF (0-100)") and line.rstrip().endswith("61.2") for line in lines)
    assert any("worst rows" in line for line in lines)
