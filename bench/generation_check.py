"""The worked example's numbers: an instruction task built from the sample reviews, base vs tuned, and its cost.

    python bench/generation_check.py [--quick] [--out DIR] [--run RUN]

The task (docs/GUIDE.md, "A generation run"): "Answer with the review's language and sentiment as JSON", the
answer ``{"language": "zh", "sentiment": "positive"}`` made from ``studio/assets/sample_reviews.csv``'s own
lang and label columns (427 rows). Gemma-3-270M is trained on it with the CLI's defaults and 200 rows held out
(``val_size: 200``), then ``python -m studio eval --model RUN --task generate --compare-base --json`` scores those
200 rows with the base model and the tuned one: the command is timed as a whole process (wall, CPU-seconds of it
and its children), which is the issue's goal (<= 3 minutes for 200 rows, base and tuned, model load included).
Prints the scorecard and ``uptime`` before and after (run it alone).

``--quick`` (CI): tiny-demo, 120 rows, 20 held out. ``--run RUN``: no training, time the check of a run already
trained this way (its own held-out rows).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import timed_command  # noqa: E402

INSTRUCTION = "Answer with the review's language and sentiment as JSON."


def json_task(limit: int | None = None) -> list[dict[str, str]]:
    """The sample reviews as instruction rows whose answer is a JSON object of the review's language and label."""
    with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [{"instruction": INSTRUCTION, "input": r["text"],
             "output": json.dumps({"language": r["lang"], "sentiment": r["label"]}, ensure_ascii=False)}
            for r in rows[:limit]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny-demo, 120 rows (CI size)")
    ap.add_argument("--out", default=None, help="folder for the data and the run (default: a temporary one)")
    ap.add_argument("--run", default=None, help="check this finished run instead of training one")
    a = ap.parse_args()
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    if a.run:
        run = Path(a.run)
        status = json.loads((run / "status.json").read_text(encoding="utf-8"))
        _check(run, status, env)
        return
    work = Path(a.out or tempfile.mkdtemp(prefix="gen-check-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = json_task(120 if a.quick else None)
    data = work / "reviews-json.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    model, held = ("tiny-demo", 20) if a.quick else ("gemma3-270m", 200)
    py = [sys.executable, "-m", "studio"]
    if not a.quick:  # the one-time preparation stays out of the timed commands
        timed_command([sys.executable, "-c", f"from studio.models.zoo import ensure_prepared; ensure_prepared({model!r})"],
             env)
    run = work / "run"
    cfg = work / "run.yaml"
    cfg.write_text(f"model_name_or_path: {model}\ndataset: {data}\noutput_dir: {run}\nval_size: {held}\n"
                   "overwrite_output_dir: true\n", encoding="utf-8")
    wall, cpu, _ = timed_command(py + ["train", str(cfg), "--quiet"], env)
    status = json.loads((run / "status.json").read_text(encoding="utf-8"))
    print(f"{len(rows)} rows ({held} held out), {model}: trained in {wall:.0f} s wall, {cpu:.0f} CPU-s, "
          f"{status['step']} of {status['total_steps']} steps; kept: {status.get('kept_best')}", flush=True)
    _check(run, status, env)


def _check(run: Path, status: dict, env: dict[str, str]) -> None:
    """Time the generation check of ``run`` as a whole process and print its scorecard and BENCH_RESULT."""
    py = [sys.executable, "-m", "studio"]
    eval_cmd = py + ["eval", "--model", str(run), "--task", "generate", "--compare-base", "--json"]
    wall, cpu, out = timed_command(eval_cmd, env)
    result = json.loads(out)
    print(f"generation check, base and tuned on {result['n']} rows: {wall:.1f} s wall, {cpu:.1f} CPU-s "
          f"(goal <= 180 s wall)")
    print("| score | base | tuned | change |")
    print("|---|---|---|---|")
    for key in ("exact_match", "chrf", "bleu", "rouge_l", "answer_loss", "perplexity", "length_ratio"):
        b, t = result["base"][key], result["tuned"][key]
        print(f"| {key} | {b:.3f} | {t:.3f} | {t - b:+.3f} |")
    for side in ("base", "tuned"):
        s = result[side]["structure"]
        if s:
            print(f"| {side}: parses as {s['kind']} | {s['parses']:.3f} | fields match | {s['fields_match']:.3f} |")
    print("BENCH_RESULT " + json.dumps({"eval_wall_s": wall, "eval_cpu_s": cpu, "n": result["n"],
                                        "base": result["base"], "tuned": result["tuned"],
                                        "kept_best": status.get("kept_best")}, ensure_ascii=False))
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
