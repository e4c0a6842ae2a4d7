"""bench/mutants.py in CI: every named edit to the offload and OOM-recovery code turns its guarding tests red.

DESIGN.md "Mutants": for code that exists for a card or a fault, a passing test is evidence only if breaking the
code makes it fail. The script works on a temporary copy of the repository (it never edits these files) and runs
only the few tests that guard each edit, each pytest a fork of a process that imported torch and transformers once;
under a minute on two cores (the same tests as fresh subprocesses took 2.5-5 minutes).
"""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_every_offload_and_oom_mutant_is_caught():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import mutants
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert len(mutants.MUTANTS) >= 7
    # the guarding tests run unmutated in this same suite (each one is a file under tests/), so the script's own
    # baseline run would only repeat them
    guards = {t.split("::")[0] for m in mutants.MUTANTS for t in m.tests}
    assert all((ROOT / g).is_file() for g in guards)
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "mutants.py"), "--no-baseline"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    print(res.stdout[-4000:])  # the table, visible with -s
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert f"{len(mutants.MUTANTS)} of {len(mutants.MUTANTS)} mutants caught" in res.stdout
    assert "survived |" not in res.stdout
