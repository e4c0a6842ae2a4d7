"""Validation report: every problem counted with a fix, exact lengths with a tokenizer, never a crash."""
from __future__ import annotations

from pathlib import Path

from studio.data.readers import read_table
from studio.data.report import column_stats, estimate_tokens, format_report, validation_report
from tests.wordtok import word_tokenizer

INSTR = "Classify the sentiment of this text as positive or negative."


def _rows(n_pos: int, n_neg: int) -> list[dict[str, str]]:
    return ([{"instruction": INSTR, "input": f"good thing {i}", "output": "positive"} for i in range(n_pos)]
            + [{"instruction": INSTR, "input": f"bad thing {i}", "output": "negative"} for i in range(n_neg)])


def _by_code(report: dict) -> dict[str, dict]:
    return {p["code"]: p for p in report["problems"]}


def test_clean_data_has_no_problems_and_split_sizes() -> None:
    report = validation_report(_rows(30, 30), cutoff_len=256, val_size=0.2, seed=1)
    assert report["problems"] == []
    assert report["ok"] is True
    assert report["split"] == {"train": 48, "val": 12, "val_size": 0.2}
    assert report["labels"]["counts"] == {"positive": 30, "negative": 30}
    assert report["labels"]["imbalance_ratio"] == 1.0
    assert format_report(report).splitlines()[-1] == "No problems found."


def test_every_problem_is_counted_with_its_rows() -> None:
    rows = _rows(24, 4) + [
        {"instruction": INSTR, "input": "", "output": "positive"},           # 29: empty text
        {"instruction": INSTR, "input": "no label here", "output": " "},    # 30: missing label
        {"instruction": INSTR, "input": "good thing 0", "output": "positive"},  # 31: duplicate of row 1
        {"instruction": INSTR, "input": "good thing 1", "output": "negative"},  # 32: conflicts with row 2
        {"instruction": INSTR, "input": "x", "output": "Positive"},          # 33-34: mixed spellings
        {"instruction": INSTR, "input": "y", "output": "pos"},
        {"instruction": INSTR, "input": "long " * 400, "output": "negative"},  # 35: over the cutoff
    ]
    report = validation_report(rows, cutoff_len=256, val_size=5, seed=0)
    p = _by_code(report)
    assert {k: (v["count"], v["examples"]) for k, v in p.items()} == {
        "empty_text": (1, [29]),
        "missing_label": (1, [30]),
        "duplicates": (1, [31]),
        "conflicting_labels": (1, [2]),
        "too_long": (1, [35]),
        "mixed_spellings": (2, [33, 34]),
        "imbalance": (6, []),
        "small_validation": (5, []),
    }
    assert p["mixed_spellings"]["message"] == ("The same label is spelled differently: 'positive' (26) / "
                                               "'Positive' (1) / 'pos' (1)")
    assert p["mixed_spellings"]["fix"] == ("convert again with a label map that merges them, e.g. --label-map "
                                           "'positive=positive,Positive=positive,pos=positive'")
    assert p["imbalance"]["message"] == ("Labels are imbalanced: 'positive' has 28 rows, 'negative' only 6 "
                                         "(4.67:1)")
    assert report["lengths"]["unit"] == "estimated tokens"
    assert p["too_long"]["message"] == ("1 row is longer than cutoff_len=256 estimated tokens and will be "
                                        "truncated")
    assert p["empty_text"]["message"] == "1 row has no text to read"
    assert report["split"] == {"train": 30, "val": 5, "val_size": 5}
    assert report["ok"] is True  # warnings only: training can go ahead
    text = format_report(report)
    assert "[warning] 1 row repeats an earlier row exactly (rows 31). Fix: remove the duplicates" in text


def test_lengths_with_a_tokenizer_are_exact() -> None:
    tok = word_tokenizer("### Instruction: Response: a b c ok")
    # <s> ### Instruction: a ### Response: ok </s> = 8 tokens; five more words = 13
    rows = [{"instruction": "a", "input": "", "output": "ok"}, {"instruction": "a b c a b c", "input": "", "output": "ok"}]
    report = validation_report(rows, tokenizer=tok, cutoff_len=10, template="studio")
    assert report["lengths"] == {"unit": "tokens", "max": 13, "mean": 10.5, "p95": 13, "over_cutoff": 1}
    assert _by_code(report)["too_long"]["fix"] == ("raise cutoff_len to 13 (covers all rows; 13 covers 95%), or "
                                                   "shorten those texts")
    assert validation_report(rows, tokenizer=tok, cutoff_len=13, template="studio")["lengths"]["over_cutoff"] == 0


