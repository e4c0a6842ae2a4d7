"""Durations on a Chinese page are written in Chinese ("12分11秒", not "12m 11s"), wherever the page shows one."""
from __future__ import annotations

import pytest

from studio.ui import train_tab
from studio.words.units import fmt_seconds

def test_units_in_each_language() -> None:
    assert [fmt_seconds(s, "zh") for s in (22, 731, 3900)] == ["22秒", "12分11秒", "1小时05分"]
    assert [fmt_seconds(s, "en") for s in (22, 731, 3900)] == ["22s", "12m 11s", "1h 05m"]
    assert fmt_seconds(None, "zh") == "–"


def test_a_duration_is_never_written_without_its_language() -> None:
    """A call without a language wrote English units into a Chinese page (the Runs table, the ETA, the Model list,
    the Settings time line all did): the language is a required argument, so such a call fails the first time it
    runs, wherever it is written."""
    from studio.ui.common import fmt_seconds as page_fmt
    for fmt in (fmt_seconds, page_fmt):
        with pytest.raises(TypeError):
            fmt(22)  # type: ignore[call-arg]
        assert fmt(22, "zh") == "22秒"


def test_the_train_tabs_eta_in_chinese() -> None:
    snap = {"state": "running", "run": "r", "step": 3, "total_steps": 10, "eta_s": 731}
    assert "12分11秒" in train_tab.status_markdown(snap, "zh")
    assert "12m 11s" in train_tab.status_markdown(snap, "en")
