"""Real-card checks for layer-wise offload and OOM recovery (marked ``gpu``; skipped without CUDA).

The emulated card (tests/emulated_card.py) proves the logic on CPU machines; these check the same promises with the
CUDA allocator: at most K layers' weights on the card, gradients equal to a whole-model run, host copies pinned,
the engine's run staying far below the whole model's footprint, and a real allocator OOM (a per-process memory cap)
recovered with exact gradients and its memory given back. bench/gpu_check.sh runs them; numbers go to
$OUT/offload_oom.json when OUT is set.
"""
from __future__ import annotations

import copy
import gc
import json
import os
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA card")]
MB = 2 ** 20
_RESULTS: dict[str, dict] = {}


def _record(name: str, row: dict) -> None:
    _RESULTS[name] = row
    if os.environ.get("OUT"):
        path = Path(os.environ["OUT"]) / "offload_oom.json"
        path.write_text(json.dumps(_RESULTS, indent=1), encoding="utf-8")


@pytest.fixture(autouse=True)
def _exact_matmuls():
    tf32 = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    gc.collect()
    torch.cuda.empty_cache()


def _llama(layers: int, hidden: int, vocab: int, inter: int | None = None) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=inter or 3 * hidden,
                                        num_hidden_layers=layers, num_attention_heads=8, num_key_value_heads=8,
                                        max_position_embeddings=4096, tie_word_embeddings=False))


def _bytes(params) -> int:
    return sum(p.numel() * p.element_size() for p in params)


@pytest.mark.parametrize("checkpointing", [True, False], ids=["ckpt", "no-ckpt"])
def test_layerwise_offload_keeps_k_layers_on_the_card(checkpointing):
    from studio.engine.offload import LayerwiseOffloader
    from studio.models.loading import decoder_layers
    # 16 layers of ~54 MB (fp32) and short rows: without checkpointing the activations of all layers stay small
    model = _llama(layers=16, hidden=1024, vocab=4000)
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    ids = torch.randint(0, 4000, (1, 128), generator=torch.Generator().manual_seed(1))
    reference = copy.deepcopy(model).cuda()
    reference(input_ids=ids.cuda(), labels=ids.cuda()).loss.backward()
    ref_grads = {n: p.grad.cpu() for n, p in reference.named_parameters()}
    del reference
    gc.collect()
    torch.cuda.empty_cache()

    layers = decoder_layers(model)
    per_layer, total = _bytes(layers[0].parameters()), _bytes(model.parameters())
    offloader = LayerwiseOffloader(model, "cuda")
    assert all(offloader._host[p].is_pinned() for layer in layers for p in layer.parameters())
    on_card: list[int] = []

    def count(*_):
        on_card.append(sum(any(p.is_cuda for p in layer.parameters()) for layer in layers))
    for layer in layers:
        for sub in layer.modules():
            if any(True for _ in sub.parameters(recurse=False)):
                sub.register_forward_pre_hook(count)
                sub.register_full_backward_pre_hook(count)
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    model(input_ids=ids.cuda(), labels=ids.cuda()).loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    _record(f"offload_{'ckpt' if checkpointing else 'no_ckpt'}", {
        "model_mb": round(total / MB, 1), "layer_mb": round(per_layer / MB, 1), "max_resident": offloader.max_resident,
        "max_layers_seen_on_card": max(on_card), "peak_above_resident_mb": round(peak / MB, 1)})
    assert on_card and max(on_card) <= offloader.max_resident
    assert all(not p.is_cuda and (p.grad is None or not p.grad.is_cuda) for layer in layers for p in layer.parameters())
    # the gradients came home by DMA into pinned buffers, not pageable copies
    assert all(p.grad is None or p.grad.is_pinned() for layer in layers for p in layer.parameters())
    # weights and gradients of K layers plus activations; far from the whole model (16 layers)
    assert peak < 0.6 * total, _RESULTS
    for n, p in model.named_parameters():
        torch.testing.assert_close(p.grad.cpu(), ref_grads[n], atol=1e-5, rtol=1e-4, msg=lambda m, n=n: f"{n}: {m}")


