"""python -m studio estimate: JSON and table output, exit codes, and user errors without tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_json_output_has_the_promised_keys(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["estimate", "--model", "llama3-8b", "--method", "qlora", "--gpu-mem", "24", "--seq-len", "1024",
               "--batch", "1", "--grad-ckpt", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["fits"] is True and out["suggestions"] == []
    assert set(out["breakdown"]) == {"weights", "gradients", "optimizer", "activations", "logits", "overhead"}
    assert 0 < out["gpu_gb"] < 24 and out["cpu_gb"] > 0 and out["plan"]["quant_bits"] == 4


def test_table_says_does_not_fit_and_lists_fixes(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["estimate", "--model", "llama2-7b", "--method", "full", "--gpu-mem", "24"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "Model: llama2-7b (6.74B parameters" in out and "DOES NOT FIT:" in out and "of 24 GB" in out
    assert "To make it fit (cheapest first):\n  1. " in out and "= GPU peak" in out


def test_config_file_with_an_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.yaml"
    run.write_text("model_name_or_path: qwen2.5-7b\nfinetuning_type: lora\ncutoff_len: 512\n"
                   "per_device_train_batch_size: 2\n", encoding="utf-8")
    assert main(["estimate", "--config", str(run), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["estimate", "--config", str(run), "--method", "qlora", "--json"]) == 0
    qlora = json.loads(capsys.readouterr().out)
    assert plain["plan"]["seq_len"] == 512 and plain["plan"]["batch"] == 2 and plain["plan"]["method"] == "lora"
    assert qlora["plan"]["method"] == "qlora" and qlora["gpu_gb"] < plain["gpu_gb"]


def test_shipped_recipe_on_cpu() -> None:
    proc = subprocess.run([sys.executable, "-m", "studio", "estimate", "--config",
                           "presets/recipes/tiny-demo-cpu.yaml", "--device", "cpu", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["gpu_gb"] == 0 and 0.4 < out["cpu_gb"] < 2 and out["plan"]["precision"] == "fp32"


def test_unknown_model_is_a_plain_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "studio", "estimate", "--model", "acme/nope"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("Error: No architecture card for model 'acme/nope'. Fix: use one of: tiny-demo, ")
    assert "or give a local model folder that holds config.json." in proc.stderr


def test_bad_numbers_are_user_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "llama3-8b", "--seq-len", "0"]) == 2
    assert "Error: --seq-len must be at least 1 (got 0). Fix: give a positive number." in capsys.readouterr().err


def test_gpu_mem_auto(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import studio.cli.estimate as cli
    monkeypatch.setattr(cli, "detect_gpu_mem_gb", lambda: None)
    assert main(["estimate", "--model", "llama3-8b", "--gpu-mem", "auto"]) == 2
    assert "Error: --gpu-mem auto found no GPU (nvidia-smi, amd-smi and rocm-smi are missing or failed). Fix: give the card's " \
           "memory in GB, e.g. --gpu-mem 24." in capsys.readouterr().err
    monkeypatch.setattr(cli, "detect_gpu_mem_gb", lambda: 80.0)
    assert main(["estimate", "--model", "llama3-8b", "--gpu-mem", "auto", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mem_gb"] == 80.0


def test_model_flags_and_a_config_file_of_the_same_plan_agree(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--model builds the run config its flags describe (the plain plan of cli/estimate.MODEL_PLAN under them), so
    the same plan written as a file gives the same estimate, and the same fixes in the same RunConfig settings."""
    run = tmp_path / "run.yaml"
    run.write_text("model_name_or_path: mistral-7b\nfinetuning_type: full\ncutoff_len: 4096\n"
                   "per_device_train_batch_size: 8\ngradient_checkpointing: false\nselective_logits: false\n",
                   encoding="utf-8")
    assert main(["estimate", "--model", "mistral-7b", "--method", "full", "--seq-len", "4096", "--batch", "8",
                 "--gpu-mem", "24", "--json"]) == 1
    flags = json.loads(capsys.readouterr().out)
    assert main(["estimate", "--config", str(run), "--gpu-mem", "24", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == flags
    batch = next(d for d in flags["suggestion_details"] if d["settings"].get("per_device_train_batch_size") == 1)
    assert batch["settings"]["gradient_accumulation_steps"] == 8
