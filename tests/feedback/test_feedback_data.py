"""Feedback becomes data: instruction, ranking and KTO datasets registered for the loader; conflicts shown, not
merged; exports neutralise formulas; the CLI verb drives it end to end."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from studio.data.dataset import load_rows
from studio.errors import StudioError
from studio.feedback.datasets import count_rows, export_rows, make_datasets, training_rows
from studio.feedback.store import FeedbackStore

try:
    from helpers import run_cli
except ImportError:  # tests/ as a package
    from tests.helpers import run_cli

LIKE = {"instruction": "Classify the sentiment of this tweet.", "input": "example"}


def _store(tmp_path: Path) -> FeedbackStore:
    s = FeedbackStore(tmp_path / "ws")
    a = s.add(run="r", login="ann", input="late again", answer="neutral", verdict="down", correction="negative")
    b = s.add(run="r", login="bob", input="thanks crew!", answer="positive", verdict="up")
    c = s.add(run="r", login="cat", input="seat was ok", answer="positive", verdict="down", correction="neutral")
    d = s.add(run="r", login="dan", input="Seat  was OK", answer="positive", verdict="down", correction="negative")
    e = s.add(run="r", login="eve", input="lost my bag", answer="positive", verdict="down", correction="negative")
    for fid in (a, b, c, d):
        s.review(fid, reviewer="owner", status="accepted")
    s.review(e, reviewer="owner", status="dropped")
    return s


def test_two_logins_correcting_the_same_input_differently_is_a_conflict(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (clash,) = store.conflicts("r")
    assert clash.input == "seat was ok"
    assert {a: [w for w, _ in who] for a, who in clash.answers.items()} == {"neutral": ["cat"], "negative": ["dan"]}
    assert count_rows(store, "r", LIKE)["skipped"] == 2  # neither answer is merged into the data
    built = list(training_rows(store.iter_rows(run="r"), LIKE, store.conflict_keys("r")))
    assert all("seat" not in r["input"].lower() for _, r in built if r)
    assert store.summary("r")["conflicts"] == 1 and store.summary("r")["login"]["ann"] == 1


def test_accepted_rows_become_three_registered_datasets(tmp_path: Path) -> None:
    store = _store(tmp_path)
    data = tmp_path / "data"
    made = make_datasets(store, "r", data, "fb", like=LIKE)
    assert (made["sft"]["rows"], made["ranking"]["rows"], made["kto"]["rows"]) == (1, 1, 3)
    sft = load_rows("fb", str(data))
    assert sft == [{"instruction": LIKE["instruction"], "input": "late again", "output": "negative"}]
    pref = load_rows("fb_pref", str(data), "ranking")
    assert pref == [{"instruction": LIKE["instruction"], "input": "late again", "chosen": "negative",
                     "rejected": "neutral"}]
    kto = load_rows("fb_kto", str(data), "kto")
    assert sorted((r["input"], r["output"], r["kto_tag"]) for r in kto) == [
        ("late again", "negative", True), ("late again", "neutral", False), ("thanks crew!", "positive", True)]
    info = json.loads((data / "dataset_info.json").read_text())
    assert info["fb_pref"]["ranking"] is True and "ranking" not in info["fb"]
    with pytest.raises(StudioError) as again:  # never replaced without asking
        make_datasets(store, "r", data, "fb", like=LIKE)
    assert again.value.code.startswith("data.name_taken")
    make_datasets(store, "r", data, "fb", like=LIKE, replace=True)


def test_a_chat_run_takes_the_text_as_the_instruction(tmp_path: Path) -> None:
    s = FeedbackStore(tmp_path)
    fid = s.add(run="c", login="ann", input="Write a haiku", answer="no", verdict="down", correction="Autumn moon")
    s.review(fid, reviewer="o", status="accepted")
    assert [r for kind, r in training_rows(s.iter_rows(), {"instruction": "hi", "input": ""}, set())
            if kind == "sft"] == [{"instruction": "Write a haiku", "input": "", "output": "Autumn moon"}]


def test_no_accepted_row_is_a_clear_error(tmp_path: Path) -> None:
    s = FeedbackStore(tmp_path)
    s.add(run="r", login="ann", input="x", answer="y", verdict="down", correction="z")
    with pytest.raises(StudioError, match="no accepted feedback"):
        make_datasets(s, "r", tmp_path / "data", "fb")
    with pytest.raises(StudioError):
        make_datasets(s, "r", tmp_path / "data", "../escape")


def test_exports_neutralise_formulas_and_keep_every_field(tmp_path: Path) -> None:
    s = FeedbackStore(tmp_path)
    s.add(run="r", login="ann", input="=HYPERLINK(\"http://x\")", answer="+1", verdict="down",
          correction="@SUM(A1)", scores={"neg": 0.5})
    path = export_rows(s.iter_rows(), tmp_path / "fb.csv")
    (row,) = list(csv.DictReader(path.open(encoding="utf-8")))
    assert row["input"].startswith("'=") and row["answer"] == "'+1" and row["correction"] == "'@SUM(A1)"
    assert json.loads(row["scores"]) == {"neg": 0.5}
    (rec,) = [json.loads(line) for line in export_rows(s.iter_rows(), tmp_path / "fb.jsonl").read_text().splitlines()]
    assert rec["input"] == "=HYPERLINK(\"http://x\")"  # JSONL keeps the text as written
    with pytest.raises(StudioError):
        export_rows(s.iter_rows(), tmp_path / "fb.xlsx")


def test_cli_verb_reviews_and_makes_datasets(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run = ws / "runs" / "r"
    run.mkdir(parents=True)
    (run / "val.jsonl").write_text(json.dumps({**LIKE, "output": "positive"}) + "\n")
    out = run_cli("feedback", "--workspace", str(ws), "--as", "ann", "add", "--run", "r", "--input", "late again",
                  "--answer", "neutral", "--verdict", "down", "--correction", "negative")
    assert out.returncode == 0, out.stderr
    fid = out.stdout.strip()
    assert run_cli("feedback", "--workspace", str(ws), "accept", fid).returncode == 0
    listed = run_cli("feedback", "--workspace", str(ws), "list", "--login", "ann")
    assert "accepted" in listed.stdout and "late again" in listed.stdout
    made = run_cli("feedback", "--workspace", str(ws), "make-dataset", "r", "fb")
    assert made.returncode == 0, made.stderr
    assert load_rows("fb", str(ws / "data")) == [{"instruction": LIKE["instruction"], "input": "late again",
                                                 "output": "negative"}]
    bad = run_cli("feedback", "--workspace", str(ws), "make-dataset", "nope", "fb2")
    assert bad.returncode == 2 and "no run 'nope'" in bad.stderr


@pytest.mark.integration
@pytest.mark.parametrize("stage, suffix", [("dpo", "_pref"), ("kto", "_kto"), ("sft", "")])
def test_feedback_datasets_train_by_name(tmp_path: Path, tiny_model_dir: Path, stage: str, suffix: str) -> None:
    """The loop's last step on the engine: the datasets made from feedback train by their registered names."""
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.runs.run_dir import RunDir
    try:
        from conftest import make_review_rows
    except ImportError:
        from tests.conftest import make_review_rows
    store = FeedbackStore(tmp_path / "ws")
    for i, r in enumerate(make_review_rows(24, seed=8)):  # a teammate corrects the base model's habit ("no")
        fid = store.add(run="r", login=f"t{i % 3}", input=r["input"], answer="no", verdict="down",
                        correction=r["output"])
        store.review(fid, reviewer="owner", status="accepted")
    data = tmp_path / "data"
    make_datasets(store, "r", data, "fb", like={"instruction": r["instruction"], "input": "x"})
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset="fb" + suffix, dataset_dir=str(data),
                    stage=stage, finetuning_type="lora", output_dir=str(tmp_path / "run"), max_steps=4,
                    per_device_train_batch_size=4, logging_steps=1, plot_loss=False, cutoff_len=64)
    assert run_training(cfg)["state"] == "finished"
    assert (RunDir(cfg.output_dir).adapter / "adapter_model.safetensors").is_file()