def test_engine_run_with_layerwise_offload_stays_below_the_whole_model(tmp_path):
    """run_training with layerwise_offload: Trainer must not move the model to the card."""
    import random

    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    rng = random.Random(0)
    rows = [{"instruction": "Summarise.", "input": " ".join(rng.choice(["good", "bad", "box", "price"])
                                                          for _ in range(300)), "output": "fine"} for _ in range(32)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path = build_tiny_llama(tmp_path / "model", demo_texts(rows[:8]), hidden=1024, layers=12, heads=8,
                            intermediate=3072, vocab_size=2000)
    cfg = RunConfig(model_name_or_path=str(path), dataset=str(data), output_dir=str(tmp_path / "run"),
                    finetuning_type="full", layerwise_offload=True, cutoff_len=256, per_device_train_batch_size=2,
                    max_steps=3, logging_steps=1, save_steps=1000, learning_rate=1e-5, plot_loss=False,
                    train_on_prompt=True, val_size=0)
    from transformers import AutoModelForCausalLM
    total = sum(p.numel() * 4 for p in AutoModelForCausalLM.from_pretrained(path).parameters())  # fp32
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    steps: list[float] = []   # the card's peak inside each optimizer step, before anything the run does after

    from transformers import TrainerCallback

    class StepPeaks(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            steps.append(round((torch.cuda.max_memory_allocated() - base) / MB, 1))
    from studio.engine import studio_trainer
    real_init = studio_trainer.StudioTrainer.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        self.add_callback(StepPeaks())
    studio_trainer.StudioTrainer.__init__ = init
    try:
        summary = run_training(cfg)
    finally:
        studio_trainer.StudioTrainer.__init__ = real_init
    peak = torch.cuda.max_memory_allocated() - base
    _record("engine_offload", {"model_mb": round(total / MB, 1), "peak_mb": round(peak / MB, 1),
                               "peak_mb_by_step_end": steps, "state": summary["state"]})
    assert summary["state"] == "finished" and summary["step"] == 3
    assert peak < 0.6 * total, _RESULTS


def test_recovers_from_a_real_cuda_oom_with_exact_gradients(tmp_path):
    """A per-process memory cap makes the allocator raise a real OOM for 8 rows; the step is redone in slices."""
    from transformers import TrainerCallback, TrainingArguments

    from studio.engine.batching import pad_collator
    from studio.engine.studio_trainer import StudioTrainer
    from tests.wordtok import id_tokenizer
    g = torch.Generator().manual_seed(2)
    data = [{"input_ids": r, "labels": r, "attention_mask": [1] * len(r)}
            for r in torch.randint(0, 32000, (8, 1024), generator=g).tolist()]

    class Grab(TrainerCallback):
        grads: dict = {}

        def on_pre_optimizer_step(self, args, state, control, model=None, **kw):
            self.grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters()}

    def step(cap: bool) -> tuple[dict, int, list[str], dict]:
        grab, notes = Grab(), []
        model = _llama(layers=2, hidden=256, vocab=32000)
        args = TrainingArguments(output_dir=str(tmp_path / f"cap{cap}"), per_device_train_batch_size=8, max_steps=1,
                                 optim="sgd", learning_rate=1e-3, max_grad_norm=0, report_to=[], save_strategy="no",
                                 disable_tqdm=True, seed=0, data_seed=0)
        trainer = StudioTrainer(model=model, args=args, train_dataset=data,
                                data_collator=pad_collator(id_tokenizer(32000)), callbacks=[grab], notify=notes.append)
        gc.collect()
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
        mem = {}
        if cap:  # room for the weights, gradients and about 2 rows' activations: 8 rows cannot fit
            room = base + 3 * calib["two_rows"]
            torch.cuda.set_per_process_memory_fraction(room / torch.cuda.get_device_properties(0).total_memory)
        try:
            torch.cuda.reset_peak_memory_stats()
            trainer.train()
        finally:
            torch.cuda.set_per_process_memory_fraction(1.0)
        mem["peak_mb"] = round((torch.cuda.max_memory_allocated() - base) / MB, 1)
        mem["left_after_mb"] = round((torch.cuda.memory_allocated() - base) / MB, 1)
        return grab.grads, trainer.splits, notes, mem

    calib: dict[str, int] = {}
    # calibrate: the memory one 2-row slice (its gradients included) needs on this card
    probe = _llama(layers=2, hidden=256, vocab=32000).cuda()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    ids = torch.tensor([d["input_ids"] for d in data[:2]], device="cuda")
    probe(input_ids=ids, labels=ids).loss.backward()
    calib["two_rows"] = torch.cuda.max_memory_allocated() - before
    del probe, ids
    plain, plain_splits, _, plain_mem = step(cap=False)
    grads, splits, notes, mem = step(cap=True)
    _record("real_oom", {"two_rows_mb": round(calib["two_rows"] / MB, 1), "splits": splits, "plain": plain_mem,
                         "capped": mem, "notices": notes})
    assert plain_splits == 1 and splits >= 2, _RESULTS
    assert any("Out of memory with 8 rows" in m for m in notes), notes
    assert mem["left_after_mb"] <= plain_mem["left_after_mb"] + 1, _RESULTS  # the failed attempt's memory is back
    for n, gr in grads.items():
        torch.testing.assert_close(gr, plain[n], atol=1e-5, rtol=1e-4, msg=lambda m, n=n: f"{n}: {m}")
