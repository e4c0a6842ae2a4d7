"""Preference tuning (stage dpo / kto) through the studio's engine, on a tiny model built in the test.

Outcomes: the preference loss falls, the adapter is saved (without a reference copy), resume continues at the
checkpoint's step, an abort request stops with a checkpoint, and the reference model is the same weights with the
adapter off: no second model, no second adapter.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.config.run_config import Draft, RunConfig
from studio.errors import ConfigError, StudioError
from studio.runs.run_dir import RunDir

try:
    from conftest import make_review_rows, write_jsonl
    from helpers import losses
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, write_jsonl
    from tests.helpers import losses


# the tiny base model was pre-trained to answer yes/no (conftest.tiny_model_dir): its habit is the rejected answer,
# the label the chosen one, as a teammate's correction of a wrong answer is
def _ranking(path: Path, n: int = 64) -> Path:
    rows = make_review_rows(n, seed=3)
    return write_jsonl(path, [{"instruction": r["instruction"], "input": r["input"], "chosen": r["output"],
                               "rejected": "no"} for r in rows])


def _kto(path: Path, n: int = 64) -> Path:
    rows = make_review_rows(n, seed=4)
    out = [{**r, "kto_tag": True} if i % 2 else {**r, "output": "no", "kto_tag": False} for i, r in enumerate(rows)]
    return write_jsonl(path, out)


def _cfg(tmp_path: Path, model: Path, data: Path, **kw: object) -> RunConfig:
    base = dict(model_name_or_path=str(model), dataset=str(data), output_dir=str(tmp_path / "run"),
                finetuning_type="lora", lora_rank=8, cutoff_len=64, per_device_train_batch_size=4,
                learning_rate=2e-3, max_steps=16, logging_steps=1, save_steps=8, plot_loss=False,
                gradient_checkpointing=False, lr_scheduler_type="constant", stage="dpo", pref_beta=0.5)
    base.update(kw)
    return RunConfig(**base)  # type: ignore[arg-type]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def test_reference_is_the_same_weights_with_the_adapter_off(tmp_path: Path, tiny_model_dir: Path) -> None:
    import torch
    from studio.data.preference import preference_rows
    from studio.engine.preference import build_trainer
    from studio.engine.run import _build_model
    from studio.models.precision import device_caps, precision_plan
    from studio.runs.run_dir import RunDir
    cfg = _cfg(tmp_path, tiny_model_dir, _ranking(tmp_path / "p.jsonl", 8))
    plan = precision_plan(device_caps("cpu"), cfg)
    model, tok = _build_model(cfg, "cpu", plan)
    before = {id(p.untyped_storage()) for p in model.parameters()}
    n_before = sum(p.numel() for p in model.parameters())
    rows = preference_rows(json.loads("[" + ",".join((tmp_path / "p.jsonl").read_text().split("\n")[:-1]) + "]"),
                           None, "p", "ranking")
    trainer, counts = build_trainer(cfg, RunDir(cfg.output_dir).ensure(), model, tok, rows, [], "cpu", plan, [],
                                    lambda n: None)
    assert trainer.ref_model is None  # TRL loaded no second model
    params = dict(trainer.model.named_parameters())
    assert not [n for n in params if ".ref." in n]  # nor kept a second adapter
    assert sum(p.numel() for p in params.values()) == n_before
    assert {id(p.untyped_storage()) for p in trainer.model.parameters()} <= before | set()  # no new storage
    # the reference TRL computes (adapter disabled) is the base model before training
    batch = tok(["The kettle is great"], return_tensors="pt")
    with torch.no_grad():
        for p in trainer.model.parameters():
            if p.requires_grad:
                p.add_(0.05)  # the policy moves away...
        with trainer.model.disable_adapter():
            ref = trainer.model(**batch).logits
        policy = trainer.model(**batch).logits
    from transformers import AutoModelForCausalLM
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        assert torch.allclose(ref, base(**batch).logits, atol=1e-5)  # ...the reference does not
        assert not torch.allclose(policy, ref, atol=1e-3)
    assert counts["train_rows"] == 8


@pytest.mark.parametrize("stage", ["dpo", "kto"])
def test_preference_loss_falls_and_the_adapter_is_saved(tmp_path: Path, tiny_model_dir: Path, stage: str) -> None:
    from studio.engine import run_training
    data = _ranking(tmp_path / "p.jsonl") if stage == "dpo" else _kto(tmp_path / "k.jsonl")
    cfg = _cfg(tmp_path, tiny_model_dir, data, stage=stage, max_steps=24)
    summary = run_training(cfg)
    assert summary["state"] == "finished"
    run = RunDir(cfg.output_dir)
    seen = losses(run.path)
    assert len(seen) >= 20
    assert _mean(seen[-5:]) < _mean(seen[:5]) - 0.05, seen
    assert (run.adapter / "adapter_model.safetensors").is_file()
    assert not (run.adapter / "ref").exists()  # the reference is never saved as an adapter
    assert run.read_status()["stage"] == stage


def test_resume_continues_at_the_checkpoint_step(tmp_path: Path, tiny_model_dir: Path) -> None:
    from studio.engine import run_training
    cfg = _cfg(tmp_path, tiny_model_dir, _ranking(tmp_path / "p.jsonl"), max_steps=8, save_steps=4)
    run_training(cfg)
    run = RunDir(cfg.output_dir)
    assert run.last_checkpoint() is not None and run.last_checkpoint().name == "checkpoint-8"
    longer = cfg.replace(max_steps=12)
    summary = run_training(longer, resume_from="last")
    assert summary["state"] == "finished" and summary["step"] == 12
    steps = [e["step"] for e in run.events() if e["type"] == "progress"]
    after = steps[steps.index(8) + 1:] if 8 in steps else steps
    assert after and min(after) > 8  # no step before the checkpoint was trained again


def test_a_stop_request_saves_a_checkpoint(tmp_path: Path, tiny_model_dir: Path) -> None:
    from studio.engine import run_training
    cfg = _cfg(tmp_path, tiny_model_dir, _ranking(tmp_path / "p.jsonl"), max_steps=200, save_steps=1000)
    run = RunDir(cfg.output_dir).ensure()
    from transformers import TrainerCallback

    class StopAt3(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
            if state.global_step == 3:
                run.stop_flag.touch()
    import studio.engine.preference as pref
    original = pref.build_trainer

    def with_stop(*a, **k):  # type: ignore[no-untyped-def]
        trainer, counts = original(*a, **k)
        trainer.add_callback(StopAt3())
        return trainer, counts
    pref.build_trainer = with_stop
    try:
        summary = run_training(cfg)
    finally:
        pref.build_trainer = original
    assert summary["state"] == "aborted" and 3 <= summary["step"] < 200
    assert run.last_checkpoint() is not None


def test_stage_and_keys_are_honoured_or_refused_with_the_reason() -> None:
    cfg = RunConfig.from_dict({"stage": "dpo", "dataset": "x", "pref_beta": 0.3, "pref_loss": "ipo",
                               "pref_ftx": 0.5})
    assert (cfg.stage, cfg.pref_beta, cfg.pref_loss, cfg.pref_ftx) == ("dpo", 0.3, "ipo", 0.5)
    for loss in ("orpo", "simpo", "kto_pair"):
        with pytest.raises(ConfigError, match=f"pref_loss: {loss}"):
            Draft.from_dict({"stage": "dpo", "pref_loss": loss})
    problems = Draft(stage="kto", dataset="x", finetuning_type="full", pref_ftx=1.0,
                     per_device_train_batch_size=1, packing=True).validate()
    with pytest.raises(ConfigError) as refused:  # and no RunConfig is built with them
        RunConfig(stage="kto", dataset="x", finetuning_type="full", pref_ftx=1.0, per_device_train_batch_size=1,
                  packing=True)
    assert refused.value.problems == problems
    assert any("finetuning_type: lora" in p for p in problems)
    assert any(p.startswith("pref_ftx") for p in problems)
    assert any("per_device_train_batch_size" in p for p in problems)
    assert any(p.startswith("packing") for p in problems)


def test_dpo_arguments_carry_llamafactory_keys(tmp_path: Path) -> None:
    from studio.engine.preference import preference_arguments
    from studio.models.precision import device_caps, precision_plan
    cfg = RunConfig(stage="dpo", dataset="x", pref_beta=0.25, pref_loss="hinge", pref_ftx=0.4,
                    output_dir=str(tmp_path / "r"))
    args = preference_arguments(cfg, RunDir(cfg.output_dir), "cpu", False, precision_plan(device_caps("cpu"), cfg))
    assert (args.beta, args.loss_type, args.loss_weights) == (0.25, ["hinge", "sft"], [1.0, 0.4])
    kto = cfg.replace(stage="kto", pref_ftx=0.0, kto_chosen_weight=2.0, kto_rejected_weight=0.5)
    args = preference_arguments(kto, RunDir(cfg.output_dir), "cpu", False, precision_plan(device_caps("cpu"), kto))
    assert (args.beta, args.desirable_weight, args.undesirable_weight) == (0.25, 2.0, 0.5)


def test_dpo_runs_half_the_rows_per_forward_and_accumulates_twice(tmp_path: Path) -> None:
    """A DPO row is chosen + rejected in one forward: the engine halves the rows per forward where the batch
    divides, keeping the rows per optimizer step; an odd batch and KTO (one sequence a row) are left as asked."""
    from studio.engine.preference import preference_arguments
    from studio.models.precision import device_caps, precision_plan

    def shape(**kw: object) -> tuple[int, int]:
        cfg = RunConfig(dataset="x", output_dir=str(tmp_path / "r"), **kw)  # type: ignore[arg-type]
        args = preference_arguments(cfg, RunDir(cfg.output_dir), "cpu", False, precision_plan(device_caps("cpu"), cfg))
        return args.per_device_train_batch_size, args.gradient_accumulation_steps
    assert shape(stage="dpo", per_device_train_batch_size=8, gradient_accumulation_steps=2) == (4, 4)
    assert shape(stage="dpo", per_device_train_batch_size=2, gradient_accumulation_steps=1) == (1, 2)
    assert shape(stage="dpo", per_device_train_batch_size=3, gradient_accumulation_steps=1) == (3, 1)
    assert shape(stage="kto", per_device_train_batch_size=8, gradient_accumulation_steps=1) == (8, 1)


def test_ranking_datasets_load_from_dataset_info_and_sft_refuses_them(tmp_path: Path) -> None:
    from studio.data.dataset import load_rows
    _ranking(tmp_path / "pairs.jsonl", 4)
    (tmp_path / "dataset_info.json").write_text(json.dumps({"pairs": {
        "file_name": "pairs.jsonl", "ranking": True,
        "columns": {"prompt": "instruction", "query": "input", "chosen": "chosen", "rejected": "rejected"}}}))
    rows = load_rows("pairs", str(tmp_path), "ranking")
    assert len(rows) == 4 and set(rows[0]) >= {"instruction", "input", "chosen", "rejected"}
    assert len(load_rows("pairs", str(tmp_path), "kto")) == 8  # unpaired: one good, one bad per pair
    with pytest.raises(StudioError, match="set stage: dpo"):
        load_rows("pairs", str(tmp_path), "sft")
    _kto(tmp_path / "k.jsonl", 4)
    with pytest.raises(StudioError, match="set stage: kto"):
        load_rows(str(tmp_path / "k.jsonl"), str(tmp_path), "ranking")


def test_the_estimate_counts_the_reference_forward_but_no_second_copy() -> None:
    from studio.memory.estimator import estimate
    est = {st: estimate(Draft(model_name_or_path="smollm2-135m-instruct", dataset="x", stage=st,
                                         selective_logits=False, per_device_train_batch_size=1), device="cpu")
           for st in ("sft", "dpo", "kto")}
    for st in ("dpo", "kto"):
        assert est[st].breakdown["weights"] == est["sft"].breakdown["weights"]  # the reference shares the weights
        assert est[st].breakdown["reference_forward"] > 0
        assert est[st].cpu_gb >= est["sft"].cpu_gb  # KTO's reference pass stays under the policy's peak
    assert est["dpo"].cpu_gb > est["sft"].cpu_gb
    # DPO's policy forward carries chosen and rejected: twice the saved activations of the same batch in SFT
    assert est["dpo"].breakdown["activations"] == pytest.approx(2 * est["sft"].breakdown["activations"])
    assert est["kto"].breakdown["activations"] == pytest.approx(est["sft"].breakdown["activations"])
    # at an even batch the engine runs half the DPO rows per forward (preference_micro_batch): as many sequences
    # per forward as SFT, so the same saved activations; the plan still shows the batch the user set
    even = {st: estimate(RunConfig(model_name_or_path="smollm2-135m-instruct", dataset="x", stage=st,
                                              selective_logits=False, per_device_train_batch_size=8), device="cpu")
            for st in ("sft", "dpo")}
    assert even["dpo"].breakdown["activations"] == pytest.approx(even["sft"].breakdown["activations"])
    assert even["dpo"].plan["batch"] == 8


@pytest.mark.parametrize("stage", ["dpo", "kto"])
def test_qlora_preference_trains_on_the_4bit_base(tmp_path: Path, tiny_model_dir: Path, stage: str) -> None:
    from studio.engine import run_training
    data = _ranking(tmp_path / "p.jsonl") if stage == "dpo" else _kto(tmp_path / "k.jsonl")
    cfg = _cfg(tmp_path, tiny_model_dir, data, stage=stage, max_steps=16, quantization_bit=4)
    summary = run_training(cfg)
    assert summary["state"] == "finished"
    run = RunDir(cfg.output_dir)
    seen = losses(run.path)
    assert _mean(seen[-4:]) < _mean(seen[:4]) - 0.05, seen
    assert (run.adapter / "adapter_model.safetensors").is_file() and not (run.adapter / "ref").exists()


@pytest.mark.integration
def test_the_train_command_runs_a_dpo_config_with_derived_settings(tmp_path: Path, tiny_model_dir: Path) -> None:
    """The CLI path: the derived plan (autoconfig) reads the ranking rows and leaves the preference run valid."""
    try:
        from helpers import run_cli
    except ImportError:
        from tests.helpers import run_cli
    data = _ranking(tmp_path / "p.jsonl", 32)
    path = tmp_path / "dpo.yaml"
    path.write_text(f"stage: dpo\nmodel_name_or_path: {tiny_model_dir}\ndataset: {data}\nfinetuning_type: lora\n"
                    f"output_dir: {tmp_path / 'run'}\nmax_steps: 4\nlogging_steps: 1\nval_size: 0.25\n"
                    "plot_loss: false\n")
    res = run_cli("train", str(path), "--quiet")
    assert res.returncode == 0, res.stderr[-2000:]
    run = RunDir(tmp_path / "run")
    assert run.read_status()["state"] == "finished" and (run.adapter / "adapter_model.safetensors").is_file()
    held = [json.loads(x) for x in run.val_data.read_text().splitlines()]
    assert held and all(set(r) >= {"instruction", "input", "output"} for r in held)  # Evaluate can check them


def test_dpo_continues_an_earlier_runs_adapter_against_that_adapter(tmp_path: Path, tiny_model_dir: Path) -> None:
    """The start of "improve this run": DPO from a finished run's adapter; the reference is that adapter (TRL's
    kept "ref" copy), so at the start policy and reference agree; the saved adapter holds no reference copy."""
    import torch
    from studio.data.preference import preference_rows
    from studio.engine import run_training
    from studio.engine.preference import build_trainer
    from studio.engine.run import _build_model
    from studio.models.precision import device_caps, precision_plan
    first = _cfg(tmp_path / "a", tiny_model_dir, _ranking(tmp_path / "p.jsonl"), stage="sft",
                 dataset=str(write_jsonl(tmp_path / "s.jsonl", make_review_rows(32, seed=6))), max_steps=6)
    run_training(first)
    adapter = RunDir(first.output_dir).adapter
    cfg = _cfg(tmp_path / "b", tiny_model_dir, tmp_path / "p.jsonl", adapter_name_or_path=str(adapter))
    plan = precision_plan(device_caps("cpu"), cfg)
    model, tok = _build_model(cfg, "cpu", plan)
    rows = preference_rows([json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()][:8], None, "p",
                           "ranking")
    trainer, _ = build_trainer(cfg, RunDir(cfg.output_dir).ensure(), model, tok, rows, [], "cpu", plan, [],
                               lambda n: None)
    peft = trainer.model
    assert "ref" in peft.peft_config
    batch = tok(["The kettle is great"], return_tensors="pt")
    with torch.no_grad():
        policy = peft(**batch).logits
        peft.set_adapter("ref")
        ref = peft(**batch).logits
        peft.set_adapter("default")
        with peft.disable_adapter():
            base = peft(**batch).logits
    assert torch.allclose(policy, ref, atol=1e-6) and not torch.allclose(ref, base, atol=1e-4)
    summary = run_training(cfg.replace(output_dir=str(tmp_path / "c"), max_steps=8))
    assert summary["state"] == "finished"
    out = RunDir(tmp_path / "c").adapter
    assert (out / "adapter_model.safetensors").is_file() and not (out / "ref").exists()
