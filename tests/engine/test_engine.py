"""The single-card engine: every method and memory option trains the tiny model and the loss falls."""
from __future__ import annotations

import json

import pytest
import torch

from studio.config.run_config import Draft, RunConfig
from studio.engine import run_training
from studio.engine.studio_trainer import INJECT_OOM_ENV, StudioTrainer
from studio.errors import ConfigError, StudioError
from studio.runs.run_dir import RunDir
from studio.runs.run_time import run_seconds
from tests.helpers import losses, run_cli


def _cfg(tmp_path, model_dir, data, **kw) -> RunConfig:
    base = dict(model_name_or_path=str(model_dir), dataset=str(data), output_dir=str(tmp_path / "run"),
                finetuning_type="full", cutoff_len=64, per_device_train_batch_size=8, learning_rate=3e-3,
                max_steps=24, logging_steps=4, save_steps=1000, lr_scheduler_type="constant", plot_loss=False,
                gradient_checkpointing=False)  # the scenarios as written (checkpointing is on by default now)
    base.update(kw)
    return RunConfig(**base)


def _assert_learned(run_dir, ratio=0.8):
    ls = losses(run_dir)
    assert len(ls) >= 3, ls
    assert ls[-1] < ls[0] * ratio, f"loss did not fall enough: {ls}"


METHODS = {
    "full": {},
    "freeze": dict(finetuning_type="freeze", freeze_trainable_layers=1, learning_rate=3e-2),
    "lora": dict(finetuning_type="lora", lora_rank=8, lora_alpha=16, learning_rate=1e-2),
    "lora_qv": dict(finetuning_type="lora", lora_target="q_proj,v_proj", learning_rate=1e-2),
    "qlora4": dict(finetuning_type="lora", quantization_bit=4, learning_rate=1e-2),
    "qlora8": dict(finetuning_type="lora", quantization_bit=8, learning_rate=1e-2),
    "grad_ckpt": dict(gradient_checkpointing=True),
    "layerwise_offload": dict(layerwise_offload=True),
    "dynamic_batching": dict(dynamic_batching=True, max_tokens_per_batch=400),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_method_trains_and_loss_falls(name, tmp_path, tiny_model_dir, sample_reviews_jsonl):
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, **METHODS[name])
    summary = run_training(cfg)
    assert summary["state"] == "finished"
    assert summary["step"] == 24
    # adapters / a few trainable layers on a random-init model learn slower than full fine-tuning
    _assert_learned(cfg.output_dir, ratio=0.8 if cfg.finetuning_type == "full" else 0.9)
    run = RunDir(cfg.output_dir)
    assert run.final_model() == (run.adapter if cfg.finetuning_type == "lora" else run.model)
    assert run.read_status()["state"] == "finished"


def test_lora_changes_only_adapters(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    from safetensors.torch import load_file
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, finetuning_type="lora", max_steps=8)
    run_training(cfg)
    adapter = load_file(str(RunDir(cfg.output_dir).adapter / "adapter_model.safetensors"))
    assert adapter and all("lora_" in k for k in adapter)
    assert any(float(v.abs().sum()) > 0 for k, v in adapter.items() if "lora_B" in k)  # B starts at zero
    from transformers import AutoModelForCausalLM
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    again = AutoModelForCausalLM.from_pretrained(tiny_model_dir)  # the base folder itself is untouched
    for (n, p), (_, q) in zip(base.named_parameters(), again.named_parameters()):
        assert torch.equal(p, q), n


def test_freeze_trains_only_last_layers(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    from transformers import AutoModelForCausalLM
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, finetuning_type="freeze",
               freeze_trainable_layers=1, max_steps=8)
    run_training(cfg)
    before = dict(AutoModelForCausalLM.from_pretrained(tiny_model_dir).named_parameters())
    after = dict(AutoModelForCausalLM.from_pretrained(RunDir(cfg.output_dir).model).named_parameters())
    changed = {n for n in before if not torch.equal(before[n], after[n])}
    assert changed and all(n.startswith("model.layers.1.") for n in changed), changed


def test_injected_oom_halves_micro_batch_and_survives(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    monkeypatch.setenv(INJECT_OOM_ENV, "2")  # a "card" that fits at most 2 rows per micro-batch
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, per_device_train_batch_size=8)
    summary = run_training(cfg)
    assert summary["state"] == "finished" and summary["step"] == 24  # same schedule: effective batch unchanged
    assert summary["micro_batch_splits"] == 4
    notices = [e["message"] for e in RunDir(cfg.output_dir).events() if e["type"] == "notice"]
    assert any("Out of memory with 8 rows" in m and "effective batch is unchanged" in m for m in notices), notices
    _assert_learned(cfg.output_dir)


