"""How close the page's "about N here" is to the run it promises (the aim: within ±35% on an idle machine).

For each model: the plan the Settings tab derives (``autoconfig.suggest_settings``: the model, the 427 sample
reviews, task sentiment, this machine, the time budget), estimated exactly as the page estimates it
(``studio.app.run_estimate``: this machine's measured matmul speed, the runs in this benchmark's runs folder, the
rows tokenized by the model's tokenizer, the load now), then trained with ``python -m studio train`` and timed
(wall of the whole command, as a user waits for it). Each model runs ``--repeat`` times in a fresh runs folder:
the first estimate has no earlier run here (the matmul test), the next ones learn from the runs before them.

    python bench/estimate_accuracy.py --models tiny-demo smollm2-135m-instruct gemma3-270m --budget quick \\
        --repeat 2 --out /tmp/estimate [--data sample|corpora]

Run it alone on the machine (the estimate and the runs both read the load).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import time_v_report  # noqa: E402


def dataset_csv(kind: str, out: Path) -> Path:
    """The rows the page would be given: the 427 sample reviews, or ``corpora``: 160 real reviews from the package
    corpora of bench/review_corpora.py (80 English movie reviews, hundreds of tokens each, and 80 Chinese shop
    reviews): other lengths and languages than the sample the estimate's constants were set on."""
    if kind == "sample":
        return ROOT / "studio/assets/sample_reviews.csv"
    import csv
    from bench.review_corpora import build
    path = out / "corpora.csv"
    rows = build(80, 2, seed=11)["train"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["text", "label"])
        w.writeheader()
        w.writerows({"text": r["text"], "label": r["label"]} for r in rows)
    return path


def one(model: str, budget: str, out: Path, runs: Path, i: int, source: Path) -> dict:
    from studio.autoconfig import detect_hardware, suggest_settings
    from studio.config.run_config import Draft
    from studio.data.dataset import load_rows
    from studio.models import zoo
    from studio.runs import run_time
    from studio.app.run_estimate import _estimate
    data = out / f"{source.stem}.jsonl"
    if not data.is_file():
        subprocess.run([sys.executable, "-m", "studio", "convert", str(source), "--out", str(data)], cwd=ROOT,
                       check=True, capture_output=True)
    rows = load_rows(str(data))
    if zoo.is_builtin(model) and model != "tiny-demo":
        zoo.ensure_prepared(model)  # the preparation's own estimate is checked by the Model list, not here
    hw = detect_hardware(out)
    changes, _ = suggest_settings(model, len(rows), "sentiment", hw, budget)
    name = f"{model}-{budget}-{i}"
    cfg = Draft().replace(**changes, dataset=str(data), dataset_dir=str(out), output_dir=str(runs / name))
    cfg_path = out / f"{name}.yaml"
    cfg.save(cfg_path)
    t = time.time()
    est = _estimate(cfg, rows, hw.device, runs)
    estimate_s = time.time() - t
    timefile = out / f"{name}.time"
    with open(out / f"{name}.log", "w") as fh:
        rc = subprocess.call(["/usr/bin/time", "-v", "-o", str(timefile), sys.executable, "-m", "studio", "train",
                              str(cfg_path)], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    took = time_v_report(timefile)
    status = json.loads((runs / name / "status.json").read_text())
    return {"model": model, "budget": budget, "run": i, "rc": rc, "source": est.source, "history_runs": est.runs,
            "estimate_s": round(est.seconds, 1), "parts": est.parts, "slowdown": est.slowdown,
            "est_tokens": est.train_tokens, "est_tok_s": est.tokens_per_s, "wall_s": took["wall_s"],
            "cpu_s": took["cpu_s"], "ratio": round(est.seconds / took["wall_s"], 3),
            "within_35pct": abs(est.seconds / took["wall_s"] - 1) <= 0.35,
            "run_tokens": status.get("train_tokens"), "run_tok_s": round(status["train_tokens"] / status[
                "train_seconds"], 1) if status.get("train_tokens") else None,
            "run_start_s": round(status["train_started"] - status["started"], 1) if status.get("train_started")
            else None, "train_seconds": status.get("train_seconds"), "others_load": status.get("others_load"),
            "estimate_took_s": round(estimate_s, 2), "machine_gflops": round(run_time.machine_flops() / 1e9, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["tiny-demo", "smollm2-135m-instruct", "gemma3-270m"])
    ap.add_argument("--budget", default="quick", choices=["quick", "balanced", "best"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default="/tmp/estimate")
    ap.add_argument("--data", default="sample", choices=["sample", "corpora"],
                    help="sample: the 427 sample reviews; corpora: 160 package reviews (long English, short Chinese)")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    source = dataset_csv(a.data, out)
    print(f"load average at the start: {os.getloadavg()}", flush=True)
    for model in a.models:
        runs = out / f"runs-{model}-{a.budget}"
        shutil.rmtree(runs, ignore_errors=True)   # the first estimate of each model has no history here
        for i in range(a.repeat):
            print("BENCH_RESULT " + json.dumps(one(model, a.budget, out, runs, i, source)), flush=True)
    print(f"load average at the end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
