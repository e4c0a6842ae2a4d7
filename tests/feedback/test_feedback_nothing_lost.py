"""Nothing accepted is dropped without a word: datasets, exports, the summary and the CLI read every accepted row
(an earlier store read the oldest 10,000 and dropped the rest); "Improve this run" is held to the same in
tests/feedback/test_improve_run.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.data.dataset import load_rows
from studio.feedback.datasets import export_rows, make_datasets
from studio.feedback.store import FeedbackStore

try:
    from feedback_rows import bulk
except ImportError:  # tests/ as a package
    from tests.feedback.feedback_rows import bulk

ROOT = Path(__file__).resolve().parents[2]
N = 10_050  # past the 10,000 rows an earlier store read at most
LIKE = {"instruction": "Classify the sentiment of this tweet.", "input": "example"}


@pytest.mark.integration  # two CLI processes over 10,050 rows: ~5 s
def test_every_accepted_row_reaches_the_datasets_the_export_the_summary_and_the_cli(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    bulk(ws, ({"input": f"tweet {i}", "answer": "neutral", "correction": "negative" if i % 2 else "positive",
               "status": "accepted", "login": f"t{i % 9}"} for i in range(N)))
    store = FeedbackStore.in_workspace(ws)
    made = make_datasets(store, "r", ws / "data", "fb", like=LIKE)
    assert made["sft"]["rows"] == N and made["ranking"]["rows"] == N
    sft = load_rows("fb", str(ws / "data"))
    assert len(sft) == N and sft[-1]["input"] == f"tweet {N - 1}"  # the newest row is there
    lines = export_rows(store.iter_rows(run="r"), tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == N and json.loads(lines[-1])["input"] == f"tweet {N - 1}"
    out = subprocess.run([sys.executable, "-m", "studio", "feedback", "--workspace", str(ws), "summary", "--run", "r"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    counted = json.loads(out.stdout[: out.stdout.rindex("}") + 1])
    assert counted["total"] == N and counted["status"] == {"accepted": N}
    listed = subprocess.run([sys.executable, "-m", "studio", "feedback", "--workspace", str(ws), "list", "--run", "r"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == N
