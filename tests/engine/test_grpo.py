"""Stage grpo (studio/engine/online_rl.py), added through the stage table: TRL's GRPOTrainer with verifiable rewards
(studio/engine/rewards.py, shared with every stage that samples answers and scores them).

Outcomes: each reward scores what it names; a config asking for a pattern without a usable one is refused with
the problem's code; a GRPO run on the tiny model finishes through the studio's engine with its adapter saved, its
rewards logged, its held-out rows kept, and the adapter's weights moved.
"""
from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from studio.config.run_config import Draft, RunConfig
from studio.errors import ConfigError
from studio.stages import STAGES

try:
    from conftest import make_review_rows, write_jsonl
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, write_jsonl

# every stage of the table that samples answers and scores them (grpo, rloo, and the next one the day it is added)
ONLINE_RL = [name for name, stage in STAGES.items() if stage.rewards]


def test_the_rewards_score_what_they_name() -> None:
    from studio.engine.rewards import json_fields_reward, label_reward, pattern_reward
    label = label_reward("</s>")
    assert label(["positive", " Negative.", "positive</s>junk", "pos"], ["positive", "negative", "positive",
                                                                        "positive"]) == [1.0, 1.0, 1.0, 0.0]
    fields = json_fields_reward()
    ref = json.dumps({"label": "positive", "reason": "fast"})
    assert fields(['{"label": "negative", "reason": "x"}', '{"label": "x"}', "[1]", "not json"],
                  [ref] * 4) == [1.0, 0.75, 0.0, 0.0]
    assert pattern_reward(r"(positive|negative)")(["negative", "negative!", "neutral"]) == [1.0, 0.0, 0.0]


def test_a_pattern_reward_needs_a_pattern_that_compiles() -> None:
    for pattern, code in (("", "check.reward_pattern_empty"), ("(", "check.reward_pattern_invalid")):
        with pytest.raises(ConfigError) as err:
            RunConfig(stage="grpo", dataset="d.jsonl", reward="regex", reward_pattern=pattern)
        assert [p.code for p in err.value.problems] == [code]
    RunConfig(stage="grpo", dataset="d.jsonl", reward="regex", reward_pattern="yes|no")
    hints = typing.get_type_hints(RunConfig)   # the page's and the YAML's choices: the table's names
    assert "grpo" in typing.get_args(hints["stage"]) and "regex" in typing.get_args(hints["reward"])


def test_a_saved_config_with_the_old_grpo_keys_still_loads(tmp_path: Path) -> None:
    """A run saved before the reward settings were shared (``grpo_reward``, ``grpo_pattern``) still loads, resumes
    and reads back as the record of what trained, its values under the new names; a file giving both keeps the
    new one."""
    from studio.config.run_config import trained_config
    saved = tmp_path / "config.yaml"
    saved.write_text("stage: grpo\ndataset: d.jsonl\ngrpo_reward: regex\ngrpo_pattern: yes|no\n", encoding="utf-8")
    for cfg in (RunConfig.load(saved), trained_config(saved)):
        assert (cfg.reward, cfg.reward_pattern) == ("regex", "yes|no")
    both = RunConfig.from_dict({"stage": "grpo", "dataset": "d.jsonl", "grpo_reward": "regex",
                                "reward": "json_fields"})
    assert both.reward == "json_fields"
    assert "grpo_reward" not in RunConfig(stage="grpo", dataset="d.jsonl").to_yaml()


@pytest.mark.parametrize("stage", ONLINE_RL)
def test_the_estimate_counts_its_generations(stage: str) -> None:
    from studio.memory.estimator import estimate
    sft, rl = (estimate(Draft(stage=s, per_device_train_batch_size=4), 8, device="cuda") for s in ("sft", stage))
    assert rl.breakdown["reference_forward"] > 0 and "reference_forward" not in sft.breakdown
    assert STAGES[stage].micro_batch(4, 2) == (4, 2 * STAGES[stage].sequences)  # 4 answers per forward


@pytest.mark.parametrize("stage", ONLINE_RL)
def test_an_online_rl_run_trains_the_adapter_on_its_reward(stage: str, tmp_path: Path, tiny_model_dir: Path) -> None:
    """The tiny base's answers sampled at temperature 1 are mostly noise: rewarding those with an "e" in them gives
    a group's answers different rewards, so the advantages are not zero and the adapter moves (a reward every
    answer misses, such as the label to a base that never says it, teaches nothing: GRPO learns from the
    differences within a group)."""
    from safetensors.torch import load_file

    from studio.engine import run_training
    from studio.runs.run_dir import RunDir
    data = write_jsonl(tmp_path / "reviews.jsonl", make_review_rows(40, seed=6))
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(data), output_dir=str(tmp_path / "run"),
                    stage=stage, reward="regex", reward_pattern="(?s).*e.*", finetuning_type="lora", lora_rank=8,
                    cutoff_len=64, per_device_train_batch_size=4, learning_rate=5e-3, max_steps=3, logging_steps=1, save_steps=2,
                    plot_loss=False, gradient_checkpointing=False, val_size=0.2, lr_scheduler_type="constant")
    out = run_training(cfg)
    assert out["state"] == "finished" and out["step"] == 3
    run = RunDir(cfg.output_dir)
    status = run.read_status()
    assert status["generations"] == STAGES[stage].sequences and status["val_rows"] == 8
    assert run.val_data.is_file() and (run.checkpoints / "checkpoint-2").is_dir()
    logged = [json.loads(line) for line in run.log.read_text().splitlines()]
    rewards = [e["reward"] for e in logged if "reward" in e]   # the mean reward reaches the progress events
    assert rewards and 0 < max(rewards) <= 1
    weights = load_file(str(run.adapter / "adapter_model.safetensors"))
    assert any(float(v.abs().sum()) > 0 for k, v in weights.items() if "lora_B" in k)  # B starts at 0: it moved


def test_a_pattern_that_backtracks_forever_scores_zero_in_a_moment() -> None:
    """The owner's pattern runs on every sampled answer of every step: a pattern with catastrophic backtracking
    on one answer must cost a bounded moment and a reward of 0, not hang the run."""
    import time
    from studio.engine.rewards import pattern_reward
    t0 = time.perf_counter()
    assert pattern_reward(r"(a+)+$")(["a" * 40 + "b", "aaa"]) == [0.0, 1.0]
    assert time.perf_counter() - t0 < 2.0
