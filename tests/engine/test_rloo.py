"""Stage rloo, added through the stage table alone (issue 51, item 4): TRL's RLOOTrainer with the same verifiable
rewards as grpo (studio/engine/rewards.py), built by the same online-RL builder (studio/engine/online_rl.py) from
what its row names.

Outcomes: the config offers the stage and its rewards; the builder makes TRL's RLOOTrainer for it; the estimate
counts its generations; a run on the tiny model trains through the studio's engine, logs its mean reward, writes
its checkpoint and moves the adapter.
"""
from __future__ import annotations

import json
import typing
from pathlib import Path

from studio.config.run_config import Draft, RunConfig
from studio.stages import STAGES

try:
    from conftest import make_review_rows, write_jsonl
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, write_jsonl


def test_the_config_offers_rloo_and_its_rewards() -> None:
    hints = typing.get_type_hints(RunConfig)
    assert "rloo" in typing.get_args(hints["stage"])
    assert set(STAGES["rloo"].rewards) <= set(typing.get_args(hints["reward"]))
    RunConfig(stage="rloo", dataset="d.jsonl", reward="regex", reward_pattern="yes|no")


def test_the_builder_makes_trls_rloo_trainer() -> None:
    from trl import RLOOConfig, RLOOTrainer

    from studio.engine.online_rl import trl_classes
    trainer, config = trl_classes(STAGES["rloo"])
    assert issubclass(trainer, RLOOTrainer) and config is RLOOConfig


def test_the_estimate_counts_its_generations() -> None:
    from studio.memory.estimator import estimate
    sft, rloo = (estimate(Draft(stage=s, per_device_train_batch_size=4), 8, device="cuda") for s in ("sft", "rloo"))
    assert rloo.breakdown["reference_forward"] > 0 and "reference_forward" not in sft.breakdown


def test_an_rloo_run_trains_the_adapter_on_its_reward(tmp_path: Path, tiny_model_dir: Path) -> None:
    """As grpo's run (tests/engine/test_grpo.py): a reward that some of the tiny base's noisy answers get, so the
    leave-one-out advantages are not all zero and the adapter moves."""
    from safetensors.torch import load_file

    from studio.engine import run_training
    from studio.runs.run_dir import RunDir
    data = write_jsonl(tmp_path / "reviews.jsonl", make_review_rows(40, seed=6))
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(data), output_dir=str(tmp_path / "run"),
                    stage="rloo", reward="regex", reward_pattern="(?s).*e.*", finetuning_type="lora", lora_rank=8,
                    cutoff_len=64, per_device_train_batch_size=4, learning_rate=5e-3, max_steps=3, logging_steps=1,
                    save_steps=2, plot_loss=False, gradient_checkpointing=False, val_size=0.2,
                    lr_scheduler_type="constant")
    out = run_training(cfg)
    assert out["state"] == "finished" and out["step"] == 3
    run = RunDir(cfg.output_dir)
    status = run.read_status()
    assert status["generations"] == STAGES["rloo"].sequences and status["val_rows"] == 8
    assert run.val_data.is_file() and (run.checkpoints / "checkpoint-2").is_dir()
    logged = [json.loads(line) for line in run.log.read_text().splitlines()]
    rewards = [e["reward"] for e in logged if "reward" in e]
    assert rewards and 0 < max(rewards) <= 1
    weights = load_file(str(run.adapter / "adapter_model.safetensors"))
    assert any(float(v.abs().sum()) > 0 for k, v in weights.items() if "lora_B" in k)
