"""SmolLM2-135M LoRA step: useful FLOPs per CPU-second over the measured matmul peak

    python bench/lora_utilization.py [--quick] [--rows 64] [--repeats 2] [--profile] [--shapes]
                                     [--set KEY=JSON] [--compare KEY=JSON]    # e.g. --compare max_tokens_per_batch=2048

The real model (``smollm2-135m-instruct``, prepared by ``studio.models.zoo.ensure_prepared``), the shipped recipe
(presets/recipes/smollm2-135m-lora-cpu.yaml: LoRA r 8 / alpha 16 on every linear layer, dynamic batching with the
default token budget, selective logits, fused AdamW) through ``studio.engine.run_training``, on the real reviews of
bench/real_throughput.py (``real_reviews``), overridden only as real_throughput's studio arm does (cutoff 256, the
``studio`` template, fp32, one epoch, no validation split, no checkpoint). One torch thread; every run a fresh child
process that measures the matmul peak (bench/flops_utilization.py's ``matmul_peak``: best of six 2048^3 fp32
matmuls) before and after training; the peak is their mean. With ``--compare`` the two arms run ABBA.

**Useful FLOPs** are run-time's ``flops_per_token`` (studio/runs/run_time.py: the one definition the page's estimate
uses) summed row by row, plus the adapters' own work:

* frozen base: 4 x body parameters per token (forward + input gradient; no weight gradient);
* attention: 12 x layers x q_dim x L / 2 per token of a row of L tokens (QK^T and AV, causal);
* LM head: 4 x hidden x vocab at the answer positions only (selective logits);
* adapters: 6 x adapter parameters per token (forward, input gradient, weight gradient).

Padding, the optimizer, the loss's softmax and all elementwise work count nothing. The utilization is useful
FLOPs / CPU seconds of ``Trainer.train`` over the matmul peak in FLOPs / CPU second (CPU seconds on both sides: the
work per core-second, steady when others share the cores; wall beside it).

``--profile``: ``torch.profiler`` over steps 2-4 of a real run (the engine's own batches, optimizer step, loader),
every op's self time grouped: base matmuls (by shape: no dimension equals the rank), the LM head (vocabulary-wide
matmuls), the rank-r adapter matmuls, SDPA (flash attention for CPU, forward and backward), optimizer (fused AdamW,
clipping's foreach ops), elementwise/copies/reductions (every other aten op), and the rest (Python, the autograd
engine and the loader: profiled ranges' own time and CPU time outside any op). ``--shapes``: the adapter matmuls'
shapes timed alone (F.linear / mm, 1 thread) at the default batch's token count, and one AdamW step over the 420
adapter tensors fused / foreach / for-loop. ``--compare torch_compile=true`` (a bench switch, not a RunConfig
field: the engine has none) compiles every decoder layer in place (``layer.compile(dynamic=True)``) after the
engine builds the model; its first step carries the compile time, printed apart.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import TrainTimer, emit_result, interleaved, median, print_machine, run_child, table, write_jsonl

MODEL = "smollm2-135m-instruct"
RECIPE = ROOT / "presets/recipes/smollm2-135m-lora-cpu.yaml"
FULL = {"rows": 64, "repeats": 2}
QUICK = {"rows": 32, "repeats": 1}
BENCH_KEYS = ("torch_compile",)   # handled here, not RunConfig fields
PROFILE_FROM, PROFILE_STEPS = 2, 3


def recipe_overrides(spec: dict[str, Any]) -> list[str]:
    """What every arm shares (as bench/real_throughput.py's studio arm), then the user's --set and the arm's own."""
    fixed = [f"dataset={spec['data']}", f"model_name_or_path={spec['model_dir']}", f"output_dir={spec['out']}",
             "cutoff_len=256", "template=studio", "precision=fp32", "max_steps=-1", "num_train_epochs=1",
             "val_size=0", "save_steps=1000000", "plot_loss=false", "logging_steps=1", "seed=42"]
    extra = {k: v for k, v in spec.get("overrides", {}).items() if k not in BENCH_KEYS}
    return fixed + [f"{k}={json.dumps(v)}" for k, v in extra.items()]


def adapter_params(card: Any, rank: int) -> int:
    """LoRA's A and B over every decoder linear layer (``lora_target: all`` = peft's all-linear, no LM head)."""
    return int(sum(rank * (i + o) * n for _, i, o, n in card.linear_counts()) * card.num_layers)


def row_flops(card: Any, cfg: Any, length: int, answers: int, adapters: int) -> dict[str, float]:
    """One row's useful FLOPs by part; their sum is run_time.flops_per_token x L + 6 x adapters x L."""
    from studio.runs.run_time import flops_per_token
    total = flops_per_token(card, cfg, answers / max(length, 1), length) * length
    attention = 12.0 * card.num_layers * length * card.q_dim / 2 * length
    head = 4.0 * card.hidden_size * card.vocab_size * (answers if cfg.selective_logits else length)
    return {"base": total - attention - head, "attention": attention, "head": head,
            "adapters": 6.0 * adapters * length}


def batch_flops(card: Any, cfg: Any, adapters: int, lengths: list[int], answers: list[int]) -> dict[str, float]:
    parts = {"base": 0.0, "attention": 0.0, "head": 0.0, "adapters": 0.0}
    for n, a in zip(lengths, answers):
        for k, v in row_flops(card, cfg, n, a, adapters).items():
            parts[k] += v
    return parts


# ------------------------------------------------------------------ children
def _load_cfg(spec: dict[str, Any]) -> Any:
    from studio.config.run_config import RunConfig
    return RunConfig.load(spec["recipe"], recipe_overrides(spec))


def _record_steps(card: Any, cfg: Any, adapters: int) -> list[dict[str, float]]:
    """Each training_step's CPU and wall seconds and its useful FLOPs, from the batch the engine built."""
    from studio.engine.studio_trainer import StudioTrainer
    steps: list[dict[str, float]] = []
    real = StudioTrainer.training_step

    def timed(self: Any, model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        lengths = inputs["attention_mask"].sum(dim=1).tolist()
        answers = (inputs["labels"] != -100).sum(dim=1).tolist()
        w, c = time.perf_counter(), time.process_time()
        try:
            return real(self, model, inputs, *args, **kwargs)
        finally:
            steps.append({"cpu": time.process_time() - c, "wall": time.perf_counter() - w, "tokens": sum(lengths),
                          "flops": sum(batch_flops(card, cfg, adapters, lengths, answers).values())})
    StudioTrainer.training_step = timed  # type: ignore[method-assign]
    return steps


def _compile_layers() -> None:
    """After the engine builds the model, compile each decoder layer in place (regional compilation)."""
    import studio.engine.run as engine_run
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")   # one core, as the training itself
    real = engine_run._build_model

    def built(*args: Any, **kwargs: Any) -> Any:
        model, tok = real(*args, **kwargs)
        causal = model.get_base_model() if hasattr(model, "get_base_model") else model
        for layer in causal.model.layers:
            layer.compile(dynamic=True)
        return model, tok
    engine_run._build_model = built


def util_child(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from bench.flops_utilization import _time_spans, matmul_peak
    from studio.engine import run_training
    from studio.memory.cards import load_card
    torch.set_num_threads(spec["threads"])
    cfg = _load_cfg(spec)
    card = load_card(spec["model_dir"])
    before = matmul_peak()
    timer = TrainTimer()
    spans = _time_spans()
    steps = _record_steps(card, cfg, adapter_params(card, cfg.lora_rank))
    if spec.get("overrides", {}).get("torch_compile"):
        _compile_layers()
    summary = run_training(cfg)
    after = matmul_peak()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)   # inductor's C++ compiler runs in subprocesses
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "before": before, "after": after,
            "spans": spans, "per_step": steps, "final_loss": summary.get("final_loss"),
            "subprocess_cpu_s": kids.ru_utime + kids.ru_stime}


MATMULS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}


