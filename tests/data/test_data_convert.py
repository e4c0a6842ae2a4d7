"""Conversion to alpaca rows, label maps, atomic output and dataset_info.json registration."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from studio.data.columns import closest_column, guess_columns, guess_task, suggest_options
from studio.data.convert import convert_table, write_jsonl
from studio.data.registry import register_dataset
from studio.data.labels import (default_instruction, detect_language, parse_label_map, standard_label_map,
                                 suggest_label_map)
from studio.data.readers import Table, read_table
from studio.errors import StudioError


def _table(columns: list[str], rows: list[list], source: str = "shop.csv") -> Table:
    return Table(columns, [dict(zip(columns, r)) for r in rows], source)


def _error(fn, *args, **kw) -> str:
    with pytest.raises(StudioError) as exc:
        fn(*args, **kw)
    return exc.value.message


# ---------------------------------------------------------------- guesses
@pytest.mark.parametrize("columns,expected", [
    (["id", "review", "rating"], {"text": "review", "label": "rating"}),
    (["编号", "评论", "标签"], {"text": "评论", "label": "标签"}),
    (["Review Text", "Sentiment"], {"text": "Review Text", "label": "Sentiment"}),
    (["商品评论内容", "情感"], {"text": "商品评论内容", "label": "情感"}),
])
def test_guess_text_and_label_columns(columns: list[str], expected: dict) -> None:
    t = _table(columns, [["1", "2", "3"][:len(columns)]])
    assert guess_columns(t) == expected
    assert guess_task(t) == "sentiment"


def test_guess_falls_back_to_longest_text_column() -> None:
    t = _table(["order", "note", "stars"], [["1001", "arrived late and broken", "1"], ["1002", "fine", "5"]])
    assert guess_columns(t) == {"text": "note", "label": "stars"}


def test_guess_instruction_and_chat_tasks() -> None:
    assert guess_task(_table(["instruction", "input", "output"], [["a", "b", "c"]])) == "instruction"
    assert guess_task(_table(["question", "answer"], [["a", "b"]])) == "instruction"
    assert guess_task(_table(["conversations"], [[[]]])) == "chat"


def test_suggest_options_prefills_the_data_tab() -> None:
    t = _table(["商品", "评论", "评分"], [["手机", "很好用", "5"], ["衣服", "太差了", "1"], ["外卖", "一般", "3"]])
    assert suggest_options(t) == {"task": "sentiment", "columns": {"text": "评论", "label": "评分"}, "language": "zh",
                                  "label_map": "1=消极,3=中性,5=积极",
                                  "instruction": "判断这段文字的情感倾向，回答积极、消极或中性。"}
    chat = suggest_options(_table(["messages"], [[[]]]))
    assert (chat["task"], chat["label_map"], chat["instruction"]) == ("chat", "", "")


def test_detect_language_and_closest_column() -> None:
    assert detect_language(["这个手机很好用", "ok"]) == "zh"
    assert detect_language(["great phone", "价格"]) == "en"
    assert closest_column("reveiw", ["id", "Review", "label"]) == "Review"
    assert closest_column("zzz", ["id", "label"]) is None


# ---------------------------------------------------------------- labels
def test_suggested_label_maps() -> None:
    assert suggest_label_map(["1", "0", "1"], "zh") == {"0": "消极", "1": "积极"}
    assert suggest_label_map([1, 0], "en") == {"0": "negative", "1": "positive"}
    assert suggest_label_map(["1", "2", "3", "4", "5"], "en") == {"1": "negative", "2": "negative",
                                                                  "3": "neutral", "4": "positive", "5": "positive"}
    # the team's own words are kept; only numbers get words, and spellings of one sentiment become the commonest
    assert suggest_label_map(["好评", "差评", "中评"], "zh") == {"中评": "中评", "好评": "好评", "差评": "差评"}
    assert suggest_label_map(["正面", "负面", "中性", "正面"], "zh") == {"正面": "正面", "负面": "负面", "中性": "中性"}
    assert suggest_label_map(["pos", "positive", "positive", "neg"], "en") == {"pos": "positive", "positive":
                                                                               "positive", "neg": "neg"}
    assert suggest_label_map(["好评", "正面", "正面", "差评"], "zh") == {"好评": "正面", "正面": "正面", "差评": "差评"}
    # the studio's standard words, offered on the page, taken only when picked
    assert standard_label_map(["好评", "差评", "中评"], "zh") == {"中评": "中性", "好评": "积极", "差评": "消极"}
    assert suggest_label_map(["spam", "ham"], "en") == {"ham": "ham", "spam": "spam"}
    assert suggest_label_map(["yes", "no"], "en") == {"no": "no", "yes": "yes"}  # not guessed as sentiment


def test_parse_label_map() -> None:
    assert parse_label_map("1=positive, 0 = negative，2=中性") == {"1": "positive", "0": "negative", "2": "中性"}
    assert _error(parse_label_map, "1=positive,0") == ("Label map entry '0' is not of the form value=label. "
                                                       "Fix: write it like 1=positive,0=negative.")


def test_default_instruction_names_the_labels() -> None:
    assert default_instruction(["positive", "negative"], "en") == \
        "Classify the sentiment of this text as positive or negative."
    assert default_instruction(["积极", "消极", "中性"], "zh") == "判断这段文字的情感倾向，回答积极、消极或中性。"
    assert default_instruction(["sports", "politics"], "en") == \
        "Classify this text into one of these categories: sports or politics."


# ---------------------------------------------------------------- sentiment conversion
def test_chinese_sentiment_defaults_to_chinese_labels(tmp_path: Path) -> None:
    p = tmp_path / "shop.csv"
    p.write_bytes("评论,标签\n这个手机很好用,1\n质量太差了,0\n  ,1\n还行吧,\n".encode("gbk"))
    r = convert_table(read_table(p))
    assert (r.task, r.columns, r.language, r.label_map) == ("sentiment", {"text": "评论", "label": "标签"}, "zh",
                                                            {"0": "消极", "1": "积极"})
    instr = "判断这段文字的情感倾向，回答积极或消极。"
    assert r.rows == [{"instruction": instr, "input": "这个手机很好用", "output": "积极"},
                      {"instruction": instr, "input": "质量太差了", "output": "消极"}]
    assert r.skipped == {"empty text": [3], "missing label": [4]}


def test_user_label_map_and_instruction() -> None:
    t = _table(["text", "label"], [["great", "1"], ["awful", "0"], ["fine", " 1 "]])
    r = convert_table(t, label_map="1=good,0=bad", instruction="Is this review good or bad?")
    assert r.rows == [{"instruction": "Is this review good or bad?", "input": "great", "output": "good"},
                      {"instruction": "Is this review good or bad?", "input": "awful", "output": "bad"},
                      {"instruction": "Is this review good or bad?", "input": "fine", "output": "good"}]


def test_known_spellings_are_merged_with_a_note() -> None:
    t = _table(["text", "sentiment"], [["a", "Positive"], ["b", "positive "], ["c", "pos"], ["d", "neg"]])
    r = convert_table(t)
    assert [row["output"] for row in r.rows] == ["positive", "positive", "positive", "neg"]  # one spelling: kept
    assert r.notes == ["label 'Positive' / 'pos' / 'positive ' -> 'positive'"]


def test_mixed_spellings_of_unknown_labels_raise() -> None:
    t = _table(["text", "category"], [["a", "Sports"], ["b", "sports "], ["c", "sports"], ["d", "Politics"]])
    assert _error(convert_table, t) == (
        "Label column 'category' spells the same label differently: 'Sports' (1 row) / 'sports' (2 rows). "
        "Fix: give a label map that merges them, e.g. --label-map 'Sports=sports,sports=sports'.")
    r = convert_table(t, label_map="Sports=sports,sports=sports,Politics=politics")
    assert [row["output"] for row in r.rows] == ["sports", "sports", "sports", "politics"]


def test_unmapped_label_values_raise() -> None:
    t = _table(["text", "label"], [["a", "1"], ["b", "2"], ["c", "2"], ["d", "x"]])
    assert _error(convert_table, t, label_map="1=positive") == (
        "Label values not in the label map: '2' (2 rows), 'x' (1 row). "
        "Fix: add them to the label map (e.g. 2=...,x=...) or remove those rows.")


def test_wrong_column_name_lists_columns_and_suggests() -> None:
    t = _table(["Review", "label"], [["a", "1"]])
    assert _error(convert_table, t, text_column="reveiw") == (
        "Column 'reveiw' not found in 'shop.csv' (did you mean 'Review'?). Available columns: Review, label. "
        "Fix: choose the text column from that list (CLI: --text-column Review).")
    assert convert_table(t, text_column="review").columns == {"text": "Review", "label": "label"}
    no_label = _table(["text", "id"], [["a", "1"]])
    assert _error(convert_table, no_label, task="sentiment") == (
        "Could not tell which column holds the label in 'shop.csv'. Available columns: text, id. "
        "Fix: name it (CLI: --label-column NAME).")


def test_no_usable_rows() -> None:
    t = _table(["text", "label"], [["", "1"], ["b", ""]])
    assert _error(convert_table, t) == ("No usable rows in 'shop.csv' (1 with empty text, 1 with missing label). "
                                        "Fix: check that the chosen columns are the right ones and are filled.")


# ---------------------------------------------------------------- instruction and chat
def test_instruction_columns_and_system() -> None:
    t = _table(["prompt", "context", "response", "system"],
               [["Summarise", "long text", "short", "Be brief"], ["Translate", "", "", ""], ["Hi", "", "Hello", ""]])
    r = convert_table(t)
    assert r.task == "instruction"
    assert r.columns == {"instruction": "prompt", "input": "context", "output": "response", "system": "system"}
    assert r.rows == [{"instruction": "Summarise", "input": "long text", "output": "short", "system": "Be brief"},
                      {"instruction": "Hi", "input": "", "output": "Hello"}]
    assert r.skipped == {"empty output": [2]}


def test_openai_messages_become_rows_with_history() -> None:
    conv = [{"role": "system", "content": "Be kind"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"}, {"role": "tool", "content": "ignored"},
            {"role": "user", "content": "more?"}, {"role": "assistant", "content": "sure"}]
    t = _table(["messages"], [[conv], [[{"role": "user", "content": "unanswered"}]]], "chat.jsonl")
    r = convert_table(t)
    assert r.task == "chat"
    assert r.rows == [{"instruction": "hi", "input": "", "output": "hello", "system": "Be kind"},
                      {"instruction": "more?", "input": "", "output": "sure", "system": "Be kind",
                       "history": [["hi", "hello"]]}]
    assert r.skipped == {"no assistant reply": [2]}


def test_sharegpt_conversations_as_json_text_in_csv(tmp_path: Path) -> None:
    conv = [{"from": "human", "value": "你好"}, {"from": "gpt", "value": "你好！"}]
    p = tmp_path / "sg.csv"
    with open(p, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["conversations"], [json.dumps(conv, ensure_ascii=False)]])
    r = convert_table(read_table(p), task="chat")
    assert r.rows == [{"instruction": "你好", "input": "", "output": "你好！"}]
    bad = _table(["messages"], [[[{"role": "user", "content": "a"}]], [[{"speaker": "x"}]]], "chat.jsonl")
    assert _error(convert_table, bad) == ("Row 2: a message lacks role/content (OpenAI) or from/value (ShareGPT). "
                                          'Fix: write messages like {"role": "user", "content": "..."}.')


def test_unknown_task() -> None:
    assert _error(convert_table, _table(["text"], [["a"]]), task="summarize") == \
        "Unknown task 'summarize'. Fix: use one of: sentiment, instruction, chat."


# ---------------------------------------------------------------- output and registration
def test_write_jsonl_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "train.jsonl"
    write_jsonl([{"instruction": "i", "input": "好", "output": "o"}], out)
    assert out.read_text(encoding="utf-8") == '{"instruction": "i", "input": "好", "output": "o"}\n'

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        write_jsonl([{"instruction": "new", "input": "", "output": "x"}] * 1000, out)
    assert out.read_text(encoding="utf-8") == '{"instruction": "i", "input": "好", "output": "o"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.jsonl"]  # no temp file left behind


def test_register_dataset_merges_and_loads_by_name(tmp_path: Path) -> None:
    from studio.data.dataset import load_rows
    info = tmp_path / "dataset_info.json"
    info.write_text(json.dumps({"other": {"file_name": "o.json"}}), encoding="utf-8")
    rows = [{"instruction": "i", "input": "a", "output": "positive"}, {"instruction": "j", "input": "", "output": "b",
                                                                      "system": "s", "history": [["q", "a"]]}]
    write_jsonl(rows, tmp_path / "reviews.jsonl")
    assert register_dataset(tmp_path, "reviews", tmp_path / "reviews.jsonl", rows) == info
    assert json.loads(info.read_text(encoding="utf-8")) == {
        "other": {"file_name": "o.json"},
        "reviews": {"file_name": "reviews.jsonl", "formatting": "alpaca",
                    "columns": {"prompt": "instruction", "query": "input", "response": "output",
                                "system": "system", "history": "history"},
                    "studio": {"kind": "sft", "rows": 2}}}
    assert load_rows("reviews", str(tmp_path))[0] == rows[0]


def test_register_dataset_outside_dir_and_broken_info(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    # a file outside the folder is refused: the loader reads file_name inside dataset_dir only
    assert _error(register_dataset, data_dir, "x", tmp_path / "x.jsonl").startswith(
        f"'{tmp_path / 'x.jsonl'}' is outside the dataset folder")
    assert not (data_dir / "dataset_info.json").exists()
    (data_dir / "dataset_info.json").write_text("{broken", encoding="utf-8")
    message = _error(register_dataset, data_dir, "y", data_dir / "y.jsonl")
    assert message.startswith(f"'{data_dir / 'dataset_info.json'}' is not valid JSON (")
    assert message.endswith("Fix: fix or delete it, then convert again.")
    assert (data_dir / "dataset_info.json").read_text() == "{broken"


def test_file_mixing_openai_and_sharegpt_rows(tmp_path: Path) -> None:
    p = tmp_path / "mixed.jsonl"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]})
                 + "\n" + json.dumps({"conversations": [{"from": "human", "value": "c"}, {"from": "gpt", "value": "d"}]})
                 + "\n" + json.dumps({"id": 3}) + "\n", encoding="utf-8")
    r = convert_table(read_table(p))
    assert [(row["instruction"], row["output"]) for row in r.rows] == [("a", "b"), ("c", "d")]
    assert r.skipped == {"no assistant reply": [3]}


def test_a_headline_and_its_lead_are_read_as_one_text(tmp_path: Path) -> None:
    """Several text columns are one text, one cell per line, in the order picked; on the page, in the CLI, and in
    the page's view of what the model reads."""
    from studio.app.datasets import model_view
    from studio.data.readers import read_table
    src = tmp_path / "news.csv"
    src.write_text("标题,导语,情感\n股市大涨,投资者信心恢复,正面\n工厂停产,数百人失业,负面\n天气晴,,中性\n",
                   encoding="utf-8")
    table = read_table(src)
    r = convert_table(table, "sentiment", text_column=["标题", "导语"], label_column="情感")
    assert [row["input"] for row in r.rows] == ["股市大涨\n投资者信心恢复", "工厂停产\n数百人失业", "天气晴"]
    assert [row["output"] for row in r.rows] == ["正面", "负面", "中性"] and r.columns["text"] == "标题 + 导语"
    view = model_view(table, "sentiment", {"text": ["标题", "导语"], "label": "情感"}, "", "")
    assert view == r.rows[0]
    with pytest.raises(StudioError):  # the label column cannot be one of the texts
        convert_table(table, "sentiment", text_column=["标题", "情感"], label_column="情感")
