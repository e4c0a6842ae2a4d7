"""Dynamic (token-budget) batches vs fixed padded batches: python bench/dynamic_batching.py [--quick]

Reviews are mostly short with a long tail. Fixed batches of B rows pad every row to the
longest one in its batch; studio's dynamic batching (``dynamic_batching: true``) groups
rows of similar length and fills each batch up to ``max_tokens_per_batch`` = B x the mean
row length. Both arms are studio's own ``run_training`` on the same rows for the same
number of epochs; the metric is real (non-pad) tokens per second of the training loop.

Each run is a fresh subprocess, arms alternate (ABBA), medians are reported. Tokens are
counted from what the collator actually produced (real = attention_mask sum, padded =
the tensor size), so the padding fraction is measured, not estimated.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (TrainTimer, ab_parser, build_model, median, paired_ratios, print_load, print_machine,
                          review_rows, run_arms, run_as_child, sized, studio_row_lengths, studio_run_config, table,
                          write_jsonl)

DIMS = {"hidden": 128, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 256}  # tiny-demo size
FULL = {"rows": 480, "epochs": 1, "repeats": 3}
QUICK = {"rows": 96, "epochs": 1, "repeats": 1}
TRAIN = {"batch": 8, "lr": 2e-3, "seed": 42, "logging_steps": 10, "cutoff_len": 512}


def arm(spec: dict[str, Any]) -> dict[str, Any]:
    """One studio run (child process); the collator is wrapped to count real and padded tokens."""
    from studio.engine import arguments, run_training
    counts = {"real": 0, "padded": 0, "batches": 0}
    real_collator = arguments.pad_collator

    def counting_collator(*args: Any, **kwargs: Any) -> Any:
        collate = real_collator(*args, **kwargs)

        def counting(features: list[dict[str, Any]]) -> dict[str, Any]:
            out = collate(features)
            counts["real"] += int(out["attention_mask"].sum())
            counts["padded"] += out["input_ids"].numel()
            counts["batches"] += 1
            return out
        return counting

    arguments.pad_collator = counting_collator  # where make_collator looks it up, at call time
    timer = TrainTimer()
    extra = {"dynamic_batching": True, "max_tokens_per_batch": spec["budget"]} if spec["dynamic"] else {}
    cfg = studio_run_config(spec, **extra)
    summary = run_training(cfg)
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
            **counts}


def main(argv: list[str] | None = None) -> int:
    a = ab_parser(__doc__, "CI size: 1 repeat on 96 rows (< 2 min on 2 cores)",
                  "runs per arm (default 3, quick 1)").parse_args(argv)
    if run_as_child(a, lambda name, spec: arm(spec)):
        return 0
    size, repeats = sized(a, QUICK, FULL)
    print_machine(a.threads)
    with tempfile.TemporaryDirectory(prefix="bench_dynbatch_") as tmp:
        root = Path(tmp)
        rows, source = review_rows(size["rows"], seed=2)
        data = write_jsonl(root / "reviews.jsonl", rows)
        model_dir = build_model(root / "model", rows, DIMS)
        spec = {"model_dir": str(model_dir), "data": str(data), "epochs": size["epochs"], **TRAIN}
        lengths = sorted(studio_row_lengths(spec))
        mean = statistics.mean(lengths)
        spec["budget"] = int(round(TRAIN["batch"] * mean))
        q = lambda p: lengths[min(len(lengths) - 1, int(p * len(lengths)))]  # noqa: E731
        print(f"data: {len(lengths)} rows from {source}; tokens per row: median {q(0.5)}, mean {mean:.0f}, "
              f"p90 {q(0.9)}, p99 {q(0.99)}, max {lengths[-1]}")
        print(f"fixed: {TRAIN['batch']} rows per batch; dynamic: max_tokens_per_batch = {TRAIN['batch']} x "
              f"{mean:.0f} = {spec['budget']}; {size['epochs']} epoch(s) each")

        def each(i: int, name: str, r: dict[str, Any]) -> None:
            r["tok_s"], r["cpu_tok_s"] = r["real"] / r["train_s"], r["real"] / r["cpu_s"]
            print(f"  run {i + 1}: {name:7s} {r['train_s']:7.2f} s wall {r['cpu_s']:7.2f} s CPU  "
                  f"{r['tok_s']:9.1f} real tok/s  {r['batches']} batches", flush=True)
        results = run_arms(Path(__file__), ["fixed", "dynamic"], repeats, lambda i, name: {
            **spec, "dynamic": name == "dynamic", "out": str(root / f"run{i}-{name}")}, each, threads=a.threads)
    real = {r["real"] for rs in results.values() for r in rs}
    if len(real) != 1:
        raise SystemExit(f"arms trained on different token counts {real}: not comparable")
    med = {k: median([r["tok_s"] for r in rs]) for k, rs in results.items()}
    cpu_med = {k: median([r["cpu_tok_s"] for r in rs]) for k, rs in results.items()}
    out = [[k, len(rs), rs[0]["batches"], rs[0]["real"], rs[0]["padded"], 1 - rs[0]["real"] / rs[0]["padded"],
            median([r["train_s"] for r in rs]), med[k], cpu_med[k], rs[-1]["final_loss"]] for k, rs in results.items()]
    print()
    print(table(["batching", "runs", "batches", "real tokens", "padded tokens", "padding fraction", "median wall s",
                 "median real tok/s", "median real tok/CPU-s", "final loss"], out))
    print_load()
    wall, cpu = (paired_ratios(results, "dynamic", "fixed", k) for k in ("tok_s", "cpu_tok_s"))
    print(f"dynamic / fixed per block: wall {' '.join(f'{x:.3f}' for x in wall)}; "
          f"CPU {' '.join(f'{x:.3f}' for x in cpu)}")
    print(f"dynamic / fixed: ratio of medians {med['dynamic'] / med['fixed']:.3f} wall, "
          f"{cpu_med['dynamic'] / cpu_med['fixed']:.3f} CPU; median paired {median(cpu):.3f} CPU")
    print(f"ratio: {median(wall):.3f}  (dynamic / fixed real tokens/s, wall clock, median of paired runs; goal >= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
