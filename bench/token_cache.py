"""Time to first training step, first run vs a run with tokenized data cached: python bench/token_cache.py [--quick]

Goal: the cached run starts >= 5x sooner on a 50k-row file. Both arms
are studio's ``run_training`` on the same file, model and settings, in fresh subprocesses:

* ``first``: an empty token cache (``STUDIO_TOKEN_CACHE`` points at a new folder), so the run
  tokenizes every row and stores the result;
* ``cached``: a cache folder filled by an earlier (untimed) run, so the run loads the features.

Time to first step = from calling ``run_training`` to the start of the first optimizer step
(reading the file, loading the model, tokenizing or loading, building the Trainer). Arms
alternate ABBA; the median of paired ratios is reported.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (ab_parser, build_model, median, paired_ratios, print_load, print_machine, review_rows,
                          run_arms, run_as_child, run_child, sized, table, write_jsonl)

DIMS = {"hidden": 128, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 256}  # tiny-demo size
FULL = {"rows": 50_000, "repeats": 2}
QUICK = {"rows": 5_000, "repeats": 1}


def arm(spec: dict[str, Any]) -> dict[str, Any]:
    os.environ["STUDIO_TOKEN_CACHE"] = spec["cache"]
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.engine.studio_trainer import StudioTrainer
    first: list[float] = []
    real_step = StudioTrainer.training_step

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not first:
            first.append(time.perf_counter())
        return real_step(self, *args, **kwargs)

    StudioTrainer.training_step = step  # type: ignore[method-assign]
    import studio.engine.run as engine_run
    real_prepare, spans = engine_run.prepare_data, []

    def prepare(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        out = real_prepare(*args, **kwargs)
        spans.append(time.perf_counter() - t)
        return out

    engine_run.prepare_data = prepare
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="full", cutoff_len=256, per_device_train_batch_size=8, max_steps=1,
                    logging_steps=1, save_steps=10**6, precision="fp32", plot_loss=False, val_size=0.02)
    t0 = time.perf_counter()
    summary = run_training(cfg)
    return {"ttfs": first[0] - t0, "prepare_s": spans[0], "train_rows": summary["train_rows"],
            "hit": summary["tokenized_from_cache"]}


def main(argv: list[str] | None = None) -> int:
    ap = ab_parser(__doc__, "CI size: 5,000 rows, 1 repeat", "runs per arm (default 2, quick 1)", threads=False)
    ap.add_argument("--rows", type=int, help="rows in the file (default 50,000; quick 5,000)")
    a = ap.parse_args(argv)
    if run_as_child(a, lambda name, spec: arm(spec)):
        return 0
    size, repeats = sized(a, QUICK, FULL)
    n = a.rows or size["rows"]
    print_machine()
    with tempfile.TemporaryDirectory(prefix="bench_tokcache_") as tmp:
        root = Path(tmp)
        rows, source = review_rows(n, seed=3)
        data = write_jsonl(root / "reviews.jsonl", rows)
        model_dir = build_model(root / "model", rows[:2000], DIMS)
        spec = {"model_dir": str(model_dir), "data": str(data)}
        warm = str(root / "cache-warm")
        prep = run_child(Path(__file__), "cached", {**spec, "cache": warm, "out": str(root / "prep")})
        print(f"data: {n} rows from {source} ({data.stat().st_size / 2**20:.1f} MiB); the warm-up run (untimed) "
              f"filled the cache in {prep['ttfs']:.1f} s to first step; {prep['train_rows']} training rows")

        def each(i: int, name: str, r: dict[str, Any]) -> None:
            if r["hit"] != (name == "cached"):
                raise SystemExit(f"run {i + 1} ({name}) had cache hit = {r['hit']}: the bench is broken")
            print(f"  run {i + 1}: {name:6s} {r['ttfs']:7.2f} s to first step, of which {r['prepare_s']:6.2f} s "
                  f"data preparation (tokenize or load)", flush=True)
        results = run_arms(Path(__file__), ["first", "cached"], repeats, lambda i, name: {
            **spec, "cache": str(root / f"cache-cold-{i}") if name == "first" else warm, "out": str(root / f"run{i}")},
            each)
    out = [[k, len(rs), median([r["ttfs"] for r in rs]), min(r["ttfs"] for r in rs), max(r["ttfs"] for r in rs),
            median([r["prepare_s"] for r in rs])] for k, rs in results.items()]
    print()
    print(table(["arm", "runs", "median s to first step", "min s", "max s", "median s data preparation"], out))
    prep = paired_ratios(results, "first", "cached", "prepare_s")
    print(f"data preparation, first / cached per block: {' '.join(f'{x:.2f}' for x in prep)}; "
          f"median {median(prep):.2f}")
    print_load()
    ratios = paired_ratios(results, "first", "cached", "ttfs")
    print(f"first / cached per block: {' '.join(f'{x:.2f}' for x in ratios)}")
    print(f"ratio: {median(ratios):.3f}  (first-run / cached-run time to first step, median of paired runs; "
          f"goal >= 5 on 50k rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
