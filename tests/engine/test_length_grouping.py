"""No training path trains on random padded batches. Dynamic batching (the token-budget
sampler) where the plan turns it on; otherwise Trainer's own length grouping; packed rows are already full."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.autoconfig import Hardware, suggest_settings
from studio.config.run_config import Draft
from studio.config.yaml_io import load_yaml_dict
from studio.engine.arguments import training_arguments
from studio.runs.run_dir import RunDir

ROOT = Path(__file__).resolve().parents[2]
CPU = Hardware(gpu_gb=None, ram_gb=16.0, disk_gb=100.0)


REAL = "smollm2-135m-instruct"


@pytest.mark.parametrize("fields, strategy", [
    ({}, "group_by_length"),
    ({"dynamic_batching": True}, "random"),  # StudioTrainer replaces the sampler with its token-budget batches
    ({"packing": True}, "random"),
    ({"neat_packing": True}, "random"),
    ({"model_name_or_path": "tiny-demo"}, "random"),  # a toy learning from scratch (see arguments._sampling)
])
def test_training_arguments_group_by_length_unless_batches_are_built_otherwise(tmp_path, fields, strategy):
    args = training_arguments(Draft(**{"model_name_or_path": REAL, **fields}), RunDir(tmp_path), "cpu",
                              has_val=False)
    assert args.train_sampling_strategy == strategy


def test_trainer_takes_the_length_grouped_sampler(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from studio.engine.studio_trainer import StudioTrainer
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2))
    rows = [{"input_ids": [1] * n, "labels": [1] * n} for n in (3, 9, 4, 12, 5, 7, 2, 8)]
    trainer = StudioTrainer(model=model, args=training_arguments(Draft(model_name_or_path=REAL), RunDir(tmp_path),
                                                                 "cpu", False),
                            train_dataset=rows)
    assert isinstance(trainer._get_train_sampler(), LengthGroupedSampler)


@pytest.mark.parametrize("model", ["smollm2-135m-instruct", "gemma3-270m", "meta-llama/Meta-Llama-3-8B-Instruct"])
def test_the_page_plan_for_a_real_model_turns_dynamic_batching_on(model):
    changes, reasons = suggest_settings(model, 400, "sentiment", CPU)
    assert changes["dynamic_batching"] is True and any(r.field == "dynamic_batching" for r in reasons)


# tiny-demo's recipe keeps the engine's length grouping (see autoconfig.suggest_settings)
@pytest.mark.parametrize("recipe", sorted(p.name for p in (ROOT / "presets" / "recipes").glob("*.yaml")
                                          if not p.name.startswith("tiny-demo")))
def test_every_real_model_recipe_uses_dynamic_batching_or_packing(recipe):
    data = load_yaml_dict(ROOT / "presets" / "recipes" / recipe)
    assert data.get("dynamic_batching") or data.get("packing") or data.get("neat_packing"), recipe
