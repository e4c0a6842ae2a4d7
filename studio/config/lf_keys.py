"""LLaMA-Factory's YAML keys, read the way a user carrying a file over expects.

Every key of LLaMA-Factory's supervised fine-tuning examples is one of:
- a RunConfig field with the same name and meaning (most keys; see studio/config/run_config.py);
- translated here into a RunConfig field (``disable_gradient_checkpointing``, DeepSpeed file names);
- accepted with a one-line notice that it has no effect here (NO_EFFECT);
- refused with the precise reason (other stages, multimodal keys, quantization methods other
  than bitsandbytes).

Why a table and not argparse-style dataclasses: LLaMA-Factory's own argument classes need the
package installed (it pins its own torch); the keys a user's file can hold are the ones listed here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..workspace import PRESETS_DIR

# the optimizer and scheduler names live in studio/config/vocabulary.py; re-exported for older imports
from .vocabulary import LR_SCHEDULERS, OPTIMIZERS  # noqa: E402,F401

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
# ending in '_') -> the precise reason, so a carried-over file is refused with it instead of 'unknown key'
UNSUPPORTED: dict[str, str] = {
    "use_galore": "GaLore is not supported yet", "galore_": "GaLore is not supported yet",
    "use_apollo": "APOLLO is not supported yet", "apollo_": "APOLLO is not supported yet",
    "use_badam": "BAdam is not supported yet", "badam_": "BAdam is not supported yet",
    "use_adam_mini": "Adam-mini is not supported yet", "use_muon": "the Muon optimizer is not supported yet",
    "use_asft_loss": "the ASFT loss is not supported yet", "asft_": "the ASFT loss is not supported yet",
    "use_dft_loss": "the DFT loss is not supported yet",
    "use_eaft_loss": "the EAFT loss is not supported yet", "eaft_": "the EAFT loss is not supported yet",
    "use_llama_pro": "LLaMA Pro block expansion is not supported yet",
    "freeze_trainable_modules": "freeze trains whole layers here (freeze_trainable_layers); choosing modules "
                                "inside them is not supported yet",
    "freeze_extra_modules": "freeze trains whole layers here (freeze_trainable_layers)",
    "oft_": "OFT adapters are not supported yet (finetuning_type: lora, full or freeze)",
    "pissa_convert": "converting a PiSSA adapter into a plain LoRA when saving is not supported yet (pissa_init "
                     "is; the saved adapter then needs the PiSSA-initialised base)",
    "mixture_of_depths": "Mixture-of-Depths conversion is not supported",
    "predict_with_generate": "generation after training is done by 'python -m studio eval'",
    "fsdp": "FSDP is not supported: use DeepSpeed ZeRO-3 (deepspeed: ds_z3 or ds_z3_offload)",
    "fsdp_": "FSDP is not supported: use DeepSpeed ZeRO-3 (deepspeed: ds_z3 or ds_z3_offload)",
    "fp8": "FP8 training is not supported yet", "fp8_": "FP8 training is not supported yet",
    "use_kt": "KTransformers is not supported", "kt_": "KTransformers is not supported",
    "tensor_model_parallel_size": "Megatron parallelism is not supported (one card, or DeepSpeed)",
    "pipeline_model_parallel_size": "Megatron parallelism is not supported (one card, or DeepSpeed)",
    "expert_model_parallel_size": "Megatron parallelism is not supported (one card, or DeepSpeed)",
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
OTHER_STAGES = {"pt": "pre-training", "rm": "reward modelling", "ppo": "PPO", "dpo": "DPO", "kto": "KTO"}
# LLaMA-Factory's example DeepSpeed files -> the studio's presets of the same content
DS_NAMES = {"ds_z2_config.json": "ds_z2.json", "ds_z2_offload_config.json": "ds_z2_offload.json",
            "ds_z3_config.json": "ds_z3.json", "ds_z3_offload_config.json": "ds_z3_offload.json"}


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


def translate_llamafactory(data: dict[str, Any], base_dir: str | Path | None = None
                           ) -> tuple[dict[str, Any], list[str], list[str]]:
    """LLaMA-Factory keys -> RunConfig keys. Returns (data, notices, problems)."""
    notices: list[str] = []
    problems: list[str] = []
    # a config the studio saved before templates were renamed: its 'default' was the '### Instruction' format
    if "oom_adaptive" in data and "stage" not in data and data.get("template") == "default":
        data["template"] = "studio"
    stage = str(data.get("stage", "sft")).strip().lower()
    if stage != "sft":
        kind = OTHER_STAGES.get(stage, stage)
        problems.append(f"stage: {stage} ({kind}) is not supported yet: the studio trains supervised fine-tuning "
                        "only (stage: sft)")
        data["stage"] = "sft"  # reported once, above
    if "do_train" in data and not _truthy(data.pop("do_train")):
        problems.append("do_train: false asks for no training; the studio's train command always trains "
                        "(remove the key or set it to true)")
    for key in ("do_predict",):
        if key in data and _truthy(data.pop(key)):
            problems.append(f"{key}: true is not supported here: use 'python -m studio eval' after training")
    if "disable_gradient_checkpointing" in data:
        data["gradient_checkpointing"] = not _truthy(data.pop("disable_gradient_checkpointing"))
    method = data.pop("quantization_method", None)
    if method is not None and str(method).lower() not in ("bitsandbytes", "bnb", "none", "null"):
        problems.append(f"quantization_method: {method} is not supported: the studio quantizes with bitsandbytes "
                        "(quantization_bit: 4 or 8)")
    if data.get("eval_dataset"):
        problems.append("eval_dataset is not supported: hold out rows with val_size, or score any file later "
                        "with 'python -m studio eval --data FILE'")
    data.pop("eval_dataset", None)
    for key in MULTIMODAL:
        if key in data:
            problems.append(f"{key}: multimodal (image/video/audio) training is not supported here; the studio "
                            "trains text-only models")
            data.pop(key)
    for key in [k for k in data if k in UNSUPPORTED or any(k.startswith(p) for p in UNSUPPORTED if p.endswith("_"))]:
        value = data.pop(key)
        if value in (None, False, "") and key.startswith("use_"):
            continue  # switched off: nothing to refuse
        why = UNSUPPORTED.get(key) or next(w for p, w in UNSUPPORTED.items() if p.endswith("_") and key.startswith(p))
        problems.append(f"{key}: {why}")
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
