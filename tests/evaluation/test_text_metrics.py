"""The generation check's text scores: sacrebleu's numbers, ROUGE-L for both languages, structured answers."""
from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU

from studio.evaluation.text_metrics import (rouge_l, structure_of, structure_scores, text_scores,
                                            tokenizer_name)


def test_rouge_l_is_the_lcs_f_measure() -> None:
    # LCS of "the cat sat down" and "the cat lay down" is 3 of 4 tokens both ways
    assert rouge_l("the cat sat down", "the cat lay down") == pytest.approx(0.75)
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("The Cat", "the cat") == 1.0


def test_chinese_is_scored_by_characters_not_dropped() -> None:
    """rouge-score drops non-ASCII text (a Chinese answer would score 0): here one wrong character of six costs
    one sixth."""
    assert tokenizer_name(["这个酒店很好"]) == "zh" and tokenizer_name(["a fine hotel"]) == "13a"
    assert rouge_l("这个酒店很差", "这个酒店很好", "zh") == pytest.approx(5 / 6)
    s = text_scores(["这个酒店很好"], ["这个酒店很好"])
    assert s.bleu == pytest.approx(100.0) and s.tokenize == "zh"
    # the same text scored with the English tokenizer is one "word": BLEU would be 0 for one wrong character
    assert text_scores(["这个酒店很差"], ["这个酒店很好"]).bleu > 0.0
    assert BLEU(tokenize="13a").corpus_score(["这个酒店很差"], [["这个酒店很好"]]).score == 0.0


def test_corpus_numbers_are_sacrebleus_and_rows_keep_their_order() -> None:
    answers = ["the food was cold", "great room, quiet street", "Positive."]
    refs = ["the food was cold and late", "a great room on a quiet street", "positive"]
    s = text_scores(answers, refs)
    assert s.bleu == pytest.approx(BLEU().corpus_score(answers, [refs]).score)
    assert s.row_exact == (False, False, True) and s.exact_match == pytest.approx(1 / 3)
    assert s.row_chrf[2] > s.row_chrf[1] > 0
    assert s.length_ratio < 1.0
    with pytest.raises(ValueError):
        text_scores(["a"], [])


def test_json_answers_parse_and_match_by_field() -> None:
    refs = ['{"language": "en", "sentiment": "positive"}', '{"language": "zh", "sentiment": "negative"}',
            '{"language": "en", "sentiment": "negative"}']
    answers = ['{"language": "EN", "sentiment": "positive"}',  # same fields (case aside)
               '```json\n{"language": "zh", "sentiment": "positive"}\n```',  # parses, one field wrong
               'negative, in English']  # no JSON
    assert structure_of(refs) == "json"
    s = structure_scores(answers, refs)
    assert s is not None and s.kind == "json"
    assert s.row_parses == (True, True, False) and s.row_match == (True, False, False)
    assert s.per_field == {"language": pytest.approx(2 / 3), "sentiment": pytest.approx(1 / 3)}


def test_label_and_reason_answers() -> None:
    refs = ["positive: the staff were kind", "negative: cold food", "positive: quiet", "negative: dirty"]
    answers = ["Positive - kind staff", "positive: the food", "I think it is fine", "negative: dirty room"]
    assert structure_of(refs) == "label_reason"
    s = structure_scores(answers, refs)
    assert s is not None and s.row_parses == (True, True, False, True) and s.row_match == (True, False, False, True)


def test_free_text_has_no_structure() -> None:
    assert structure_of(["A long answer about hotels.", "Another answer, a summary.", "Third."]) is None
    assert structure_scores(["x"], ["A long answer about hotels."]) is None
