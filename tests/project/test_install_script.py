"""install.sh checks the Python version before it installs anything, and says what to install.

The pinned packages need Python 3.11+ (transformers, accelerate, TRL, numpy and pandas declare it); an older
python3 used to get as far as pip's resolver errors, or a venv without pip, with nothing saying why.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _fake_python(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "python3"
    exe.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def _install(tmp_path: Path, version: str) -> subprocess.CompletedProcess:
    shutil.copy(ROOT / "install.sh", tmp_path / "install.sh")
    (tmp_path / "requirements.txt").write_text("", encoding="utf-8")
    fake = _fake_python(tmp_path / "bin", version)
    env = {"PATH": f"{fake.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON": str(fake)}
    return subprocess.run(["bash", str(tmp_path / "install.sh")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)


def test_an_old_python_is_refused_with_what_to_install(tmp_path: Path) -> None:
    res = _install(tmp_path, "3.9")
    assert res.returncode != 0
    assert "needs Python 3.11 or newer" in res.stderr and "3.9" in res.stderr, res.stderr
    assert "apt-get install python3.11" in res.stderr
    assert not (tmp_path / ".venv").exists(), "nothing is installed with the wrong Python"


def test_the_required_version_is_what_the_pinned_packages_declare() -> None:
    """The script's floor is the highest Requires-Python of the installed pins (found in this environment)."""
    from importlib import metadata
    floors = []
    for name in ("transformers", "accelerate", "trl", "numpy", "pandas", "torch", "gradio", "peft", "datasets"):
        spec = metadata.metadata(name).get("Requires-Python") or ""
        for part in spec.split(","):
            part = part.strip()
            if part.startswith(">="):
                floors.append(tuple(int(x) for x in part[2:].split(".")[:2]))
    text = (ROOT / "install.sh").read_text(encoding="utf-8")
    assert f"NEED_MAJOR={max(floors)[0]} NEED_MINOR={max(floors)[1]}" in text, max(floors)


def test_a_version_managers_stub_that_runs_nothing_is_passed_over(tmp_path: Path) -> None:
    """pyenv puts a shim for every version it knows on PATH (python3.13 with no 3.13 installed): the script must not
    pick a name that runs nothing over the machine's working python3."""
    shutil.copy(ROOT / "install.sh", tmp_path / "install.sh")
    (tmp_path / "requirements.txt").write_text("", encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "python3.13"
    stub.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n", encoding="utf-8")
    good = bin_dir / "python3"
    good.write_text('#!/bin/sh\ncase "$*" in *version_info*) echo 3.11;; *) echo "ran: $*" >&2; exit 3;; esac\n',
                    encoding="utf-8")
    for exe in (stub, good):
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    res = subprocess.run(["bash", str(tmp_path / "install.sh")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    assert "not a working Python" not in res.stderr, res.stderr
    assert "Python 3.11 has no venv module" in res.stderr, res.stderr  # python3 (3.11) passed the version gate
