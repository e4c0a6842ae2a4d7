"""The improving run: continues the old adapter; DPO when there are pairs, else SFT on corrections + replay."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.feedback.datasets import make_datasets
from studio.feedback.improve import REPLAY_PER_CORRECTION, improvement_config, record_lineage
from studio.feedback.store import FeedbackStore
from studio.runs.run_dir import RunDir

try:
    from conftest import make_review_rows, write_jsonl
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, write_jsonl


@pytest.fixture(scope="module")
def old_run(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    from studio.engine import run_training
    root = tmp_path_factory.mktemp("improve")
    data = write_jsonl(root / "train.jsonl", make_review_rows(40, seed=2))
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(data), output_dir=str(root / "runs" / "old"),
                    finetuning_type="lora", max_steps=4, per_device_train_batch_size=4, logging_steps=1,
                    plot_loss=False, cutoff_len=64, val_size=0.1, gradient_checkpointing=False)
    run_training(cfg)
    return Path(cfg.output_dir)


def _feedback(tmp_path: Path, answer: str) -> dict:
    store = FeedbackStore(tmp_path / "ws")
    for i, r in enumerate(make_review_rows(6, seed=9)):
        fid = store.add(run="old", login=f"t{i}", input=r["input"], answer=answer, verdict="down",
                        correction=r["output"])
        store.review(fid, reviewer="o", status="accepted")
    like = {"instruction": make_review_rows(1)[0]["instruction"], "input": "x"}
    return make_datasets(store, "old", tmp_path / "data", "fb", like=like)


def test_pairs_give_a_dpo_run_from_the_old_adapter(tmp_path: Path, old_run: Path) -> None:
    from studio.engine import run_training
    made = _feedback(tmp_path, "no")
    cfg = improvement_config(old_run, made, tmp_path / "data", tmp_path / "runs" / "new", method="dpo")
    assert (cfg.stage, cfg.dataset, cfg.adapter_name_or_path) == ("dpo", "fb_pref", str(RunDir(old_run).adapter))
    assert cfg.template == RunConfig.load(RunDir(old_run).config).template
    record_lineage(cfg)
    summary = run_training(cfg.replace(max_steps=3, per_device_train_batch_size=2))
    assert summary["state"] == "finished"
    # a DPO run on labels says, before it trains, that SFT on the corrections is the measured better choice
    said = [e for e in RunDir(cfg.output_dir).events() if e.get("type") == "notice"]
    assert [e["params"] for e in said if e.get("code") == "preference_on_labels"] == [{"stage": "DPO"}], said
    assert json.loads(RunDir(cfg.output_dir).lineage.read_text()) == {
        "run": "old", "method": "dpo", "feedback_rows": 6, "feedback_data": "fb", "data_dir": str(tmp_path / "data")}


def test_auto_takes_sft_with_replay_for_a_labels_run_even_with_pairs(tmp_path: Path, old_run: Path) -> None:
    made = _feedback(tmp_path, "no")
    assert "ranking" in made  # pairs exist, yet the labels run gets SFT (the bench: 0.853 vs DPO's 0.507)
    cfg = improvement_config(old_run, made, tmp_path / "data", tmp_path / "runs" / "new", labels_run=True)
    assert (cfg.stage, cfg.dataset) == ("sft", "fb_replay")
    # an instruction / chat run with pairs: auto takes DPO
    assert improvement_config(old_run, made, tmp_path / "data", tmp_path / "w").stage == "dpo"
    assert improvement_config(old_run, made, tmp_path / "data", tmp_path / "x", method="sft").stage == "sft"
    with pytest.raises(StudioError, match="Unknown improvement method"):
        improvement_config(old_run, made, tmp_path / "data", tmp_path / "y", method="kto")


def test_corrections_alone_give_sft_with_a_replay_of_the_old_rows(tmp_path: Path, old_run: Path) -> None:
    from studio.data.dataset import load_rows
    made = _feedback(tmp_path, "")  # no model answer to pair with: SFT
    assert "ranking" not in made
    cfg = improvement_config(old_run, made, tmp_path / "data", tmp_path / "runs" / "new")
    assert cfg.stage == "sft" and cfg.dataset == "fb_replay"
    rows = load_rows("fb_replay", str(tmp_path / "data"))
    assert len(rows) == 6 + 6 * REPLAY_PER_CORRECTION  # 36 old training rows: 24 replayed
    fixes = {(r["input"], r["output"]) for r in load_rows("fb", str(tmp_path / "data"))}
    replayed = [r for r in rows if (r["input"], r["output"]) not in fixes]
    old_val = [json.loads(x) for x in RunDir(old_run).val_data.read_text().splitlines()]
    assert replayed and not [r for r in replayed if r in old_val]  # held-out rows are never replayed
    with pytest.raises(StudioError, match="DPO"):
        improvement_config(old_run, made, tmp_path / "data", tmp_path / "z", method="dpo")
    with pytest.raises(StudioError):
        improvement_config(old_run, {"kto": {"name": "fb_kto", "rows": 3}}, tmp_path / "data", tmp_path / "x")
