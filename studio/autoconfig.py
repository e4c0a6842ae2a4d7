"""Settings derived from the model, the data and the machine: what a newcomer gets without a preset.

Someone who has never trained a model cannot be expected to know that a random-init demo model
needs full fine-tuning, that a run without held-out rows cannot be evaluated, or which learning
rate suits LoRA. ``suggest_settings`` answers those from facts (model size and kind, row count,
task, card memory or host RAM, a time budget) and says why for every choice, so the page and the
CLI can show the reasoning. ``learning_problems`` names choices that will not learn, before Start.

Pure functions (no torch, no files read beyond the architecture cards), so both tops may call them
and tests can check every branch.
"""
from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .config.lf_keys import translate_llamafactory
from .config.run_config import DEMO_MODEL, Draft, RunConfig
from .data.dataset import load_rows
from .data.preference import as_sft_rows
from .errors import StudioError
from .memory.cards import load_card
from .memory.estimator import detect_gpu_mem_gb, estimate as memory_estimate, host_ram_gb
from .models import zoo
from .stages import stage_of
from .words.render import render

Budget = Literal["quick", "balanced", "best"]
BUDGETS: tuple[str, ...] = ("quick", "balanced", "best")
GB = 1024 ** 3

# tiny-demo: the values that made the random-init model learn on the sample reviews (measured, see
# docs/logs/benchmarks-history.md section 5 and presets/recipes/tiny-demo-cpu.yaml).
DEMO_EPOCHS = {"quick": 5, "balanced": 10, "best": 20}
DEMO = dict(finetuning_type="full", learning_rate=0.002, per_device_train_batch_size=16, gradient_accumulation_steps=1,
            weight_decay=1.0, warmup_ratio=0.05, lr_scheduler_type="cosine", template="studio",
            quantization_bit=None, deepspeed="none", layerwise_offload=False, gradient_checkpointing=False,
            max_steps=-1, max_samples=None)
# pretrained models: LoRA with the usual starting points (LLaMA-Factory / QLoRA paper defaults)
# A third pass on a few hundred rows was tried for the balanced plan and not kept: two runs of it on 400 Chinese
# reviews (Gemma, bench/keep_best.py) kept models that scored 0.796 and 0.840 on the test set, against 0.820 for
# two passes: no gain beyond the run-to-run spread, for half as much time again
LORA_EPOCHS = {"quick": 1, "balanced": 2, "best": 3}
LORA_RANK = {"quick": 8, "balanced": 16, "best": 32}
# on a CPU, time is what runs out: the derived plan at rank 16 ran 0.88x the tokens per CPU-second of the rank-8
# recipe on both built-in models, and at rank 8 (with smaller updates, changed together) its held-out loss at equal
# tokens went down, not up (docs/logs/benchmarks-history.md "Real models")
CPU_LORA_RANK = {"quick": 8, "balanced": 8, "best": 16}
CUTOFF = {"sentiment": 256, "instruction": 1024, "chat": 2048}
CPU_CUTOFF_CAP = 512          # a CPU run with long rows takes hours per epoch
EFFECTIVE_BATCH = 16          # updates average this many rows (batch x accumulation)
MIN_UPDATES_PER_PASS = 8      # ...unless the data is small: 64 rows in updates of 16 made 5 steps and a worse model
VAL_SHARE, VAL_MAX_ROWS, VAL_MIN_DATA = 0.1, 500, 20
# the held-out rows are scored this many times a run; a run stops after EARLY_STOP_PATIENCE checks in which neither
# the score nor the held-out loss improved. 3 stopped Gemma on 400 Chinese reviews at step 40 of 52 in a mid-run dip
# (test accuracy 0.732, against 0.820 for the best of the whole run: bench/keep_best.py); 4 rides that dip out
EVALUATIONS, EARLY_STOP_PATIENCE = 10, 4
SEARCH_FACTORS = (0.5, 1.0, 2.5)   # the best budget's learning-rate trials, as multiples of the plan's rate
TEMPLATES = {"qwen": "qwen", "llama3": "llama3", "llama-3": "llama3"}
# what languages a model family reads: a code of the catalog (langs.*), worded in the reader's language
LANGUAGES = {"tiny-demo": "langs.tiny", "qwen": "langs.qwen", "llama3": "langs.en7", "llama-3": "langs.en7",
             "llama2": "langs.en", "llama-2": "langs.en", "mistral": "langs.en", "gemma": "langs.en", "phi": "langs.en"}

