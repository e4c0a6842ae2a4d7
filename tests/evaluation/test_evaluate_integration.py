"""End to end: the built-in tiny-demo model, LoRA through the real engine, then the scorecard."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.integration
def test_tiny_demo_lora_run_beats_its_base(sample_reviews_jsonl: Path, heldout_reviews_jsonl: Path,
                                           tmp_path: Path) -> None:
    import torch
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.evaluation.evaluate import compare_base_vs_tuned, load_rows
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model: one thread is faster, and immune to a busy machine
    try:
        # measured: at lr 1e-2 the demo LoRA sits on a plateau (loss ~1.4) for ~150 steps, then learns
        # (0.72 at 300); where the plateau ends depends on the random init and the demo tokenizer, which is
        # now built from the training rows only, so 150 steps no longer sufficed
        cfg = RunConfig(model_name_or_path="tiny-demo", dataset=str(sample_reviews_jsonl),
                        output_dir=str(tmp_path / "run"), finetuning_type="lora", max_steps=300, learning_rate=1e-2,
                        per_device_train_batch_size=8,
                        val_size=0.1, logging_steps=50, save_steps=1000, plot_loss=False, seed=42)
        assert run_training(cfg)["state"] == "finished"
        card = compare_base_vs_tuned(tmp_path / "run", load_rows(heldout_reviews_jsonl))
    finally:
        torch.set_num_threads(threads)
    assert card["n"] == 60
    assert card["tuned"]["accuracy"] >= 0.85
    assert card["tuned"]["accuracy"] >= card["base"]["accuracy"] + 0.3
