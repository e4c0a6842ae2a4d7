"""A finished run gives its model back: after ``run_training`` returns, nothing in the process keeps the model (and
with it the optimizer state and, on a card, the memory) alive.

Found on an H200 (docs/BENCHMARKS.md "GPU"): each in-process run left about 70% of its CUDA peak allocated after it
returned, because a parameter hook held the trainer through C++ (the grad accumulator), out of the garbage
collector's sight. A notebook or script calling run_training twice piled the runs up on the card. The same leak is
visible on a CPU as a model object that outlives its run, which is what this test checks for every method.
"""
from __future__ import annotations

import gc
import weakref

import pytest

from studio.config.run_config import RunConfig


@pytest.mark.parametrize("method", [dict(finetuning_type="full"), dict(finetuning_type="lora"),
                                    dict(finetuning_type="full", layerwise_offload=True)],
                         ids=["full", "lora", "layerwise_offload"])
def test_the_model_is_released_when_the_run_returns(method, tiny_model_dir, sample_reviews_jsonl, tmp_path,
                                                    monkeypatch):
    import studio.engine.run as engine_run
    from studio.engine import run_training
    built: list[weakref.ref] = []
    real = engine_run._build_model

    def spy(*a, **k):
        model, tok = real(*a, **k)
        built.append(weakref.ref(model))
        built.append(weakref.ref(next(model.parameters())))
        return model, tok
    monkeypatch.setattr(engine_run, "_build_model", spy)
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), cutoff_len=32, per_device_train_batch_size=4, max_steps=2,
                    save_steps=1000, plot_loss=False, val_size=0, **method)
    assert run_training(cfg)["state"] == "finished"
    gc.collect()
    assert built and all(ref() is None for ref in built), \
        "the run's model (or a parameter of it) is still alive after run_training returned"


def test_layerwise_offload_keeps_no_autocast_weight_cache(tiny_model_dir, sample_reviews_jsonl, tmp_path,
                                                          monkeypatch):
    """Under mixed precision autocast caches the 16-bit copy of each weight it casts until the forward ends: with
    layer-wise offload all layers' copies piled up on the H200 (peak 0.74 of the fp32 model with 2 layers resident).
    The trainer of an offload run must enter autocast without that cache, on the model's forward and on the
    selective-loss path alike (both read the accelerator's handler)."""
    from accelerate.utils import get_mixed_precision_context_manager

    from studio.engine import run_training
    from studio.engine import studio_trainer
    seen: list = []
    real_train = studio_trainer.StudioTrainer.train

    def spy(self, *a, **k):
        seen.append(self.accelerator.autocast_handler)
        return real_train(self, *a, **k)
    monkeypatch.setattr(studio_trainer.StudioTrainer, "train", spy)
    base = dict(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl), cutoff_len=32,
                per_device_train_batch_size=4, max_steps=1, save_steps=1000, plot_loss=False, val_size=0,
                finetuning_type="full")
    run_training(RunConfig(output_dir=str(tmp_path / "offload"), layerwise_offload=True, **base))
    run_training(RunConfig(output_dir=str(tmp_path / "plain"), **base))
    offload, plain = seen
    assert plain is None  # runs without offload keep accelerate's default (cache on)
    assert offload is not None and offload.cache_enabled is False
    import torch
    with get_mixed_precision_context_manager(True, offload):  # what accelerate wraps the forward in
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_cache_enabled()
