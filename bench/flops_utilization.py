"""Achieved training FLOP/s over this CPU's matmul peak: python bench/flops_utilization.py [--quick] [--profile]

One fresh child process per repeat, each with the same torch thread count, does:

1. **peak**: the best of several ``torch.matmul`` of two 2048 x 2048 fp32 matrices (2 n^3 FLOPs each);
2. **train**: the studio's engine (``run_training``; dynamic batching, selective logits, full fine-tuning, fp32,
   gradient checkpointing off: what the studio's autoconfig picks when the model fits, as this one does; with it on,
   backward recomputes the forward, 8N of work per token counted as 6N: ``--compare gradient_checkpointing=true``)
   on a random Llama with hidden size 1024 (2 layers, 16 heads, MLP 2816, vocabulary ~3000 fitted to the
   data), 1 epoch of review rows with the loss on every token (``train_on_prompt``);
3. **peak** again (the mean of 1 and 3 is the peak: load on a shared machine drifts).

Achieved FLOP/s = 6 x N x non-pad tokens / training seconds (``Trainer.train``: forward, backward, AdamW step,
loader, logging). N counts every weight a token goes through as a matmul: the decoder layers and the LM head.
The input embedding is a table lookup (no FLOPs); here it is tied to the head, so the head's matrix is counted
once, as a matmul. With ``train_on_prompt`` the head runs at every position, so 6N is what is computed (with the
default masked prompt the selective head would skip most positions and 6N would over-count). Attention's
score/value products (12 x layers x hidden x context per token) are not in 6N, as in the usual MFU convention;
they are printed separately. Full fine-tuning: no frozen weights (with LoRA, frozen weights still cost forward +
input-gradient, 4N, and only the adapters 6N; not measured here).

The ratio uses CPU seconds on both sides (FLOPs per CPU-second of training / matmul FLOPs per CPU-second): with one
thread per process this is the work per core-second, steady when other people's processes share the cores; the
wall-clock ratio is printed beside it and matches on an idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (TrainTimer, build_model, emit_result, interleaved, median, print_machine, review_rows, run_child,
                          table, write_jsonl)

DIMS = {"hidden": 1024, "layers": 2, "heads": 16, "vocab_size": 3000, "intermediate": 2816}
FULL = {"rows": 320, "repeats": 2}
QUICK = {"rows": 48, "repeats": 1}
TRAIN = {"batch": 8, "lr": 1e-4, "seed": 42, "logging_steps": 10, "cutoff_len": 512}
MATMUL_N = 2048


def matmul_peak(reps: int = 6) -> dict[str, float]:
    """Best FLOP/s (wall and CPU) of a large fp32 matmul at this process's thread count."""
    import torch
    a, b = torch.randn(MATMUL_N, MATMUL_N), torch.randn(MATMUL_N, MATMUL_N)
    out = torch.empty(MATMUL_N, MATMUL_N)
    torch.matmul(a, b, out=out)  # warm-up (allocation, MKL/oneDNN dispatch)
    flops = 2.0 * MATMUL_N ** 3
    best_wall = best_cpu = 0.0
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        torch.matmul(a, b, out=out)
        best_wall = max(best_wall, flops / (time.perf_counter() - w))
        best_cpu = max(best_cpu, flops / max(time.process_time() - c, 1e-9))
    return {"wall": best_wall, "cpu": best_cpu}


def matmul_params(model: Any) -> dict[str, int]:
    """Weights used as matmuls per token: decoder layers + LM head (the input embedding is a lookup)."""
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    head = causal.get_output_embeddings()
    emb = causal.get_input_embeddings()
    body = sum(p.numel() for n, p in causal.named_parameters()
               if p is not emb.weight and p is not head.weight)
    return {"body": body, "head": head.weight.numel(), "embedding_tied": int(emb.weight is head.weight)}


def util_child(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    torch.set_num_threads(spec["threads"])
    before = matmul_peak()
    timer = TrainTimer()
    spans = _time_spans()
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="full", template="studio", cutoff_len=spec["cutoff_len"],
                    per_device_train_batch_size=spec["batch"], learning_rate=spec["lr"], num_train_epochs=1,
                    lr_scheduler_type="linear", logging_steps=spec["logging_steps"], save_steps=10**6,
                    seed=spec["seed"], precision="fp32", plot_loss=False, train_on_prompt=True, val_size=0,
                    **{"gradient_checkpointing": False, "dynamic_batching": True, "max_tokens_per_batch": spec["budget"], **spec.get("overrides", {})})
    summary = run_training(cfg)
    after = matmul_peak()
    params = matmul_params(AutoModelForCausalLM.from_pretrained(spec["model_dir"]))
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "before": before, "after": after,
            "params": params, "threads": torch.get_num_threads(), "spans": spans}


