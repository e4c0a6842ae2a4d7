"""The benchmark scripts run end to end in their CI size and report a ratio.

The goals (>= 0.97, >= 1.3) are not asserted: timings on a shared CI machine are noisy;
docs/BENCHMARKS.md reports the measured full-size numbers instead.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RATIO = re.compile(r"^ratio: (\d+(?:\.\d+)?)\b", re.MULTILINE)


@pytest.mark.integration
@pytest.mark.parametrize("script", ["engine_overhead.py", "dynamic_batching.py"])
def test_bench_quick_prints_ratio(script: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = RATIO.findall(proc.stdout)
    assert len(found) == 1, proc.stdout[-3000:]
    assert float(found[0]) > 0
    assert "| " in proc.stdout  # the results table came out


CPU_PAIRED = re.compile(r"^studio / plain per block: .*median paired [\d.]+ wall, (\d+(?:\.\d+)?) CPU", re.MULTILINE)
PREP = re.compile(r"^data preparation, first / cached per block: .*; median (\d+(?:\.\d+)?)", re.MULTILINE)


def _quick(script: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(RATIO.findall(proc.stdout)) == 1 and "| " in proc.stdout, proc.stdout[-3000:]
    return proc.stdout


@pytest.mark.integration
def test_studio_beats_trainer_group_by_length_above_noise() -> None:
    """Throughput (quick): studio's tokens per CPU-second over plain Trainer + group_by_length >= 1.1.

    Why 1.1 and CPU time: on this shared 2-core machine wall time swings 2-4x with other people's load,
    while CPU time of equal work moved by at most ~10% (docs/logs/benchmarks-history.md section 1: identical-work arms,
    per-block CPU ratios 0.90-1.02). A ratio >= 1.1 is therefore not noise; the full bench measured ~1.4
    (docs/logs/benchmarks-history.md section 7), and the 1.3 goal itself is checked there, not here.
    """
    out = _quick("throughput_vs_trainer.py")
    cpu = CPU_PAIRED.findall(out)
    assert cpu and float(cpu[0]) >= 1.1, out[-3000:]


@pytest.mark.integration
def test_peak_memory_with_128k_vocabulary_below_trainer() -> None:
    """Peak memory (quick): studio's peak RSS <= 0.9x the plain Trainer's.

    Why 0.9: peak RSS of the same run repeats within ~3% (bench/memory_bench.py runs), so 0.9 is
    outside noise; the full bench measured 0.34 against the 0.75 goal (docs/logs/benchmarks-history.md section 8).
    """
    out = _quick("peak_memory_vocab.py")
    assert float(RATIO.findall(out)[0]) <= 0.9, out[-3000:]


@pytest.mark.integration
def test_cached_tokenization_prepares_data_sooner() -> None:
    """Token cache (quick, 5k rows): loading cached features is >= 2x faster than tokenizing them.

    Why the data-preparation span and 2x: on 5k rows the whole time to first step is dominated by
    model loading and Trainer set-up (the 5x goal is for 50k rows, full bench); the preparation span
    itself is measured on the same machine back to back, and the full bench shows a much larger gap.
    """
    out = _quick("token_cache.py")
    prep = PREP.findall(out)
    assert prep and float(prep[0]) >= 2.0, out[-3000:]


@pytest.mark.integration
def test_eval_label_scoring_beats_the_naive_per_label_loop() -> None:
    """Evaluation speed (quick, 64 rows, 2 labels): studio's scoring >= 1.3x the naive loop, same scores.

    Why 1.3: with the prompt computed once instead of once per label, two labels of 2 tokens after ~55-token prompts
    leave ~1/2 of the naive work (ideal ratio ~1.9; measured 1.83 and 2.03 per ABBA block,
    docs/logs/benchmarks-history.md section 10). CPU time of equal work moved by <= 10% on this shared machine, so 1.3 is far outside noise while a
    lost cache (ratio ~1.0) fails. The bench itself exits non-zero when any score differs by >= 1e-4.
    """
    out = _quick("eval_speed.py")
    assert float(RATIO.findall(out)[0]) >= 1.3, out[-3000:]


@pytest.mark.integration
def test_training_flops_utilization_above_noise_floor() -> None:
    """FLOP utilization (quick, 48 rows): achieved 6N FLOP/s >= 0.3x the matmul peak measured in the same process.

    Why 0.3: the quick run measured 0.44 (CPU-second basis; the full run and the 0.5 aim are in
    docs/logs/benchmarks-history.md section 11); CPU-time ratios of the same work repeat within ~10%, so 0.3 is well below noise, while a
    regression that, say, fell back to full-vocabulary logits, padded to the longest row or lost the fused
    optimizer would push it under.
    """
    out = _quick("flops_utilization.py")
    assert float(RATIO.findall(out)[0]) >= 0.3, out[-3000:]


@pytest.mark.integration
def test_the_gpu_check_dry_run_exercises_every_section_within_two_minutes(tmp_path: Path) -> None:
    """bash bench/gpu_check.sh --dry-run on this CPU: every section's CPU fallback (setup's check, the 8B/70B script's
    every section, the card tests collected, the emulated offload/OOM tests, the real-model and toggle benches),
    every file in $OUT, timed from the real start: DeepSpeed compiles no op inside it (a fresh extensions folder
    stays empty; its CPU-Adam build took the old dry run to 188 s in a fresh environment)."""
    import shutil
    import time
    if shutil.which("bash") is None or shutil.which("timeout") is None:
        pytest.skip("needs bash and coreutils' timeout")
    extensions = tmp_path / "torch_extensions"
    extensions.mkdir()
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "PYTHON": sys.executable, "TORCH_EXTENSIONS_DIR": str(extensions)}
    t0 = time.time()
    proc = subprocess.run(["bash", "bench/gpu_check.sh", "--dry-run"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=400)
    took = time.time() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {p.name for p in out.iterdir()} == {"gpu_check_summary.md", "gpu_check.log", "rows.txt", "gpu_8b.json",
                                               "gpu_check.json"}
    summary = (out / "gpu_check_summary.md").read_text(encoding="utf-8")
    verdicts = dict(re.findall(r"^\| (\w+) \| ([^|]+?) \|", summary, re.MULTILINE))
    for name in ("setup", "eight_b", "precision_memory", "offload_oom", "real_lora", "kernel_toggles"):
        assert verdicts.get(name) == "ok", (name, summary)
    rows = (out / "rows.txt").read_text(encoding="utf-8").splitlines()
    sections = {ln.split(" | ")[0][5:] for ln in rows if ln.startswith("row: ")}
    assert {"qlora 70b", "lora", "qlora", "3b full ZeRO-3 offload"} <= sections, rows
    assert not [ln for ln in rows if "failed" in ln or "not run" in ln], rows
    assert len([ln for ln in rows if ln.startswith("ratio: ") and "same rows and tokens in every step" in ln]) == 2
    assert "Software: torch" in summary and "how to run this check on a lent card" in proc.stdout
    assert not any(extensions.iterdir()), "the dry run compiled a DeepSpeed op"
    # under two minutes on a machine with a core free; a shared box at load 4 took up to 1.7x as long
    load = os.getloadavg()[0]
    assert took < (120 if load < 3 else 200), f"dry run took {took:.0f} s (load {load:.1f})"


def test_the_card_check_stops_at_setup_and_says_why(tmp_path: Path) -> None:
    """On a machine without a card (or without the carried wheels) the card run stops at setup: exit 2, nothing
    else started, and the summary in $OUT says so (an earlier check only warned, and every studio arm then failed)."""
    import shutil
    if shutil.which("bash") is None or shutil.which("timeout") is None:
        pytest.skip("needs bash and coreutils' timeout")
    env = {**os.environ, "OUT": str(tmp_path), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", "bench/gpu_check.sh", "--limit", "200"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = (tmp_path / "gpu_check_summary.md").read_text(encoding="utf-8")
    assert "STOPPED AT SETUP" in summary and "eight_b" not in summary, summary
    assert "SETUP PROBLEM" in (tmp_path / "gpu_check.log").read_text(encoding="utf-8")
    assert 'bash bench/gpu_check.sh --limit 540", timeout_s 540' in proc.stdout
