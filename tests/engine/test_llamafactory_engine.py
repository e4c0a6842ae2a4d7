"""Run-level checks: eval names its template, ZeRO-3 status counts real parameters."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from studio.cli import evaluate as evaluate_cli
from studio.config.run_config import RunConfig
from studio.runs.run_dir import RunDir
from tests.helpers import run_cli



def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    evaluate_cli.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_eval_names_its_template_and_takes_another(runs: dict, capsys: pytest.CaptureFixture) -> None:
    common = ("--model", str(runs["full"]), "--data", str(runs["heldout_file"]), "--json", "--max-rows", "8")
    assert evaluate_cli.main(_args(*common)) == 0
    trained = json.loads(capsys.readouterr().out)
    assert trained["template"] == "studio"  # tiny-demo-style runs: 'auto' without a chat template = studio
    assert evaluate_cli.main(_args(*common, "--template", "alpaca")) == 0
    other = json.loads(capsys.readouterr().out)
    assert other["template"] == "alpaca" and other["n"] == trained["n"] == 8


@pytest.mark.integration
def test_zero3_status_reports_real_parameter_counts(tmp_path: Path, tiny_model_dir: Path,
                                                    sample_reviews_jsonl: Path) -> None:
    from transformers import AutoModelForCausalLM
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), finetuning_type="full", cutoff_len=64,
                    per_device_train_batch_size=8, max_steps=2, save_steps=1000, deepspeed="z3", plot_loss=False,
                    gradient_checkpointing=False)
    cfg.save(tmp_path / "run.yaml")
    res = run_cli("train", str(tmp_path / "run.yaml"), "--quiet")
    assert res.returncode == 0, res.stderr[-3000:]
    status = RunDir(cfg.output_dir).read_status()
    real = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(tiny_model_dir).parameters())
    assert status["total_params"] == status["trainable_params"] == real  # was 0 and 0 under ZeRO-3