def _time_spans() -> dict[str, float]:
    """CPU seconds inside the training steps' forward + backward and inside the optimizer step (patched in place)."""
    import torch
    from studio.engine.studio_trainer import StudioTrainer
    spans = {"forward_backward": 0.0, "optimizer": 0.0}

    def wrap(owner: Any, name: str, key: str) -> None:
        real = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            c = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                spans[key] += time.process_time() - c
        setattr(owner, name, timed)

    wrap(StudioTrainer, "training_step", "forward_backward")
    wrap(torch.optim.AdamW, "step", "optimizer")
    return spans


def profile(spec: dict[str, Any], steps: int = 3) -> str:
    """Where one training step's time goes (torch.profiler, CPU), with the studio's loss."""
    import torch
    from torch.profiler import ProfilerActivity, profile as prof
    from transformers import AutoModelForCausalLM
    from studio.data.dataset import load_rows
    from studio.data.templates import get_template
    from studio.data.tokenize import encode_examples
    from studio.engine.loss import selective_causal_lm_loss
    from studio.models.loading import load_tokenizer
    torch.set_num_threads(spec["threads"])
    tok = load_tokenizer(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"])
    model.config.use_cache = False
    feats = encode_examples(tok, get_template("studio", tok), load_rows(spec["data"])[:8], spec["cutoff_len"], True)
    n = max(len(f["input_ids"]) for f in feats)
    batch = {"input_ids": torch.tensor([f["input_ids"] + [0] * (n - len(f["input_ids"])) for f in feats]),
             "attention_mask": torch.tensor([[1] * len(f["input_ids"]) + [0] * (n - len(f["input_ids"]))
                                             for f in feats]),
             "labels": torch.tensor([f["labels"] + [-100] * (n - len(f["labels"])) for f in feats])}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)

    def step() -> None:
        selective_causal_lm_loss(model, batch).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    with prof(activities=[ProfilerActivity.CPU]) as p:
        for _ in range(steps):
            step()
    return (f"profile: {steps} steps of batch {tuple(batch['input_ids'].shape)}, {spec['threads']} thread(s)\n"
            + p.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"CI size: {QUICK['rows']} rows, 1 run")
    ap.add_argument("--repeats", type=int, help="child runs (default 2, quick 1)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for both the matmul and training")
    ap.add_argument("--profile", action="store_true", help="also print a torch.profiler table of 3 steps")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="studio RunConfig override for the training run, e.g. --set max_tokens_per_batch=2048")
    ap.add_argument("--compare", action="append", default=[], metavar="KEY=JSON",
                    help="a second arm, run ABBA with the first: the same training with these RunConfig settings")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        spec = json.loads(a.spec)
        if a.child == "profile":
            emit_result({"table": profile(spec)})
        else:
            emit_result(util_child(spec))
        return 0
    size = QUICK if a.quick else FULL
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    print_machine()
    with tempfile.TemporaryDirectory(prefix="bench_flops_") as tmp:
        root = Path(tmp)
        rows, source = review_rows(size["rows"], seed=4)
        data = write_jsonl(root / "reviews.jsonl", rows)
        model_dir = build_model(root / "model", rows, DIMS)
        spec: dict[str, Any] = {"model_dir": str(model_dir), "data": str(data), "threads": a.threads,
                                "overrides": overrides, **TRAIN}
        # every row trains (val_size 0), tokenized as the engine does with train_on_prompt
        from studio.data.templates import get_template
        from studio.data.tokenize import encode_examples
        from studio.models.loading import load_tokenizer
        tok = load_tokenizer(str(model_dir))
        lengths = [len(f["input_ids"]) for f in encode_examples(tok, get_template("studio", tok), rows,
                                                                 TRAIN["cutoff_len"], True)]
        tokens = sum(lengths)
        mean = statistics.mean(lengths)
        spec["budget"] = overrides.get("max_tokens_per_batch", int(round(TRAIN["batch"] * mean)))
        print(f"data: {len(lengths)} rows from {source}; {tokens} non-pad tokens, mean {mean:.0f}/row, "
              f"max {max(lengths)}; model {DIMS}; torch threads {a.threads}; token budget {spec['budget']}"
              + (f"; overrides {overrides}" if overrides else ""))
        if a.profile:
            print(run_child(Path(__file__), "profile", {**spec, "out": str(root / "profile")}, threads=a.threads)["table"])
        arms = {"studio": {}}
        if a.compare:
            arms["compare"] = {k: json.loads(v) for k, v in (c.split("=", 1) for c in a.compare)}
        results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
        for i, arm in enumerate(interleaved(list(arms), a.repeats or size["repeats"])):
            extra = arms[arm]
            budget = extra.get("max_tokens_per_batch", spec["budget"])
            r = run_child(Path(__file__), "util", {**spec, "budget": budget,
                                                   "overrides": {**overrides, **{k: v for k, v in extra.items()
                                                                                 if k != "max_tokens_per_batch"}},
                                                   "out": str(root / f"run{i}")}, threads=a.threads)
            p = r["params"]
            n = p["body"] + p["head"]
            flops = 6.0 * n * tokens
            ctx = statistics.mean(lengths)  # attention's extra FLOPs per token ~ 12 x layers x hidden x context/2
            attn = 12.0 * DIMS["layers"] * DIMS["hidden"] * (ctx / 2) * tokens
            peak_w = (r["before"]["wall"] + r["after"]["wall"]) / 2
            peak_c = (r["before"]["cpu"] + r["after"]["cpu"]) / 2
            r.update(arm=arm, n=n, ach_w=flops / r["train_s"], ach_c=flops / r["cpu_s"], peak_w=peak_w,
                     peak_c=peak_c, attn_share=attn / flops)
            r["util_w"], r["util_c"] = r["ach_w"] / peak_w, r["ach_c"] / peak_c
            fb, opt = r["spans"]["forward_backward"], r["spans"]["optimizer"]
            r["util_fb"] = flops / fb / peak_c
            where = (f"    where the training CPU time went: forward + backward {fb:.1f} s ({100 * fb / r['cpu_s']:.0f}%, "
                  f"utilization inside it {r['util_fb']:.3f}), AdamW step {opt:.1f} s ({100 * opt / r['cpu_s']:.0f}%), "
                  f"the rest (loader, set-up, logging, clipping) {r['cpu_s'] - fb - opt:.1f} s "
                  f"({100 * (r['cpu_s'] - fb - opt) / r['cpu_s']:.0f}%)")
            results[arm].append(r)
            print(f"  run {i + 1} {arm}{' ' + json.dumps(extra) if extra else ''}: train {r['train_s']:.1f} s wall / "
                  f"{r['cpu_s']:.1f} s CPU, {r['steps']} steps; matmul peak {r['before']['cpu'] / 1e9:.1f} -> "
                  f"{r['after']['cpu'] / 1e9:.1f} GFLOP/CPU-s ({r['before']['wall'] / 1e9:.1f} -> "
                  f"{r['after']['wall'] / 1e9:.1f} wall); utilization {r['util_c']:.3f} CPU, {r['util_w']:.3f} wall",
                  flush=True)
            print(where, flush=True)
    every = [r for rs in results.values() for r in rs]
    if "compare" in results:
        per = [c["util_c"] / s["util_c"] for s, c in zip(results["studio"], results["compare"])]
        print(f"compare / studio utilization per ABBA block (CPU): {' '.join(f'{x:.3f}' for x in per)}; "
              f"median {median(per):.3f}")
    p = every[0]["params"]
    print(f"\nN = {every[0]['n']:,} matmul weights (decoder {p['body']:,} + LM head {p['head']:,}; the input "
          f"embedding is {'tied to the head, counted once' if p['embedding_tied'] else 'a lookup, not counted'}); "
          f"attention scores would add {100 * every[0]['attn_share']:.1f}% more FLOPs (not counted)")
    print(table(["run", "arm", "train s wall", "train s CPU", "achieved GFLOP/s (CPU-s)", "matmul peak GFLOP/s (CPU-s)",
                 "utilization (CPU)", "utilization (wall)"],
                [[i + 1, r["arm"], r["train_s"], r["cpu_s"], r["ach_c"] / 1e9, r["peak_c"] / 1e9, r["util_c"],
                  r["util_w"]] for i, r in enumerate(every)]))
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    studio = results["studio"]
    print(f"ratio: {median([r['util_c'] for r in studio]):.3f}  (studio: achieved 6N training FLOP/s / measured fp32 "
          f"matmul peak, per CPU-second, median; wall {median([r['util_w'] for r in studio]):.3f}; aim >= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
