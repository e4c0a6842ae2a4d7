"""A LoRA run whose base model folder was moved or deleted since it trained: every way of loading it (playground,
export merged, GGUF) says which folder is gone in the studio's words; the adapter-only export, which needs no
base, still works."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from studio.errors import StudioError

try:
    from conftest import make_review_rows, write_jsonl
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, write_jsonl


@pytest.fixture(scope="module")
def orphan_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    root = tmp_path_factory.mktemp("orphan")
    rows = make_review_rows(16)
    base = build_tiny_llama(root / "base", demo_texts(rows), hidden=32, layers=2, heads=2, vocab_size=300, seed=0)
    cfg = RunConfig(model_name_or_path=str(base), dataset=str(write_jsonl(root / "d.jsonl", rows)),
                    output_dir=str(root / "runs" / "r"), finetuning_type="lora", max_steps=1,
                    per_device_train_batch_size=4, plot_loss=False, cutoff_len=48, gradient_checkpointing=False)
    assert run_training(cfg)["state"] == "finished"
    shutil.rmtree(base)
    return Path(cfg.output_dir), base


@pytest.mark.parametrize("way", ["playground", "export_merged", "export_gguf"])
def test_every_load_of_a_run_whose_base_is_gone_names_the_folder(orphan_run: tuple[Path, Path], tmp_path: Path,
                                                                  way: str) -> None:
    from studio.evaluation import inference
    run, base = orphan_run
    inference.clear_cache()
    calls = {"playground": lambda: inference.get_model(str(run)),
             "export_merged": lambda: inference.export_run(str(run), tmp_path, merge=True),
             "export_gguf": lambda: inference.export_run(str(run), tmp_path, fmt="f16")}
    with pytest.raises(StudioError) as e:
        calls[way]()
    assert e.value.code == "model.path_missing" and str(base) in e.value.message
    assert "Repo id" not in e.value.message


def test_the_adapter_alone_still_exports(orphan_run: tuple[Path, Path], tmp_path: Path) -> None:
    from studio.evaluation import inference
    info = inference.export_run(str(orphan_run[0]), tmp_path, merge=False)
    assert info["kind"] == "adapter" and (Path(info["path"]) / "adapter_model.safetensors").is_file()
