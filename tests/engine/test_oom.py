"""OOM-adaptive micro-batches keep the maths exact: an out-of-memory error in the middle of backward does not
count any row twice, a card that is really full (the emulated card with a capacity) runs out of memory part-way
through loading a layer and gets that memory back before the redo, and under DeepSpeed the split slices still make
exactly one optimizer step per batch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import torch
from transformers import TrainerCallback, TrainingArguments

from studio.engine.batching import pad_collator
from studio.engine.studio_trainer import INJECT_OOM_ENV, StudioTrainer
from tests.conftest import ROOT
from tests.wordtok import id_tokenizer


def _tiny() -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                                        tie_word_embeddings=False))


def _rows(n: int = 16, length: int = 10) -> list[dict]:
    g = torch.Generator().manual_seed(3)
    out = []
    for _ in range(n):
        ids = torch.randint(0, 64, (int(torch.randint(4, length, (1,), generator=g)),), generator=g).tolist()
        out.append({"input_ids": ids, "labels": ids, "attention_mask": [1] * len(ids)})
    return out


class _Grads(TrainerCallback):
    """The gradients the first optimizer step is about to apply."""

    def __init__(self) -> None:
        self.grads: dict[str, torch.Tensor] = {}

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        if state.global_step == 0:
            self.grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


class _OomInBackward:
    """A card that runs out of memory in layer 0's backward on chosen backward passes: by then the head, the final
    norm and the later layers have already added their share to .grad, as in a real mid-backward CUDA OOM."""

    def __init__(self, model: torch.nn.Module, fail_on: set[int]):
        self.calls = 0
        self.fail_on = fail_on
        model.model.layers[0].register_full_backward_hook(self._hook)

    def _hook(self, module, grad_input, grad_output):
        self.calls += 1
        if self.calls in self.fail_on:
            raise torch.OutOfMemoryError("CUDA out of memory (emulated, in the middle of backward)")


def _first_step_grads(tmp_path, fail_on: set[int], accumulation: int, checkpointing: bool, card=None,
                      activations: bool = False):
    model = _tiny()
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    notices: list[str] = []
    notify: Any = notices.append
    if card is not None:
        from studio.engine.offload import LayerwiseOffloader
        from studio.models.loading import decoder_layers
        LayerwiseOffloader(model, card.device)
        card.watch(model, decoder_layers(model), activations=activations)
        card.outside = card.resident_bytes  # embeddings, final norm, head, buffers
        card.at_notice = []

        def at_notice(message: str) -> None:  # what the card holds once the recovery is done, before the redo
            card.at_notice.append((card.layers_resident(), card.resident_bytes))
            notices.append(message)
        notify = at_notice
    oom = _OomInBackward(model, fail_on)
    grads = _Grads()
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=8,
                             gradient_accumulation_steps=accumulation, max_steps=1, use_cpu=True, report_to=[],
                             save_strategy="no", disable_tqdm=True, learning_rate=1e-3, max_grad_norm=0,
                             lr_scheduler_type="constant", seed=0, data_seed=0)
    trainer = StudioTrainer(model=model, args=args, train_dataset=_rows(8 * accumulation),
                            data_collator=pad_collator(id_tokenizer(64)), callbacks=[grads], notify=notify)
    trainer.train()
    return grads.grads, trainer.splits, notices, oom.calls


@pytest.mark.parametrize("checkpointing", [False, True], ids=["no-ckpt", "ckpt"])
@pytest.mark.parametrize("accumulation,fail_on", [(1, {1}), (2, {2})], ids=["first-micro-batch", "accumulating"])
def test_oom_in_the_middle_of_backward_leaves_exact_gradients(tmp_path, accumulation, fail_on, checkpointing):
    plain, _, _, _ = _first_step_grads(tmp_path / "plain", set(), accumulation, checkpointing)
    grads, splits, notices, calls = _first_step_grads(tmp_path / "oom", fail_on, accumulation, checkpointing)
    assert max(fail_on) <= calls and splits == 2  # the OOM really happened and the batch was split
    assert any("Out of memory with 8 rows" in m for m in notices), notices
    assert grads.keys() == plain.keys()
    for name, g in grads.items():
        torch.testing.assert_close(g, plain[name], atol=1e-5, rtol=0, msg=lambda m, n=name: f"{n}: {m}")


def test_oom_in_the_middle_of_backward_with_layerwise_offload(tmp_path):
    """The same on the emulated card with layer-wise offload: the failed layer's card gradient goes home once."""
    from tests.emulated_card import EmulatedCard
    plain, _, _, _ = _first_step_grads(tmp_path / "plain", set(), 2, True)
    with EmulatedCard() as card:
        grads, splits, _, _ = _first_step_grads(tmp_path / "oom", {2}, 2, True, card=card)
        assert card.max_layers_resident == 1 and card.checks > 0
    assert splits == 2 and grads.keys() == plain.keys()
    for name, g in grads.items():
        torch.testing.assert_close(g, plain[name], atol=1e-5, rtol=0, msg=lambda m, n=name: f"{n}: {m}")


