"""Tokenize once: the next run on the same rows and settings loads the tokenized features."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.data.cache import ENV_DIR
from studio.engine.run import prepare_data
from studio.runs.run_dir import RunDir
from tests.conftest import make_review_rows


@pytest.fixture(scope="module")
def tok(tmp_path_factory: pytest.TempPathFactory):
    from studio.models.loading import build_tiny_llama, demo_texts, load_tokenizer
    rows = make_review_rows(80, seed=3)
    folder = build_tiny_llama(tmp_path_factory.mktemp("m") / "tiny", demo_texts(rows), hidden=16, layers=1,
                              heads=2, vocab_size=300)
    return load_tokenizer(str(folder))


def _prepare(tmp: Path, tok, rows: list[dict], **cfg_changes):
    cfg = RunConfig(dataset="x.jsonl", output_dir=str(tmp / "runs" / "r"), val_size=0.1, cutoff_len=48,
                    **cfg_changes)
    return prepare_data(cfg, tok, rows, RunDir(cfg.output_dir).ensure())


def test_second_run_loads_identical_features(tmp_path: Path, tok, monkeypatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    rows = make_review_rows(60, seed=1)
    train1, val1, c1 = _prepare(tmp_path, tok, rows)
    train2, val2, c2 = _prepare(tmp_path, tok, rows)
    assert (c1["tokenized_from_cache"], c2["tokenized_from_cache"]) == (False, True)
    assert train1 == train2 and val1 == val2 and c1["truncated"] == c2["truncated"]
    assert list((tmp_path / "runs" / ".token_cache").glob("*.npz"))


@pytest.mark.parametrize("change", ["row", "cutoff_len", "train_on_prompt", "template"])
def test_any_change_to_rows_or_settings_misses(tmp_path: Path, tok, monkeypatch, change: str) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    rows = make_review_rows(40, seed=2)
    _prepare(tmp_path, tok, rows)
    changes: dict = {}
    if change == "row":
        rows = [dict(r) for r in rows]
        rows[5]["output"] = "negative" if rows[5]["output"] == "positive" else "positive"
    elif change == "cutoff_len":
        changes["cutoff_len"] = 20
    elif change == "train_on_prompt":
        changes["train_on_prompt"] = True
    else:
        changes["template"] = "chatml"
    cfg = RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "r"), val_size=0.1, cutoff_len=48)
    cfg = cfg.replace(**changes)
    fresh = prepare_data(cfg, tok, rows, RunDir(cfg.output_dir).ensure())
    assert fresh[2]["tokenized_from_cache"] is False
    # and what was built equals an uncached tokenization
    monkeypatch.setenv(ENV_DIR, "off")
    assert prepare_data(cfg, tok, rows, RunDir(cfg.output_dir))[:2] == fresh[:2]


def test_damaged_entry_is_rebuilt(tmp_path: Path, tok, monkeypatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    rows = make_review_rows(30, seed=4)
    first = _prepare(tmp_path, tok, rows)
    for entry in (tmp_path / "runs" / ".token_cache").glob("*.npz"):
        entry.write_bytes(b"not a zip")
    again = _prepare(tmp_path, tok, rows)
    assert again[2]["tokenized_from_cache"] is False and again[:2] == first[:2]


@pytest.mark.parametrize("template", ["default", "chatml"])
def test_batched_tokenization_equals_row_by_row(tok, template: str) -> None:
    from studio.data.templates import get_template
    from studio.data.tokenize import encode_example, encode_examples
    rows = make_review_rows(25, seed=6)
    rows[3] = {**rows[3], "input": rows[3]["input"] * 12}                    # truncated
    rows[4] = {**rows[4], "history": [["hi", "hello"], ["how are you", "fine"]]}  # chat turns
    tmpl = get_template(template, tok)
    one_by_one = [encode_example(tok, tmpl, r, 40, False) for r in rows]
    assert encode_examples(tok, tmpl, rows, 40, False, batch=7) == one_by_one
    assert any(f["truncated"] for f in one_by_one)


def test_mask_history_is_part_of_the_key(tmp_path: Path, tok, monkeypatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    rows = make_review_rows(30, seed=7)
    rows = [{**r, "history": [["hi", "hello"]]} if i % 3 == 0 else r for i, r in enumerate(rows)]
    every = _prepare(tmp_path, tok, rows, template="chatml")
    last = _prepare(tmp_path, tok, rows, template="chatml", mask_history=True)
    assert (every[2]["tokenized_from_cache"], last[2]["tokenized_from_cache"]) == (False, False)
    n_loss = [sum(sum(label != -100 for label in f["labels"]) for f in feats[0]) for feats in (every, last)]
    assert n_loss[0] > n_loss[1]  # the earlier replies carry loss only without mask_history
    assert _prepare(tmp_path, tok, rows, template="chatml", mask_history=True)[:2] == last[:2]
