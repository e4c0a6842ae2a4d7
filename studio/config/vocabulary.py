"""The one vocabulary of names a config may use: optimizers, learning-rate schedulers, DeepSpeed plans.

RunConfig's checks, the memory estimator, the CLI and their error messages all read these lists, so a name valid
in one place is valid in all (a test fails if a second literal list of them appears elsewhere in studio/).

Optimizer and scheduler names are transformers 5.24's ``OptimizerNames`` and ``SchedulerType`` values, listed here
rather than imported so that loading a config does not import transformers (the UI process stays light);
tests/config/test_vocabulary.py checks they still equal the installed library's, so the list cannot fall behind.
"""
from __future__ import annotations

import difflib

from ..stages import STAGE_NAMES  # noqa: F401  (the stage table's names: studio/stages.py)
from ..words.render import render

LR_SCHEDULERS = ["linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
                 "inverse_sqrt", "reduce_lr_on_plateau", "cosine_with_min_lr", "cosine_warmup_with_min_lr",
                 "warmup_stable_decay", "greedy"]
OPTIMIZERS = ["adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adafactor",
              "adamw_anyprecision", "adamw_torch_4bit", "adamw_torch_8bit", "ademamix", "sgd", "adagrad",
              "adamw_bnb_8bit", "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit", "paged_adamw_32bit",
              "paged_adamw_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit", "paged_lion_32bit", "paged_lion_8bit",
              "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit", "galore_adamw", "galore_adamw_8bit",
              "galore_adafactor", "galore_adamw_layerwise", "galore_adamw_8bit_layerwise",
              "galore_adafactor_layerwise", "lomo", "adalomo", "grokadamw", "schedule_free_radam",
              "schedule_free_adamw", "schedule_free_sgd", "apollo_adamw", "apollo_adamw_layerwise", "stable_adamw"]
# the studio's short names (the estimator's and the CLI's historical ones) -> what transformers calls them
OPTIMIZER_ALIASES: dict[str, str] = {"adamw": "adamw_torch"}
# torch's own AdamW: the engine switches adamw_torch to the fused kernel on CUDA (studio/engine/arguments.py)
TORCH_ADAMW = ("adamw_torch", "adamw_torch_fused")
EIGHT_BIT_ADAMW = "adamw_8bit"   # bitsandbytes' 8-bit AdamW: what the memory advice offers in place of a 32-bit one


def is_torch_adamw(name: str) -> bool:
    """torch's 32-bit AdamW under any of its names (adamw, adamw_torch, adamw_torch_fused)."""
    return canonical_optimizer(name) in TORCH_ADAMW


def clashes_with_deepspeed(name: str) -> bool:
    """bitsandbytes' 8-bit optimizers bring their own optimizer object, which DeepSpeed's engine refuses."""
    return "8bit" in canonical_optimizer(name)

# Optimizer state per trained parameter: (number of states, bytes of each). None = the parameter's own dtype
# (fp32 masters: 4; pure_bf16: 2). "paged_" is the same state in pageable memory, so it costs what its base does.
# Factored / low-rank ones (Adafactor, GaLore, APOLLO, AdaLomo) keep row+column statistics or a projection of the
# gradient: a small fraction of one state, counted as 0.1 of the parameter's bytes as before.
FACTORED = 0.1
_STATES: dict[str, tuple[float, float | None]] = {
    "adamw": (2, None), "adamw_8bit": (2, 1), "adamw_4bit": (2, 0.5), "ademamix": (3, None), "ademamix_8bit": (3, 1),
    "lion": (1, None), "lion_8bit": (1, 1), "sgd": (0, None), "adagrad": (1, None), "rmsprop": (1, None),
    "rmsprop_8bit": (1, 1), "factored": (FACTORED, None), "lomo": (0, None), "grokadamw": (3, None),
    "schedule_free": (2, None), "schedule_free_sgd": (1, None),
}


