"""How long a run will take on this machine, said before Start.

Why its own module: the page promised "about 7 minutes" from one FLOP/s constant guessed for any 2-core CPU, blind to
the time budget, to the model still to be prepared and to a busy machine (3-7x off on a loaded one). Here a run is

    start-up + model preparation still to do + training tokens / speed + held-out check + save

and every term comes from this machine: the speed from the last finished runs of the same model and method here
(their own tokens per second, corrected for the load then and now), else from a short matmul measurement of this
machine times the share of that peak a training step reaches (``STEP_SHARE``, measured on the built-in models);
the tokens from the chosen rows tokenized as the run will tokenize them; the budget through the settings it
derived (passes over the data, rank). The Train tab's live ETA then follows the run's own step times.

No page words here: the UI turns an ``Estimate`` into a sentence.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config.run_config import RunConfig
from ..config.search import search_rates, trial_steps
from ..data.dataset import split_rows
from ..data.templates import get_template
from ..data.tokenize import encode_examples
from ..stages import stage_of
from ..workspace import atomic_write_text, user_cache_dir

# The share of this machine's measured matmul peak (fp32, all its threads, ``machine_flops``) that one training
# step's useful FLOPs reach, by method. Set on the 2-core Xeon from six runs of the page's derived plans on the 427
# sample reviews (quick and balanced budgets, tiny-demo, SmolLM2, Gemma: bench/estimate_accuracy.py,
# docs/BENCHMARKS.md "Run-time estimates"), then checked on other data (package reviews, long English and short
# Chinese). LoRA steps run many small rank-r matmuls and elementwise work beside the big ones; full fine-tuning was
# measured only on tiny-demo, whose run is all per-step overhead (``STEP_S``), so its share is a guess.
STEP_SHARE = {"lora": 0.40, "full": 0.33, "freeze": 0.33}
# Wall seconds around the training loop on that machine (no history yet): python + torch + transformers imports,
# Trainer set-up, tokenizing, and the model load (per GB of fp32 weights: reading, and the tokenizer that comes
# with a large vocabulary), the final save (per GB written).
START_S, LOAD_S_PER_GB, SAVE_S_PER_GB, SAVE_MIN_S = 6.0, 7.0, 4.0, 1.0
# Python's share of each optimizer step (Trainer, optimizer, logging): what a tiny model's run is made of
STEP_S = 0.015
# The interpreter and the studio's command line before a run writes its start (history does not see it)
PROCESS_S = 2.0
# Building a built-in model from its GGUF once per machine, CPU-seconds (docs/logs/benchmarks-history.md section 6)
PREPARE_CPU_S = {"gemma3-270m": 28.0, "smollm2-135m-instruct": 12.0}
GPU_FLOPS = 4e13   # a card: ~40% of a 100-TFLOP bf16 card; not measured here (no GPU on this project's machines)
HISTORY_RUNS = 3   # the newest finished runs of the same model and method that set the speed
# How a step's speed grows with torch's threads: speed ~ threads ** THREAD_SCALING. Measured on the 2-core Xeon,
# SmolLM2 LoRA, idle: 2 threads 1.63x one (29.6 s vs 48.1 s of training; tiny-demo, all overhead: 1.36x)
THREAD_SCALING = 0.7


@dataclass
class Estimate:
    """Wall seconds of a run before it starts, and where each part comes from."""

    seconds: float
    parts: dict[str, float] = field(default_factory=dict)   # prepare, start, train, check, save
    source: str = "measured"      # "history": this model's last runs here; "measured": the matmul test
    slowdown: float = 1.0         # the machine's current load: how much longer than on an idle machine
    train_tokens: int = 0
    tokens_per_s: float = 0.0
    runs: int = 0                 # how many earlier runs set the speed
    # early stop on a plateau: the median share of their planned steps this model's last early-stopping runs here
    # used (None: no such run yet, or this run has no patience), and the training time that share would save
    early_stop_share: float | None = None
    early_stop_saves_s: float = 0.0
    steps: int = 0                # the run's planned updates


# ------------------------------------------------------------------ this machine
def cores() -> int:
    """CPU cores this process may use (a container's limit, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def free_threads(load: float, n: int | None = None) -> int:
    """Threads a CPU run computes with beside ``load`` cores' worth of others' work: one per core they leave free
    (at least one). The engine uses it at the start of a CPU run and the estimate assumes it.

    Why not all cores: torch's threads wait for each other at every operation, so a thread that has lost its core
    to another process holds the others up. Measured 2026-12-05 on the 2-core Xeon beside one busy core
    (docs/BENCHMARKS.md "Threads beside a busy core"): SmolLM2 LoRA, 12 steps, 96.8 s of training with 2 threads
    against 50.5 s with 1; tiny-demo 7.8 s against 3.1 s."""
    n = n or cores()
    return max(1, min(n, n - int(max(load, 0.0) + 0.5)))


def slowdown(load: float | None = None, threads: int | None = None) -> float:
    """How much longer a run takes than with every core to itself, with ``load`` cores' worth of others' work
    beside it and ``threads`` threads (None: what ``free_threads`` gives it); ``load`` None: measured now
    (``others_load``). Fewer threads cost ``(cores / threads) ** THREAD_SCALING``; more threads than free cores
    share them."""
    if load is None:
        load = others_load()
    n = cores()
    threads = threads or free_threads(load, n)
    return max(1.0, (n / threads) ** THREAD_SCALING) * max(1.0, (max(load, 0.0) + threads) / n)


def cpu_busy() -> tuple[float, float] | None:
    """(CPU-seconds every core has been busy, seconds since boot x cores) from /proc/stat; None off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / tick, sum(fields) / tick


def others_between(before: tuple[float, float] | None, after: tuple[float, float] | None, wall_s: float,
                   own_cpu_s: float) -> float | None:
    """Cores' worth of other processes' work over an interval: all busy CPU-seconds minus this process's own.

    Why not the load average: its 1-minute decay still counts a run that just ended (a run started right after
    another recorded load 2.1 on an idle 2-core machine, and would have taught the estimate a 2x wrong speed)."""
    if before is None or after is None or wall_s <= 0:
        return None
    # at most every core: the busy ticks and the wall clock are read a moment apart, so a machine busy on every
    # core read 2.01 cores of 2 (a test under load)
    return round(min(max(after[0] - before[0] - own_cpu_s, 0.0) / wall_s, cores()), 2)


def busy_mark() -> tuple[float, float, tuple[float, float] | None]:
    """(wall, this process's CPU, the machine's busy CPU) now: the start of a window ``others_since`` reads."""
    return time.time(), time.process_time(), cpu_busy()


def others_since(mark: tuple[float, float, tuple[float, float] | None]) -> float | None:
    """Cores' worth of other processes' work since ``mark`` (``busy_mark``); None off Linux."""
    t0, cpu0, before = mark
    return others_between(before, cpu_busy(), time.time() - t0, time.process_time() - cpu0)


_sampled: list[float] = []  # (time, load) of the last sample: one sample serves a burst of page events


def others_load(window_s: float = 0.2, keep_s: float = 10.0) -> float:
    """Cores' worth of others' work right now (this process idle meanwhile), sampled over ``window_s``."""
    now = time.monotonic()
    if _sampled and now - _sampled[0] < keep_s:
        return _sampled[1]
    mark = busy_mark()
    if mark[2] is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
    else:
        time.sleep(window_s)
        load = others_since(mark) or 0.0
    _sampled[:] = [now, load]
    return load


def _machine_key() -> str:
    """What the matmul speed depends on: the CPU model, the cores this process may use, torch's version."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        # start-up: importlib.metadata, 0.04 s at import; `studio cluster --help` loads this module
        from importlib.metadata import version
        torch_version = version("torch")
    except Exception:  # noqa: BLE001 - no torch metadata: the key still separates machines
        torch_version = "?"
    return f"{model or os.uname().machine}|{cores()}|torch {torch_version}"


def _speed_file() -> Path:
    return user_cache_dir().parent / "machine_speed.json"


@lru_cache(maxsize=1)
def machine_flops() -> float:
    """fp32 matmul FLOP/s with torch's threads on this machine: measured once (~0.3 s plus importing torch) and
    kept per CPU model, core count and torch version beside the model cache, so a page load never waits for it
    again. Kept only when measured on a quiet machine: a busy one measures the others' share, not the machine
    (scaled by the load for this process instead)."""
    key, path = _machine_key(), _speed_file()
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    if isinstance(known.get(key), (int, float)) and known[key] > 0:
        return float(known[key])
    busy = others_load(keep_s=0.0)
    flops = _measure_flops()
    if busy > 0.3:
        return flops * slowdown(busy, cores())   # measured with every thread beside the others
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({**known, key: flops}))
    except OSError:
        pass  # a read-only cache: measure again next process
    return flops


