"""docs/ROBUSTNESS.md publishes the suite's table: one row per class (harness.GROUPS), no case with a wrong
verdict. A class added to the harness without its row, or a published table that shows a case which survived,
crashed or escaped, fails here; a case that reaches a wrong verdict fails its own test (``harness.expect``) and
makes ``python -m tests.robustness.report`` exit non-zero."""
from __future__ import annotations

import re

from tests.robustness.harness import COLUMNS, GROUPS, ROOT, table
from tests.robustness import report

DOC = ROOT / "docs" / "ROBUSTNESS.md"


def _published() -> dict[str, list[int]]:
    text = DOC.read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == len(COLUMNS) + 1 and all(re.fullmatch(r"\d+", c) for c in cells[1:]):
            rows[cells[0]] = [int(c) for c in cells[1:]]
    return rows


def test_every_class_has_its_row_in_the_published_table() -> None:
    rows = _published()
    missing = [g for g in GROUPS if g not in rows]
    assert not missing, f"docs/ROBUSTNESS.md has no row for {missing}: run python -m tests.robustness.report"


def test_the_published_table_has_no_case_with_a_wrong_verdict() -> None:
    bad = {g: c for g, c in _published().items() if any(c[2:])}
    assert not bad, f"docs/ROBUSTNESS.md publishes wrong verdicts (survived / crash / escaped): {bad}"


def test_the_report_fails_on_any_wrong_verdict() -> None:
    results = [{"group": GROUPS[0], "channel": "python", "name": "n", "outcome": "survived", "detail": ""}]
    assert report.wrong(results) == results
    assert report.wrong([{**results[0], "outcome": "clear"}]) == []
    assert "| " + GROUPS[-1] + " |" in table([])
