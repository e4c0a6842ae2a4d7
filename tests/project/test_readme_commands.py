"""README's two commands are the ones CI runs: a newcomer's install/start line and test line."""
from __future__ import annotations

import re

from tests.helpers import ROOT


def _first_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Install, start, test (two commands)", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip()]


def test_readme_gives_two_commands_and_ci_runs_them():
    install_and_start, test = _first_block()
    assert install_and_start == "bash install.sh && .venv/bin/python launch.py"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "bash install.sh" in ci                      # CI cannot keep a server running: the install half
    assert test in ci, f"CI does not run README's test line {test!r}"


def test_the_chinese_readme_gives_the_same_two_commands():
    """README.zh.md is the same page for Chinese readers: its first commands are the ones CI runs, word for word."""
    zh = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", zh, re.S).group(1)
    assert [ln for ln in block.splitlines() if ln.strip()] == _first_block()