def test_a_full_card_runs_out_of_memory_loading_a_layer_and_recovery_gives_it_back(tmp_path):
    """No injected error: the emulated card has room for a 4-row slice (its weights plus the layers' activations)
    but not for the 8-row batch, so loading layer 2 in the 8-row forward raises the card's own OOM part-way through
    that layer's weights. Before the redo the recovery must have sent the half-loaded layer home (the card holds
    only what lives outside the layers), and the two 4-row slices give the uninterrupted run's gradients."""
    from studio.engine.offload import LayerwiseOffloader
    from studio.models.loading import decoder_layers
    from tests.emulated_card import EmulatedCard
    plain, _, _, _ = _first_step_grads(tmp_path / "plain", set(), 1, True)
    length = max(len(r["input_ids"]) for r in _rows(8))  # the collator pads the 8-row batch to its longest row
    with EmulatedCard() as card:  # calibrate: the card's peak for one 4-row slice
        model = _tiny()
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        LayerwiseOffloader(model, card.device)
        card.watch(model, decoder_layers(model), activations=True)
        ids = torch.randint(0, 64, (4, length))
        model(input_ids=ids, labels=ids, attention_mask=torch.ones_like(ids)).loss.backward()
        need = card.peak_bytes
    row = length * 32 * 4  # one row of one layer's output (hidden 32, fp32)
    with EmulatedCard(capacity=need + row // 2) as card:
        grads, splits, notices, _ = _first_step_grads(tmp_path / "oom", set(), 1, True, card=card, activations=True)
        assert card.ooms == 1 and splits == 2, (card.ooms, splits, notices)
        assert any("Out of memory with 8 rows" in m for m in notices), notices
        assert card.at_notice == [(0, card.outside)], (card.at_notice, card.outside)  # the failed attempt's memory is back
        assert card.max_layers_resident == 1
    assert grads.keys() == plain.keys()
    for name, g in grads.items():
        torch.testing.assert_close(g, plain[name], atol=1e-5, rtol=0, msg=lambda m, n=name: f"{n}: {m}")


_DS_SCRIPT = textwrap.dedent("""
    import json, sys
    from deepspeed.runtime.engine import DeepSpeedEngine
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    steps = []
    real = DeepSpeedEngine._take_model_step
    def counted(self, *a, **k):
        steps.append(1)
        return real(self, *a, **k)
    DeepSpeedEngine._take_model_step = counted
    summary = run_training(RunConfig(**json.loads(sys.argv[1])))
    print("RESULT " + json.dumps({"trainer_steps": summary["step"], "engine_steps": len(steps),
                                  "splits": summary["micro_batch_splits"], "final_loss": summary["final_loss"]}))
""")


@pytest.mark.integration
def test_deepspeed_zero2_split_batches_step_once_per_batch(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    """ZeRO-2 with an OOM above 4 rows: the 8-row batches run as 2 slices, and DeepSpeed steps once per batch."""
    cfg = dict(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
               output_dir=str(tmp_path / "run"), finetuning_type="full", cutoff_len=64, per_device_train_batch_size=8,
               learning_rate=3e-3, max_steps=4, logging_steps=1, save_steps=1000, lr_scheduler_type="constant",
               plot_loss=False, deepspeed="z2", val_size=0)
    result = _run_deepspeed(cfg, oom_above=4)
    assert result["splits"] == 2
    assert result["trainer_steps"] == 4
    assert result["engine_steps"] == 4, result
    plain = _run_deepspeed({**cfg, "output_dir": str(tmp_path / "plain")}, oom_above=None)
    print(f"split: {result}; plain: {plain}")  # visible with -s
    assert plain["splits"] == 1 and plain["engine_steps"] == 4
    assert result["final_loss"] == pytest.approx(plain["final_loss"], rel=1e-4)


def _run_deepspeed(cfg: dict, oom_above: int | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(INJECT_OOM_ENV, None)
    if oom_above:
        env[INJECT_OOM_ENV] = str(oom_above)
    res = subprocess.run([sys.executable, "-c", _DS_SCRIPT, json.dumps(cfg)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(next(line for line in res.stdout.splitlines() if line.startswith("RESULT "))[7:])
