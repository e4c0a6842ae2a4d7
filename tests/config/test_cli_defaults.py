"""One place for defaults: a field the user did not set takes the page's derived value
on the CLI too, so a config that names only the data trains a model that learns and keeps held-out rows."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.autoconfig import Hardware, explicit_keys, fill_unset, guess_task
from studio.config.run_config import Draft, RunConfig

ROOT = Path(__file__).resolve().parents[2]
CPU = Hardware(gpu_gb=None, ram_gb=16.0, disk_gb=100.0)


def _reviews(tmp_path: Path) -> Path:
    out = tmp_path / "data" / "reviews.jsonl"
    subprocess.run([sys.executable, "-m", "studio", "convert", str(ROOT / "studio" / "assets" / "sample_reviews.csv"),
                    "--task", "sentiment", "--out", str(out), "--dataset-dir", str(out.parent)],
                   cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True)
    return out


def test_unset_fields_take_the_derived_plan_and_set_ones_keep_theirs(tmp_path: Path) -> None:
    data = _reviews(tmp_path)
    bare = RunConfig(dataset=str(data), output_dir=str(tmp_path / "runs" / "a"))
    derived, reasons = fill_unset(bare, explicit_keys({"dataset": str(data)}), CPU)
    assert derived.finetuning_type == "full" and derived.val_size > 0 and derived.learning_rate == 0.002
    assert {r.field for r in reasons} >= {"finetuning_type", "learning_rate"}
    mine, _ = fill_unset(bare.replace(learning_rate=1e-4, val_size=0.2),
                         explicit_keys({"dataset": str(data), "learning_rate": 1e-4, "val_size": 0.2}), CPU)
    assert mine.learning_rate == 1e-4 and mine.val_size == 0.2 and mine.finetuning_type == "full"
    saved = tmp_path / "saved.yaml"  # a run's own config.yaml names every field: nothing is re-derived
    derived.save(saved)
    from studio.config.yaml_io import load_yaml_dict
    assert fill_unset(derived, explicit_keys(load_yaml_dict(saved)), CPU) == (derived, [])


def test_guess_task() -> None:
    assert guess_task([{"output": "positive"}, {"output": "negative"}]) == "sentiment"
    assert guess_task([{"output": f"answer {i}"} for i in range(30)]) == "instruction"
    assert guess_task([{"output": "x", "history": [["a", "b"]]}]) == "chat"


@pytest.mark.integration
def test_a_config_naming_only_the_data_learns_and_keeps_held_out_rows(tmp_path: Path) -> None:
    data = _reviews(tmp_path)
    cfg = tmp_path / "only-data.yaml"
    cfg.write_text(f"dataset: {data}\noutput_dir: {tmp_path / 'runs' / 'only'}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "studio", "train", str(cfg)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Derived for this model, data and machine" in out.stderr and "finetuning_type" in out.stderr
    run = tmp_path / "runs" / "only"
    assert (run / "val.jsonl").is_file() and (run / "val.jsonl").read_text().count("\n") >= 20
    res = subprocess.run([sys.executable, "-m", "studio", "eval", "--model", str(run), "--json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(res.stdout[res.stdout.index("{"):])
    assert report["n"] >= 20 and report["accuracy"] >= 0.70, report["accuracy"]


def test_the_run_config_names_the_derived_values_and_why_and_still_loads(tmp_path: Path) -> None:
    data = _reviews(tmp_path)
    bare = RunConfig(dataset=str(data), output_dir=str(tmp_path / "runs" / "a"))
    derived, reasons = fill_unset(bare, explicit_keys({"dataset": str(data), "learning_rate": 1e-3}), CPU)
    saved = tmp_path / "config.yaml"
    derived.save(saved)
    text = saved.read_text(encoding="utf-8")
    head = [ln for ln in text.splitlines() if ln.startswith("#")]
    assert head and "Derived by the studio" in head[0]
    named = {ln.split(":")[0].strip("# ").strip() for ln in head[1:]}
    assert named == set(derived.derived) and "finetuning_type" in named and "learning_rate" not in named
    assert any("full fine-tuning" in ln for ln in head)
    assert RunConfig.load(saved) == derived
    assert Draft().derived == {} and derived.replace(seed=1).derived == derived.derived