def _mm_dims(name: str, shapes: list[list[int]]) -> tuple[int, int, int, int] | None:
    """(batch, m, k, n) of a matmul op from its input shapes."""
    try:
        a, b = (shapes[1], shapes[2]) if name in ("aten::addmm", "aten::baddbmm") else (shapes[0], shapes[1])
        if len(a) == 3:
            return a[0], a[1], a[2], b[2]
        return 1, a[0], a[1], b[1]
    except (IndexError, TypeError):
        return None


def categorize(events: Any, rank: int, vocab: int) -> dict[str, dict[str, float]]:
    """Self time (us), calls and matmul FLOPs per group of ``key_averages(group_by_input_shape=True)`` events."""
    groups: dict[str, dict[str, float]] = {}
    for e in events:
        name = e.key
        dims = _mm_dims(name, e.input_shapes) if name in MATMULS else None
        if dims is not None:
            b, m, k, n = dims
            group = ("LM head matmuls" if vocab in (m, k, n) else
                     "adapter matmuls (rank %d)" % rank if rank in (m, k, n) else "base matmuls (frozen weights)")
            flops = 2.0 * b * m * k * n * e.count
        elif "scaled_dot_product" in name or "flash_attention" in name:
            group, flops = "SDPA (flash attention for CPU, fwd + bwd)", 0.0
        elif "adam" in name.lower() or name.startswith("aten::_foreach"):
            group, flops = "optimizer (fused AdamW, clipping)", 0.0
        elif name.startswith("aten::"):
            group, flops = "elementwise, copies, reductions (other aten ops)", 0.0
        else:
            group, flops = "the rest: Python, autograd engine, loader (profiled ranges' own time)", 0.0
        g = groups.setdefault(group, {"us": 0.0, "calls": 0, "flops": 0.0})
        g["us"] += e.self_cpu_time_total
        g["calls"] += e.count
        g["flops"] += flops
    return groups


