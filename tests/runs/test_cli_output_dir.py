"""`python -m studio train` never overwrites a folder: a folder that holds a run is refused
with the fix in CLI words, unless `overwrite_output_dir: true` is given, and a folder with files the studio did
not make is never emptied, not even then. Resume into the same folder keeps working. All through the real CLI."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from studio.config.run_config import Draft, RunConfig
from studio.runs.run_dir import RunDir

from helpers import run_cli

QUICK = dict(model_name_or_path="tiny-demo", finetuning_type="full", cutoff_len=48, per_device_train_batch_size=8,
             max_steps=4, save_steps=2, logging_steps=2, plot_loss=False, val_size=0.0, gradient_checkpointing=False)


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(res, *fragments: str) -> str:
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and res.stderr.startswith("Error: "), res.stderr[-2000:]
    for f in fragments:
        assert f in res.stderr, (f, res.stderr)
    return res.stderr


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, sample_reviews_jsonl: Path) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cli-out")
    yaml = root / "run.yaml"
    RunConfig(**QUICK, dataset=str(sample_reviews_jsonl), output_dir=str(root / "run")).save(yaml)
    res = run_cli("train", str(yaml), "--quiet")
    assert res.returncode == 0, res.stderr[-3000:]
    return yaml, root / "run"


def test_training_again_into_a_finished_run_is_refused_and_changes_nothing(finished: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    yaml, run = finished
    before = snapshot(run)
    assert "config.yaml" in before and any(k.startswith("model/") for k in before)
    text = refused(run_cli("train", str(yaml), "--quiet"), "already holds a run", "--set output_dir=NEW_FOLDER",
                   "--resume last", "overwrite_output_dir")
    assert str(run) in text and "finished" in text
    other = tmp_path / "other.yaml"
    other.write_text(yaml.read_text().replace("learning_rate: 5.0e-05", "learning_rate: 0.01"))
    refused(run_cli("train", str(other), "--set", f"output_dir={run}"), "already holds a run")
    refused(run_cli("train", str(run / "config.yaml")), "already holds a run")  # its own saved config, re-run
    assert snapshot(run) == before


def test_a_folder_the_studio_did_not_make_is_never_emptied(finished: tuple[Path, Path], tmp_path: Path) -> None:
    yaml, _ = finished
    foreign = tmp_path / "my-project"
    (foreign / "model").mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    (foreign / "model" / "weights.bin").write_bytes(b"\x00\x01")
    before = snapshot(foreign)
    refused(run_cli("train", str(yaml), "--set", f"output_dir={foreign}"), "files the studio did not make",
            "notes.txt", "--set output_dir=NEW_FOLDER")
    refused(run_cli("train", str(yaml), "--set", f"output_dir={foreign}", "--set", "overwrite_output_dir=true"),
            "files the studio did not make", "never empties")
    assert snapshot(foreign) == before
    # a run folder with one foreign file in it is not replaced either
    _, run = finished
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("config.yaml", "status.json", "trainer_log.jsonl"):
        (mixed / name).write_bytes((run / name).read_bytes())
    (mixed / "thesis.tex").write_text("do not delete")
    before = snapshot(mixed)
    refused(run_cli("train", str(yaml), "--set", f"output_dir={mixed}", "--set", "overwrite_output_dir=true"),
            "thesis.tex")
    assert snapshot(mixed) == before


def test_overwrite_output_dir_replaces_a_studio_run_and_resume_keeps_working(finished: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    yaml, run = finished
    copy = tmp_path / "copy"
    copy.mkdir()
    for p in run.rglob("*"):
        target = copy / p.relative_to(run)
        if p.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_bytes(p.read_bytes())
    res = run_cli("train", str(yaml), "--quiet", "--set", f"output_dir={copy}", "--set", "overwrite_output_dir=true",
                  "--set", "max_steps=2")
    assert res.returncode == 0, res.stderr[-3000:]
    events = RunDir(copy).events()
    assert [e["type"] for e in events].count("start") == 1, "the old run's log must not be kept beside the new one"
    assert json.loads(res.stdout.strip().splitlines()[-1])["step"] == 2
    assert [c.name for c in RunDir(copy).checkpoint_list()] == ["checkpoint-2"]
    # resume into the same folder: continues from its newest checkpoint
    res = run_cli("train", str(yaml), "--quiet", "--set", f"output_dir={copy}", "--set", "max_steps=4", "--resume",
                  "last")
    assert res.returncode == 0, res.stderr[-3000:]
    start = [e for e in RunDir(copy).events() if e["type"] == "start"][-1]
    assert start["step"] == 2 and start["resumed"] is True


def test_llamafactory_examples_carry_overwrite_output_dir_into_the_field() -> None:
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "llamafactory"
    cfg = RunConfig.load(fixtures / "llama3_lora_sft.yaml")
    assert cfg.overwrite_output_dir is True and not any(n.startswith("overwrite_output_dir") for n in cfg.notices)
    assert Draft().overwrite_output_dir is False
