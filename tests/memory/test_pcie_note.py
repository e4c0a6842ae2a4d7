"""A suggestion that moves activations to host RAM says what it costs a step over PCIe, from the plan estimated."""
from __future__ import annotations

import re

from studio.config.run_config import RunConfig
from studio.memory import terms
from studio.memory.estimator import estimate


def test_the_pcie_cost_of_an_offload_suggestion_is_its_plans() -> None:
    cfg = RunConfig(dataset="d.jsonl", model_name_or_path="Qwen/Qwen2.5-0.5B", cutoff_len=8192,
                    per_device_train_batch_size=16)
    est = estimate(cfg, 8.0, device="cuda", ram_gb=64)
    [offload] = [d for d in est.suggestion_details if d["settings"].get("offload_activations")]
    again = estimate(cfg.replace(**offload["settings"]), 8.0, device="cuda", ram_gb=64, suggest=False)
    seconds = terms.activation_pcie_seconds(again.card, again.setup)
    assert seconds > 0.1
    said = re.search(r"~([0-9.]+) s a step over PCIe", offload["text"])
    assert said and float(said.group(1)) == round(seconds, 2), offload["text"]
    assert again.plan["activation_pcie_s"] == round(seconds, 3)  # the CLI's table shows the same number
