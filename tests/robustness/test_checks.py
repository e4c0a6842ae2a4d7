"""Raw tracebacks and missing checks become precise errors. Each failed before its fix."""
from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig, parse_overrides
from studio.errors import ConfigError, StudioError


def _problems(*pairs: str) -> list[str]:
    """What validation says about ``--set`` values (ConfigError from coercion counts too)."""
    try:
        return RunConfig.from_dict({"dataset": "d.jsonl", **parse_overrides(list(pairs))}).validate()
    except ConfigError as exc:
        return list(exc.problems)


@pytest.mark.parametrize("pairs, expected", [
    (["max_steps=.inf"], "max_steps: expected a whole number, got 'inf'"),
    (["max_steps=.nan"], "max_steps: expected a whole number, got 'nan'"),
    (["val_size=.nan"], "val_size: expected a finite number, got 'nan'"),
    (["num_train_epochs=.inf", "max_steps=-1"], "num_train_epochs: expected a finite number, got 'inf'"),
    (["learning_rate=.inf"], "learning_rate: expected a finite number, got 'inf'"),
    (["seed=-1"], "seed must be at least 0 (got -1)"),
    (["lora_dropout=5"], "lora_dropout must be below 1 (got 5.0)"),
    (["max_samples=-1"], "max_samples must be at least 1, or empty (got -1)"),
    (['output_dir="runs/a\\nb"'], "output_dir contains a control character (line break, tab or NUL): type it again on one line"),
    (["dataset=data/x\x00.jsonl"], "dataset contains a control character (line break, tab or NUL): type it again on one line"),
])
def test_precise_validation_errors(pairs: list[str], expected: str) -> None:
    problems = _problems(*pairs)
    assert expected in problems, problems


def test_deepspeed_json_that_is_a_list(tmp_path: Path) -> None:
    from studio.config.deepspeed import deepspeed_json, deepspeed_plan
    ds = tmp_path / "ds.json"
    ds.write_text("[1, 2]")
    for call in (deepspeed_json, deepspeed_plan):
        with pytest.raises(StudioError) as err:
            call(str(ds))
        assert "must be a JSON object" in err.value.what


def test_val_size_larger_than_the_data() -> None:
    from studio.data.split import split_rows
    rows = [{"output": str(i)} for i in range(240)]
    with pytest.raises(StudioError) as err:
        split_rows(rows, 100000, 42)
    assert err.value.what == "val_size asks for 100000 validation rows, but the data has only 240 rows"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deeply_nested_json_is_a_clear_error(tmp_path: Path, suffix: str) -> None:
    from studio.data.readers import read_table
    from studio.data.dataset import load_rows as train_rows
    from studio.evaluation.evaluate import load_rows as eval_rows
    f = tmp_path / f"deep{suffix}"
    f.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    for call in (read_table, lambda p: train_rows(str(p)), eval_rows):
        with pytest.raises(StudioError) as err:
            call(f)
        assert "nested too deeply" in err.value.what


def _table(tmp_path: Path, rows: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    from studio.data.readers import read_table
    f = tmp_path / "t.csv"
    with open(f, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([("text", "label"), *rows])
    return read_table(f)


def test_all_empty_label_column(tmp_path: Path) -> None:
    from studio.data.convert import convert_sentiment
    with pytest.raises(StudioError) as err:
        convert_sentiment(_table(tmp_path, [("good phone", ""), ("bad phone", " ")]), "text", "label")
    assert err.value.what == "Label column 'label' is empty in every row"


def test_too_many_distinct_labels(tmp_path: Path) -> None:
    from studio.data.convert import convert_sentiment
    with pytest.raises(StudioError) as err:
        convert_sentiment(_table(tmp_path, [(f"text {i}", f"label{i}") for i in range(500)]), "text", "label")
    assert err.value.what.startswith("Label column 'label' has 500 different values")
    assert err.value.code == "data.labels_many"


def test_predictions_csv_neutralises_formulas(tmp_path: Path) -> None:
    from studio.evaluation.evaluate import csv_safe
    assert csv_safe("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0"
    for bad in ("+1", "-1+2", "@SUM(A1)", "\tx", "\rx"):
        assert csv_safe(bad) == "'" + bad
    assert csv_safe("positive") == "positive" and csv_safe("") == ""


def test_estimate_gpu_mem_nan_refused() -> None:
    from tests.helpers import run_cli
    res = run_cli("estimate", "--model", "tiny-demo", "--gpu-mem", "nan")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "'nan' is not a number of GB or 'auto'" in res.stderr


def test_kill_9_end_event_has_the_last_step_and_does_not_guess(tmp_path: Path) -> None:
    import signal
    from studio.runs.jobs import JobRunner
    from studio.runs.run_dir import RunDir
    run = RunDir(tmp_path / "runs" / "k").ensure()
    RunConfig(dataset="x.jsonl", output_dir=str(run.path)).save(run.config)
    run.write_status("running", pid=None, step=0)
    run.append_event({"type": "progress", "step": 7, "total_steps": 10})
    runner = JobRunner(tmp_path / "runs2")
    runner._finish(run, -signal.SIGKILL, aborted=False)
    end = run.events()[-1]
    assert end["type"] == "end" and end["step"] == 7 and run.read_status()["step"] == 7
    assert "If nobody stopped it" in run.read_status()["reason"]
