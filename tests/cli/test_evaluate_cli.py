"""python -m studio eval: --json prints exactly one JSON object; human output; errors."""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


from studio.cli import evaluate as evaluate_cli

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"accuracy", "macro_f1", "per_class", "confusion", "n", "unparseable", "misclassified", "latency_ms_per_row",
        "mode", "labels", "task"}



def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    evaluate_cli.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_json_stdout_is_one_object_in_a_real_process(runs: dict) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, "-m", "studio", "eval", "--model", str(runs["lora"]), "--data",
                           str(runs["heldout_file"]), "--task", "sentiment", "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1  # warnings and loading chatter went to stderr
    result = json.loads(lines[0])
    assert KEYS <= set(result)
    assert result["n"] == 30 and result["task"] == "sentiment" and result["mode"] == "score"
    assert set(result["per_class"]) == {"negative", "positive"}
    assert set(result["per_class"]["positive"]) == {"precision", "recall", "f1", "support"}
    assert result["confusion"]["labels"] == ["negative", "positive"]
    assert sum(map(sum, result["confusion"]["matrix"])) == 30


def test_compare_base_and_predictions_csv(runs: dict, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out_csv = tmp_path / "pred.csv"
    code = evaluate_cli.main(_args("--model", str(runs["lora"]), "--data", str(runs["heldout_file"]), "--json",
                                   "--compare-base", "--predictions-out", str(out_csv), "--max-rows", "20"))
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 20 and result["base"]["n"] == 20
    assert result["delta"]["accuracy"] == pytest.approx(result["accuracy"] - result["base"]["accuracy"])
    assert result["delta"]["accuracy"] > 0.2  # the adapter learned the task; the base did not
    with open(out_csv, encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 20


def test_default_data_is_the_validation_split_and_human_output(runs: dict, capsys: pytest.CaptureFixture) -> None:
    # a full fine-tune: --compare-base loads the base model from the run's config
    assert evaluate_cli.main(_args("--model", str(runs["full"]), "--mode", "generate", "--compare-base")) == 0
    out = capsys.readouterr().out
    assert "n=32" in out and "mode=generate" in out  # 20% of 160 rows held out by the engine
    lines = out.splitlines()
    assert lines[1].startswith("base model accuracy ")
    assert lines[2].split() == ["base", "fine-tuned"]  # the scorecard's measured columns, side by side
    assert [ln.split()[:2] for ln in lines[3:7]] == [["accuracy", lines[3].split()[1]], ["macro-F1", lines[4].split()[1]],
                                                    ["latency", "ms/answer"], ["model", "memory"]]
    base_mb, tuned_mb = map(float, lines[6].split()[-2:])
    assert base_mb == tuned_mb > 0  # a full fine-tune: same architecture on both sides
    assert lines[7].split() == ["label", "precision", "recall", "f1", "support"]


def test_generate_task_with_a_prompt(runs: dict, capsys: pytest.CaptureFixture) -> None:
    row = runs["heldout"][0]
    assert evaluate_cli.main(_args("--model", str(runs["full"]), "--task", "generate", "--prompt",
                                   row["instruction"], "--input", row["input"], "--max-new-tokens", "5",
                                   "--json")) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["task"] == "generate" and result["n"] == 1
    assert result["outputs"][0]["answer"] == row["output"]


def test_user_errors_exit_2_with_a_message(runs: dict, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from studio.cli.main import main
    missing = tmp_path / "nope.jsonl"
    assert main(["eval", "--model", str(runs["lora"]), "--data", str(missing), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().endswith(f"Error: Data file '{missing}' does not exist. Fix: check the path.")
