"""A preference pair whose chosen and rejected answers are the same teaches nothing (DPO's loss sits at ln 2 on it):
refused, with the count and the first row, before a run folder is made, from the page's runner and the CLI's
``run_training`` alike."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError


def _pairs(path: Path, same: int, total: int = 6) -> Path:
    rows = [{"instruction": f"q{i}", "input": "", "chosen": "right" if i >= same else " same ",
             "rejected": "wrong" if i >= same else "same"} for i in range(total)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pairs_with_one_answer_twice_are_refused_with_the_count_and_the_first_row(tmp_path: Path) -> None:
    from studio.data.dataset import load_rows
    data = _pairs(tmp_path / "pairs.jsonl", same=2)
    for kind in ("ranking", "kto"):
        with pytest.raises(StudioError) as err:
            load_rows(str(data), str(tmp_path), kind)
        assert err.value.code == "pref.same_pair" and "2 of the 6 pairs" in err.value.message
        assert "row 1" in err.value.message and "pairs.jsonl" in err.value.message
    assert len(load_rows(str(_pairs(tmp_path / "ok.jsonl", same=0)), str(tmp_path), "ranking")) == 6


@pytest.mark.parametrize("stage", ["dpo", "kto"])
def test_a_preference_run_on_such_pairs_is_refused_before_its_folder_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    from studio.engine import run_training
    from studio.runs.jobs import JobRunner

    def launched(*a: object, **k: object) -> None:
        raise AssertionError("the run was launched")
    monkeypatch.setattr(JobRunner, "_launch", launched)
    data = _pairs(tmp_path / "pairs.jsonl", same=1)
    out = tmp_path / "runs" / "dpo-run"
    cfg = RunConfig(dataset=str(data), dataset_dir=str(tmp_path), stage=stage, finetuning_type="lora",
                    output_dir=str(out), max_steps=1)
    with pytest.raises(StudioError, match="same chosen and rejected"):
        JobRunner(tmp_path / "runs").start(cfg)
    assert not out.exists()
    with pytest.raises(StudioError, match="same chosen and rejected"):
        run_training(cfg)
    assert not out.exists()
