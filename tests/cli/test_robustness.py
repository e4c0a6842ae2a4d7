"""What real people do to the engine and CLI: each case gets a specific message, no traceback, nothing lost."""
from __future__ import annotations

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs.run_dir import RunDir, atomic_write_text
from tests.helpers import run_cli


def _last_line(res) -> str:
    return res.stderr.strip().splitlines()[-1]


def test_malformed_yaml(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_name_or_path: tiny-demo\n  learning_rate: 0.1\ndataset: [x\n")
    res = run_cli("train", str(bad))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert _last_line(res) == (f"Error: Config file '{bad}' is not valid YAML at line 2, column 16. Fix: fix the "
                               "indentation or quoting there (each line is 'key: value').")


def test_yaml_that_is_not_a_mapping(tmp_path):
    bad = tmp_path / "list.yaml"
    bad.write_text("- a\n- b\n")
    with pytest.raises(StudioError) as err:
        RunConfig.load(bad)
    assert err.value.what == f"Config file '{bad}' must be a mapping of 'key: value' lines, not a list"


@pytest.mark.parametrize("content, expected", [
    ('{"model_type": "llama", "hidden_size": ', "The model's config.json is broken: '{p}' is not valid JSON "
                                                 "(line 2, column 1). Fix: repair the file or copy the model folder again."),
    ('{"hidden_size": 4}', "The model's config.json '{p}' has no model_type. Fix: copy the model folder again; "
                           "config.json must come from the model's publisher."),
    ('{"model_type": "nonexistent_arch"}', "Model type 'nonexistent_arch' in '{p}' is not known to this version of "
                                           "transformers. Fix: check the model folder, or upgrade transformers."),
])
def test_model_folder_with_broken_config(tmp_path, sample_reviews_jsonl, content, expected):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(content + "\n")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"model_name_or_path: {folder}\ndataset: {sample_reviews_jsonl}\noutput_dir: {tmp_path / 'run'}\n")
    res = run_cli("train", str(cfg))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert _last_line(res) == "Error: " + expected.format(p=folder / "config.json")


def test_model_folder_without_config(tmp_path, sample_reviews_jsonl):
    folder = tmp_path / "empty-model"
    folder.mkdir()
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"model_name_or_path: {folder}\ndataset: {sample_reviews_jsonl}\noutput_dir: {tmp_path / 'run'}\n")
    res = run_cli("train", str(cfg))
    assert res.returncode == 2
    assert _last_line(res) == (f"Error: Model folder '{folder}' has no config.json. Fix: point to the folder that "
                               "holds config.json and the weights (*.safetensors).")


def test_missing_dataset_file(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"dataset: {tmp_path / 'nope.jsonl'}\noutput_dir: {tmp_path / 'run'}\n")
    res = run_cli("train", str(cfg))
    assert res.returncode == 2
    assert _last_line(res).startswith(f"Error: Dataset '{tmp_path / 'nope.jsonl'}' not found: no such file")


def test_resume_without_checkpoint(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"model_name_or_path: {tiny_model_dir}\ndataset: {sample_reviews_jsonl}\n"
                   f"output_dir: {tmp_path / 'run'}\n")
    res = run_cli("train", str(cfg), "--resume")
    assert res.returncode == 2
    assert _last_line(res) == (f"Error: Nothing to resume in '{tmp_path / 'run'}': no complete checkpoint. Fix: "
                               "start a new run, or lower save_steps so checkpoints are written sooner.")


def test_atomic_write_keeps_old_file_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "config.yaml"
    atomic_write_text(target, "old: 1\n")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new: 2\n")
    assert target.read_text() == "old: 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]  # no temp file left behind


def test_half_written_checkpoint_is_ignored(tmp_path):
    run = RunDir(tmp_path)
    (run.checkpoints / "checkpoint-5").mkdir(parents=True)
    (run.checkpoints / "checkpoint-5" / "trainer_state.json").write_text("{}")
    (run.checkpoints / "checkpoint-10").mkdir()  # interrupted: no trainer_state.json
    (run.checkpoints / ".staging").mkdir()
    assert run.last_checkpoint() == run.checkpoints / "checkpoint-5"