def _state_kind(name: str) -> str:
    """The state layout an optimizer name stands for (keys of _STATES)."""
    n = canonical_optimizer(name).removeprefix("paged_")
    if n.startswith(("galore_", "apollo_")) or n in ("adafactor", "adalomo"):
        return "factored"
    if n == "schedule_free_sgd":
        return n
    if n.startswith("schedule_free_"):
        return "schedule_free"
    for base in ("ademamix", "lion", "rmsprop"):
        if n.startswith(base):
            return base + ("_8bit" if n.endswith("8bit") else "")
    if n in ("sgd", "adagrad", "lomo", "grokadamw"):
        return n
    if n.endswith("4bit"):
        return "adamw_4bit"
    return "adamw_8bit" if n.endswith("8bit") else "adamw"   # adamw_torch*, anyprecision (fp32 states), stable_adamw


def optimizer_state_bytes(name: str, param_bytes: float = 4) -> float:
    """Bytes of optimizer state per trained parameter for ``name`` (an accepted name or alias).

    32-bit AdamW 2 x param_bytes (8 at fp32), 8-bit AdamW 2, paged = its base, Adafactor/GaLore ~0.1 x param_bytes,
    SGD 0 (transformers' default momentum 0), Lion 1 state (4 at fp32, 1 in 8 bits), AdEMAMix 3 states.

    Raises:
        ValueError: ``name`` is not an accepted optimizer.
    """
    if not is_optimizer(name):
        raise ValueError(optimizer_problem(name))
    count, size = _STATES[_state_kind(name)]
    return count * (param_bytes if size is None else size)


def canonical_optimizer(name: str) -> str:
    """The transformers name for ``name`` (aliases resolved; others unchanged)."""
    return OPTIMIZER_ALIASES.get(name, name)


def is_optimizer(name: str) -> bool:
    return canonical_optimizer(name) in OPTIMIZERS


def accepted_optimizers() -> list[str]:
    """Every name a config may give as ``optim``: transformers' names, then the studio's aliases."""
    return list(OPTIMIZERS) + list(OPTIMIZER_ALIASES)


def closest_optimizer(name: str) -> str | None:
    """The accepted optimizer name closest to ``name``, None when none is close."""
    close = difflib.get_close_matches(name, accepted_optimizers(), n=1)
    return close[0] if close else None


def closest_scheduler(name: str) -> str | None:
    close = difflib.get_close_matches(name, LR_SCHEDULERS, n=1)
    return close[0] if close else None


def optimizer_problem(name: str) -> str:
    """One-line error for an unknown optimizer name, naming the closest accepted one (the words of config checks')."""
    close = closest_optimizer(name)
    return render(f"check.optim_{'close' if close else 'unknown'}",
                  {"name": name, "close": close, "choices": ", ".join(accepted_optimizers())}, "en", "cli")


# DeepSpeed plan shortcuts -> their preset file under presets/deepspeed/ ("none": no DeepSpeed)
DEEPSPEED_FILES: dict[str, str] = {"z2": "ds_z2.json", "z2-offload": "ds_z2_offload.json", "z3": "ds_z3.json",
                                   "z3-offload": "ds_z3_offload.json", "z3-nvme": "ds_z3_nvme.json"}
DEEPSPEED_SHORTCUTS: tuple[str, ...] = ("none", *DEEPSPEED_FILES)


def deepspeed_choices() -> str:
    """'none, z2, ... or a .json path' for help texts and error messages."""
    return ", ".join(DEEPSPEED_SHORTCUTS) + " or a .json path"


def short_optimizer(name: str) -> str:
    """The studio's short name for ``name`` where it has one (adamw_torch -> adamw), else ``name``."""
    name = canonical_optimizer(name)
    return next((alias for alias, full in OPTIMIZER_ALIASES.items() if full == name), name)


# The precisions a run can ask for (RunConfig.precision). "auto" is decided by studio/models/precision.py from the
# card; the estimator adds its own plan name "pure_bf16" (bf16 weights and states, RunConfig.pure_bf16).
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
