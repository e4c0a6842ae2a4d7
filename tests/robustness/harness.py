"""Classify what happened when the studio was given a bad input, a fault or an attack.

Every case ends in exactly one outcome:
    ok        valid (odd) input that worked as it should          -> counted in "tried" only
    clear     refused with a StudioError / "Error: ... Fix: ..." / a proper HTTP refusal
    survived  accepted although it is wrong (or a valid input refused): wrong but survived
    crash     a raw traceback, an exception that is not a StudioError, a 5xx
    escaped   a file outside the allowed folders was read, written or deleted; data lost
Every case declares the verdict it must reach (``clear`` for a refusal, ``ok`` for a valid input) and, for a
refusal, a fragment its message must hold (the field, file or column it names); ``expect`` fails the case's test
on any other outcome, so "wrong but survived" is red, not a number in a table. The table is printed at the end
of the session (tests/robustness/conftest.py) and by ``python -m tests.robustness.report``.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from studio.errors import StudioError

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ("bad data files", "bad configs and flags", "faults", "security", "bounded requests", "quotas",
          "names as text", "feedback store", "feedback bounds", "nothing lost", "feedback as data")
COLUMNS = ("tried", "clear error", "wrong but survived", "crash or raw traceback", "data lost or escaped")
_COLUMN_OF = {"clear": 1, "survived": 2, "crash": 3, "escaped": 4}
RESULTS: list[dict[str, Any]] = []


def record(group: str, channel: str, name: str, outcome: str, detail: str = "") -> str:
    assert group in GROUPS and outcome in ("ok", "clear", "survived", "crash", "escaped"), (group, outcome)
    RESULTS.append({"group": group, "channel": channel, "name": name, "outcome": outcome, "detail": detail[:300]})
    out = os.environ.get("STUDIO_ROBUSTNESS_JSON")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(RESULTS[-1]) + "\n")
    return outcome


def expect(outcome: str, detail: str, verdict: str, fragment: str = "") -> None:
    """A case's assertion: it reached ``verdict`` ('clear' or 'ok') and a refusal names ``fragment``.

    Raises:
        AssertionError: any other outcome (a refusal expected but the input accepted fails here), or a refusal
            whose message does not name what it is about.
    """
    assert verdict in ("clear", "ok"), verdict
    assert outcome == verdict, f"expected {verdict}, got {outcome}: {detail}"
    if verdict == "clear" and fragment:
        assert fragment.casefold() in detail.casefold(), f"the message does not name {fragment!r}: {detail}"


def api(fn: Callable[[], Any], expect_error: bool = True, ok: Callable[[Any], bool] | None = None) -> tuple[str, str]:
    """Outcome of a Python API call."""
    try:
        value = fn()
    except StudioError as exc:
        if "Traceback" in exc.message or not exc.what.strip():
            return "crash", exc.message
        return ("clear" if expect_error else "survived"), exc.message
    except Exception as exc:  # noqa: BLE001 - that is exactly what this classifies
        return "crash", f"{type(exc).__name__}: {exc}"
    if expect_error:
        return "survived", f"accepted: {str(value)[:200]}"
    if ok is not None and not ok(value):
        return "survived", f"wrong result: {str(value)[:200]}"
    return "ok", ""


def cli(*args: str, expect_error: bool = True, cwd: Path = ROOT, env: dict | None = None,
        timeout: int = 120) -> tuple[str, str]:
    """Outcome of ``python -m studio ...`` (a real subprocess)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    try:
        res = subprocess.run([sys.executable, "-m", "studio", *args], cwd=cwd, env=full_env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", f"still running after {timeout}s"
    text = res.stdout + res.stderr
    if "Traceback" in text:
        return "crash", text[-300:]
    if res.returncode != 0:
        if "Error:" in res.stderr or "error:" in res.stderr or "usage:" in text:  # ours, argparse's, the help
            return ("clear" if expect_error else "survived"), (text.strip().splitlines() or [""])[-1]
        return "crash", f"exit {res.returncode} without a message: {text[-300:]}"
    return ("survived" if expect_error else "ok"), text[-200:]


def table(results: list[dict[str, Any]] | None = None) -> str:
    """The markdown table: one row per group, plus the total."""
    results = RESULTS if results is None else results
    rows = {g: [0] * len(COLUMNS) for g in GROUPS}
    for r in results:
        counts = rows[r["group"]]
        counts[0] += 1
        if r["outcome"] in _COLUMN_OF:
            counts[_COLUMN_OF[r["outcome"]]] += 1
    total = [sum(c[i] for c in rows.values()) for i in range(len(COLUMNS))]
    lines = ["| group | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    lines += [f"| {g} | " + " | ".join(map(str, c)) + " |" for g, c in rows.items()]
    lines.append("| **total** | " + " | ".join(f"**{n}**" for n in total) + " |")
    channels: dict[str, int] = {}
    for r in results:
        channels[r["channel"]] = channels.get(r["channel"], 0) + 1
    lines.append("")
    lines.append("Cases per channel: " + ", ".join(f"{k} {v}" for k, v in sorted(channels.items())))
    return "\n".join(lines)


def failures(results: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    results = RESULTS if results is None else results
    return [r for r in results if r["outcome"] in ("crash", "escaped", "survived")]


def tree_hash(folder: Path) -> str:
    """One hash of a folder's names and file bytes (links not followed): an outside canary tree is unchanged iff
    its hash is."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(str(p.relative_to(folder)).encode())
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()