_MATMUL = """
import time, torch
n = 768
a, b = torch.randn(n, n), torch.randn(n, n)
torch.mm(a, b)
best = 0.0
for _ in range(5):
    t = time.perf_counter()
    for _ in range(4):
        torch.mm(a, b)
    best = max(best, 4 * 2 * n ** 3 / max(time.perf_counter() - t, 1e-9))
print(best)
"""


def _measure_flops() -> float:
    """In a child process: the web server never imports torch for it (tests/ui/test_ui_app.py holds the UI to that)."""
    import subprocess  # start-up: 0.003 s at import; `studio cluster --help` loads this module
    try:
        done = subprocess.run([sys.executable, "-c", _MATMUL], capture_output=True, text=True, timeout=120)
        return float(done.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return 5e10  # no measurement: the order of a 2-core CPU's fp32 matmul speed


@lru_cache(maxsize=3)
def tokenizer(folder: str) -> Any:
    """The model's tokenizer (counting a dataset's tokens as the run will), loaded once per process."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(folder)


# ------------------------------------------------------------------ the work
def flops_per_token(card: Any, cfg: RunConfig, answer_share: float, seq_len: float) -> float:
    """Useful FLOPs per training token: the body's matmuls (forward, input gradients, and weight gradients when
    every weight trains), attention over the row, and the output layer only at answer positions (the engine's
    logits-at-answers path)."""
    heads = 1 if card.tie_embeddings else 2
    body = max(card.active_params - heads * card.embed_params, 1)
    full = cfg.finetuning_type == "full"
    per = (6 if full else 4) * body + (2 * body if cfg.gradient_checkpointing else 0)
    per += 12 * card.num_layers * seq_len * card.q_dim / 2      # QK^T and AV, causal: half the square
    head = card.hidden_size * card.vocab_size
    per += (6 if full else 4) * head * (answer_share if cfg.selective_logits else 1.0)
    return float(per)


@dataclass
class Work:
    """The tokens a run will process, counted on its own rows."""

    train_tokens: int
    val_tokens: int
    answer_share: float
    mean_len: float


def run_work(cfg: RunConfig, rows: list[dict[str, Any]], tokenizer: Any = None, sample: int = 256) -> Work:
    """Tokens the run trains on (all passes) and checks, from up to ``sample`` of its rows tokenized as the run
    tokenizes them; without a tokenizer, about 4 characters a token plus the template's ~20."""
    train_rows, val_rows = split_rows(rows, cfg.val_size, cfg.seed)
    if cfg.max_samples:
        train_rows = train_rows[:cfg.max_samples]
    pool = train_rows or val_rows
    step = max(1, len(pool) // sample)
    picked = [r for r in pool[::step][:sample] if str(r.get("output", "")).strip()]
    if tokenizer is not None and picked:
        feats = encode_examples(tokenizer, get_template(cfg.template, tokenizer), picked, cfg.cutoff_len,
                                cfg.train_on_prompt, mask_history=cfg.mask_history)
        lens = [len(f["input_ids"]) for f in feats]
        answers = [sum(1 for x in f["labels"] if x != -100) for f in feats]
    else:
        lens = [min(cfg.cutoff_len, 20 + len(" ".join(str(r.get(k, "")) for k in ("instruction", "input", "output")))
                    // 4) for r in picked]
        answers = [min(n, 2 + len(str(r.get("output", ""))) // 4) for r, n in zip(picked, lens)]
    mean = sum(lens) / len(lens) if lens else 0.0
    share = sum(answers) / max(sum(lens), 1)
    epochs = cfg.num_train_epochs
    if cfg.max_steps and cfg.max_steps > 0:
        per_step = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps * max(cfg.nproc, 1)
        n_train = cfg.max_steps * per_step * mean
    else:
        n_train = len(train_rows) * mean * epochs
    return Work(int(n_train), int(len(val_rows) * mean), share, mean)


# ------------------------------------------------------------------ history
def train_parts(status: dict[str, Any], seconds: float, resumed: bool) -> dict[str, Any]:
    """The status keys of a run's training time once this part (``seconds``) ends: ``train_parts``, one entry per
    start or Resume, and their sum ``train_seconds_total``. ``train_seconds`` stays this part's alone (its tokens
    are this part's too, and the estimate learns a speed from the pair)."""
    parts: list[float] = []
    if resumed:
        before = status.get("train_parts")
        parts = [float(x) for x in before] if isinstance(before, list) else (
            [float(status["train_seconds"])] if isinstance(status.get("train_seconds"), (int, float)) else [])
    parts.append(round(seconds, 2))
    return {"train_parts": parts, "train_seconds_total": round(sum(parts), 2)}


def run_seconds(status: dict[str, Any]) -> float | None:
    """How long a run trained, every part of it (an Abort + Resume adds the resumed part to the first), only from
    what it recorded: its training seconds, else ended - started when both are numbers in order; None otherwise
    (an orphaned run once showed ended - 0 = "499033h 52m")."""
    def number(key: str) -> float | None:
        v = status.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v > 0 else None
    for key in ("train_seconds_total", "train_seconds"):
        if number(key) is not None:
            return number(key)
    started, ended = number("started"), number("ended")
    return ended - started if started is not None and ended is not None and ended >= started else None


def past_runs(runs_root: str | Path | None, cfg: RunConfig, device: str) -> list[dict[str, Any]]:
    """The newest finished runs here of the same model, method, stage and device, with what they measured."""
    out = []
    root = Path(runs_root) if runs_root else None
    if root is None or not root.is_dir():
        return out
    for status_file in root.glob("*/status.json"):
        try:
            st = json.loads(status_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(st, dict) or st.get("state") != "finished" or st.get("device") != device:
            continue
        if st.get("model") != cfg.model_name_or_path or st.get("finetuning_type") != cfg.finetuning_type:
            continue
        if stage_of(str(st.get("stage", "sft"))) != stage_of(cfg.stage):   # its tokens per second: its stage's work
            continue
        if not all(isinstance(st.get(k), (int, float)) and st[k] > 0
                   for k in ("train_tokens", "train_seconds", "started", "ended", "train_started")):
            continue
        out.append(st)
    out.sort(key=lambda s: s["ended"], reverse=True)
    return out[:HISTORY_RUNS]


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


# ------------------------------------------------------------------ the estimate
def estimate(cfg: RunConfig, rows: list[dict[str, Any]], *, card: Any, device: str = "cpu",
             runs_root: str | Path | None = None, tokenizer: Any = None, prepare_cpu_s: float = 0.0,
             weights_gb: float | None = None, load: float | None = None,
             flops: float | None = None) -> Estimate:
    """Wall seconds of ``cfg`` on ``rows`` here, before it starts.

    ``card`` is the model's architecture card (studio/memory/cards.py); ``prepare_cpu_s`` the preparation still to
    do; ``weights_gb`` the weights read at load (from the card when None); ``load`` and ``flops`` are measured when
    None (tests pass them).
    """
    work = run_work(cfg, rows, tokenizer)
    slow = slowdown(load)
    past = past_runs(runs_root, cfg, device)
    steps = max(1, math.ceil(work.train_tokens / max(work.mean_len, 1) /
                             (cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps)))
    if past:
        # tokens per second the last runs reached (their in-loop held-out checks included), as if the machine had
        # been idle, then slowed to the load now; before and after the loop: what they took
        rate = _median([p["train_tokens"] / p["train_seconds"] *
                        slowdown(p.get("others_load") or 0.0, p.get("threads") or cores()) for p in past]) / slow
        start = (PROCESS_S + _median([p["train_started"] - p["started"] for p in past])) * slow
        save = _median([max(p["ended"] - p["train_started"] - p["train_seconds"], 0.0) for p in past]) * slow
        check, passes = 0.0, 0
        source = "history"
    else:
        speed = (GPU_FLOPS if device == "cuda" else (flops or machine_flops()) * STEP_SHARE.get(
            cfg.finetuning_type, 0.4))
        per_token = flops_per_token(card, cfg, work.answer_share, work.mean_len) * stage_of(cfg.stage).work_per_row()
        rate = speed / per_token / slow
        gb = weights_gb if weights_gb is not None else card.n_params * 4 / 1024 ** 3
        start = (START_S + LOAD_S_PER_GB * gb) * slow
        # held-out checks (engine/arguments.py's eval_steps rule; one at the end when none fell in the loop), each
        # a forward pass: about a third of a training step's work per token
        every = cfg.eval_steps or max(cfg.logging_steps, cfg.save_steps // 2 or 1)
        passes = max(1, steps // every) if cfg.val_size and work.val_tokens else 0
        check = passes * work.val_tokens / (rate * 3)
        if cfg.load_best_model_at_end or cfg.early_stopping_patience:
            check *= 2   # a labels run scores its held-out rows a second time at each check (engine/held_out.py)
        trained_gb = gb if cfg.finetuning_type == "full" else 0.0
        # a run that keeps its best saves a checkpoint at every evaluation (engine/arguments.py), not only at the end
        saves = 1 + (passes if cfg.load_best_model_at_end or cfg.early_stopping_patience else 0)
        save = saves * (SAVE_MIN_S + SAVE_S_PER_GB * trained_gb) * slow
        source = "measured"
    train = work.train_tokens / rate if rate > 0 else math.inf
    if source == "measured":
        train += steps * STEP_S * slow
    prepare = prepare_cpu_s / min(cores(), 2) * slow if prepare_cpu_s else 0.0
    parts = {"prepare": prepare, "start": start, "train": train, "check": check, "save": save}
    rates = search_rates(cfg.learning_rate_search) if cfg.val_size else []
    if rates:
        # each trial is a short run of its own (engine/lr_search.py): a start-up, its share of the training, one
        # held-out check and its save
        share = trial_steps(cfg, steps) / steps
        one_check = check / max(1, passes) if source == "measured" else 0.0
        parts["search"] = len(rates) * (start + train * share + one_check + save)
    share = _early_stop_share(past) if cfg.early_stopping_patience and cfg.val_size else None
    return Estimate(seconds=sum(parts.values()), parts={k: round(v, 1) for k, v in parts.items()}, source=source,
                    slowdown=round(slow, 2), train_tokens=work.train_tokens, tokens_per_s=round(rate, 1),
                    runs=len(past), early_stop_share=share, steps=steps,
                    early_stop_saves_s=round(train * (1 - share), 1) if share is not None else 0.0)


def _early_stop_share(past: list[dict[str, Any]]) -> float | None:
    """The median share of their planned steps the past runs with an early-stop patience used (status.json's
    ``kept_best``, engine/held_out.py); None when none had one. The whole run stays the estimate: a run that never
    plateaus uses every step."""
    shares = [k["steps"] / k["max_steps"] for k in (p.get("kept_best") for p in past)
              if isinstance(k, dict) and k.get("patience") and isinstance(k.get("steps"), (int, float))
              and isinstance(k.get("max_steps"), (int, float)) and k["max_steps"] > 0]
    return min(1.0, _median(shares)) if shares else None


__all__ = ["Estimate", "Work", "cores", "estimate", "flops_per_token", "free_threads", "machine_flops", "past_runs",
           "run_work", "slowdown"]