def profile_child(spec: dict[str, Any]) -> dict[str, Any]:
    """A real run with torch.profiler around training steps PROFILE_FROM .. PROFILE_FROM + PROFILE_STEPS - 1."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    from bench.flops_utilization import matmul_peak
    from studio.engine import run_training
    from studio.engine.studio_trainer import StudioTrainer
    from studio.memory.cards import load_card
    torch.set_num_threads(spec["threads"])
    cfg = _load_cfg(spec)
    card = load_card(spec["model_dir"])
    adapters = adapter_params(card, cfg.lora_rank)
    peak = matmul_peak()
    state: dict[str, Any] = {"n": 0, "prof": None, "flops": 0.0, "tokens": 0}
    real = StudioTrainer.training_step

    def step(self: Any, model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        state["n"] += 1
        if state["n"] == PROFILE_FROM:
            state["prof"] = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
            state["prof"].__enter__()
            state["cpu"], state["wall"] = time.process_time(), time.perf_counter()
        if state["n"] == PROFILE_FROM + PROFILE_STEPS:
            _stop(state)
        if state["prof"] is not None and "stopped" not in state:
            lengths = inputs["attention_mask"].sum(dim=1).tolist()
            answers = (inputs["labels"] != -100).sum(dim=1).tolist()
            state["flops"] += sum(batch_flops(card, cfg, adapters, lengths, answers).values())
            state["tokens"] += sum(lengths)
            state.setdefault("shapes", []).append(list(inputs["input_ids"].shape))
        return real(self, model, inputs, *args, **kwargs)
    StudioTrainer.training_step = step  # type: ignore[method-assign]
    run_training(cfg)
    if "stopped" not in state:
        _stop(state)  # fewer steps than PROFILE_FROM + PROFILE_STEPS: the optimizer step of the last one is in
    p = state["prof"]
    groups = categorize(p.key_averages(group_by_input_shape=True), cfg.lora_rank, card.vocab_size)
    top = p.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=15,
                                                          max_name_column_width=40, max_shapes_column_width=50)
    return {"groups": groups, "cpu_s": state["cpu_s"], "wall_s": state["wall_s"], "flops": state["flops"],
            "tokens": state["tokens"], "shapes": state.get("shapes", []), "peak": peak, "top": top,
            "steps": len(state.get("shapes", []))}


def _stop(state: dict[str, Any]) -> None:
    state["cpu_s"], state["wall_s"] = time.process_time() - state["cpu"], time.perf_counter() - state["wall"]
    state["prof"].__exit__(None, None, None)
    state["stopped"] = True


def _rate(fn: Any, flops: float, min_s: float = 0.05) -> float:
    """FLOPs per CPU second of ``fn``, best of 3 timings of enough calls to last ``min_s`` each."""
    fn()
    n, best = 1, 0.0
    while True:
        c = time.process_time()
        for _ in range(n):
            fn()
        if time.process_time() - c >= min_s:
            break
        n *= 2
    for _ in range(3):
        c = time.process_time()
        for _ in range(n):
            fn()
        best = max(best, flops * n / max(time.process_time() - c, 1e-9))
    return best


def shapes_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The adapter and base matmul shapes of one SmolLM2 layer at T tokens, timed alone; AdamW over the adapters."""
    import torch
    import torch.nn.functional as F
    from bench.flops_utilization import matmul_peak
    from studio.memory.cards import load_card
    torch.set_num_threads(spec["threads"])
    card, r, t = load_card(spec["model_dir"]), spec["rank"], spec["tokens"]
    before = matmul_peak()["cpu"]
    rows, totals = [], {"adapter": [0.0, 0.0], "base": [0.0, 0.0]}
    big = torch.randn(2048, 2048), torch.randn(2048, 2048)
    h, i = card.hidden_size, card.intermediate_size
    x2, w2 = torch.randn(2048, h), torch.randn(i, h)
    reference = [("peak shape", "2048^3 matmul, timed as the rows here", lambda: big[0] @ big[1], 2 * 2048 ** 3),
                 ("base", f"up_proj x.W^T at 2048 tokens [2048x{h}]x[{h}x{i}]", lambda: F.linear(x2, w2),
                  2 * 2048 * h * i)]
    for name, k, o, _ in card.linear_counts():
        x, g = torch.randn(t, k), torch.randn(t, o)
        a, b, w = torch.randn(r, k), torch.randn(o, r), torch.randn(o, k)
        u, gu = torch.randn(t, r), torch.randn(t, r)
        ops = [("adapter", f"{name} x.A^T [{t}x{k}]x[{k}x{r}]", lambda: F.linear(x, a), 2 * t * k * r),
               ("adapter", f"{name} u.B^T [{t}x{r}]x[{r}x{o}]", lambda: F.linear(u, b), 2 * t * r * o),
               ("adapter", f"{name} dB = g^T.u [{o}x{t}]x[{t}x{r}]", lambda: g.t() @ u, 2 * o * t * r),
               ("adapter", f"{name} du = g.B [{t}x{o}]x[{o}x{r}]", lambda: g @ b, 2 * t * o * r),
               ("adapter", f"{name} dA = du^T.x [{r}x{t}]x[{t}x{k}]", lambda: gu.t() @ x, 2 * r * t * k),
               ("adapter", f"{name} dx += du.A [{t}x{r}]x[{r}x{k}]", lambda: gu @ a, 2 * t * r * k),
               ("base", f"{name} x.W^T [{t}x{k}]x[{k}x{o}]", lambda: F.linear(x, w), 2 * t * k * o),
               ("base", f"{name} dx = g.W [{t}x{o}]x[{o}x{k}]", lambda: g @ w, 2 * t * o * k)]
        for kind, label, fn, flops in ops:
            rate = _rate(fn, flops)
            rows.append([kind, label, rate / 1e9, rate])
            totals[kind][0] += flops
            totals[kind][1] += flops / rate
    after = matmul_peak()["cpu"]
    peak = (before + after) / 2
    for kind, label, fn, flops in reference:
        rate = _rate(fn, flops)
        rows.append([kind, label, rate / 1e9, rate])
    rows = [row[:3] + [row[3] / peak] for row in rows]
    adam = {}
    shapes = [(r, k) for _, k, _, _ in card.linear_counts()] + [(o, r) for _, _, o, _ in card.linear_counts()]
    params = [torch.zeros(s, requires_grad=True) for s in shapes * card.num_layers]
    for p in params:
        p.grad = torch.randn_like(p)
    for label, kw in (("fused", {"fused": True}), ("foreach", {"foreach": True}), ("for-loop", {"foreach": False})):
        opt = torch.optim.AdamW(params, lr=1e-4, **kw)
        opt.step()
        best = float("inf")
        for _ in range(5):
            c = time.process_time()
            opt.step()
            best = min(best, time.process_time() - c)
        adam[label] = best
    return {"peak": peak, "peaks": [before, after], "rows": rows, "tensors": len(params), "adam": adam,
            "layer": {k: v[0] / v[1] / peak for k, v in totals.items()}}


