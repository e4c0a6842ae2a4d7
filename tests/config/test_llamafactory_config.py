"""LLaMA-Factory YAML files load as they are: keys honoured, noticed, or refused with the reason."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from studio.config.run_config import Draft, RunConfig
from studio.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamafactory"
ACCEPTED = ["llama3_lora_sft.yaml", "llama3_full_sft.yaml", "llama3_lora_sft_otfq.yaml",
            "llama3_70b_full_ds3_offload.yaml", "llama3_lora_extras.yaml"]


@pytest.mark.parametrize("name", ACCEPTED)
def test_official_sft_examples_load_as_they_are(name: str) -> None:
    cfg = RunConfig.load(FIXTURES / name)
    assert cfg.validate() == []
    assert cfg.stage == "sft" and cfg.template == "llama3"
    raw = yaml.safe_load((FIXTURES / name).read_text())
    for key in ("preprocessing_num_workers", "save_only_model"):
        if key in raw:
            assert any(n.startswith(f"{key}:") and "no effect" in n for n in cfg.notices), key
    if "ddp_timeout" in raw:  # honoured: it bounds how long a multi-process run waits for a lost peer
        assert cfg.ddp_timeout == raw["ddp_timeout"]


def test_other_stages_and_multimodal_keys_are_refused_with_the_reason() -> None:
    dpo = RunConfig.load(FIXTURES / "llama3_lora_dpo.yaml")  # preference tuning runs here (engine/preference.py)
    assert (dpo.stage, dpo.finetuning_type, dpo.pref_beta, dpo.pref_loss) == ("dpo", "lora", 0.1, "sigmoid")
    assert Draft.from_dict({"stage": "kto"}).stage == "kto"
    with pytest.raises(ConfigError) as vl:
        RunConfig.load(FIXTURES / "qwen2vl_lora_sft.yaml")
    assert [p.split(":")[0] for p in vl.value.problems] == ["image_max_pixels", "video_max_pixels"]
    assert all("multimodal" in p for p in vl.value.problems)
    for stage in ("pt", "ppo", "rm"):
        with pytest.raises(ConfigError, match=f"stage: {stage} .*not supported yet"):
            Draft.from_dict({"stage": stage})
    with pytest.raises(ConfigError, match="quantization_method: hqq is not supported"):
        Draft.from_dict({"quantization_bit": 4, "quantization_method": "hqq"})


def test_defaults_follow_llamafactory() -> None:
    cfg = RunConfig.load(FIXTURES / "llama3_lora_sft.yaml")  # lora_rank 8, no lora_alpha
    assert cfg.lora_alpha is None and cfg.effective_lora_alpha == 16 and cfg.lora_kwargs()["lora_alpha"] == 16
    assert Draft(lora_rank=32).lora_kwargs()["lora_alpha"] == 64
    assert Draft(lora_rank=32, lora_alpha=8).lora_kwargs()["lora_alpha"] == 8
    assert Draft().gradient_checkpointing is True
    assert Draft.from_dict({"disable_gradient_checkpointing": True}).gradient_checkpointing is False


def test_bf16_on_a_cpu_trains_in_fp32_and_says_so() -> None:
    from studio.engine.run import startup_notices
    cfg = RunConfig.load(FIXTURES / "llama3_lora_sft.yaml")
    assert cfg.bf16 and cfg.resolved_precision("cpu") == "fp32"
    assert cfg.resolved_precision("cuda", bf16_ok=True) == "bf16"
    assert any(n.startswith("bf16: true but this machine has no GPU") for n in startup_notices(cfg, "cpu"))
    assert not any(n.startswith("bf16") for n in startup_notices(cfg, "cuda"))


def test_deepspeed_names_resolve_next_to_the_file_then_in_presets(tmp_path: Path) -> None:
    from studio.config.deepspeed import deepspeed_json as deepspeed_config
    from studio.workspace import PRESETS_DIR
    (tmp_path / "cfg.yaml").write_text("deepspeed: examples/deepspeed/ds_z3_offload_config.json\n")
    cfg = Draft.load(tmp_path / "cfg.yaml")  # a file without data: read, not run
    assert Path(cfg.deepspeed) == PRESETS_DIR / "deepspeed" / "ds_z3_offload.json"
    assert deepspeed_config(cfg.deepspeed)["zero_optimization"]["offload_param"]["device"] == "cpu"
    assert deepspeed_config("ds_z3_offload.json") == deepspeed_config("z3-offload")
    own = tmp_path / "examples" / "deepspeed"
    own.mkdir(parents=True)
    (own / "ds_z3_offload_config.json").write_text('{"zero_optimization": {"stage": 3}}')
    cwd = os.getcwd()
    os.chdir("/")
    try:
        cfg = Draft.load(tmp_path / "cfg.yaml")  # a file without data: read, not run
    finally:
        os.chdir(cwd)
    assert Path(cfg.deepspeed) == own / "ds_z3_offload_config.json"  # the user's own file wins


def test_every_transformers_scheduler_and_optimizer_is_accepted() -> None:
    from transformers.trainer_utils import SchedulerType
    from transformers.training_args import OptimizerNames
    from studio.config.lf_keys import LR_SCHEDULERS, OPTIMIZERS
    assert LR_SCHEDULERS == [s.value for s in SchedulerType]
    assert OPTIMIZERS == [o.value for o in OptimizerNames]
    assert RunConfig(lr_scheduler_type="inverse_sqrt", optim="adagrad", dataset="d").validate() == []
    assert "did you mean 'cosine'" in Draft(lr_scheduler_type="cosin", dataset="d").validate()[0]


def test_trainer_arguments_carry_llamafactory_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    from studio.engine.arguments import training_arguments
    from studio.errors import StudioError
    from studio.runs.run_dir import RunDir
    with pytest.raises(StudioError, match="report_to: tensorboard needs the 'tensorboard' package"):
        training_arguments(RunConfig(dataset="d", report_to="tensorboard"), RunDir(tmp_path), "cpu", False)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: True if name == "tensorboard" else real(name, *a))
    cfg = RunConfig(dataset="d", lr_scheduler_type="polynomial", optim="adagrad", report_to="tensorboard",
                    neftune_noise_alpha=5.0, per_device_eval_batch_size=3)
    args = training_arguments(cfg, RunDir(tmp_path), "cpu", has_val=True)
    assert args.lr_scheduler_type.value == "polynomial" and args.optim.value == "adagrad"
    assert args.report_to == ["tensorboard"] and args.neftune_noise_alpha == 5.0
    assert args.per_device_eval_batch_size == 3
    assert training_arguments(RunConfig(dataset="d"), RunDir(tmp_path), "cpu", False).report_to == []


def test_old_saved_run_config_keeps_its_template() -> None:
    old = Draft().to_dict()
    old.pop("stage")
    old["template"] = "default"  # what the studio saved before 'default' meant LLaMA-Factory's template
    assert Draft.from_dict(old).template == "studio"
    assert Draft.from_dict({"template": "default"}).template == "default"  # a LLaMA-Factory file


def test_zero3_parameter_counts_use_the_real_sizes() -> None:
    import torch
    from studio.engine.run import parameter_counts
    layer = torch.nn.Linear(4, 4)
    for p in layer.parameters():  # what ZeRO-3 leaves on each rank: an empty shard with its real size
        p.ds_numel = p.numel()
        p.data = torch.empty(0)
    layer.bias.requires_grad_(False)
    assert parameter_counts(layer) == (16, 20)


def test_files_for_users_get_the_usual_mode(tmp_path: Path) -> None:
    from studio.runs.run_dir import atomic_write_text
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "data.jsonl", "{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "data.jsonl").stat().st_mode & 0o777 == 0o644


def test_packing_and_mask_history_from_a_yaml_are_honoured(tmp_path: Path) -> None:
    """Both exist in the studio now: a LLaMA-Factory file's values reach the config (packing used to be dropped
    with an 'has no effect' notice, mask_history: false was noticed and ignored)."""
    path = tmp_path / "lf.yaml"
    path.write_text(yaml.safe_dump({"stage": "sft", "model_name_or_path": "tiny-demo", "dataset": "x",
                                    "packing": True, "neat_packing": True, "mask_history": False}))
    cfg = RunConfig.load(path)
    assert cfg.packing is True and cfg.neat_packing is True and cfg.mask_history is False
    assert not any(n.startswith(("packing", "neat_packing", "mask_history")) for n in cfg.notices)
    path.write_text(yaml.safe_dump({"stage": "sft", "model_name_or_path": "tiny-demo", "dataset": "x",
                                    "mask_history": True}))
    assert RunConfig.load(path).mask_history is True
    assert Draft().mask_history is False  # LLaMA-Factory's default: every reply carries loss


def test_llamafactory_features_the_studio_lacks_are_refused_with_the_reason(tmp_path: Path) -> None:
    """Keys from LLaMA-Factory 0.9.5's own SFT examples (extras/galore, badam, oft, pissa, fsdp...) name what is
    missing instead of failing as 'unknown key'; switched-off use_* flags and no-effect keys pass."""
    path = tmp_path / "lf.yaml"
    path.write_text(yaml.safe_dump({"stage": "sft", "model_name_or_path": "tiny-demo", "dataset": "x",
                                    "use_galore": True, "galore_rank": 16, "use_badam": True, "badam_mode": "layer",
                                    "pissa_convert": True, "fsdp": "full_shard", "use_muon": True,
                                    "predict_with_generate": True, "freeze_trainable_modules": "all"}))
    with pytest.raises(ConfigError) as err:
        RunConfig.load(path)
    problems = err.value.problems
    assert not any("unknown key" in p for p in problems), problems
    assert sorted(p.split(":")[0] for p in problems) == sorted(
        ["use_galore", "galore_rank", "use_badam", "badam_mode", "pissa_convert", "fsdp", "use_muon",
         "predict_with_generate", "freeze_trainable_modules"])
    assert "GaLore is not supported yet" in problems[0] or any("GaLore" in p for p in problems)
    path.write_text(yaml.safe_dump({"stage": "sft", "model_name_or_path": "tiny-demo", "dataset": "x",
                                    "use_galore": False, "use_v1_kernels": True, "run_name": "r", "pissa_iter": 4}))
    cfg = RunConfig.load(path)
    assert {n.split(":")[0] for n in cfg.notices} >= {"use_v1_kernels", "run_name", "pissa_iter"}
