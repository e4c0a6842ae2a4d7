"""Amounts shown to a person: durations, in the page's language."""
from __future__ import annotations

import math

# (hours, minutes, seconds) units; Chinese writes them after the number with no space
_UNITS = {"en": ("h", "m", "s", " "), "zh": ("小时", "分", "秒", "")}


def fmt_seconds(seconds: float | None, lang: str) -> str:
    """'12m 11s' / '12分11秒': whole seconds under a minute, minutes and seconds under an hour, else hours and
    minutes. ``lang`` has no default: a duration written without one put English units on a Chinese page."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    h, m, sec, gap = _UNITS.get(lang, _UNITS["en"])
    s = int(round(seconds))
    if s < 60:
        return f"{s}{sec}"
    if s < 3600:
        return f"{s // 60}{m}{gap}{s % 60:02d}{sec}"
    return f"{s // 3600}{h}{gap}{(s % 3600) // 60:02d}{m}"
