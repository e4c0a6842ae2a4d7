"""One dataset registry (studio/data/registry.py): LLaMA-Factory's dataset_info.json, with the studio's own facts of
an entry under one extra key; every surface that makes a dataset registers there and nowhere else."""
from __future__ import annotations

import json
from pathlib import Path

from studio.app.context import AppContext
from studio.app.datasets import convert_upload, datasets
from studio.data.convert import convert_file
from studio.data.dataset import load_rows
from studio.data.registry import FACTS, OLD_FACTS_FILE, clean_name, facts, register_dataset

ROWS = [{"instruction": "Sentiment?", "input": f"text {i}", "output": "positive" if i % 2 else "negative"}
        for i in range(6)]


def _csv(path: Path) -> Path:
    path.write_text("review,stars\n" + "".join(f"nice {i},{'good' if i % 2 else 'bad'}\n" for i in range(8)),
                    encoding="utf-8")
    return path


def test_an_entry_is_llamafactorys_with_the_studios_facts_beside(tmp_path: Path) -> None:
    out = tmp_path / "reviews.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    register_dataset(tmp_path, "reviews", out, ROWS, task="sentiment", source="reviews.csv")
    entry = json.loads((tmp_path / "dataset_info.json").read_text())["reviews"]
    assert entry["file_name"] == "reviews.jsonl" and entry["formatting"] == "alpaca"
    assert entry["columns"] == {"prompt": "instruction", "query": "input", "response": "output"}
    assert entry[FACTS] == {"kind": "sft", "rows": 6, "task": "sentiment", "source": "reviews.csv"}
    assert load_rows("reviews", str(tmp_path)) == ROWS  # the studio's loader (LLaMA-Factory's rules) reads it
    assert facts(tmp_path) == {"reviews.jsonl": entry[FACTS]}


def test_an_older_studios_second_registry_is_read_not_written(tmp_path: Path) -> None:
    (tmp_path / OLD_FACTS_FILE).write_text(json.dumps({"old.jsonl": {"task": "instruction", "rows": 3}}))
    out = tmp_path / "new.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    before = (tmp_path / OLD_FACTS_FILE).read_text()
    register_dataset(tmp_path, "new", out, ROWS, task="sentiment")
    assert facts(tmp_path)["old.jsonl"] == {"task": "instruction", "rows": 3}
    assert facts(tmp_path)["new.jsonl"]["task"] == "sentiment"
    assert (tmp_path / OLD_FACTS_FILE).read_text() == before


def test_the_page_and_the_command_line_register_in_the_one_file(tmp_path: Path) -> None:
    ctx = AppContext.create(tmp_path / "ws")
    src = _csv(tmp_path / "My reviews (2024).csv")
    made = convert_upload(ctx, str(src), "sentiment", {"text": "review", "label": "stars"}, "", "", "")
    assert made.name == clean_name(src.stem) == "My_reviews_2024"
    convert_file(src, ctx.data_root / "cli.jsonl", "sentiment", text_column="review", label_column="stars")
    assert sorted(p.name for p in ctx.data_root.iterdir()) == ["My_reviews_2024.jsonl", "cli.jsonl",
                                                               "dataset_info.json"]
    known = facts(ctx.data_root)
    assert known["My_reviews_2024.jsonl"]["source"] == known["cli.jsonl"]["source"] == src.name
    assert {d["name"]: (d["task"], d["rows"]) for d in datasets(ctx)} == {
        "My_reviews_2024": ("sentiment", 8), "cli": ("sentiment", 8)}
    again = convert_upload(ctx, str(src), "sentiment", {"text": "review", "label": "stars"}, "", "", "")
    assert again.path == made.path  # the same file converted again replaces its own dataset