def test_sliced_step_matches_unsliced_loss(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    """Splitting a micro-batch after an OOM gives the same loss curve (same rows, same normalisation)."""
    plain = _cfg(tmp_path / "a", tiny_model_dir, sample_reviews_jsonl, max_steps=6, logging_steps=1)
    run_training(plain)
    monkeypatch.setenv(INJECT_OOM_ENV, "3")
    sliced = _cfg(tmp_path / "b", tiny_model_dir, sample_reviews_jsonl, max_steps=6, logging_steps=1)
    run_training(sliced)
    assert losses(plain.output_dir) == pytest.approx(losses(sliced.output_dir), rel=1e-3)


def test_oom_without_adaptive_fails_with_plain_reason(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    monkeypatch.setenv(INJECT_OOM_ENV, "2")
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, oom_adaptive=False)
    with pytest.raises(torch.OutOfMemoryError):
        run_training(cfg)
    status = RunDir(cfg.output_dir).read_status()
    assert status["state"] == "failed"
    assert status["reason"].startswith("The card ran out of memory. Turn on gradient checkpointing")


def test_nan_loss_stops_with_diagnosis_and_keeps_last_checkpoint(tmp_path, tiny_model_dir, sample_reviews_jsonl,
                                                                 monkeypatch):
    real = StudioTrainer.compute_loss
    calls = {"n": 0}

    def poisoned(self, model, inputs, *a, **kw):
        calls["n"] += 1
        loss = real(self, model, inputs, *a, **kw)
        return loss * float("nan") if calls["n"] > 12 else loss

    monkeypatch.setattr(StudioTrainer, "compute_loss", poisoned)
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, save_steps=5)
    with pytest.raises(StudioError) as err:
        run_training(cfg)
    assert err.value.message.startswith("Training diverged at step 13: the loss became nan.")
    assert "lower the learning rate" in err.value.message
    run = RunDir(cfg.output_dir)
    assert run.read_status()["state"] == "failed"
    last = run.last_checkpoint()
    assert last is not None and last.name == "checkpoint-10"
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(last)
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_interrupted_checkpoint_save_keeps_previous(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    """Disk full while saving checkpoint-10: checkpoint-5 stays complete and resumable."""
    real = StudioTrainer._save_optimizer_and_scheduler

    def disk_full(self, output_dir):
        if self.state.global_step == 10:
            raise OSError(28, "No space left on device")
        return real(self, output_dir)

    monkeypatch.setattr(StudioTrainer, "_save_optimizer_and_scheduler", disk_full)
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, save_steps=5)
    with pytest.raises(OSError):
        run_training(cfg)
    run = RunDir(cfg.output_dir)
    assert [p.name for p in run.checkpoint_list()] == ["checkpoint-5"]
    assert "No space left on device" in run.read_status()["reason"]
    monkeypatch.setattr(StudioTrainer, "_save_optimizer_and_scheduler", real)
    summary = run_training(cfg, resume_from="last")
    assert summary["state"] == "finished" and summary["step"] == 24
    start = [e for e in run.events() if e["type"] == "start"][-1]
    assert start["step"] == 5 and start["resumed"] is True


@pytest.mark.integration
def test_abort_then_resume_continues_at_same_step(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    import subprocess
    import sys
    import time
    from tests.helpers import ROOT
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, max_steps=400, save_steps=50, logging_steps=2,
               per_device_train_batch_size=4)
    cfg.save(tmp_path / "run.yaml")
    proc = subprocess.Popen([sys.executable, "-m", "studio", "train", str(tmp_path / "run.yaml"), "--quiet"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = RunDir(cfg.output_dir)
    deadline = time.time() + 120
    while time.time() < deadline and not any(e["type"] == "progress" and e["step"] >= 6 for e in run.events()):
        time.sleep(0.2)
    run.stop_flag.touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    status = run.read_status()
    assert status["state"] == "aborted"
    stopped_at = status["step"]
    assert 6 <= stopped_at < 400
    # the CLI's words, and their code for a page (tests/ui/test_page_messages.py shows it in Chinese)
    assert status["reason"] == f"stopped on request at step {stopped_at}; resume continues from here"
    assert status["reason_parts"] == [{"code": "stopped_at_step", "values": {"step": stopped_at}}]
    assert run.last_checkpoint().name == f"checkpoint-{stopped_at}"
    res = run_cli("train", str(tmp_path / "run.yaml"), "--resume", "--quiet", "--set", "max_steps=400")
    assert res.returncode == 0, res.stderr
    start = [e for e in run.events() if e["type"] == "start"][-1]
    assert start["step"] == stopped_at
    assert json.loads(res.stdout.strip().splitlines()[-1])["step"] == 400
    # the run's time is both parts: the Runs tab showed only the resumed part's
    done = run.read_status()
    assert done["train_parts"][0] == status["train_seconds"] and len(done["train_parts"]) == 2
    assert done["train_seconds_total"] == pytest.approx(sum(done["train_parts"]), abs=0.02)
    assert run_seconds(done) == done["train_seconds_total"] > done["train_seconds"]


@pytest.mark.integration
@pytest.mark.parametrize("stage", ["z2", "z3-offload"])
def test_deepspeed_trains(stage, tmp_path, tiny_model_dir, sample_reviews_jsonl):
    cfg = _cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, deepspeed=stage, max_steps=16)
    cfg.save(tmp_path / "run.yaml")
    res = run_cli("train", str(tmp_path / "run.yaml"), "--quiet")
    assert res.returncode == 0, res.stderr[-3000:]
    _assert_learned(cfg.output_dir, ratio=0.85)
    assert (RunDir(cfg.output_dir).model / "config.json").exists()


def test_cli_bad_config_key_exact_error(tmp_path):
    (tmp_path / "bad.yaml").write_text("model_name_or_path: tiny-demo\nlearnig_rate: 0.001\ndataset: x.jsonl\n")
    res = run_cli("train", str(tmp_path / "bad.yaml"))
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "Error: The run configuration has 1 problem: unknown key 'learnig_rate' in " + str(tmp_path / "bad.yaml")
        + " (did you mean 'learning_rate'?). Fix: correct the listed fields in the YAML, the --set options or the "
          "Settings tab.")


