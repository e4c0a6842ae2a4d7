"""RunConfig: the one typed object that flows UI / YAML / CLI -> engine, valid from the moment it is built.

A RunConfig checks itself when it is constructed, as TRL's ``SFTConfig`` does: ``RunConfig(...)``, ``from_dict``,
``load``, ``replace`` and ``dataclasses.replace`` all end in ``__post_init__``, which raises ConfigError with every
problem at once (studio/config/checks.py), and a field cannot be assigned afterwards. So an invalid RunConfig never
exists, and whoever is handed one trusts it: the run queue, the job runner, the training child that reads
config.yaml back (by the same construction), the engine. What is being edited and may not be valid yet (the
Settings form, the estimate of a plan, a candidate of the memory advice) is a ``Draft``: the same fields, unchecked,
whose ``validate()`` lists its problems and whose ``build()`` is the RunConfig.

Keys are named as LLaMA-Factory names them so its YAML files load here. Each field
carries its type, default, choices, range and UI group in ``metadata``; the Settings form and
validation read that one place. What a field means, its label and help in each language, is
the word catalog's (studio/words/fields.py: ``f.<key>``, ``h.<key>``).

Merge order: defaults < preset < user YAML < ``--set key=value`` < UI edits.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Literal, Self, get_args, get_origin

import yaml

from .checks import DEEPSPEED_SHORTCUTS, problem, problems
from .yaml_io import MAX_YAML_ALIASES, MAX_YAML_BYTES, load_yaml_dict, parse_overrides, safe_yaml
from .lf_keys import translate_llamafactory
from .vocabulary import LR_SCHEDULERS, OPTIMIZER_ALIASES, PRECISIONS, STAGE_NAMES, canonical_optimizer
from ..errors import ConfigError
from ..stages import REWARD_NAMES
from ..words.render import render
from ..workspace import atomic_write_text

# re-exported: callers import the YAML readers and the DeepSpeed shortcuts with RunConfig
__all__ = ["DEEPSPEED_SHORTCUTS", "DEMO_MODEL", "MAX_YAML_ALIASES", "MAX_YAML_BYTES", "PATH_NAMES", "PATH_ROOTS",
           "Draft", "RunConfig", "field_meta", "help_values",
           "load_yaml_dict", "parse_overrides", "safe_yaml"]

DEMO_MODEL = "tiny-demo"

# The folders a path field may name on the page (studio/app/paths.py ``confine_config`` maps each to folders):
#   runs   the studio's run folders (output_dir, a checkpoint to resume)
#   data   the workspace and every --data-root (training data, dataset_info.json, a DeepSpeed JSON)
#   models the workspace and every --data-root, or a hub id / built-in name
#   nvme   only folders the operator named with --nvme-root (DeepSpeed writes its swap files there)
# The command line keeps the user's own paths: the person at the terminal owns the machine.
PATH_ROOTS = ("runs", "data", "models", "nvme")
# ``names``: values of a path field that name no file (a hub id, a dataset_info.json entry, a DeepSpeed
# shortcut, 'last'); ``many``: a comma list of paths or names.
PATH_NAMES = ("model", "dataset", "deepspeed", "last")


def _f(default: Any, group: str = "train", **extra: Any) -> Any:
    """A field with its metadata (its label and help: studio/words/fields.py). Every int/float field declares
    ``range=(lo, hi)`` (inclusive; ``open="lo"``, ``"hi"`` or ``"both"`` excludes an end) and may declare ``step=``
    (the page's spinner; 1 when not declared): the checks (studio/config/checks.py) refuse values outside it, the
    page's widget takes its bounds from it (studio/ui/forms.py, tests/ui/test_widget_bounds.py), and
    tests/robustness/test_ranges.py fails for a number field without one. Every field naming a file or folder
    declares ``root=`` one of PATH_ROOTS (tests/robustness/test_path_fields.py fails for one without it)."""
    meta = {"group": group, **extra}
    assert meta.get("root") in (None, *PATH_ROOTS) and meta.get("names") in (None, *PATH_NAMES), meta
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Draft:
    """Everything one training run needs, each field documented once, by its help (studio/words/fields.py); not
    checked yet. ``RunConfig`` is a Draft that is valid: build one with ``build()`` (or any of its constructors)."""

    # --- model ---
    model_name_or_path: str = _f(DEMO_MODEL, "model", root="models", names="model")
    trust_remote_code: bool = _f(False, "model")
    # --- method ---
    stage: Literal[STAGE_NAMES] = _f("sft", "method")  # type: ignore[valid-type]  # the stage table: studio/stages.py
    pref_beta: float = _f(0.1, "method", range=(0.0, 1000.0), step=0.01, open="lo")
    pref_loss: Literal["sigmoid", "hinge", "ipo"] = _f("sigmoid", "method")
    pref_ftx: float = _f(0.0, "method", range=(0.0, 1000.0))
    kto_chosen_weight: float = _f(1.0, "method", range=(0.0, 1000.0), open="lo")
    kto_rejected_weight: float = _f(1.0, "method", range=(0.0, 1000.0), open="lo")
    reward: Literal[REWARD_NAMES] = _f("row_label", "method")  # type: ignore[valid-type]  # a stage's rewards: stages.py
    reward_pattern: str = _f("", "method")
    finetuning_type: Literal["full", "freeze", "lora"] = _f("lora", "method")
    adapter_name_or_path: str | None = _f(None, "method", root="runs")
    freeze_trainable_layers: int = _f(2, "method", range=(1, 10_000))
    lora_rank: int = _f(8, "method", range=(1, 4096))
    lora_alpha: int | None = _f(None, "method", range=(1, 16_384))
    lora_dropout: float = _f(0.0, "method", range=(0.0, 1.0), step=0.05, open="hi")
    lora_target: str = _f("all", "method")
    use_rslora: bool = _f(False, "method")
    use_dora: bool = _f(False, "method")
    pissa_init: bool = _f(False, "method")
    loraplus_lr_ratio: float | None = _f(None, "method", range=(0.0, 1000.0), open="lo")
    quantization_bit: int | None = _f(None, "method", choices=[None, 4, 8], range=(4, 8))
    quantization_type: Literal["nf4", "fp4"] = _f("nf4", "method")
    double_quantization: bool = _f(True, "method")
    # --- data ---
    dataset: str = _f("", "data", root="data", names="dataset", many=True)
    dataset_dir: str = _f("data", "data", root="data")
    template: str = _f("auto", "data")
    cutoff_len: int = _f(256, "data", range=(1, 1_048_576))
    train_on_prompt: bool = _f(False, "data")
    mask_history: bool = _f(False, "data")
    val_size: float = _f(0.0, "data", range=(0.0, 10_000_000.0), step=0.05)
    max_samples: int | None = _f(None, "data", range=(1, 1_000_000_000))
    # --- hyperparameters ---
    per_device_train_batch_size: int = _f(4, "train", range=(1, 65_536))
    gradient_accumulation_steps: int = _f(1, "train", range=(1, 65_536))
    learning_rate: float = _f(2e-4, "train", range=(0.0, 1.0), step=1e-5, open="both")
    num_train_epochs: float = _f(3.0, "train", range=(0.0, 100_000.0), open="lo")
    max_steps: int = _f(-1, "train", range=(-1, 1_000_000_000))
    lr_scheduler_type: str = _f("cosine", "train")
    warmup_ratio: float = _f(0.0, "train", range=(0.0, 1.0), step=0.01, open="hi")
    weight_decay: float = _f(0.0, "train", range=(0.0, 10.0), step=0.01)
    max_grad_norm: float = _f(1.0, "train", range=(0.0, 1_000_000.0), step=0.1)
    logging_steps: int = _f(5, "train", range=(1, 1_000_000_000))
    save_steps: int = _f(100, "train", range=(1, 1_000_000_000))
    save_total_limit: int = _f(2, "train", range=(1, 100_000))
    eval_steps: int | None = _f(None, "train", range=(1, 1_000_000_000))
    load_best_model_at_end: bool = _f(False, "train")
    early_stopping_patience: int = _f(0, "train", range=(0, 10_000))
    learning_rate_search: str = _f("", "train")
    search_steps: int = _f(0, "train", range=(0, 1_000_000_000))
    per_device_eval_batch_size: int | None = _f(None, "train", range=(1, 65_536))
    neftune_noise_alpha: float | None = _f(None, "train", range=(0.0, 1000.0), open="lo")
    report_to: str = _f("none", "train")
    resume_from_checkpoint: str | None = _f(None, "train", root="runs", names="last")
    seed: int = _f(42, "train", range=(0, 2 ** 32 - 1))
    output_dir: str = _f("runs/latest", "train", root="runs")
    overwrite_output_dir: bool = _f(False, "train")
    plot_loss: bool = _f(True, "train")
    # --- memory plan ---
    bf16: bool = _f(False, "memory")
    fp16: bool = _f(False, "memory")
    precision: Literal[PRECISIONS] = _f("auto", "memory")  # type: ignore[valid-type]  # the names: config/vocabulary.py
    gradient_checkpointing: bool = _f(True, "memory")
    optim: str = _f("adamw_torch", "memory")
    pure_bf16: bool = _f(False, "memory")
    deepspeed: str | None = _f(None, "memory", root="data", names="deepspeed")
    offload_nvme_path: str | None = _f(None, "memory", root="nvme")
    offload_activations: bool = _f(False, "memory")
    layerwise_offload: bool = _f(False, "memory")
    dynamic_batching: bool = _f(False, "memory")
    max_tokens_per_batch: int | None = _f(None, "memory", range=(1, 100_000_000))
    packing: bool = _f(False, "memory")
    neat_packing: bool = _f(False, "memory")
    selective_logits: bool = _f(True, "memory")
    enable_liger_kernel: bool = _f(True, "memory")
    oom_adaptive: bool = _f(True, "memory")
    # --- multi-process ---
    nproc: int = _f(1, "memory", range=(1, 4096))
    ddp_timeout: int = _f(1800, "memory", range=(10, 1_000_000_000))

    def __post_init__(self) -> None:
        # a studio alias (adamw) is stored as the transformers name the engine hands to TrainingArguments
        if isinstance(self.optim, str):
            self.optim = canonical_optimizer(self.optim)

    # ---------------------------------------------------------------- API
    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "config",
                  base_dir: str | Path | None = None) -> Self:
        """Build from a plain dict; unknown keys fail with 'did you mean'.

        LLaMA-Factory's keys are translated first (studio/lf_keys.py): honoured, accepted with a notice
        (kept in ``cfg.notices``; the run log repeats them), or refused with the reason.

        Raises:
            ConfigError: listing every unknown key and every value of the wrong type; for a RunConfig, else every
                problem of its settings (a Draft is not checked).
        """
        # a YAML key may be a number ('7: x'): it is named as written, an unknown key like any other
        data = {k if isinstance(k, str) else str(k): v for k, v in (data or {}).items()}
        data, notices, problems = translate_llamafactory(data, base_dir=base_dir)
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                problems.append(_unknown_key(key, source, known))
                continue
            try:
                kwargs[key] = _coerce(known[key], value)
            except _WrongValue as exc:
                problems.append(problem(exc.code, name=key, **exc.values))
        if problems:
            raise ConfigError(problems)
        cfg = cls(**kwargs)  # a RunConfig checks itself here
        cfg.notices = notices
        return cfg

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None) -> Self:
        """Load a YAML run config, then apply ``key=value`` overrides.

        Raises:
            StudioError: the file is missing or not valid YAML.
            ConfigError: unknown keys or wrong types.
        """
        data = load_yaml_dict(path)
        data.update(parse_overrides(overrides or []))
        return cls.from_dict(data, source=str(path), base_dir=Path(path).parent)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self) -> str:
        """The fields as YAML; values the studio derived (``derived``: field -> why, set by
        autoconfig.fill_unset) are named in a comment above them, so a run's config.yaml says which values
        were chosen for the user and why, and still loads as it is."""
        body = yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)
        derived = getattr(self, "derived", None) or {}
        if not derived:
            return body
        lines = ["# Derived by the studio for this model, data and machine (the config did not set them):"]
        lines += [f"#   {k}: {' '.join(str(why).split())}" for k, why in derived.items()]
        return "\n".join(lines) + "\n" + body

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_yaml())

    def replace(self, **changes: Any) -> Self:
        """A new config of this kind with ``changes`` (coerced as YAML values are); a RunConfig's is checked anew.

        Raises:
            ConfigError: a value of the wrong type; for a RunConfig, also the changed config's problems."""
        merged = self.to_dict()
        merged.update(changes)
        cfg = type(self).from_dict(merged)
        cfg.notices = list(getattr(self, "notices", [])) + [n for n in cfg.notices if n not in
                                                              getattr(self, "notices", [])]
        if getattr(self, "derived", None):
            cfg.derived = dict(self.derived)  # type: ignore[attr-defined]
        return cfg

    @property
    def effective_lora_alpha(self) -> int:
        """lora_alpha, or 2 x lora_rank when it is not set (LLaMA-Factory's rule)."""
        return self.lora_alpha if self.lora_alpha is not None else 2 * self.lora_rank

    def lora_kwargs(self) -> dict[str, Any]:
        """peft.LoraConfig arguments named by LLaMA-Factory's keys (rsLoRA, DoRA, PiSSA init)."""
        return {"r": self.lora_rank, "lora_alpha": self.effective_lora_alpha, "lora_dropout": self.lora_dropout,
                "use_rslora": self.use_rslora, "use_dora": self.use_dora,
                "init_lora_weights": "pissa" if self.pissa_init else True}

    @property
    def method(self) -> str:
        """Human name of the method: full, freeze, lora or qlora."""
        if self.finetuning_type == "lora" and self.quantization_bit:
            return "qlora"
        return self.finetuning_type

    def resolved_precision(self, device_type: str, bf16_ok: bool = False) -> str:
        """fp32 / bf16 / fp16 after 'auto' and the legacy bf16/fp16 flags are applied.

        What the card can do (``device_type``, ``bf16_ok``) is asked in one place, studio/models/precision.py
        ``device_caps``, whose ``precision_plan`` is the one caller; this config layer never imports torch."""
        if self.bf16:
            # LLaMA-Factory refuses bf16 without a bf16 card; here the file still runs, in fp32, and the run
            # log says so (studio/engine/run.py)
            return "fp32" if device_type == "cpu" else "bf16"
        if self.fp16:
            return "fp16"
        if self.precision != "auto":
            return self.precision
        if device_type == "cpu":
            return "fp32"
        return "bf16" if bf16_ok else "fp16"

    def validate(self) -> list[str]:
        """Every problem at once, each naming the field and the fix (empty list: valid); see config/checks.py."""
        return problems(self)

    def build(self) -> "RunConfig":
        """The RunConfig of these fields (notices and derived values kept).

        Raises:
            ConfigError: every problem of the fields at once."""
        return _carry(self, RunConfig(**_field_values(self)))

    def draft(self) -> "Draft":
        """These fields as a Draft, which any change may be tried on (the memory advice's candidates)."""
        return _carry(self, Draft(**_field_values(self)))


class RunConfig(Draft):
    """A Draft found valid when it was built; its fields cannot be changed afterwards (``replace`` makes a new
    one, checked again). Every constructor ends here, so nothing that is handed a RunConfig checks it again."""

    def __post_init__(self) -> None:
        super().__post_init__()
        found = problems(self)
        if found:
            raise ConfigError(found)
        self.__dict__["_built"] = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FIELD_NAMES and self.__dict__.get("_built"):
            raise dataclasses.FrozenInstanceError(
                f"RunConfig.{name} cannot change once the config is built: use replace({name}=...), which checks it")
        super().__setattr__(name, value)


def trained_config(path: str | Path) -> Draft:
    """A run's saved config.yaml read back as the record of what trained (its types still coerced, unknown keys
    still refused), not judged again: a rule added or tightened since the run trained must not lock its model away
    from the playground, a check, an export or a demo. A run that trains again (resume, Improve) builds a RunConfig.

    Raises:
        StudioError: the file is missing or not valid YAML.
        ConfigError: unknown keys or wrong types.
    """
    return Draft.load(path)


def _field_values(cfg: Draft) -> dict[str, Any]:
    return {f.name: getattr(cfg, f.name) for f in fields(Draft)}


def _carry(source: Draft, cfg: Any) -> Any:
    """``cfg`` with ``source``'s values that are no fields: its translation notices and derived values."""
    cfg.notices = list(getattr(source, "notices", []))
    if getattr(source, "derived", None):
        cfg.derived = dict(source.derived)  # type: ignore[attr-defined]
    return cfg


# ------------------------------------------------------------------ helpers
@functools.cache
def _type_hints() -> dict[str, Any]:
    # resolving string annotations costs ~1 ms per field; the UI's live estimate calls from_dict often
    return typing.get_type_hints(Draft)


def _unknown_key(key: str, source: str, known: typing.Iterable[str]) -> str:
    """The problem of a key no field has, with the closest field's name where one is close."""
    hint = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if hint:
        return problem("check.unknown_key_close", key=key, source=source, name=hint[0])
    return problem("check.unknown_key", key=key, source=source)


class _WrongValue(ValueError):
    """A value ``_coerce`` cannot turn into its field's type: the problem's code and values (the caller adds the
    field's ``name``). The value is kept as text, so the problem reads back from a run's status.json as it was."""

    def __init__(self, code: str, **values: Any) -> None:
        super().__init__(code)
        self.code, self.values = code, values


def _coerce(f: dataclasses.Field, value: Any) -> Any:
    """Turn YAML/CLI/UI values into the field's type; ``_WrongValue`` (a ValueError) says what was expected."""
    hint = _type_hints()[f.name]
    args = get_args(hint)
    optional = type(None) in args
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null") and optional):
        if optional:
            return None
        if isinstance(f.default, str):
            return ""
        raise _WrongValue("check.value_required")
    origin = get_origin(hint)
    if origin is Literal:
        if value not in args:
            close = difflib.get_close_matches(str(value), [str(a) for a in args], n=1)
            choices = ", ".join(map(str, args))
            if close:
                raise _WrongValue("check.not_choice_close", value=str(value), choices=choices, close=close[0])
            raise _WrongValue("check.not_choice", value=str(value), choices=choices)
        return value
    base = next((a for a in args if a is not type(None)), hint) if args else hint
    if base is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise _WrongValue("check.not_bool", value=str(value))
    if base is int:
        if isinstance(value, bool):
            raise _WrongValue("check.not_whole", value=str(value))
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _WrongValue("check.not_whole", value=str(value)) from None
        if not math.isfinite(number) or number != int(number):
            raise _WrongValue("check.not_whole", value=str(value))
        return int(number)
    if base is float:
        if isinstance(value, bool):  # YAML's true is not 1.0: val_size: true would keep one row for validation
            raise _WrongValue("check.not_a_number", value=str(value))
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _WrongValue("check.not_a_number", value=str(value)) from None
        if not math.isfinite(number):  # YAML's .inf/.nan: Trainer overflows or silently trains 0 steps
            raise _WrongValue("check.not_finite_number", value=str(value))
        return number
    if base is str:
        return str(value)
    return value


def field_meta() -> list[dict[str, Any]]:
    """Metadata for every field (name, type, default, help, group, choices, range): drives the UI form."""
    hints = _type_hints()
    out = []
    for f in fields(Draft):
        hint = hints[f.name]
        args = get_args(hint)
        choices = f.metadata.get("choices")
        if get_origin(hint) is Literal:
            choices = list(args)
        base = next((a for a in args if a is not type(None)), hint) if args and get_origin(hint) is not Literal else hint
        kind = {bool: "bool", int: "int", float: "float", str: "str"}.get(base, "choice" if choices else "str")
        if choices:
            kind = "choice"
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out.append({"name": f.name, "kind": kind, "default": default,
                    "help": render(f"h.{f.name}", help_values(), "en", "page"),
                    "group": f.metadata.get("group", "train"), "choices": choices,
                    "range": f.metadata.get("range"), "open": f.metadata.get("open", ""),
                    "step": f.metadata.get("step", 1),
                    "root": f.metadata.get("root"), "names": f.metadata.get("names"),
                    "many": bool(f.metadata.get("many"))})
    return out


def help_values() -> dict[str, Any]:
    """The values the fields' help lists from the config's vocabulary (studio/words/fields.py), so that no help
    copies a list of schedulers, optimizer names or DeepSpeed plans."""
    return {"schedulers": list(LR_SCHEDULERS), "aliases": list(OPTIMIZER_ALIASES.items()),
            "plans": list(DEEPSPEED_SHORTCUTS)}


class _PerConfig:
    """A value that is not a field (so not saved or compared) with a fresh default per config: a class-level
    ``[]`` or ``{}`` would be one object shared by every config that never set its own."""

    def __init__(self, name: str, factory: Callable[[], Any]) -> None:
        self.name, self.factory = name, factory

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__.setdefault(self.name, self.factory())


Draft.notices = _PerConfig("notices", list)  # type: ignore[attr-defined]  # from_dict: translation notices
Draft.derived = _PerConfig("derived", dict)  # type: ignore[attr-defined]  # fill_unset: derived values
_FIELD_NAMES = frozenset(f.name for f in fields(Draft))
