"""Cells written for a spreadsheet: the one rule every CSV the studio writes follows (predictions, feedback)."""
from __future__ import annotations

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(cell: object) -> str:
    """A cell a spreadsheet will not run: text starting like a formula gets a leading "'" (OWASP CSV injection)."""
    text = "" if cell is None else str(cell)
    return "'" + text if text.startswith(_FORMULA_START) else text