def test_estimate_counts_cjk_per_character() -> None:
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("质量很好") == 4
    assert estimate_tokens("好 ok") == 2


def test_bad_rows_never_crash_the_report() -> None:
    weird = [None, 5, {"instruction": None, "input": 3, "output": 1.0}, {"history": "not a list"}, {}]
    report = validation_report(weird, cutoff_len=8)  # type: ignore[arg-type]
    assert report["rows"] == 5
    assert _by_code(report)["empty_text"]["count"] == 4
    empty = validation_report([])
    assert empty["ok"] is False and [p["code"] for p in empty["problems"]] == ["no_rows"]
    one = validation_report([{"instruction": "q", "input": "", "output": "yes"}] * 3)
    assert _by_code(one)["single_label"]["message"] == "Every row has the same answer 'yes'"
    assert one["ok"] is False


def test_column_stats_for_the_preview(tmp_path: Path) -> None:
    p = tmp_path / "shop.csv"
    p.write_text("review,label\ngreat phone,1\n,0\nbad,1\nok,1\n", encoding="utf-8")
    stats = {s["column"]: s for s in column_stats(read_table(p))}
    assert stats["review"] == {"column": "review", "rows": 4, "empty": 1, "distinct": 3, "unit": "chars",
                               "min_len": 2, "max_len": 11, "mean_len": 5.3}
    assert stats["label"]["counts"] == {"1": 3, "0": 1}
    tok = word_tokenizer("great phone bad ok")
    assert column_stats(read_table(p), tokenizer=tok)[0]["max_len"] == 2


def _messy_report() -> dict:
    """A report with every problem that names a setting on the command line: rows over cutoff_len, a label spelled
    two ways (--label-map), a tiny validation split (val_size)."""
    rows = (_rows(24, 4) + [{"instruction": INSTR, "input": "x", "output": "Positive"},
                            {"instruction": INSTR, "input": "long " * 400, "output": "negative"}])
    return validation_report(rows, cutoff_len=256, val_size=5, seed=0)


def test_the_page_report_names_the_page_fields_in_its_language() -> None:
    """The report is shared with the command line, which names config keys and flags (its English pinned above);
    the page names the Settings and Data tabs' fields instead, in English and in Chinese."""
    from tests.words.test_words_catalog import named_settings
    report = _messy_report()
    assert {p["code"] for p in report["problems"]} >= {"too_long", "mixed_spellings", "small_validation"}
    cli = format_report(report)
    assert "over cutoff_len 256" in cli and "raise cutoff_len to" in cli and "--label-map" in cli
    assert "use val_size 0.1" in cli
    for lang in ("en", "zh"):
        for r in (report, validation_report([])):
            page = format_report(r, lang, surface="page")
            assert named_settings(page) == [] and "python -m studio" not in page, page
            assert len(page.splitlines()) == len(format_report(r, lang).splitlines())
    en, zh = format_report(report, "en", "page"), format_report(report, "zh", "page")
    assert "1 row is longer than 'Max tokens per example' (256 estimated tokens) and will be truncated" in en
    assert "Fix: raise 'Max tokens per example' on the Settings tab to" in en
    assert "merge them in the Label map box on the Data tab and convert again, e.g. '" in en
    assert "set 'Validation share' to 0.1 once you have more data" in en
    assert "over 'Max tokens per example' (256)" in en.splitlines()[1]
    assert "1 行超过“每条样本最大 token 数”（256 个估算 token），会被截断" in zh
    assert "在“设置”页把“每条样本最大 token 数”提高到" in zh and "“标签映射”" in zh and "“验证集比例”" in zh
    assert "convert a file with data rows on the Data tab" in format_report(validation_report([]), "en", "page")
