"""A finished run's config.yaml is the record of what trained: a rule added or tightened since (here, one its saved
values now break) must not lock its model away from the playground, the checks, an export or a demo; training it
again is refused as before."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from studio.config.run_config import RunConfig, trained_config
from studio.errors import ConfigError


@pytest.fixture()
def old_run(runs: dict, tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "older"
    shutil.copytree(runs["lora"], run)
    saved = yaml.safe_load((run / "config.yaml").read_text())
    saved.update(output_dir=str(run), max_steps=0)   # today's rules refuse max_steps 0
    (run / "config.yaml").write_text(yaml.safe_dump(saved))
    with pytest.raises(ConfigError):
        RunConfig.load(run / "config.yaml")
    return run


def test_an_old_runs_record_still_serves_its_model(old_run: Path, runs: dict, tmp_path: Path) -> None:
    from studio.app.demo_run import describe_run
    from studio.evaluation import inference
    assert trained_config(old_run / "config.yaml").max_steps == 0
    inference.clear_cache()
    loaded = inference.get_model(str(old_run))
    assert loaded.model is not None
    check = inference.sentiment_check(str(old_run), str(runs["heldout_file"]), max_rows=4)
    assert check is not None
    assert describe_run(str(old_run)).name == "older"
    info = inference.export_run(str(old_run), tmp_path / "exports", merge=False)
    assert info["kind"] == "adapter"
