"""Every preset is data that loads and validates; every recipe says how to run it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.config.deepspeed import deepspeed_json as deepspeed_config
from studio.config.vocabulary import DEEPSPEED_FILES as DS_FILES

PRESETS = Path(__file__).resolve().parents[2] / "presets"
RECIPES = sorted((PRESETS / "recipes").glob("*.yaml"))


def test_there_are_recipes():
    names = {p.name for p in RECIPES}
    assert {"tiny-demo-cpu.yaml", "llama3-70b-full-zero3-offload.yaml", "llama3-8b-lora-24gb.yaml"} <= names


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_recipe_loads_and_validates(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# "), "each recipe opens with a comment saying what it is"
    assert "python -m studio train " + str(path.relative_to(PRESETS.parent)) in path.read_text(encoding="utf-8")
    cfg = RunConfig.load(path, ["dataset=data/x.jsonl"])
    assert cfg.validate() == []


@pytest.mark.parametrize("shortcut", list(DS_FILES))
def test_deepspeed_presets_are_valid_json(shortcut):
    cfg = deepspeed_config(shortcut)
    zero = cfg["zero_optimization"]
    assert zero["stage"] == (3 if shortcut.startswith("z3") else 2)
    assert ("offload_optimizer" in zero) == shortcut.endswith(("offload", "nvme"))
    assert ("offload_param" in zero) == (shortcut in ("z3-offload", "z3-nvme"))
    json.dumps(cfg)