# ------------------------------------------------------------------ parent
def _print_profile(p: dict[str, Any], threads: int) -> None:
    groups, total_cpu = p["groups"], p["cpu_s"]
    traced_us = sum(g["us"] for g in groups.values())
    wall_us = p["wall_s"] * 1e6
    untraced = max(wall_us - traced_us, 0.0)
    print(f"\nprofile: steps {PROFILE_FROM}-{PROFILE_FROM + p['steps'] - 1} of a real run, batches "
          f"{p['shapes']} ({p['tokens']} non-pad tokens), {threads} thread(s); span {p['wall_s']:.1f} s wall / "
          f"{total_cpu:.1f} s CPU (profiler on); useful {p['flops'] / 1e9:.1f} GFLOP -> "
          f"{p['flops'] / total_cpu / p['peak']['cpu']:.3f} of this child's matmul peak "
          f"({p['peak']['cpu'] / 1e9:.1f} GFLOP/CPU-s) under the profiler")
    rows = []
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["us"]):
        rate = g["flops"] / (g["us"] / 1e6) if g["flops"] else 0.0
        rows.append([name, g["calls"], g["us"] / 1e6, 100 * g["us"] / wall_us,
                     f"{rate / 1e9:.1f} ({rate / p['peak']['wall']:.2f} of peak)" if rate else "-"])
    rows.append(["outside any profiled op (span wall - traced self time)", "-", untraced / 1e6,
                 100 * untraced / wall_us, "-"])
    print(table(["group", "calls", "self s", "% of span", "GFLOP/s inside (share of peak)"], rows))
    print("\ntop ops by self time (shapes grouped):\n" + p["top"])


