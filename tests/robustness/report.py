"""python -m tests.robustness.report [pytest args]: run the robustness suite and print its table.

Exits non-zero when any case reached a wrong verdict: accepted what it must refuse, crashed (raw traceback), or
let data escape / get lost.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.robustness.harness import ROOT, table


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.jsonl"
        env = {**os.environ, "STUDIO_ROBUSTNESS_JSON": str(out), "PYTHONPATH": str(ROOT)}
        rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/robustness",
                              *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        results = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    print("Command: python -m tests.robustness.report")
    print(table(results))
    bad = wrong(results)
    for r in bad:
        print(f"  {r['outcome']}: {r['group']} / {r['channel']} / {r['name']}: {r['detail']}")
    return 1 if bad or rc else 0


def wrong(results: list[dict]) -> list[dict]:
    """Cases with a wrong verdict: accepted when a refusal was due ("survived"), crashed, or escaped."""
    return [r for r in results if r["outcome"] in ("survived", "crash", "escaped")]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
