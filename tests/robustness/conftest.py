"""Print the robustness table at the end of any session that ran robustness cases."""
from __future__ import annotations

from typing import Any

from tests.robustness.harness import RESULTS, failures, table


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not RESULTS:
        return
    terminalreporter.write_sep("=", "robustness")
    terminalreporter.write_line(table())
    for r in failures():
        terminalreporter.write_line(f"  {r['outcome']:8} {r['group']} / {r['channel']} / {r['name']}: {r['detail']}")
