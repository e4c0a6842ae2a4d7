"""LLaMA-Factory's YAML keys, read the way a user carrying a file over expects.

Every key of LLaMA-Factory's supervised fine-tuning examples is one of:
- a RunConfig field with the same name and meaning (most keys; see studio/config/run_config.py);
- translated here into a RunConfig field (``disable_gradient_checkpointing``, DeepSpeed file names; and the studio's
  own keys renamed since a run saved them, RENAMED);
- accepted with a one-line notice that it has no effect here (NO_EFFECT);
- refused with the precise reason (other stages, multimodal keys, quantization methods other
  than bitsandbytes).

Why a table and not argparse-style dataclasses: LLaMA-Factory's own argument classes need the
package installed (it pins its own torch); the keys a user's file can hold are the ones listed here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..stages import STAGE_NAMES, lf_refusal
from ..workspace import PRESETS_DIR

# the optimizer and scheduler names live in studio/config/vocabulary.py; re-exported for older imports
from .vocabulary import LR_SCHEDULERS, OPTIMIZERS  # noqa: E402,F401
from .checks import problem

# key -> why it changes nothing here (said once per run in the log)
NO_EFFECT: dict[str, str] = {
    "overwrite_cache": "the token cache is keyed by the rows and every tokenization setting, so a changed "
                       "file or setting is tokenized again anyway",
    "preprocessing_num_workers": "tokenization runs in the training process",
    "dataloader_num_workers": "batches are built in the training process",
    "save_only_model": "checkpoints always keep optimizer states, so every run can resume",
    "flash_attn": "the attention kernel is transformers' default (sdpa)",
    "eval_strategy": "evaluation runs every eval_steps when val_size > 0",
    "do_eval": "evaluation runs every eval_steps when val_size > 0",
    "ray_run_name": "Ray is not used; one process per card (nproc)",
    "ray_num_workers": "Ray is not used; one process per card (nproc)",
    "ray_storage_path": "Ray is not used; one process per card (nproc)",
    "upcast_layernorm": "layer norms keep the model's dtype",
    "use_unsloth": "Unsloth kernels are not used",
    "logging_dir": "logs go to the run folder (trainer_log.jsonl)",
    "ddp_find_unused_parameters": "single process or DeepSpeed; not used",
    "use_fast_tokenizer": "the fast tokenizer is always used when the model has one",
}
# LLaMA-Factory features its 0.9.5 SFT examples switch on that the studio does not have: key (or key prefix
# ending in '_') -> the problem that refuses it with the precise reason (its words: studio/words/config_problems.py),
# so a carried-over file is refused with it instead of 'unknown key'
UNSUPPORTED: dict[str, str] = {
    "use_galore": "check.lf_galore", "galore_": "check.lf_galore",
    "use_apollo": "check.lf_apollo", "apollo_": "check.lf_apollo",
    "use_badam": "check.lf_badam", "badam_": "check.lf_badam",
    "use_adam_mini": "check.lf_adam_mini", "use_muon": "check.lf_muon",
    "use_asft_loss": "check.lf_asft", "asft_": "check.lf_asft",
    "use_dft_loss": "check.lf_dft",
    "use_eaft_loss": "check.lf_eaft", "eaft_": "check.lf_eaft",
    "use_llama_pro": "check.lf_llama_pro",
    "freeze_trainable_modules": "check.lf_freeze_modules",
    "freeze_extra_modules": "check.lf_freeze_extra",
    "oft_": "check.lf_oft",
    "pissa_convert": "check.lf_pissa_convert",
    "mixture_of_depths": "check.lf_mixture_of_depths",
    "predict_with_generate": "check.lf_predict_with_generate",
    "fsdp": "check.lf_fsdp", "fsdp_": "check.lf_fsdp",
    "simpo_gamma": "check.lf_simpo_gamma",
    "dpo_label_smoothing": "check.lf_dpo_label_smoothing",
    "pref_bco_weight": "check.lf_bco",
    "ld_alpha": "check.lf_ld_dpo",
    "fp8": "check.lf_fp8", "fp8_": "check.lf_fp8",
    "use_kt": "check.lf_ktransformers", "kt_": "check.lf_ktransformers",
    "tensor_model_parallel_size": "check.lf_megatron",
    "pipeline_model_parallel_size": "check.lf_megatron",
    "expert_model_parallel_size": "check.lf_megatron",
}
# accepted with a notice (their effect does not exist or does not matter here)
NO_EFFECT.update({
    "use_v1_kernels": "LLaMA-Factory's kernel plugins (NPU/fused) are not used",
    "run_name": "the run is named by its output_dir here",
    "pissa_iter": "PiSSA starts from the exact SVD here (as pissa_iter: -1); the iteration count only made "
                  "LLaMA-Factory's start faster",
})
MULTIMODAL = ("image_max_pixels", "image_min_pixels", "video_max_pixels", "video_min_pixels", "video_fps",
              "video_maxlen", "freeze_vision_tower", "freeze_multi_modal_projector", "freeze_language_model",
              "train_mm_proj_only", "image_resolution", "video_resolution", "audio_sampling_rate", "media_dir",
              "image_dir", "use_audio_in_video")
# LLaMA-Factory's pref_loss values this studio's pinned TRL trainers do not run here; the reason of each is the
# problem check.lf_pref_loss_<value> (studio/words/config_problems.py)
PREF_LOSS_REFUSED = ("orpo", "simpo", "kto_pair")
# LLaMA-Factory's example DeepSpeed files -> the studio's presets of the same content
DS_NAMES = {"ds_z2_config.json": "ds_z2.json", "ds_z2_offload_config.json": "ds_z2_offload.json",
            "ds_z3_config.json": "ds_z3.json", "ds_z3_offload_config.json": "ds_z3_offload.json"}


# the studio's own keys renamed since a run saved them (old -> new): a saved run's config.yaml still loads, resumes
# and reads back as it was; a file that gives both keeps the new one. The rewards became every online-RL stage's
# (studio/engine/rewards.py), not grpo's alone.
RENAMED = {"grpo_reward": "reward", "grpo_pattern": "reward_pattern"}


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes", "on")


def resolve_deepspeed_path(spec: str, base_dir: str | Path | None = None) -> str:
    """A DeepSpeed JSON name as written in a LLaMA-Factory file -> a path that exists, if any does.

    Tried in order: as given (from the working folder), next to the YAML file, then the studio's
    presets/deepspeed by file name (LLaMA-Factory's ``ds_z3_offload_config.json`` maps to the studio's
    ``ds_z3_offload.json``). Unresolvable names are returned unchanged (the engine says it is missing).
    """
    p = Path(spec)
    if p.is_file():
        return spec
    candidates = []
    if base_dir is not None and not p.is_absolute():
        candidates += [Path(base_dir) / p, Path(base_dir) / p.name]
    presets = PRESETS_DIR / "deepspeed"
    candidates += [presets / p.name, presets / DS_NAMES.get(p.name, p.name)]
    for c in candidates:
        if c.is_file():
            return str(c)
    return spec


def unsupported_code(key: str) -> str | None:
    """The problem refusing ``key`` (UNSUPPORTED: the key itself, or a prefix ending in '_'), None for another key."""
    return UNSUPPORTED.get(key) or next((code for prefix, code in UNSUPPORTED.items()
                                         if prefix.endswith("_") and key.startswith(prefix)), None)


def translate_llamafactory(data: dict[str, Any], base_dir: str | Path | None = None
                           ) -> tuple[dict[str, Any], list[str], list[str]]:
    """LLaMA-Factory keys -> RunConfig keys. Returns (data, notices, problems)."""
    notices: list[str] = []
    problems: list[str] = []
    # a config the studio saved before templates were renamed: its 'default' was the '### Instruction' format
    if "oom_adaptive" in data and "stage" not in data and data.get("template") == "default":
        data["template"] = "studio"
    for old, new in RENAMED.items():
        if old in data:
            data.setdefault(new, data.pop(old))
    stage = str(data.get("stage", "sft")).strip().lower()
    refused = lf_refusal(stage)   # the stage table's (studio/stages.py): pt, rm, ppo each by its own words
    if refused:
        problems.append(problem(refused, stage=stage, stages=list(STAGE_NAMES)))
        data["stage"] = "sft"  # reported once, above
    elif "stage" in data:
        data["stage"] = stage
    loss = str(data.get("pref_loss", "sigmoid")).strip().lower()
    if loss in PREF_LOSS_REFUSED:
        problems.append(problem(f"check.lf_pref_loss_{loss}", loss=loss))
        data.pop("pref_loss")
    if "do_train" in data and not _truthy(data.pop("do_train")):
        problems.append(problem("check.lf_do_train", key="do_train"))
    if "do_predict" in data and _truthy(data.pop("do_predict")):
        problems.append(problem("check.lf_do_predict", key="do_predict"))
    if "disable_gradient_checkpointing" in data:
        data["gradient_checkpointing"] = not _truthy(data.pop("disable_gradient_checkpointing"))
    method = data.pop("quantization_method", None)
    if method is not None and str(method).lower() not in ("bitsandbytes", "bnb", "none", "null"):
        problems.append(problem("check.lf_quantization_method", key="quantization_method", method=str(method)))
    if data.get("eval_dataset"):
        problems.append(problem("check.lf_eval_dataset", key="eval_dataset"))
    data.pop("eval_dataset", None)
    for key in MULTIMODAL:
        if key in data:
            problems.append(problem("check.lf_multimodal", key=key))
            data.pop(key)
    for key in [k for k in data if unsupported_code(k)]:
        value = data.pop(key)
        if value in (None, False, "") and key.startswith("use_"):
            continue  # switched off: nothing to refuse
        problems.append(problem(unsupported_code(key), key=key))  # type: ignore[arg-type]
    for key, why in NO_EFFECT.items():
        if key in data:
            value = data.pop(key)
            notices.append(f"{key}: {value} has no effect here ({why})")
    report = data.get("report_to")
    if isinstance(report, (list, tuple)):
        data["report_to"] = ",".join(str(r) for r in report) or "none"
    ds = data.get("deepspeed")
    if isinstance(ds, str) and ds.endswith(".json"):
        data["deepspeed"] = resolve_deepspeed_path(ds, base_dir)
    return data, notices, problems
