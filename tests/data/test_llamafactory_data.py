"""dataset_info.json read as LLaMA-Factory reads it; kinds the studio cannot train are refused up front."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.data.dataset import load_rows
from studio.errors import StudioError


def _info(tmp_path: Path, entries: dict, files: dict) -> str:
    for name, rows in files.items():
        (tmp_path / name).write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "dataset_info.json").write_text(json.dumps(entries), encoding="utf-8")
    return str(tmp_path)


def test_sharegpt_with_columns_and_tags_becomes_turns(tmp_path: Path) -> None:
    conv = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                         {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"},
                         {"role": "assistant", "content": "See you"}]}
    plain = {"conversations": [{"from": "human", "value": "2+2?"}, {"from": "gpt", "value": "4"}]}
    d = _info(tmp_path, {
        "openai": {"file_name": "o.json", "formatting": "sharegpt", "columns": {"messages": "messages"},
                   "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                            "assistant_tag": "assistant", "system_tag": "system"}},
        "classic": {"file_name": "c.json", "formatting": "sharegpt"},
        "renamed": {"file_name": "a.json", "columns": {"prompt": "q", "response": "a", "system": "sys"}},
    }, {"o.json": [conv], "c.json": [plain], "a.json": [{"q": "Name?", "a": "Ann", "sys": "S"}]})
    assert load_rows("openai", d) == [{"instruction": "Bye", "input": "", "output": "See you", "system": "Be brief.",
                                       "history": [["Hi", "Hello"]]}]
    assert load_rows("classic", d) == [{"instruction": "2+2?", "input": "", "output": "4"}]
    assert load_rows("renamed", d) == [{"instruction": "Name?", "input": "", "output": "Ann", "system": "S"}]


@pytest.mark.parametrize("entry, rows, words", [
    ({"file_name": "x.json", "ranking": True, "columns": {"prompt": "instruction", "chosen": "chosen",
                                                         "rejected": "rejected"}},
     [{"instruction": "q", "chosen": "a", "rejected": "b"}], "holds ranking rows.* set stage: dpo"),
    ({"file_name": "x.json", "columns": {"prompt": "text"}}, [{"text": "plain text"}], "pre-training"),
    ({"file_name": "x.json", "formatting": "sharegpt", "columns": {"messages": "conversations", "tools": "tools"}},
     [{"conversations": [], "tools": "[]"}], "tool-call"),
    ({"file_name": "x.json", "formatting": "sharegpt"},
     [{"conversations": [{"from": "human", "value": "q"}, {"from": "function_call", "value": "{}"},
                         {"from": "observation", "value": "r"}, {"from": "gpt", "value": "a"}]}], "tool-call"),
    ({"file_name": "x.json", "columns": {"prompt": "instruction", "kto_tag": "tag"}}, [{}], "holds kto rows.*set stage: kto"),
    ({"file_name": "x.json", "formatting": "sharegpt", "columns": {"messages": "messages", "images": "images"}},
     [{}], "multimodal"),
])
def test_kinds_the_studio_cannot_train_are_refused(tmp_path: Path, entry: dict, rows: list, words: str) -> None:
    d = _info(tmp_path, {"demo": entry}, {"x.json": rows})
    with pytest.raises(StudioError, match=words):
        load_rows("demo", d)


def test_an_unregistered_sharegpt_or_preference_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "conv.json"
    f.write_text(json.dumps([{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}]))
    with pytest.raises(StudioError, match="ShareGPT"):
        load_rows(str(f))
    f.write_text(json.dumps([{"instruction": "q", "chosen": "a", "rejected": "b"}]))
    with pytest.raises(StudioError, match="holds ranking rows.* set stage: dpo"):
        load_rows(str(f))


def test_a_run_without_any_answer_fails_before_training(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.engine.run import prepare_data
    from tests.wordtok import word_tokenizer
    rows = [{"instruction": "q", "input": "", "output": ""}] * 5
    with pytest.raises(StudioError, match="has an answer to learn") as err:
        prepare_data(RunConfig(dataset="x.jsonl", template="studio"), word_tokenizer("q"), rows)
    assert err.value.code == "engine.no_trainable_tokens"


def test_a_numeric_answer_zero_is_kept(tmp_path: Path) -> None:
    """A 0/1 label stored as a number: 0 is an answer, not an empty one (training and evaluation read it alike)."""
    from studio.evaluation.evaluate import load_rows as eval_rows
    f = tmp_path / "labels.jsonl"
    f.write_text('{"instruction": "Label?", "input": "bad", "output": 0}\n'
                 '{"instruction": "Label?", "input": "good", "output": 1}\n', encoding="utf-8")
    expected = [{"instruction": "Label?", "input": "bad", "output": "0"},
                {"instruction": "Label?", "input": "good", "output": "1"}]
    assert load_rows(str(f)) == expected
    assert eval_rows(f) == expected