@dataclass
class Hardware:
    """What training can use on this machine; ``gpu_gb`` None means training runs on the CPU."""

    gpu_gb: float | None = None
    ram_gb: float | None = None
    disk_gb: float | None = None

    @property
    def device(self) -> str:
        return "cuda" if self.gpu_gb else "cpu"


@dataclass
class Reason:
    """Why one setting was chosen (or why a choice will not work): the setting, and a code of the catalog
    (``why.<code>``, studio/words/settings_words.py) with its values; said in any language, never written here."""

    field: str
    code: str
    params: dict[str, Any] = field(default_factory=dict)

    def words(self, lang: str = "en", surface: str = "cli") -> str:
        """The reason in ``lang`` for ``surface`` (the page names its budget in its own words)."""
        return render(f"why.{self.code}", self.params, lang, surface)

    @property
    def text(self) -> str:
        """The command line's English (what `studio train` prints and config.yaml's ``derived`` keeps)."""
        return self.words()


def detect_hardware(workspace: str | Path = ".") -> Hardware:
    """Card memory (nvidia-smi, amd-smi or rocm-smi; no torch import), host RAM and free disk under ``workspace``."""
    try:
        disk = shutil.disk_usage(Path(workspace) if Path(workspace).exists() else ".").free / GB
    except OSError:
        disk = None
    forced = os.environ.get("STUDIO_GPU_GB")  # lets tests and a CPU box pretend to have a card
    gpu = float(forced) if forced else detect_gpu_mem_gb()
    return Hardware(gpu_gb=gpu or None, ram_gb=host_ram_gb(), disk_gb=disk)


def _family(model: str) -> str:
    low = model.lower().replace("_", "-")
    for key in ("tiny-demo", "qwen", "llama-3", "llama3", "llama-2", "llama2", "mistral", "gemma", "phi"):
        if key in low:
            return key
    return ""


def model_facts(model: str) -> dict[str, Any]:
    """Size and languages (a code of the catalog) of a model the estimator has a card for; {} when it has none."""
    if zoo.is_builtin(model) and model != DEMO_MODEL:   # real models shipped in packages: measured facts
        m = zoo.get(model)
        scale = {"K": 1e3, "M": 1e6, "B": 1e9}
        number = m.params.strip("~")
        params = int(float(number[:-1]) * scale.get(number[-1].upper(), 1))
        low, _, high = m.sec_per_step.partition("-")
        return {"params": params, "languages": m.languages, "hub_id": model,
                "sec_per_step": (float(low) + float(high or low)) / 2}
    try:
        card = load_card(model)
    except StudioError:
        return {}
    return {"params": card.n_params, "languages": LANGUAGES.get(_family(model), "langs.card"),
            "hub_id": card.hub_id or model}


def _val(n_rows: int | None) -> tuple[float, Reason]:
    if n_rows is None:
        return VAL_SHARE, Reason("val_size", "val_share_any", {"pct": 10})
    if n_rows < VAL_MIN_DATA:
        return 0.0, Reason("val_size", "val_none", {"n": n_rows})
    if n_rows * VAL_SHARE > VAL_MAX_ROWS:
        return float(VAL_MAX_ROWS), Reason("val_size", "val_rows", {"n": VAL_MAX_ROWS})
    held = max(1, round(n_rows * VAL_SHARE))
    return VAL_SHARE, Reason("val_size", "val_share", {"pct": 10, "n": held})


def _steps(train_rows: int, batch: int, accum: int, epochs: float) -> int:
    return max(1, math.ceil(train_rows / (batch * accum)) * math.ceil(epochs))