def test_cli_missing_model_path_exact_error(tmp_path, sample_reviews_jsonl):
    (tmp_path / "run.yaml").write_text(f"model_name_or_path: /nowhere/llama-7b\ndataset: {sample_reviews_jsonl}\n"
                                       f"output_dir: {tmp_path / 'run'}\n")
    res = run_cli("train", str(tmp_path / "run.yaml"))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        "Error: Model path '/nowhere/llama-7b' does not exist. Fix: check the folder name, use 'tiny-demo' for the "
        "built-in demo model, or give a hub id like 'Qwen/Qwen2.5-0.5B' on a machine that can reach the hub.")
    assert RunDir(tmp_path / "run").read_status()["state"] == "failed"


def test_config_collects_every_problem():
    cfg = Draft(dataset="", learning_rate=2.0, quantization_bit=4, finetuning_type="full", nproc=2)
    problems = cfg.validate()
    with pytest.raises(ConfigError) as refused:  # the same problems, all at once, where a RunConfig is built
        cfg.build()
    assert refused.value.problems == problems
    assert any(p.startswith("dataset is empty") for p in problems)
    assert any(p.startswith("learning_rate must be below 1 (got 2.0)") for p in problems)
    assert any(p.startswith("quantization_bit needs finetuning_type: lora") for p in problems)
    assert any(p.startswith("nproc > 1 needs deepspeed") for p in problems)
    with pytest.raises(StudioError) as err:
        Draft.from_dict({"finetuning_type": "qlora", "lora_rank": "eight"})
    assert "finetuning_type: 'qlora' is not one of full, freeze, lora" in err.value.message
    assert "lora_rank: expected a whole number, got 'eight'" in err.value.message


def test_a_parts_time_is_read_once(tmp_path, tiny_model_dir, sample_reviews_jsonl, monkeypatch):
    """train_seconds and its entry in train_parts are one reading of the clock: a resume copies the entry, and the
    Runs tab adds the parts, so two readings a moment apart (0.61 against 0.6 under load) disagreed."""
    import time as real_time
    from types import SimpleNamespace
    from studio.engine import run as engine_run
    ticks = [real_time.time()]

    def slow_clock() -> float:  # every reading of the engine's clock is a second after the last
        ticks[0] += 1.0
        return ticks[0]
    clock = {k: getattr(real_time, k) for k in dir(real_time) if not k.startswith("_")}
    monkeypatch.setattr(engine_run, "time", SimpleNamespace(**{**clock, "time": slow_clock}))
    run_training(_cfg(tmp_path, tiny_model_dir, sample_reviews_jsonl, max_steps=2))
    status = RunDir(tmp_path / "run").read_status()
    assert status["train_parts"] == [status["train_seconds"]], status


def test_one_config_trains_the_same_run_twice(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    """The run's seed decides everything random, the adapter's starting weights too: peft draws them from torch's
    generator, which every process seeds at random (two Gemma runs of one config split at their first check,
    bench/keep_best.py). Two LoRA runs of one config in one process (the generator moved on between them) log the
    same losses."""
    torch.manual_seed(1)
    first = _cfg(tmp_path / "a", tiny_model_dir, sample_reviews_jsonl, finetuning_type="lora", max_steps=6,
                 logging_steps=1, learning_rate=1e-2)
    run_training(first)
    torch.manual_seed(2)
    second = first.replace(output_dir=str(tmp_path / "b" / "run"))
    run_training(second)
    assert losses(first.output_dir) == losses(second.output_dir)
