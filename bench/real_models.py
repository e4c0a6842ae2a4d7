"""Load time and LoRA step time of the built-in real models on this machine (the numbers in studio/models/zoo.py).

For each model: load the prepared folder (wall and CPU seconds), apply the recipe's LoRA, then time
``--steps`` optimizer steps on batches shaped like its CPU recipe (batch 8 of the sample reviews, cut at
cutoff_len), reporting wall-clock and process CPU seconds per step. CPU seconds are steadier on a busy
shared machine; on an idle machine with T threads, wall ~= CPU / T.

    python bench/real_models.py                      # both models, 3 timed steps after 1 warm-up
    python bench/real_models.py --models smollm2-135m-instruct --steps 5 --threads 2
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RECIPES = {"smollm2-135m-instruct": "presets/recipes/smollm2-135m-lora-cpu.yaml",
           "gemma3-270m": "presets/recipes/gemma3-270m-lora-cpu.yaml"}


def measure(name: str, steps: int, rows: list[dict]) -> dict:
    import torch
    from studio.config.run_config import RunConfig
    from studio.data.templates import get_template
    from studio.data.tokenize import encode_example
    from studio.engine.batching import pad_collator
    from studio.models.loading import apply_method, load_base, resolve_model_source
    cfg = RunConfig.load(ROOT / RECIPES[name], ["dataset=unused.jsonl"])
    resolve_model_source(name)  # prepare outside the timed span
    t, c = time.time(), time.process_time()
    model, tok = load_base(cfg)
    load_wall, load_cpu = time.time() - t, time.process_time() - c
    model = apply_method(model, cfg)
    model.train()
    tpl = get_template(cfg.template, tok)
    feats = [encode_example(tok, tpl, r, cfg.cutoff_len) for r in rows]
    collate = pad_collator(tok)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.learning_rate)
    bs = cfg.per_device_train_batch_size
    walls, cpus, tokens = [], [], 0
    for i in range(steps + 1):  # step 0 warms up (allocations, first-call overheads); not counted
        batch = collate([{k: f[k] for k in ("input_ids", "attention_mask", "labels")}
                         for f in feats[i * bs:(i + 1) * bs]])
        t, c = time.time(), time.process_time()
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        if i:
            walls.append(time.time() - t)
            cpus.append(time.process_time() - c)
            tokens += int(batch["attention_mask"].sum())
    return {"model": name, "load_wall_s": round(load_wall, 1), "load_cpu_s": round(load_cpu, 1),
            "step_wall_s": round(sum(walls) / len(walls), 2), "step_cpu_s": round(sum(cpus) / len(cpus), 2),
            "tokens_per_step": tokens // steps, "batch": bs, "cutoff_len": cfg.cutoff_len,
            "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(RECIPES))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    torch.set_num_threads(args.threads)
    from studio.evaluation.evaluate import load_rows
    rows = load_rows(ROOT / "studio" / "assets" / "sample_reviews.csv")
    print(f"threads {args.threads}; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    print("| model | load wall s | load CPU s | step wall s | step CPU s | tokens/step | peak RSS GB |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models:
        r = measure(name, args.steps, rows)
        print(f"| {r['model']} | {r['load_wall_s']} | {r['load_cpu_s']} | {r['step_wall_s']} | {r['step_cpu_s']} "
              f"| {r['tokens_per_step']} | {r['peak_rss_gb']} |", flush=True)
        print("BENCH_RESULT " + json.dumps(r), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