def _print_shapes(s: dict[str, Any], tokens: int) -> None:
    print(f"\nmatmul shapes alone at T = {tokens} tokens (one batch at the default budget), 1 thread, "
          f"peak {s['peaks'][0] / 1e9:.1f} before, {s['peaks'][1] / 1e9:.1f} after the rows, mean {s['peak'] / 1e9:.1f} "
          "GFLOP/CPU-s:")
    print(table(["kind", "op", "GFLOP/CPU-s", "share of peak"], s["rows"]))
    print(f"one layer's adapter matmuls together: {s['layer']['adapter']:.3f} of peak; its base matmuls "
          f"(forward + input gradient): {s['layer']['base']:.3f}")
    print(f"AdamW step over the {s['tensors']} adapter tensors: " +
          ", ".join(f"{k} {1e3 * v:.1f} ms" for k, v in s["adam"].items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"CI size: {QUICK['rows']} rows, 1 run")
    ap.add_argument("--rows", type=int, help=f"training rows (default {FULL['rows']}, quick {QUICK['rows']})")
    ap.add_argument("--repeats", type=int, help="runs per arm (default 2 = ABBA with --compare, quick 1; 0: none)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for the matmul peak and training")
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of steps 2-4, grouped")
    ap.add_argument("--shapes", action="store_true", help="time the adapter matmul shapes and AdamW alone")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="RunConfig override, all arms")
    ap.add_argument("--compare", action="append", default=[], metavar="KEY=JSON",
                    help="a second arm with these settings (RunConfig keys, or torch_compile=true), run ABBA")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        emit_result({"util": util_child, "profile": profile_child, "shapes": shapes_child}[a.child](
            json.loads(a.spec)))
        return 0
    size = QUICK if a.quick else FULL
    n_rows = a.rows or size["rows"]
    repeats = size["repeats"] if a.repeats is None else a.repeats
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    compare = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.compare)}
    print_machine(a.threads)
    print(f"uptime load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    from bench.real_throughput import real_reviews
    from studio.data.dataset import load_rows
    from studio.engine.run import prepare_data
    from studio.memory.cards import load_card
    from studio.models.loading import load_tokenizer
    from studio.models.zoo import ensure_prepared
    with tempfile.TemporaryDirectory(prefix="bench_lora_util_") as tmp:
        root = Path(tmp)
        folder = str(ensure_prepared(MODEL))
        rows, source = real_reviews(n_rows)
        data = write_jsonl(root / "train.jsonl", rows)
        spec: dict[str, Any] = {"model_dir": folder, "data": str(data), "recipe": str(RECIPE), "threads": a.threads,
                                "overrides": overrides, "out": str(root / "probe")}
        cfg = _load_cfg(spec)
        train, _, _ = prepare_data(cfg, load_tokenizer(folder), load_rows(str(data)))
        lengths = [len(f["input_ids"]) for f in train]
        answers = [sum(1 for x in f["labels"] if x != -100) for f in train]
        card = load_card(folder)
        adapters = adapter_params(card, cfg.lora_rank)
        parts = batch_flops(card, cfg, adapters, lengths, answers)
        flops = sum(parts.values())
        budget = cfg.max_tokens_per_batch or round(cfg.per_device_train_batch_size * statistics.mean(lengths))
        print(f"data: {len(lengths)} rows ({source}); {sum(lengths)} non-pad tokens, mean {statistics.mean(lengths):.1f}"
              f", max {max(lengths)}, {sum(answers)} answer tokens; token budget {budget}"
              + (f"; overrides {overrides}" if overrides else ""))
        print(f"useful FLOPs per epoch: {flops / 1e9:.1f} GFLOP = " + ", ".join(
            f"{k} {v / 1e9:.1f} ({100 * v / flops:.1f}%)" for k, v in parts.items())
              + f"  [body {card.num_layers} layers, adapters {adapters:,} parameters, vocab {card.vocab_size}]")
        if a.shapes:
            _print_shapes(run_child(Path(__file__), "shapes", {**spec, "rank": cfg.lora_rank, "tokens": budget},
                                    threads=a.threads), budget)
        if a.profile:
            _print_profile(run_child(Path(__file__), "profile", {**spec, "out": str(root / "profile")},
                                     threads=a.threads), a.threads)
        arms = {"studio": {}, **({"compare": compare} if compare else {})}
        results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
        for i, arm in enumerate(interleaved(list(arms), repeats)):
            r = run_child(Path(__file__), "util", {**spec, "overrides": {**overrides, **arms[arm]},
                                                    "out": str(root / f"run{i}")}, threads=a.threads)
            peak_c = (r["before"]["cpu"] + r["after"]["cpu"]) / 2
            peak_w = (r["before"]["wall"] + r["after"]["wall"]) / 2
            counted = sum(s["flops"] for s in r["per_step"])
            steps = r["per_step"]
            fb_cpu = sum(s["cpu"] for s in steps)
            later = steps[1:] or steps
            r.update(arm=arm, peak_c=peak_c, util_c=flops / r["cpu_s"] / peak_c, util_w=flops / r["train_s"] / peak_w,
                     util_fb=counted / fb_cpu / peak_c,
                     util_later=sum(s["flops"] for s in later) / sum(s["cpu"] for s in later) / peak_c)
            opt = r["spans"]["optimizer"]
            results[arm].append(r)
            print(f"  run {i + 1} {arm}{' ' + json.dumps(arms[arm]) if arms[arm] else ''}: train {r['train_s']:.1f} s "
                  f"wall / {r['cpu_s']:.1f} s CPU, {r['steps']} steps; peak {r['before']['cpu'] / 1e9:.1f} -> "
                  f"{r['after']['cpu'] / 1e9:.1f} GFLOP/CPU-s; utilization {r['util_c']:.3f} CPU, {r['util_w']:.3f} "
                  f"wall; inside training_step {r['util_fb']:.3f} (steps 2+: {r['util_later']:.3f}); first step "
                  f"{steps[0]['cpu']:.1f} CPU-s / {steps[0]['wall']:.1f} s wall (+ {r['subprocess_cpu_s']:.1f} CPU-s in "
                  f"subprocesses); training_step {fb_cpu:.1f} s ({100 * fb_cpu / r['cpu_s']:.0f}%), "
                  f"AdamW {opt:.2f} s ({100 * opt / r['cpu_s']:.1f}%), rest {r['cpu_s'] - fb_cpu - opt:.1f} s; "
                  f"FLOPs counted in the child {counted / flops:.3f}x the parent's; load {os.getloadavg()[0]:.2f}",
                  flush=True)
    print(f"\nuptime load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    every = [r for rs in results.values() for r in rs]
    if every:
        print(table(["run", "arm", "steps", "train s wall", "train s CPU", "useful GFLOP/CPU-s",
                     "matmul peak GFLOP/CPU-s", "utilization (CPU)", "wall", "inside training_step", "steps 2+"],
                    [[i + 1, r["arm"], r["steps"], r["train_s"], r["cpu_s"], flops / r["cpu_s"] / 1e9,
                      r["peak_c"] / 1e9, r["util_c"], r["util_w"], r["util_fb"], r["util_later"]]
                     for i, r in enumerate(every)]))
    if results.get("compare"):
        per = [c["util_c"] / s["util_c"] for s, c in zip(results["studio"], results["compare"])]
        later = [c["util_later"] / s["util_later"] for s, c in zip(results["studio"], results["compare"])]
        print(f"compare / studio utilization per ABBA block (CPU): {' '.join(f'{x:.3f}' for x in per)}; median "
              f"{median(per):.3f} (steps 2+: {' '.join(f'{x:.3f}' for x in later)})")
    if results["studio"]:
        print(f"ratio: {median([r['util_c'] for r in results['studio']]):.3f}  (useful LoRA FLOPs per CPU-second / "
              "measured fp32 matmul peak per CPU-second, median of the studio arm; aim >= 0.8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
