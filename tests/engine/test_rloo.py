"""Stage rloo, added through the stage table alone (issue 51, item 4): TRL's RLOOTrainer with the same verifiable
rewards as grpo (studio/engine/rewards.py), built by the same online-RL builder (studio/engine/online_rl.py) from
what its row names.

Outcomes: the config offers the stage and its rewards; the builder makes TRL's RLOOTrainer for it. Its estimate and
a run on the tiny model (the engine trains it, logs its mean reward, writes its checkpoint, moves the adapter) are
tests/engine/test_grpo.py's, which cover every stage of the table with rewards.
"""
from __future__ import annotations

import typing

from studio.config.run_config import RunConfig
from studio.stages import STAGES


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
