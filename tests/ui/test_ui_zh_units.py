"""Durations on a Chinese page are written in Chinese ("12分11秒", not "12m 11s"), wherever the page shows one."""
from __future__ import annotations

import ast
from pathlib import Path

from studio.ui import train_tab
from studio.words.units import fmt_seconds

ROOT = Path(__file__).resolve().parents[2]


def test_units_in_each_language() -> None:
    assert [fmt_seconds(s, "zh") for s in (22, 731, 3900)] == ["22秒", "12分11秒", "1小时05分"]
    assert [fmt_seconds(s, "en") for s in (22, 731, 3900)] == ["22s", "12m 11s", "1h 05m"]
    assert fmt_seconds(None, "zh") == "–"


def test_every_duration_the_page_writes_names_its_language() -> None:
    """A call without a language writes English units into a Chinese page (the Runs table, the ETA, the Model
    list, the Settings time line all did)."""
    bare = []
    for folder in ("ui", "app"):
        for path in (ROOT / "studio" / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == \
                        "fmt_seconds" and len(node.args) + len(node.keywords) < 2:
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bare, bare


def test_the_train_tabs_eta_in_chinese() -> None:
    snap = {"state": "running", "run": "r", "step": 3, "total_steps": 10, "eta_s": 731}
    assert "12分11秒" in train_tab.status_markdown(snap, "zh")
    assert "12m 11s" in train_tab.status_markdown(snap, "en")
