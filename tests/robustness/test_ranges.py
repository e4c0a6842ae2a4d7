"""Every numeric RunConfig field declares its range in one place (the field metadata in
studio/config/run_config.py) and validation refuses values outside it, naming the field. The enumeration
below covers a field the day it is added, so a new number cannot ship unchecked."""
from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from studio.config.run_config import RunConfig, field_meta
from studio.errors import ConfigError
from tests.robustness.harness import api, expect, record

HINTS = typing.get_type_hints(RunConfig)


def _numeric(hint: Any) -> bool:
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return any(a in (int, float) for a in args) and typing.get_origin(hint) is not typing.Literal


NUMERIC = [f for f in dataclasses.fields(RunConfig) if _numeric(HINTS[f.name])]


def _problems(name: str, value: Any) -> list[str]:
    try:
        return RunConfig.from_dict({"dataset": "d.jsonl", name: value}).validate()
    except ConfigError as exc:
        return list(exc.problems)


def _outside(f: dataclasses.Field) -> list[Any]:
    lo, hi = f.metadata["range"]
    is_int = int in typing.get_args(HINTS[f.name]) or HINTS[f.name] is int
    opened = f.metadata.get("open", "")
    step = 1 if is_int else max(abs(lo), abs(hi), 1) * 1e-3
    below = lo if opened in ("lo", "both") else lo - step
    above = hi if opened in ("hi", "both") else hi + step
    return [below, above]


def test_numeric_fields_are_found() -> None:
    names = {f.name for f in NUMERIC}
    assert {"lora_rank", "weight_decay", "max_grad_norm", "val_size", "eval_steps", "seed"} <= names, names


@pytest.mark.parametrize("f", NUMERIC, ids=[f.name for f in NUMERIC])
def test_every_numeric_field_declares_a_range(f: dataclasses.Field) -> None:
    assert "range" in f.metadata, f"{f.name}: declare range=(lo, hi) in its metadata (studio/config/run_config.py)"
    lo, hi = f.metadata["range"]
    assert lo is not None and hi is not None and lo < hi, (f.name, lo, hi)
    meta = {m["name"]: m for m in field_meta()}[f.name]
    assert meta["range"] == (lo, hi)  # the form and the CLI help read the same numbers


@pytest.mark.parametrize("f", NUMERIC, ids=[f.name for f in NUMERIC])
def test_values_outside_the_range_are_refused(f: dataclasses.Field) -> None:
    default = f.default
    assert not [p for p in _problems(f.name, default) if f.name in p], "the default must be inside the range"
    for value in _outside(f):
        problems = _problems(f.name, value)
        assert any(f.name in p for p in problems), f"{f.name}={value} accepted: {problems}"


@pytest.mark.parametrize("f", NUMERIC, ids=[f.name for f in NUMERIC])
def test_booleans_are_not_numbers(f: dataclasses.Field) -> None:
    problems = _problems(f.name, True)
    assert any(f.name in p for p in problems), f"{f.name}=true accepted: {problems}"
    with pytest.raises(ConfigError) as err:  # set in Python, past the coercion: refused as it is built
        RunConfig(dataset="d.jsonl", **{f.name: True})
    assert any(f.name in p for p in err.value.problems)


# values just outside a range (negative, zero, a bool, far too large); each must be refused naming its field
ISSUE_23 = [("weight_decay", -1), ("max_grad_norm", -1), ("lora_alpha", 1e12), ("val_size", True),
            ("max_samples", 0), ("eval_steps", -1), ("lora_rank", 1e5)]


@pytest.mark.parametrize("name, value", ISSUE_23, ids=[f"{n}={v}" for n, v in ISSUE_23])
def test_issue_23_values(name: str, value: Any) -> None:
    outcome, detail = api(lambda: RunConfig.from_dict({"dataset": "d.jsonl", name: value}))
    record("bad configs and flags", "python", f"range: {name}={value}", outcome, detail)
    expect(outcome, detail, "clear", name)
