"""RunConfig: the one typed object that flows UI / YAML / CLI -> engine.

Keys are named as LLaMA-Factory names them so its YAML files load here. Each field
carries its help text, choices and UI group in ``metadata``; the Settings form, the
CLI help and validation all read that one place.

Merge order: defaults < preset < user YAML < ``--set key=value`` < UI edits.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml

from .errors import ConfigError, StudioError

DEMO_MODEL = "tiny-demo"
DEEPSPEED_SHORTCUTS = ("none", "z2", "z2-offload", "z3", "z3-offload")


def _f(default: Any, help: str, group: str = "train", **extra: Any) -> Any:
    meta = {"help": help, "group": group, **extra}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class RunConfig:
    """Everything one training run needs. Documented once, here."""

    # --- model ---
    model_name_or_path: str = _f(DEMO_MODEL, "Base model: 'tiny-demo' (built-in, random init, learns on a CPU), "
                                             "a local folder, or a hub id", "model")
    trust_remote_code: bool = _f(False, "Run code shipped with the model. Only for models you trust", "model")
    # --- method ---
    finetuning_type: Literal["full", "freeze", "lora"] = _f(
        "lora", "full: train every weight; freeze: train only the last layers; lora: small adapters", "method")
    freeze_trainable_layers: int = _f(2, "freeze method: how many of the last layers stay trainable", "method")
    lora_rank: int = _f(8, "LoRA rank (adapter size); 8-64 is typical", "method")
    lora_alpha: int = _f(16, "LoRA scaling; usually 2x the rank", "method")
    lora_dropout: float = _f(0.0, "Dropout inside LoRA adapters", "method")
    lora_target: str = _f("all", "Modules that get adapters: 'all' (every linear layer) or a comma list "
                                 "such as q_proj,v_proj", "method")
    quantization_bit: int | None = _f(None, "Load the base model in 4 or 8 bits (QLoRA); needs lora", "method",
                                      choices=[None, 4, 8])
    quantization_type: Literal["nf4", "fp4"] = _f("nf4", "4-bit data type", "method")
    double_quantization: bool = _f(True, "Quantize the 4-bit scales too (saves ~0.4 bit/param)", "method")
    # --- data ---
    dataset: str = _f("", "Training data: a .jsonl/.json file in alpaca format, or a name in dataset_info.json",
                      "data")
    dataset_dir: str = _f("data", "Folder holding dataset_info.json (LLaMA-Factory layout)", "data")
    template: str = _f("default", "Prompt template: default (alpaca), llama3, qwen, chatml, or 'auto' to use "
                                  "the tokenizer's chat template", "data")
    cutoff_len: int = _f(256, "Longest training example in tokens; longer rows are truncated", "data")
    train_on_prompt: bool = _f(False, "Also compute loss on the prompt (default: only on the answer)", "data")
    val_size: float = _f(0.0, "Fraction (0-1) or count (>=1) of rows kept for validation", "data")
    max_samples: int | None = _f(None, "Use at most this many training rows (for quick tries)", "data")
    # --- hyperparameters ---
    per_device_train_batch_size: int = _f(4, "Examples per step on the card", "train")
    gradient_accumulation_steps: int = _f(1, "Steps whose gradients add up before one update", "train")
    learning_rate: float = _f(2e-4, "Peak learning rate", "train")
    num_train_epochs: float = _f(3.0, "Passes over the training data", "train")
    max_steps: int = _f(-1, "Stop after this many updates (-1: use epochs)", "train")
    lr_scheduler_type: Literal["linear", "cosine", "constant", "constant_with_warmup"] = _f(
        "cosine", "How the learning rate changes over the run", "train")
    warmup_ratio: float = _f(0.0, "Fraction of steps spent warming up the learning rate", "train")
    weight_decay: float = _f(0.0, "Weight decay", "train")
    max_grad_norm: float = _f(1.0, "Gradient clipping norm", "train")
    logging_steps: int = _f(5, "Log the loss every N updates", "train")
    save_steps: int = _f(100, "Save a checkpoint every N updates", "train")
    save_total_limit: int = _f(2, "Keep at most this many checkpoints", "train")
    eval_steps: int | None = _f(None, "Evaluate every N updates (default: with logging)", "train")
    seed: int = _f(42, "Random seed", "train")
    output_dir: str = _f("runs/latest", "Run folder: config, logs, checkpoints, the trained model", "train")
    plot_loss: bool = _f(True, "Write loss.png at the end", "train")
    # --- memory plan ---
    bf16: bool = _f(False, "Train in bfloat16 (auto-chosen when precision is 'auto')", "memory")
    fp16: bool = _f(False, "Train in float16 with loss scaling", "memory")
    precision: Literal["auto", "fp32", "bf16", "fp16"] = _f(
        "auto", "auto: bf16 where the card supports it, else fp16 on GPU, fp32 on CPU", "memory")
    gradient_checkpointing: bool = _f(False, "Recompute activations in backward: less memory, ~30% slower",
                                      "memory")
    optim: Literal["adamw_torch", "adamw_8bit", "sgd", "adafactor", "paged_adamw_8bit"] = _f(
        "adamw_torch", "Optimizer; adamw_8bit stores its states in 8 bits (bitsandbytes)", "memory")
    deepspeed: str | None = _f(None, "DeepSpeed config: none, z2, z2-offload, z3, z3-offload or a JSON path",
                               "memory")
    layerwise_offload: bool = _f(False, "Keep decoder layers on CPU; move each to the card only for its "
                                        "forward/backward", "memory")
    dynamic_batching: bool = _f(False, "Group rows of similar length and fill each batch up to a token budget",
                                "memory")
    max_tokens_per_batch: int | None = _f(None, "Token budget per micro-batch for dynamic batching "
                                                "(default: batch size x cutoff_len)", "memory")
    packing: bool = _f(False, "Pack several examples into one row with no padding (faster on GPU; attention may "
                              "cross examples unless neat_packing is on)", "memory")
    neat_packing: bool = _f(False, "Pack without cross-attention: each example sees only itself (implies packing)",
                            "memory")
    selective_logits: bool = _f(True, "Compute the output layer only where the loss is (the answer tokens): same "
                                      "result, faster and leaner; checked on the first batch", "memory")
    oom_adaptive: bool = _f(True, "On out-of-memory, halve the micro-batch and double accumulation, then go on",
                            "memory")
    # --- multi-process ---
    nproc: int = _f(1, "Data-parallel processes (one per card); >1 needs deepspeed", "memory")

    # ---------------------------------------------------------------- API
    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "config") -> "RunConfig":
        """Build from a plain dict; unknown keys fail with 'did you mean'.

        Raises:
            ConfigError: listing every unknown key and every value of the wrong type.
        """
        problems: list[str] = []
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in (data or {}).items():
            if key not in known:
                hint = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                problems.append(f"unknown key '{key}' in {source}" + (f" (did you mean '{hint[0]}'?)" if hint else ""))
                continue
            try:
                kwargs[key] = _coerce(known[key], value)
            except ValueError as exc:
                problems.append(f"{key}: {exc}")
        if problems:
            raise ConfigError(problems)
        return cls(**kwargs)

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None) -> "RunConfig":
        """Load a YAML run config, then apply ``key=value`` overrides.

        Raises:
            StudioError: the file is missing or not valid YAML.
            ConfigError: unknown keys or wrong types.
        """
        data = load_yaml_dict(path)
        data.update(parse_overrides(overrides or []))
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def save(self, path: str | Path) -> None:
        from .runs import atomic_write_text
        atomic_write_text(Path(path), self.to_yaml())

    def replace(self, **changes: Any) -> "RunConfig":
        merged = self.to_dict()
        merged.update(changes)
        return RunConfig.from_dict(merged)

    @property
    def method(self) -> str:
        """Human name of the method: full, freeze, lora or qlora."""
        if self.finetuning_type == "lora" and self.quantization_bit:
            return "qlora"
        return self.finetuning_type

    def resolved_precision(self, device_type: str | None = None, bf16_ok: bool | None = None) -> str:
        """fp32 / bf16 / fp16 after 'auto' and the legacy bf16/fp16 flags are applied."""
        if self.bf16:
            return "bf16"
        if self.fp16:
            return "fp16"
        if self.precision != "auto":
            return self.precision
        if device_type is None:
            import torch
            device_type = "cuda" if torch.cuda.is_available() else "cpu"
            if bf16_ok is None and device_type == "cuda":
                bf16_ok = torch.cuda.is_bf16_supported()
        if device_type == "cpu":
            return "fp32"
        return "bf16" if bf16_ok else "fp16"

    def validate(self) -> list[str]:
        """Every problem at once, each naming the field and the fix (empty list: valid)."""
        p: list[str] = []
        if not self.model_name_or_path.strip():
            p.append("model_name_or_path is empty: use 'tiny-demo', a local folder or a hub id")
        if not self.dataset.strip():
            p.append("dataset is empty: give a .jsonl file made by 'python -m studio convert' or a dataset name")
        positive = ["per_device_train_batch_size", "gradient_accumulation_steps", "cutoff_len", "logging_steps",
                    "save_steps", "lora_rank", "lora_alpha", "nproc", "save_total_limit"]
        for name in positive:
            if getattr(self, name) < 1:
                p.append(f"{name} must be at least 1 (got {getattr(self, name)})")
        if not (0 < self.learning_rate < 1):
            p.append(f"learning_rate must be between 0 and 1 (got {self.learning_rate}); 1e-5..5e-4 is typical")
        if self.max_steps == 0 or self.max_steps < -1:
            p.append("max_steps must be -1 (use epochs) or a positive number")
        if self.max_steps == -1 and self.num_train_epochs <= 0:
            p.append("num_train_epochs must be above 0 when max_steps is -1")
        if not (0 <= self.warmup_ratio < 1):
            p.append("warmup_ratio must be in [0, 1)")
        if self.val_size < 0 or (self.val_size >= 1 and self.val_size != int(self.val_size)):
            p.append("val_size must be a fraction in (0, 1) or a whole number of rows")
        if self.quantization_bit not in (None, 4, 8):
            p.append(f"quantization_bit must be 4, 8 or empty (got {self.quantization_bit})")
        if self.quantization_bit and self.finetuning_type != "lora":
            p.append("quantization_bit needs finetuning_type: lora (QLoRA); quantized weights cannot be trained directly")
        if self.quantization_bit and self.deepspeed and "z3" in str(self.deepspeed):
            p.append("quantization_bit with DeepSpeed ZeRO-3 is not supported here: use ZeRO-2 or no DeepSpeed")
        if self.bf16 and self.fp16:
            p.append("bf16 and fp16 are both on: choose one (or set precision: auto)")
        if self.deepspeed and self.deepspeed not in DEEPSPEED_SHORTCUTS and not str(self.deepspeed).endswith(".json"):
            p.append(f"deepspeed must be one of {', '.join(DEEPSPEED_SHORTCUTS)} or a .json path (got '{self.deepspeed}')")
        if self.deepspeed and self.layerwise_offload:
            p.append("layerwise_offload and deepspeed both move weights: choose one")
        if self.layerwise_offload and self.quantization_bit:
            p.append("layerwise_offload with a quantized model is not supported: turn one off")
        if self.nproc > 1 and not self.deepspeed:
            p.append("nproc > 1 needs deepspeed (z2 or z3) for data-parallel training")
        if self.optim in ("adamw_8bit", "paged_adamw_8bit") and self.deepspeed and self.deepspeed != "none":
            p.append("optim adamw_8bit cannot be combined with DeepSpeed (it brings its own optimizer): use adamw_torch")
        if self.finetuning_type == "freeze" and self.freeze_trainable_layers < 1:
            p.append("freeze_trainable_layers must be at least 1")
        return p

    def check(self) -> "RunConfig":
        """Raise ConfigError with every problem if the config is invalid."""
        problems = self.validate()
        if problems:
            raise ConfigError(problems)
        return self


# ------------------------------------------------------------------ helpers
@functools.cache
def _type_hints() -> dict[str, Any]:
    # resolving string annotations costs ~1 ms per field; the UI's live estimate calls from_dict often
    return typing.get_type_hints(RunConfig)


def _coerce(f: dataclasses.Field, value: Any) -> Any:
    """Turn YAML/CLI/UI values into the field's type; ValueError says what was expected."""
    hint = _type_hints()[f.name]
    args = get_args(hint)
    optional = type(None) in args
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null") and optional):
        if optional:
            return None
        if isinstance(f.default, str):
            return ""
        raise ValueError("a value is required")
    origin = get_origin(hint)
    if origin is Literal:
        if value not in args:
            close = difflib.get_close_matches(str(value), [str(a) for a in args], n=1)
            raise ValueError(f"'{value}' is not one of {', '.join(map(str, args))}"
                             + (f" (did you mean '{close[0]}'?)" if close else ""))
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
        raise ValueError(f"expected true or false, got '{value}'")
    if base is int:
        if isinstance(value, bool):
            raise ValueError(f"expected a whole number, got '{value}'")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected a whole number, got '{value}'") from None
        if number != int(number):
            raise ValueError(f"expected a whole number, got '{value}'")
        return int(number)
    if base is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected a number, got '{value}'") from None
    if base is str:
        return str(value)
    return value


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["lr=1e-4", "bf16=true"]`` -> dict, values parsed as YAML scalars.

    Raises:
        ConfigError: an item has no '='.
    """
    out: dict[str, Any] = {}
    bad = []
    for pair in pairs:
        if "=" not in pair:
            bad.append(f"--set '{pair}' is not key=value")
            continue
        key, raw = pair.split("=", 1)
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = raw
    if bad:
        raise ConfigError(bad)
    return out


def load_yaml_dict(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping with clear errors.

    Raises:
        StudioError: missing file, invalid YAML, or not a mapping.
    """
    p = Path(path)
    if not p.is_file():
        raise StudioError(f"Config file '{p}' does not exist", "check the path, or start from presets/recipes/")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise StudioError(f"Config file '{p}' is not valid YAML{where}",
                          "fix the indentation or quoting there (each line is 'key: value')",
                          code="yaml") from None
    except UnicodeDecodeError:
        raise StudioError(f"Config file '{p}' is not UTF-8 text", "save it as UTF-8", code="yaml") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StudioError(f"Config file '{p}' must be a mapping of 'key: value' lines, not a {type(data).__name__}",
                          "write one 'key: value' per line", code="yaml")
    return data


def field_meta() -> list[dict[str, Any]]:
    """Metadata for every field (name, type, default, help, group, choices): drives the UI form."""
    hints = _type_hints()
    out = []
    for f in fields(RunConfig):
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
        out.append({"name": f.name, "kind": kind, "default": default, "help": f.metadata.get("help", ""),
                    "group": f.metadata.get("group", "train"), "choices": choices})
    return out
