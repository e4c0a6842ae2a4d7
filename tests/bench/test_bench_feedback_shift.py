"""bench/feedback_shift.py --quick end to end on the tiny pre-trained test model: a labels run on corpus A, three
teammates through its real demo page (the "least sure" queue on a shifted corpus, random rows of it, a stream the
run handles), the owner's accept, Improve, the gate's verdict, and every run scored on held-out slices with the
noise band; every field of the JSON checked against the workspaces the bench left."""
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
def test_feedback_shift_quick(tmp_path: Path, tiny_model_dir: Path) -> None:
    skip_without_english_corpus()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "feedback_shift.py"), "--quick", "--out", str(out),
                           "--model", str(tiny_model_dir), "--threads", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    took = time.perf_counter() - t
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    r = json.loads((out / "feedback_shift.json").read_text())
    from bench.feedback_shift import QUICK
    from studio.feedback.store import FeedbackStore
    assert r["bench"] == "feedback_shift" and r["quick"] is True and r["sizes"] == QUICK
    assert set(r["arms"]) == {"least_sure", "random", "handled"}
    ls, rnd, hd = (r["arms"][k] for k in ("least_sure", "random", "handled"))
    # the least-sure teammate went through the whole queue the page returned, through the page's endpoints
    assert ls["feedback"]["asked"] == QUICK["queue"]
    assert ls["feedback"]["page_right"] + ls["feedback"]["corrections"] == QUICK["queue"]
    # the random teammate stopped at as many corrections (or ran out of rows)
    assert rnd["feedback"]["corrections"] == ls["feedback"]["corrections"] or \
        rnd["feedback"]["asked"] == QUICK["pool"]
    assert hd["feedback"]["asked"] == QUICK["stream"]
    for arm, a in r["arms"].items():
        rows = list(FeedbackStore.in_workspace(out / arm).iter_rows(run="reviews"))
        assert len(rows) == a["feedback"]["asked"] and {x.login for x in rows} == {"teammate"}
        assert all(x.status == "accepted" for x in rows)
        assert sum(x.verdict == "down" for x in rows) == a["feedback"]["corrections"]
        assert a["plan"]["corrections"] + a["plan"]["confirmed"] + a["plan"]["aside"] == len(rows)
        assert a["plan"]["check_set"]["feedback"] == a["plan"]["aside"]
        v = a["verdict"]
        assert v["n"] == a["plan"]["check_set"]["held_out"] + a["plan"]["check_set"]["feedback"]
        assert v["gate"]["code"] in ("gate.passed", "gate.worse", "gate.forgets")
        assert (out / arm / "runs" / "improved" / "verdict.json").is_file()
    for key in ("b_test", "a_test", "own", "h_test"):
        for arm in r["arms"]:
            s = r["scores"][key][arm]
            assert s["n"] > 0 and 0 <= s["before"] <= 1 and 0 <= s["after"] <= 1
            assert s["delta_points"] == pytest.approx(100 * (s["after"] - s["before"]), abs=0.06)
            assert s["noise_points"] >= 0 and s["flipped_right"] + s["flipped_wrong"] <= s["n"]
    assert set(r["goals"]) == {"shift", "round", "uncertainty", "handled"}
    assert all(text.startswith(("met", "MISSED")) for text in r["goals"].values())
    assert len(r["load_start"]) == len(r["load_end"]) == 3
    assert took < 240, f"--quick took {took:.0f} s"
