"""Leakage check: checking a run on rows it trained on says how many, with the accuracy on the rest."""
from __future__ import annotations

import json
from pathlib import Path

from studio.data.fingerprint import prompt_key
from studio.evaluation import inference
from studio.evaluation.leakage import leakage, training_keys
from studio.runs.run_dir import RunDir


def test_the_fingerprint_ignores_spacing_case_and_width_but_not_the_text():
    row = {"instruction": "Classify the review.", "input": "Great  phone,\nloved it"}
    assert prompt_key(row) == prompt_key({"instruction": "classify the review.", "input": " Ｇｒｅａｔ phone, loved it",
                                          "output": "anything"})
    assert prompt_key(row) != prompt_key({**row, "input": "Great phone, hated it"})
    assert prompt_key(row) != prompt_key({"instruction": "Classify the review. Great phone, loved it", "input": ""})


def test_leakage_counts_seen_rows_and_scores_the_rest():
    rows = [{"instruction": "i", "input": str(k)} for k in range(4)]
    keys = {prompt_key(rows[0]), prompt_key(rows[1])}
    assert leakage(rows, [True, True, False, True], keys) == {"rows": 4, "seen_rows": 2, "unseen_rows": 2,
                                                              "unseen_accuracy": 0.5}
    assert leakage(rows[:2], [True, False], keys)["unseen_accuracy"] is None
    assert leakage(rows, [True] * 4, None) is None


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_trained_run_keeps_its_training_fingerprints_and_the_check_reports_leakage(runs, tmp_path):
    from studio.config.run_config import RunConfig
    from studio.data.dataset import split_rows
    run = RunDir(runs["lora"])
    keys = training_keys(run.path)
    cfg = RunConfig.load(run.config)
    train_rows, _ = split_rows(_lines(Path(runs["data"])), cfg.val_size, cfg.seed)
    assert run.train_keys.is_file() and keys == {prompt_key(r) for r in train_rows}
    val = _lines(run.val_data)
    # this tiny data repeats its prompts, so held-out rows can be copies of training rows: leaked too
    copies = sum(prompt_key(r) in keys for r in val)
    fresh = [r for r in runs["heldout"] if prompt_key(r) not in keys]  # other things, never trained on
    assert len(fresh) >= 10

    mixed = tmp_path / "mixed.jsonl"  # 10 training rows + the held-out rows that are not copies of them
    mixed.write_text("".join(json.dumps(r) + "\n" for r in train_rows[:10] + fresh), encoding="utf-8")
    r = inference.sentiment_check(str(run.path), str(mixed))
    leak = r["leakage"]
    assert leak["seen_rows"] == 10 and leak["unseen_rows"] == len(fresh) and leak["rows"] == r["n"]
    only_fresh = tmp_path / "fresh.jsonl"
    only_fresh.write_text("".join(json.dumps(r) + "\n" for r in fresh), encoding="utf-8")
    alone = inference.sentiment_check(str(run.path), str(only_fresh))
    assert alone["leakage"]["seen_rows"] == 0
    assert abs(leak["unseen_accuracy"] - alone["accuracy"]) < 1e-9
    held_out = inference.sentiment_check(str(run.path))  # the run's own held-out rows: copies are counted
    assert held_out["leakage"]["seen_rows"] == copies

    from studio.ui import evaluate_tab as tab
    summary = tab.on_check(str(run.path), "upload", str(mixed), "score", 0, "en")[0]
    assert f"10 of {r['n']} rows were training rows" in summary and f"{len(fresh)} rows it never saw" in summary


def test_an_older_run_without_the_file_re_derives_its_training_rows(runs, tmp_path):
    import shutil
    old = tmp_path / "old-run"
    shutil.copytree(runs["lora"], old)
    RunDir(old).train_keys.unlink()
    assert training_keys(old) == training_keys(runs["lora"])
    assert training_keys(tmp_path) is None  # not a run: unknown, not "no leakage"
