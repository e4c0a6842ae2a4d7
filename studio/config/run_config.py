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
import hashlib
import json
import math
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Literal, get_args, get_origin

import yaml

from .checks import DEEPSPEED_SHORTCUTS, problem, problems
from .yaml_io import MAX_YAML_ALIASES, MAX_YAML_BYTES, load_yaml_dict, parse_overrides, safe_yaml
from .lf_keys import translate_llamafactory
from .vocabulary import LR_SCHEDULERS, OPTIMIZER_ALIASES, PRECISIONS, canonical_optimizer, deepspeed_choices
from ..errors import ConfigError
from ..workspace import atomic_write_text

# re-exported: callers import the YAML readers and the DeepSpeed shortcuts with RunConfig
__all__ = ["DEEPSPEED_SHORTCUTS", "DEMO_MODEL", "MAX_YAML_ALIASES", "MAX_YAML_BYTES", "PATH_NAMES", "PATH_ROOTS",
           "RunConfig", "field_meta",
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


def _f(default: Any, help: str, group: str = "train", **extra: Any) -> Any:
    """A field with its metadata. Every int/float field declares ``range=(lo, hi)`` (inclusive; ``open="lo"``,
    ``"hi"`` or ``"both"`` excludes an end): the checks (studio/config/checks.py) refuse values outside it and
    tests/robustness/test_ranges.py fails for a number field without one. Every field naming a file or folder
    declares ``root=`` one of PATH_ROOTS (tests/robustness/test_path_fields.py fails for one without it)."""
    meta = {"help": help, "group": group, **extra}
    assert meta.get("root") in (None, *PATH_ROOTS) and meta.get("names") in (None, *PATH_NAMES), meta
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class RunConfig:
    """Everything one training run needs. Documented once, here."""

    # --- model ---
    model_name_or_path: str = _f(DEMO_MODEL, "Base model: 'tiny-demo' (built-in, random init, learns on a CPU), "
                                             "the built-in real models 'smollm2-135m-instruct' (135M, English chat, "
                                             "Apache-2.0) and 'gemma3-270m' (268M, Chinese + English, Gemma Terms "
                                             "of Use: https://ai.google.dev/gemma/terms; the Model list shows the "
                                             "time per step here), "
                                             "a .gguf file, a local folder, or a hub id", "model", root="models",
                                             names="model")
    trust_remote_code: bool = _f(False, "Run code shipped with the model. Only for models you trust", "model")
    # --- method ---
    stage: Literal["sft", "dpo", "kto"] = _f(
        "sft", "Training stage (LLaMA-Factory's key): sft = supervised fine-tuning on instruction rows; dpo = "
               "preference tuning on ranking pairs (chosen/rejected); kto = on single answers tagged good or bad. "
               "dpo and kto train a LoRA/QLoRA adapter against the same weights with the adapter off", "method")
    pref_beta: float = _f(0.1, "dpo/kto: how far the tuned model may move from the reference (higher = stays "
                               "closer; LLaMA-Factory's pref_beta)", "method", range=(0.0, 1000.0), open="lo")
    pref_loss: Literal["sigmoid", "hinge", "ipo"] = _f(
        "sigmoid", "dpo: the preference loss (sigmoid = DPO, hinge = SLiC, ipo = IPO)", "method")
    pref_ftx: float = _f(0.0, "dpo: weight of an extra supervised loss on the chosen answer (0 = off)", "method",
                         range=(0.0, 1000.0))
    kto_chosen_weight: float = _f(1.0, "kto: weight of the good answers' loss", "method", range=(0.0, 1000.0),
                                  open="lo")
    kto_rejected_weight: float = _f(1.0, "kto: weight of the bad answers' loss", "method", range=(0.0, 1000.0),
                                    open="lo")
    finetuning_type: Literal["full", "freeze", "lora"] = _f(
        "lora", "full: train every weight; freeze: train only the last layers; lora: small adapters", "method")
    adapter_name_or_path: str | None = _f(None, "Continue training from this LoRA adapter folder (a finished run's "
                                                "adapter; LLaMA-Factory's key); its rank and targets are kept",
                                          "method", root="runs")
    freeze_trainable_layers: int = _f(2, "freeze method: how many of the last layers stay trainable", "method",
                                      range=(1, 10_000))
    lora_rank: int = _f(8, "LoRA rank (adapter size); 8-64 is typical", "method", range=(1, 4096))
    lora_alpha: int | None = _f(None, "LoRA scaling; empty = 2x the rank (as LLaMA-Factory)", "method",
                                range=(1, 16_384))
    lora_dropout: float = _f(0.0, "Dropout inside LoRA adapters", "method", range=(0.0, 1.0), open="hi")
    lora_target: str = _f("all", "Modules that get adapters: 'all' (every linear layer) or a comma list "
                                 "such as q_proj,v_proj", "method")
    use_rslora: bool = _f(False, "rsLoRA: scale adapters by alpha/sqrt(rank) instead of alpha/rank", "method")
    use_dora: bool = _f(False, "DoRA: weight-decomposed LoRA (adds a magnitude vector per layer)", "method")
    pissa_init: bool = _f(False, "PiSSA: start adapters from the weights' principal components", "method")
    loraplus_lr_ratio: float | None = _f(None, "LoRA+: learning rate of the B matrices = this x learning_rate "
                                               "(16 is typical; empty = off)", "method", range=(0.0, 1000.0), open="lo")
    quantization_bit: int | None = _f(None, "Load the base model in 4 or 8 bits (QLoRA); needs lora", "method",
                                      choices=[None, 4, 8], range=(4, 8))
    quantization_type: Literal["nf4", "fp4"] = _f("nf4", "4-bit data type", "method")
    double_quantization: bool = _f(True, "Quantize the 4-bit scales too (saves ~0.4 bit/param)", "method")
    # --- data ---
    dataset: str = _f("", "Training data: a .jsonl/.json file in alpaca format, or a name in dataset_info.json",
                      "data", root="data", names="dataset", many=True)
    dataset_dir: str = _f("data", "Folder holding dataset_info.json (LLaMA-Factory layout)", "data",
                          root="data")
    template: str = _f("auto", "Prompt template: 'auto' uses the tokenizer's chat template (else the studio's "
                               "'### Instruction' format); LLaMA-Factory names render as there (default, alpaca, "
                               "llama3, qwen, chatml, gemma, smollm2, gemma3, mistral, ...); its other names use the "
                               "model's own chat template; 'studio' is the studio's own format", "data")
    cutoff_len: int = _f(256, "Longest training example in tokens; longer rows are truncated", "data",
                         range=(1, 1_048_576))
    train_on_prompt: bool = _f(False, "Also compute loss on the prompt (default: only on the answer)", "data")
    mask_history: bool = _f(False, "Multi-turn rows: only the last reply carries loss (default: every assistant "
                                   "reply does, as in LLaMA-Factory)", "data")
    val_size: float = _f(0.0, "Fraction (0-1) or count (>=1) of rows kept for validation", "data",
                         range=(0.0, 10_000_000.0))
    max_samples: int | None = _f(None, "Use at most this many training rows (for quick tries)", "data",
                                 range=(1, 1_000_000_000))
    # --- hyperparameters ---
    per_device_train_batch_size: int = _f(4, "Examples per step on the card", "train", range=(1, 65_536))
    gradient_accumulation_steps: int = _f(1, "Steps whose gradients add up before one update", "train",
                                          range=(1, 65_536))
    learning_rate: float = _f(2e-4, "Peak learning rate (1e-5..5e-4 is typical)", "train", range=(0.0, 1.0), open="both")
    num_train_epochs: float = _f(3.0, "Passes over the training data", "train", range=(0.0, 100_000.0), open="lo")
    max_steps: int = _f(-1, "Stop after this many updates (-1: use epochs)", "train", range=(-1, 1_000_000_000))
    lr_scheduler_type: str = _f("cosine", "How the learning rate changes over the run (any transformers "
                                          "scheduler: " + ", ".join(LR_SCHEDULERS) + ")", "train")
    warmup_ratio: float = _f(0.0, "Fraction of steps spent warming up the learning rate", "train",
                             range=(0.0, 1.0), open="hi")
    weight_decay: float = _f(0.0, "Weight decay", "train", range=(0.0, 10.0))
    max_grad_norm: float = _f(1.0, "Gradient clipping norm", "train", range=(0.0, 1_000_000.0))
    logging_steps: int = _f(5, "Log the loss every N updates", "train", range=(1, 1_000_000_000))
    save_steps: int = _f(100, "Save a checkpoint every N updates", "train", range=(1, 1_000_000_000))
    save_total_limit: int = _f(2, "Keep at most this many checkpoints", "train", range=(1, 100_000))
    eval_steps: int | None = _f(None, "Evaluate every N updates (default: with logging)", "train",
                                range=(1, 1_000_000_000))
    load_best_model_at_end: bool = _f(False, "Keep the checkpoint with the best held-out score as the run's model: "
                                             "accuracy for a labels run, answer loss otherwise, scored at every "
                                             "evaluation by the Evaluate tab's own check (a checkpoint is saved at "
                                             "each evaluation). Needs held-out rows", "train")
    early_stopping_patience: int = _f(0, "Stop when neither the held-out score nor the held-out loss has improved "
                                         "for this many evaluations in a row (0: off; the page's plan uses 4); keeps "
                                         "the best checkpoint too. Needs held-out rows", "train",
                                         range=(0, 10_000))
    learning_rate_search: str = _f("", "Learning rates to try first, comma separated (e.g. 1e-4,2e-4,5e-4): each "
                                       "trains search_steps updates from the start and is scored on the held-out "
                                       "rows; the run then trains with the winner. Empty: off (the page's 'best' "
                                       "time budget fills it). Needs held-out rows", "train")
    search_steps: int = _f(0, "Updates per learning rate tried by learning_rate_search (0: a sixth of the run's, "
                              "at least 10)", "train", range=(0, 1_000_000_000))
    per_device_eval_batch_size: int | None = _f(None, "Examples per evaluation step (default: the training batch "
                                                      "size)", "train", range=(1, 65_536))
    neftune_noise_alpha: float | None = _f(None, "NEFTune: noise added to embeddings while training (5 is typical; "
                                                 "empty = off)", "train", range=(0.0, 1000.0), open="lo")
    report_to: str = _f("none", "Where Trainer also logs: none, tensorboard, wandb, mlflow, ... (comma list)",
                        "train")
    resume_from_checkpoint: str | None = _f(None, "Continue from this checkpoint folder ('last' = the newest in "
                                                  "the run folder)", "train", root="runs", names="last")
    seed: int = _f(42, "Random seed", "train", range=(0, 2 ** 32 - 1))
    output_dir: str = _f("runs/latest", "Run folder: config, logs, checkpoints, the trained model", "train",
                        root="runs")
    overwrite_output_dir: bool = _f(False, "Replace an earlier run in output_dir instead of refusing (LLaMA-Factory's "
                                           "key). Only a folder holding nothing but a studio run is replaced; a "
                                           "folder with other files is never emptied. To continue a run, resume it "
                                           "instead", "train")
    plot_loss: bool = _f(True, "Write loss.png at the end", "train")
    # --- memory plan ---
    bf16: bool = _f(False, "Train in bfloat16 (auto-chosen when precision is 'auto')", "memory")
    fp16: bool = _f(False, "Train in float16 with loss scaling", "memory")
    precision: Literal[PRECISIONS] = _f(  # type: ignore[valid-type]  # the names: config/vocabulary.py
        "auto", "auto: bf16 where the card supports it, else fp16 on GPU, fp32 on CPU", "memory")
    gradient_checkpointing: bool = _f(True, "Recompute activations in backward: less memory, ~30% slower "
                                            "(on by default, as in LLaMA-Factory)", "memory")
    optim: str = _f("adamw_torch", "Optimizer (any transformers name, or "
                    + ", ".join(f"{a} for {n}" for a, n in OPTIMIZER_ALIASES.items())
                    + "); adamw_8bit stores its states in 8 bits (bitsandbytes)", "memory")
    pure_bf16: bool = _f(False, "Keep weights and optimizer states in bf16 too (half the memory of mixed "
                                "precision); small learning rates may then change nothing", "memory")
    deepspeed: str | None = _f(None, "DeepSpeed config: " + deepspeed_choices(), "memory", root="data",
                               names="deepspeed")
    offload_nvme_path: str | None = _f(None, "z3-nvme (ZeRO-Infinity): a folder on a fast local disk (NVMe) where "
                                             "DeepSpeed swaps weights and optimizer states; needs libaio", "memory",
                                       root="nvme")
    offload_activations: bool = _f(False, "Keep checkpointed activations in host RAM (pinned) instead of on the "
                                          "card: less card memory for long rows, slower (they cross PCIe twice a "
                                          "step); needs gradient checkpointing", "memory")
    layerwise_offload: bool = _f(False, "Keep decoder layers on CPU; move each to the card only for its "
                                        "forward/backward", "memory")
    dynamic_batching: bool = _f(False, "Group rows of similar length and fill each batch up to a token budget",
                                "memory")
    max_tokens_per_batch: int | None = _f(None, "Token budget per micro-batch for dynamic batching "
                                                "(default: batch size x the average row length)", "memory", range=(1, 100_000_000))
    packing: bool = _f(False, "Pack several examples into one row with no padding (faster on GPU; attention may "
                              "cross examples unless neat_packing is on)", "memory")
    neat_packing: bool = _f(False, "Pack without cross-attention: each example sees only itself (implies packing)",
                            "memory")
    selective_logits: bool = _f(True, "Compute the output layer only where the loss is (the answer tokens): same "
                                      "result, faster and leaner; checked on the first batch", "memory")
    enable_liger_kernel: bool = _f(True, "On a GPU, Liger's fused kernels (output layer + cross-entropy, RMSNorm, "
                                         "RoPE, SwiGLU) where transformers supports the model and liger-kernel is "
                                         "installed (LLaMA-Factory's key); else the studio's own", "memory")
    oom_adaptive: bool = _f(True, "On out-of-memory, halve the micro-batch and double accumulation, then go on",
                            "memory")
    # --- multi-process ---
    nproc: int = _f(1, "Data-parallel processes (one per card); >1 needs deepspeed", "memory", range=(1, 4096))
    ddp_timeout: int = _f(1800, "Seconds a process waits for the others in one exchange before the run fails "
                                "(a stalled node ends the run instead of hanging it)", "memory",
                                range=(10, 1_000_000_000))

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
                  base_dir: str | Path | None = None) -> "RunConfig":
        """Build from a plain dict; unknown keys fail with 'did you mean'.

        LLaMA-Factory's keys are translated first (studio/lf_keys.py): honoured, accepted with a notice
        (kept in ``cfg.notices``; the run log repeats them), or refused with the reason.

        Raises:
            ConfigError: listing every unknown key and every value of the wrong type.
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
        cfg = cls(**kwargs)
        cfg.notices = notices
        return cfg

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None) -> "RunConfig":
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

    def replace(self, **changes: Any) -> "RunConfig":
        merged = self.to_dict()
        merged.update(changes)
        cfg = RunConfig.from_dict(merged)
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
        """Every problem at once, each naming the field and the fix (empty list: valid); see config_checks.py."""
        return problems(self)

    def check(self) -> "RunConfig":
        """This config, once it is valid; else ConfigError with every problem.

        Every door a config passes asks (the page's queue, the job runner, the training child's command line,
        ``run_training`` for Python callers), but the rules run once per content: they read nothing but the
        fields (config/checks.py opens no file), so a config found valid is not judged again until a field
        changes. An invalid one is never remembered."""
        seen = self._content()
        if getattr(self, "_valid_as", None) == seen:
            return self
        problems = self.validate()
        if problems:
            raise ConfigError(problems)
        self._valid_as = seen  # not a field: never saved, never compared
        return self

    def judged(self) -> str | None:
        """A digest of the content this config was found valid as; None until ``check`` has passed for it.

        The job runner hands it to the training child (``JUDGED_ENV``), which reads the same config back from
        config.yaml: a config that arrives as it was judged is not judged again in the child, so its rules run once on
        the whole way from the page to the trainer."""
        seen = self._content()
        return _digest(seen) if getattr(self, "_valid_as", None) == seen else None

    def judged_before(self, digest: str | None) -> "RunConfig":
        """This config, taking the judgement of ``judged`` when it is of exactly this content (a field changed on
        disk or by ``--set`` since: judged anew by ``check``, as a config with no digest is)."""
        seen = self._content()
        if digest and digest == _digest(seen):
            self._valid_as = seen
        return self

    def _content(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, default=str)


JUDGED_ENV = "STUDIO_CONFIG_JUDGED"  # the job runner's ``judged`` digest, in its training child's environment


def _digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------ helpers
@functools.cache
def _type_hints() -> dict[str, Any]:
    # resolving string annotations costs ~1 ms per field; the UI's live estimate calls from_dict often
    return typing.get_type_hints(RunConfig)


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
                    "group": f.metadata.get("group", "train"), "choices": choices,
                    "range": f.metadata.get("range"), "open": f.metadata.get("open", ""),
                    "root": f.metadata.get("root"), "names": f.metadata.get("names"),
                    "many": bool(f.metadata.get("many"))})
    return out


class _PerConfig:
    """A value that is not a field (so not saved or compared) with a fresh default per config: a class-level
    ``[]`` or ``{}`` would be one object shared by every config that never set its own."""

    def __init__(self, name: str, factory: Callable[[], Any]) -> None:
        self.name, self.factory = name, factory

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__.setdefault(self.name, self.factory())


RunConfig.notices = _PerConfig("notices", list)  # type: ignore[attr-defined]  # from_dict: translation notices
RunConfig.derived = _PerConfig("derived", dict)  # type: ignore[attr-defined]  # fill_unset: derived values