def suggest_settings(model: str, n_rows: int | None, task: str, hardware: Hardware,
                     budget: str = "balanced") -> tuple[dict[str, Any], list[Reason]]:
    """Settings for ``model`` on ``n_rows`` rows of ``task`` on ``hardware`` -> (RunConfig changes, reasons).

    Raises:
        StudioError: an unknown budget.
    """
    if budget not in BUDGETS:
        raise StudioError.of("autoconfig.budget_unknown", budget=budget, choices=list(BUDGETS))
    model = (model or DEMO_MODEL).strip()
    val, val_reason = _val(n_rows)
    changes: dict[str, Any] = {"model_name_or_path": model, "val_size": val}
    reasons: list[Reason] = []
    train_rows = n_rows if n_rows is not None else 400
    train_rows = max(1, train_rows - (int(val) if val >= 1 else round(train_rows * val)))
    if model == DEMO_MODEL:
        changes.update(DEMO, num_train_epochs=float(DEMO_EPOCHS[budget]), cutoff_len=min(CUTOFF.get(task, 256), 256))
        reasons += [
            Reason("finetuning_type", "demo_full"),
            Reason("learning_rate", "demo_lr", {"lr": DEMO["learning_rate"]}),
            Reason("num_train_epochs", "epochs", {"n": DEMO_EPOCHS[budget], "budget": budget}),
            Reason("weight_decay", "demo_decay"),
        ]
        batch, accum = 16, 1
    else:
        changes.update(_lora_plan(model, task, hardware, budget, reasons, train_rows))
        batch, accum = changes["per_device_train_batch_size"], changes["gradient_accumulation_steps"]
    reasons.append(val_reason)
    # A real model: rows of similar length share a micro-batch filled up to a token budget, so little of a step
    # is padding (docs/BENCHMARKS.md). tiny-demo keeps Trainer's length grouping (the engine's
    # fallback): its rows are short, and over 3 seeds its held-out accuracy was 0.60/0.63/0.67 with dynamic
    # batching against 0.72/0.53/0.72 length-grouped, no better for a toy that learns from scratch.
    changes["dynamic_batching"] = model != DEMO_MODEL
    if model != DEMO_MODEL:
        reasons.append(Reason("dynamic_batching", "dynamic"))
    total = _steps(train_rows, batch, accum, changes["num_train_epochs"])
    changes["logging_steps"] = max(1, total // 40)
    changes["eval_steps"] = None
    changes["save_steps"] = max(50, total // 4)
    reasons.append(Reason("logging_steps", "logging", {"steps": total, "every": changes["logging_steps"]}))
    changes.update(_keep_best(val, total, reasons))
    changes.update(_search(budget, val, changes["learning_rate"], reasons))
    return changes, reasons


def _search(budget: str, val: float, rate: float, reasons: list[Reason]) -> dict[str, Any]:
    """The ``best`` budget's learning-rate search (engine/lr_search.py): the plan's rate, half of it and 2.5x it, each
    for a sixth of the run, and the winner on the held-out rows trains the run: a rate off by 2x costs more than
    the extra epoch the budget otherwise buys."""
    if budget != "best" or not val:
        return {"learning_rate_search": "", "search_steps": 0}
    rates = ",".join(f"{rate * k:g}" for k in SEARCH_FACTORS)
    reasons.append(Reason("learning_rate_search", "search", {"rates": rates}))
    return {"learning_rate_search": rates, "search_steps": 0}


def _keep_best(val: float, total: int, reasons: list[Reason]) -> dict[str, Any]:
    """With held-out rows: score them EVALUATIONS times a run (the Evaluate tab's number), keep the best checkpoint
    and stop after EARLY_STOP_PATIENCE evaluations that improve neither the score nor the loss (engine/held_out.py)."""
    if not val:
        return {"load_best_model_at_end": False, "early_stopping_patience": 0}
    every = max(1, total // EVALUATIONS)
    reasons += [Reason("load_best_model_at_end", "keep_best", {"every": every}),
                Reason("early_stopping_patience", "early_stop", {"n": EARLY_STOP_PATIENCE})]
    return {"load_best_model_at_end": True, "early_stopping_patience": EARLY_STOP_PATIENCE, "eval_steps": every}


def _lora_plan(model: str, task: str, hw: Hardware, budget: str, reasons: list[Reason],
               train_rows: int = 400) -> dict[str, Any]:
    """LoRA (QLoRA when 16-bit weights do not fit the card) with the largest batch that fits."""
    cutoff = CUTOFF.get(task, 1024)
    if hw.device == "cpu":
        cutoff = min(cutoff, CPU_CUTOFF_CAP)
    rank = (CPU_LORA_RANK if hw.device == "cpu" else LORA_RANK)[budget]
    if hw.device == "cpu" and rank < LORA_RANK[budget]:
        reasons.append(Reason("lora_rank", "cpu_rank", {"rank": rank}))
    # lora_dropout 0 (peft's and LLaMA-Factory's default): 0.05 made each CPU step 40-48% slower for no measured
    # gain on the built-in models (docs/logs/benchmarks-history.md section 6)
    plan: dict[str, Any] = dict(model_name_or_path=model, finetuning_type="lora", lora_rank=rank, lora_alpha=2 * rank, lora_target="all",
                                lora_dropout=0.0, learning_rate=2e-4, num_train_epochs=float(LORA_EPOCHS[budget]),
                                lr_scheduler_type="cosine", warmup_ratio=0.03, weight_decay=0.0, cutoff_len=cutoff,
                                quantization_bit=None, deepspeed="none", layerwise_offload=False, max_steps=-1,
                                template=_template(model), gradient_checkpointing=False,
                                optim="adamw_torch")
    reasons += [
        Reason("finetuning_type", "lora"),
        Reason("learning_rate", "lora_lr", {"lr": plan["learning_rate"]}),
        Reason("num_train_epochs", "epochs", {"n": LORA_EPOCHS[budget], "budget": budget}),
        Reason("cutoff_len", "cutoff_cpu" if hw.device == "cpu" else "cutoff", {"n": cutoff}),
    ]
    fitted = _fit_batch(Draft().replace(**plan), hw)
    if fitted is None and hw.device == "cuda":
        plan.update(quantization_bit=4, optim="paged_adamw_8bit")
        reasons.append(Reason("quantization_bit", "qlora"))
        fitted = _fit_batch(Draft().replace(**plan), hw)
    if fitted is None:
        batch, ckpt = 1, True
        reasons.append(Reason("per_device_train_batch_size", "no_fit_card" if hw.device == "cuda" else "no_fit"))
    else:
        batch, ckpt = fitted
    # updates average EFFECTIVE_BATCH rows, fewer when that would leave under MIN_UPDATES_PER_PASS updates per pass
    rows = min(EFFECTIVE_BATCH, max(batch, train_rows // MIN_UPDATES_PER_PASS))
    accum = max(1, rows // batch)
    if fitted is not None and rows < EFFECTIVE_BATCH:
        reasons.append(Reason("gradient_accumulation_steps", "small_data",
                              {"batch": batch, "rows": batch * accum, "n": train_rows, "k": MIN_UPDATES_PER_PASS}))
    elif fitted is not None:
        reasons.append(Reason("per_device_train_batch_size", "batch", {"batch": batch, "rows": batch * accum}))
    plan.update(per_device_train_batch_size=batch, gradient_accumulation_steps=accum, gradient_checkpointing=ckpt)
    if ckpt:
        reasons.append(Reason("gradient_checkpointing", "ckpt"))
    return plan


def _template(model: str) -> str:
    """The model's own chat template for the built-in real models (their recipes use it), else by family."""
    if zoo.is_builtin(model) and model != DEMO_MODEL:
        return "auto"
    return TEMPLATES.get(_family(model), "auto")


def _fit_batch(cfg: Draft, hw: Hardware) -> tuple[int, bool] | None:
    """(batch, gradient checkpointing) of the fastest plan that fits; None when none does (or no card info)."""
    for ckpt in (False, True):
        for batch in (8, 4, 2, 1):
            try:
                est = fit_estimate(cfg.replace(per_device_train_batch_size=batch, gradient_checkpointing=ckpt), hw)
            except StudioError:
                return 1, True   # no architecture card: the safest plan
            if est.fits is not False and not est.tight:
                return batch, ckpt
    # nothing with headroom: batch 1 with checkpointing is still a plan that fits if the verdict says so (the panel
    # shows "fits, but tight" for it; saying "does not fit" here contradicted it)
    return (1, True) if est.fits is not False else None


def fit_estimate(cfg: Draft, hw: Hardware, estimate_fn: Any = None) -> Any:
    """The memory estimate for ``cfg`` against this machine: the card (with host RAM for offloaded states)
    when there is one, else host RAM alone (training runs on the CPU).

    Raises:
        StudioError: no architecture card for the model.
    """
    estimate_fn = estimate_fn or memory_estimate
    if hw.device == "cuda":
        return estimate_fn(cfg, hw.gpu_gb, ram_gb=hw.ram_gb)
    return estimate_fn(cfg, None, device="cpu", ram_gb=hw.ram_gb)


def offload_disk_problem(cfg: Draft, est: Any, hw: Hardware) -> Reason | None:
    """Offload plans write checkpoints of the whole model: refuse a plan whose checkpoint outgrows the free disk."""
    if hw.disk_gb is None or est.card is None:
        return None
    full = cfg.finetuning_type == "full"
    need = est.card.n_params * (12 if full else 2) / GB   # weights + Adam states for full, weights otherwise
    if need > hw.disk_gb:
        return Reason("output_dir", "disk", {"need": round(need), "free": round(hw.disk_gb)})
    return None


def learning_problems(cfg: Draft, n_rows: int | None = None) -> list[Reason]:
    """Choices that will not give a model that learns or can be evaluated (shown before Start)."""
    out: list[Reason] = []
    if cfg.model_name_or_path.strip() == DEMO_MODEL and cfg.finetuning_type != "full":
        out.append(Reason("finetuning_type", "partial_random", {"method": cfg.finetuning_type}))
    if not cfg.val_size:
        out.append(Reason("val_size", "no_val"))
    if n_rows is not None and cfg.val_size and n_rows > 0:
        held = cfg.val_size if cfg.val_size >= 1 else n_rows * cfg.val_size
        if held >= n_rows:
            out.append(Reason("val_size", "val_all", {"n": n_rows}))
    return out


__all__ = ["BUDGETS", "Hardware", "Reason", "detect_hardware", "fit_estimate",
           "learning_problems", "model_facts", "offload_disk_problem", "suggest_settings"]


# ---------------------------------------------------------------- one place for defaults
def guess_task(rows: list[dict[str, Any]]) -> str:
    """chat when rows carry history, sentiment when the answers are a few labels, else instruction."""
    answers: set[str] = set()
    for row in rows[:200]:
        if row.get("history") or row.get("messages") or row.get("conversations"):
            return "chat"
        answers.add(str(row.get("output", "")))
    return "sentiment" if 0 < len(answers) <= 10 else "instruction"


def explicit_keys(data: dict[str, Any]) -> set[str]:
    """The RunConfig fields a YAML dict (LLaMA-Factory keys too) or ``--set`` pairs name."""
    translated, _, _ = translate_llamafactory(dict(data))
    return set(data) | set(translated)


def fill_unset(cfg: RunConfig, explicit: set[str], hardware: Hardware | None = None,
               budget: str = "balanced") -> tuple[RunConfig, list[Reason]]:
    """``cfg`` with every field the user did not set taking the value the Settings page derives for this
    model, data and machine (``suggest_settings``), so a YAML file or the CLI trains the same plan as the page.

    Returns (config, the reasons for the derived values). A field the user set keeps its value.

    Raises:
        StudioError: the data cannot be read (the same error training would give).
    """
    stage = stage_of(cfg.stage)
    rows = as_sft_rows(load_rows(cfg.dataset, cfg.dataset_dir, stage.rows))  # the task is judged by the good answers
    hw = hardware or detect_hardware(Path(cfg.output_dir or ".").parent)
    changes, reasons = suggest_settings(cfg.model_name_or_path, len(rows), guess_task(rows), hw, budget)
    keep = {k: v for k, v in changes.items() if k not in explicit and getattr(cfg, k, None) != v}
    if not stage.studio_trainer:  # TRL's trainers batch rows themselves (config/checks.py refuses these)
        keep = {k: v for k, v in keep.items() if k not in ("packing", "neat_packing", "dynamic_batching",
                                                            "layerwise_offload", "deepspeed", "nproc")}
    if not keep:
        return cfg, []
    out, why = cfg.replace(**keep), [r for r in reasons if r.field in keep]
    # config.yaml names them (RunConfig.to_yaml): which values were derived, and why
    out.derived = {**getattr(cfg, "derived", {}), **{k: next((r.text for r in why if r.field == k), "the page's plan")
                                                      for k in keep}}
    return out, why
