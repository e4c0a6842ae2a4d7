"""Small helpers shared by engine/CLI tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``python -m studio ...`` from the repo root, capturing output."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "studio", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def losses(run_dir: Path) -> list[float]:
    from studio.runs import RunDir
    return [e["loss"] for e in RunDir(run_dir).events() if e["type"] == "progress" and e["loss"] is not None]
