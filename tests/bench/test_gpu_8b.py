"""bench/gpu_8b.py is fair and returns what finished, checked on the CPU before a card is lent.

* Tokens are counted in the training step: a loader prefetches, so the old savvy arm's count in its collator ran a
  batch ahead (11 collator calls for 10 steps: +13.6% tokens). Here every arm's count is held to what
  ``Trainer.training_step`` actually received, step by step, and the savvy arm to the studio arm's rows.
* The parent never computes on a card (its CUDA cache stayed held through the 70B row), the 70B row comes first,
  and an arm that does not fit before the deadline is a row that says so, in the JSON at once.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import Trainer

from bench import gpu_8b
from bench.gpu_probe import fingerprint


def _trained(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, list[str], int]]:
    """(trainer id, completed steps, row prints, real tokens) of every micro-batch Trainer's step received."""
    seen: list[tuple[int, int, list[str], int]] = []
    real = Trainer.training_step

    def spy(self: Trainer, model: Any, inputs: dict[str, Any], num_items_in_batch: Any = None) -> Any:
        ids = inputs["input_ids"]
        real_ids = [row[: int((row != 0).sum())].tolist() for row in ids]   # <pad> is 0 and only padding
        seen.append((id(self), self.state.global_step, [fingerprint(r) for r in real_ids],
                     sum(len(r) for r in real_ids)))
        return real(self, model, inputs, num_items_in_batch)

    monkeypatch.setattr(Trainer, "training_step", spy)
    return seen


@pytest.mark.integration
def test_both_arms_count_exactly_the_tokens_they_trained_on_the_same_rows(tmp_path, monkeypatch) -> None:
    seen = _trained(monkeypatch)
    out = tmp_path / "r.json"
    assert gpu_8b.main(["--dry-run", "--sections", "lora", "--steps", "4", "--warmup", "2", "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]["lora"]
    assert [r["arm"] for r in runs] == ["studio", "savvy", "savvy", "studio"]   # ABBA
    trainers = list(dict.fromkeys(t for t, *_ in seen))[-len(runs):]   # the warm-up child's two come first
    for run, trainer in zip(runs, trainers):
        calls = [(step, rows, n) for t, step, rows, n in seen if t == trainer]
        assert run["rows"] == [rows for _, rows, _ in calls], run["arm"]
        assert run["step_tokens"] == [n for _, _, n in calls], run["arm"]
        timed = sum(n for step, _, n in calls if step >= run["warmup"])
        assert run["tokens"] == timed and run["timed_steps"] == 4, (run["arm"], run["tokens"], timed)
        if run["arm"] == "studio":   # the engine's own count (every step) agrees with the probe's
            assert run["engine_tokens"] == sum(run["step_tokens"])
    studio, savvy = runs[0], runs[1]
    assert savvy["replayed"] and savvy["rows"] == studio["rows"] and savvy["step_tokens"] == studio["step_tokens"]
    assert json.loads(out.read_text())["ratios"]["lora"]["same_rows"] is True


class FakeChildren:
    """run_child's stand-in: records the arms in order and answers at once; nothing of an arm runs here."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, script: Path, arm: str, spec: dict[str, Any], **kw: Any) -> dict[str, Any]:
        self.calls.append(arm)
        if arm == "folder":
            return {"build_s": 1.0}
        if arm == "warm":
            return {"warm_s": 1.0, "liger": True}
        steps = spec["steps"] - spec["warmup"]
        rows = [["a"]] * spec["steps"]
        return {"warmup": spec["warmup"], "timed_steps": steps, "tokens": 100 * steps, "train_s": 1.0,
                "rows": rows, "step_tokens": [100] * spec["steps"], "peak_gib": 10.0, "estimate_gib": 11.0,
                "liger": True, "replayed": arm == "savvy", "engine_tokens": 100 * spec["steps"]}


def _card_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str) -> tuple[FakeChildren, dict[str, Any]]:
    fake = FakeChildren()
    monkeypatch.setattr(gpu_8b, "run_child", fake)
    monkeypatch.setattr(gpu_8b, "card_present", lambda: True)
    for name in list(gpu_8b.ARMS):   # an arm run in the parent would touch the card from the parent
        monkeypatch.setitem(gpu_8b.ARMS, name, lambda spec, name=name: pytest.fail(f"{name} ran in the parent"))
    out = tmp_path / "r.json"
    assert gpu_8b.main(["--json", str(out), *args]) == 0
    return fake, json.loads(out.read_text())


def test_every_arm_runs_in_a_child_and_the_70b_row_first(tmp_path, monkeypatch) -> None:
    fake, data = _card_run(monkeypatch, tmp_path)
    assert fake.calls[0] == "layerwise"
    assert fake.calls[1:3] == ["folder", "warm"]   # weights drawn in a child; Triton warmed before either arm
    assert fake.calls[3:11] == ["studio", "savvy", "savvy", "studio"] * 2
    assert not torch.cuda.is_initialized()
    assert [r[0] for r in data["rows"]][:1] == ["qlora 70b"]
    assert data["ratios"]["lora"]["tokens_per_s"] == [1.0, 1.0]


def test_an_arm_that_cannot_finish_before_the_deadline_is_a_row_not_a_silence(tmp_path, monkeypatch) -> None:
    fake, data = _card_run(monkeypatch, tmp_path, "--deadline", "60", "--sections", "qlora70b", "lora")
    assert fake.calls == []
    notes = {r[0]: r[-1] for r in data["rows"]}
    assert notes["qlora 70b"].startswith("not run:") and "s left before the deadline" in notes["qlora 70b"]
    assert notes["model folders"].startswith("not run:")
