"""bench/feedback_loop.py --quick end to end: a labels run, its demo server, a teammate's corrections over HTTP, the
owner's datasets, SFT and DPO from the same feedback, held-out accuracy -- on the tiny pre-trained test model (the
full bench's Gemma 3 270M takes ~45 s for two steps alone), with every field of the JSON checked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import skip_without_english_corpus

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_feedback_loop_quick(tmp_path: Path, tiny_model_dir: Path) -> None:
    skip_without_english_corpus()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "feedback_loop.py"), "--quick", "--out",
                           str(tmp_path / "out"), "--model", str(tiny_model_dir), "--threads", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - t
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    r = json.loads((tmp_path / "out" / "feedback_loop.json").read_text())
    text = (tmp_path / "out" / "feedback_loop.txt").read_text()

    assert r["bench"] == "feedback_loop" and r["quick"] is True and r["model"] == str(tiny_model_dir)
    assert r["rows"]["train"] == 20 and r["rows"]["feedback"] == 30 and r["rows"]["test"] == 30
    fb = r["feedback"]
    assert fb["asked"] == 30 and fb["page_right"] + fb["corrections_sent"] == 30
    assert fb["corrections_sent"] >= 1 and fb["stored"] == fb["accepted"] == fb["corrections_sent"]
    assert fb["demo_start_s"] > 0 and fb["teammate_wall_s"] > 0
    # every correction is a wrong answer: one SFT row and one (correction, rejected answer) pair each
    assert r["datasets"]["sft"] == r["datasets"]["ranking"] == fb["corrections_sent"]
    assert r["sft_replay_note"].startswith("replay: ")
    for key in ("before", "after_sft", "after_dpo"):
        acc = r["accuracy"][key]
        assert acc["n"] == 30 and 0 <= acc["correct"] <= 30 and acc["accuracy"] == round(acc["correct"] / 30, 4)
    for key in ("before", "after_sft", "after_dpo"):   # the runs' answers on the rows the teammate corrected
        fixed = r["corrected_rows"][key]
        assert fixed["n"] == fb["corrections_sent"] and 0 <= fixed["correct"] <= fixed["n"]
    assert r["corrected_rows"]["before"]["correct"] == 0   # each was a wrong answer of the labels run
    stages = {"labels": "sft", "improved-sft": "sft", "improved-dpo": "dpo"}
    for name, stage in stages.items():
        tr = r["trainings"][name]
        assert tr["stage"] == stage and tr["steps"] == 2
        assert 0 < tr["cpu_s"] < 600 and 0 < tr["wall_s"] < 600 and 0.05 < tr["peak_rss_gib"] < 64
        assert tr["final_loss"] is not None and tr["final_loss"] == tr["final_loss"]  # not NaN
    ratio = r["trainings"]["improved-dpo"]["peak_rss_gib"] / r["trainings"]["improved-sft"]["peak_rss_gib"]
    assert r["dpo_sft_peak_rss_ratio"] == pytest.approx(ratio, abs=0.01)
    assert r["dpo_beats_sft"] == (r["accuracy"]["after_dpo"]["accuracy"] > r["accuracy"]["after_sft"]["accuracy"])
    assert len(r["load_start"]) == len(r["load_end"]) == 3 and r["nproc"] >= 1
    assert "| improved-dpo |" in text and "DPO / SFT peak RSS" in text
    # the feedback really went through the demo server: the store under the workspace holds the teammate's rows
    from studio.feedback.store import FeedbackStore
    rows = list(FeedbackStore.in_workspace(tmp_path / "out" / "workspace").iter_rows(run="labels"))
    assert len(rows) == fb["stored"] and {x.login for x in rows} == {"teammate"}
    assert all(x.status == "accepted" and x.correction and x.correction != x.answer for x in rows)
    assert took < 90, f"--quick took {took:.0f} s (goal < 90 s)"
    assert r["reused_phases"] == {}

    # a run stopped in its DPO training goes on with --resume: the finished phases are reused, DPO is trained again
    (tmp_path / "out" / "improved-dpo.result.json").unlink()
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "feedback_loop.py"), "--quick", "--out",
                           str(tmp_path / "out"), "--model", str(tiny_model_dir), "--threads", "1", "--resume"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    again = json.loads((tmp_path / "out" / "feedback_loop.json").read_text())
    assert set(again["reused_phases"]) == {"labels", "teammate", "improved-sft"}
    assert again["feedback"] == r["feedback"]
    assert again["trainings"]["labels"] == r["trainings"]["labels"]
    assert again["accuracy"]["before"] == r["accuracy"]["before"]
    assert again["trainings"]["improved-dpo"]["steps"] == 2 and (tmp_path / "out" / "improved-dpo.result.json").is_file()
    assert "reused from the run in" in (tmp_path / "out" / "feedback_loop.txt").read_text()
