"""bench/keep_best.py and bench/generation_check.py run end to end in their CI size and print their results."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _quick(script: str, tmp_path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("BENCH_RESULT "))
    assert "uptime before" in proc.stdout and "uptime after" in proc.stdout
    return json.loads(line.split(" ", 1)[1])


def test_keep_best_bench_compares_the_last_step_the_best_and_early_stop(tmp_path: Path) -> None:
    result = _quick("keep_best.py", tmp_path)
    assert set(result) == {"last", "best", "early"}
    assert result["last"]["kept_step"] == result["last"]["steps"] and not result["last"]["held_out"]
    assert result["best"]["held_out"] and result["best"]["kept_step"] <= result["best"]["steps"]
    assert all(0 <= r["test_accuracy"] <= 1 for r in result.values())


def test_generation_check_bench_scores_base_and_tuned(tmp_path: Path) -> None:
    result = _quick("generation_check.py", tmp_path)
    assert result["n"] == 20 and result["eval_wall_s"] > 0
    assert set(result["tuned"]) >= {"chrf", "bleu", "rouge_l", "exact_match", "answer_loss", "structure"}
    assert result["tuned"]["structure"]["kind"] == "json"
