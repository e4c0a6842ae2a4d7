"""The page's first run with a real model: what a newcomer gets who converts the sample and picks a built-in model.

Why it exists: the README's first-run path names a real model only if it fits the laptop budget. This
runs exactly the settings the Settings tab derives without a preset (``autoconfig.suggest_settings``: model, the
427 sample rows, task sentiment, this machine, the chosen time budget), trains them with ``python -m studio train``
under ``/usr/bin/time -v`` (wall, CPU, peak RSS of the whole command, model preparation excluded), scores the
held-out rows with ``python -m studio eval --json``, and prints the time the Model list promised beside what it took.

    python bench/first_run_real.py --models smollm2-135m-instruct gemma3-270m --budget balanced --out runs/first
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import time_v_report  # noqa: E402


def _timed(cmd: list[str], log: Path) -> dict:
    """Run ``cmd`` under ``/usr/bin/time -v`` with torch's default threads (what a newcomer's run gets)."""
    timefile = log.with_suffix(".time")
    with open(log, "w") as fh:
        rc = subprocess.call(["/usr/bin/time", "-v", "-o", str(timefile)] + cmd, cwd=ROOT, stdout=fh,
                             stderr=subprocess.STDOUT)
    return {"rc": rc, **time_v_report(timefile)}


def run(model: str, budget: str, out: Path) -> dict:
    from studio.models import zoo
    from studio.autoconfig import detect_hardware, suggest_settings
    from studio.config.run_config import Draft
    from studio.app.model_list import model_choices
    out.mkdir(parents=True, exist_ok=True)
    data = out / "reviews.jsonl"
    if not data.is_file():
        subprocess.run([sys.executable, "-m", "studio", "convert", "studio/assets/sample_reviews.csv", "--out",
                        str(data)], cwd=ROOT, check=True, capture_output=True)
    rows = sum(1 for _ in open(data, encoding="utf-8"))
    if zoo.is_builtin(model) and model != "tiny-demo":
        zoo.ensure_prepared(model)  # once per machine; not part of the timed run
    hw = detect_hardware(out)
    changes, _ = suggest_settings(model, rows, "sentiment", hw, budget)
    run_dir = out / f"{model}-{budget}"
    cfg = Draft().replace(**changes, dataset=str(data), dataset_dir=str(out), output_dir=str(run_dir))
    cfg_path = out / f"{model}-{budget}.yaml"
    cfg.save(cfg_path)
    promised = dict((v, label) for label, v in model_choices(hw, rows, "sentiment", "en")).get(model, "")
    train = _timed([sys.executable, "-m", "studio", "train", str(cfg_path)], out / f"{model}-{budget}-train.log")
    status = json.loads((run_dir / "status.json").read_text()) if (run_dir / "status.json").is_file() else {}
    ev = subprocess.run([sys.executable, "-m", "studio", "eval", "--model", str(run_dir), "--json"], cwd=ROOT,
                        capture_output=True, text=True)
    acc = json.loads(ev.stdout) if ev.returncode == 0 else {"error": ev.stderr.strip()[-300:]}
    return {"model": model, "budget": budget, "rows": rows, "steps": status.get("total_steps"),
            "train_seconds": status.get("train_seconds"), "final_loss": status.get("final_loss"),
            "lr": cfg.learning_rate, "batch": cfg.per_device_train_batch_size,
            "accum": cfg.gradient_accumulation_steps, "epochs": cfg.num_train_epochs, **train,
            "model_list_label": promised, "heldout_accuracy": acc.get("accuracy"), "heldout_n": acc.get("n"),
            "eval_error": acc.get("error")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma3-270m"])
    ap.add_argument("--budget", default="balanced", choices=["quick", "balanced", "best"])
    ap.add_argument("--out", default="runs/first")
    a = ap.parse_args()
    for model in a.models:
        r = run(model, a.budget, (ROOT / a.out).resolve())
        print("BENCH_RESULT " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
