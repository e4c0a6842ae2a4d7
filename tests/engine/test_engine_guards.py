"""Divergence guard on the gradient norm, and the tiny-demo tokenizer's data (the training rows only)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from studio.config.run_config import RunConfig
from studio.engine import run_training
from studio.errors import StudioError
from studio.runs.run_dir import RunDir
from tests.conftest import make_review_rows, write_jsonl


def _sgd_cfg(tmp_path, model_dir, data, **kw) -> RunConfig:
    base = dict(model_name_or_path=str(model_dir), dataset=str(data), output_dir=str(tmp_path / "run"),
                finetuning_type="full", cutoff_len=64, per_device_train_batch_size=8, optim="sgd",
                learning_rate=0.99, max_grad_norm=0.0, max_steps=30, logging_steps=1, save_steps=1000,
                lr_scheduler_type="constant", plot_loss=False)
    base.update(kw)
    return RunConfig(**base)


def test_sgd_at_lr_099_without_clipping_stops_on_the_gradient_norm(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    """Before the fix this run 'finished' with grad_norm inf and a loss of 3e14."""
    cfg = _sgd_cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl)
    with pytest.raises(StudioError) as err:
        run_training(cfg)
    msg = err.value.message
    assert msg.startswith("Training diverged at step ") and "the gradient norm " in msg, msg
    assert "no checkpoint was saved before this step, so start the run again" in msg
    assert "the last good checkpoint was kept" not in msg
    run = RunDir(cfg.output_dir)
    status = run.read_status()
    assert status["state"] == "failed" and status["code"] == "engine.diverged"
    assert run.last_checkpoint() is None and run.final_model() is None


def _blow_up_gradients_from_step(monkeypatch, step: int) -> None:
    """From ``step`` on, the loss is scaled by 1e7: it stays finite while its gradients explode."""
    from studio.engine.studio_trainer import StudioTrainer
    real = StudioTrainer.compute_loss

    def blown(self, model, inputs, *a, **kw):
        loss = real(self, model, inputs, *a, **kw)
        return loss * 1e7 if self.state.global_step >= step else loss

    monkeypatch.setattr(StudioTrainer, "compute_loss", blown)


def test_the_message_names_the_checkpoint_that_exists(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    """Gradients blown up from step 7 on (the loss itself stays finite): stop there, name checkpoint-6."""
    _blow_up_gradients_from_step(monkeypatch, 6)
    cfg = _sgd_cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, optim="adamw_torch", learning_rate=1e-3,
                   max_grad_norm=1.0, save_steps=3)
    with pytest.raises(StudioError) as err:
        run_training(cfg)
    run = RunDir(cfg.output_dir)
    last = run.last_checkpoint()
    assert last is not None and last.name == "checkpoint-6"
    assert err.value.message.startswith("Training diverged at step 9: the gradient norm exploded to ")
    assert f"the last good checkpoint, checkpoint-6 ({last}), was kept: resume from it" in err.value.message


def test_a_bad_step_stops_the_run_before_its_loss_is_logged(tmp_path, tiny_model_dir, sample_reviews_jsonl,
                                                            monkeypatch):
    """The check runs on every step that logs, not only before a checkpoint: with no checkpoint due, the run still
    stops at the step whose gradients blew up, and no later step is trained or logged."""
    _blow_up_gradients_from_step(monkeypatch, 6)
    cfg = _sgd_cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, optim="adamw_torch", learning_rate=1e-3,
                   max_grad_norm=1.0, save_steps=1000)
    with pytest.raises(StudioError, match=r"^Training diverged at step 9: "):
        run_training(cfg)
    logged = [e["step"] for e in RunDir(cfg.output_dir).events() if e["type"] == "progress"]
    assert logged and max(logged) == 8, logged


def test_guard_rules() -> None:
    from studio.engine.callbacks import GradNormGuard
    guard = GradNormGuard(clipping=True)
    for step, norm in enumerate([2.0, 1.5, 1.2, 1.0, 0.9, 1.1], 1):
        guard.check(step, norm, None)
    guard.check(7, 500.0, None)   # one clipped spike (450x the median) is survivable: clipping bounds the update
    guard.check(8, 1.0, None)
    with pytest.raises(StudioError, match=r"step 11: the gradient norm exploded to 600, 545x the median 1\.1 so far"):
        for step in (9, 10, 11):
            guard.check(step, 600.0, None)
    unclipped = GradNormGuard(clipping=False)
    with pytest.raises(StudioError, match=r"step 1: the gradient norm exploded to 2e\+04"):
        unclipped.check(1, 2e4, None)
    with pytest.raises(StudioError, match=r"step 3: the gradient norm became nan"):
        GradNormGuard(clipping=True).check(3, torch.tensor(float("nan")), None)
    fp16 = GradNormGuard(clipping=True, fp16=True)
    fp16.check(1, float("inf"), None)   # the grad scaler skips this step and lowers its scale
    fp16.check(2, 1.0, None)


def test_demo_tokenizer_is_built_from_training_rows_only(tmp_path):
    """A word that only the held-out rows contain must not become a token of the demo tokenizer."""
    rows = make_review_rows(60, seed=3)
    secret = "Zqxjvwk"
    data = tmp_path / "data.jsonl"
    cfg = RunConfig(model_name_or_path="tiny-demo", dataset=str(data), output_dir=str(tmp_path / "run"),
                    finetuning_type="full", cutoff_len=64, val_size=0.25, max_steps=1, save_steps=1000,
                    per_device_train_batch_size=4, plot_loss=False)
    # mark only the rows that the engine's own seeded split holds out
    from studio.data.dataset import split_rows
    train, val = split_rows(rows, cfg.val_size, cfg.seed)
    held_out = {id(r) for r in val}   # the split is by position, so marking these rows marks the held-out ones
    marked = [dict(r, input=r["input"] + f" {secret} {secret}") if id(r) in held_out else r for r in rows]
    assert sum(secret in r["input"] for r in marked) >= 10
    write_jsonl(tmp_path / "data.jsonl", marked)
    assert run_training(cfg)["state"] == "finished"
    vocab = json.loads((RunDir(cfg.output_dir).base_model / "tokenizer.json").read_text())["model"]["vocab"]
    assert not [t for t in vocab if "qxj" in t.lower()], "the held-out word leaked into the tokenizer"
    from studio.models.loading import load_tokenizer
    tok = load_tokenizer(str(RunDir(cfg.output_dir).base_model))
    assert len(tok.tokenize(secret)) > 2   # unseen: spelled out from small pieces


def test_full_disk_while_building_the_base_ends_failed_and_leaves_no_temp(
        tmp_path: Path, sample_reviews_jsonl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk before the first step must not leave status.json at 'starting' nor base_model.tmp/ behind."""
    import errno
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models import loading
    from studio.runs.run_dir import RunDir

    def full(out_dir: Any, *a: Any, **k: Any) -> None:
        tmp = Path(out_dir).with_name(Path(out_dir).name + ".tmp")
        tmp.mkdir(parents=True)
        (tmp / "model.safetensors").write_bytes(b"\0" * 1024)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(loading, "build_tiny_llama", full)
    out = tmp_path / "runs" / "full"
    cfg = RunConfig(dataset=str(sample_reviews_jsonl), output_dir=str(out), max_steps=2, finetuning_type="full")
    with pytest.raises(OSError):
        run_training(cfg)
    status = RunDir(out).read_status()
    assert status["state"] == "failed" and "No space left on device" in status["reason"], status
    assert not (out / "base_model.tmp").exists()
