"""GRPO (or RLOO) beside SFT on a labels or a JSON-answer run:
python bench/grpo_bench.py [--task labels|json] [--steps N] [--stage grpo|rloo]

What stage grpo (TRL's GRPOTrainer with the ``row_label`` reward, studio/engine/online_rl.py), or with ``--stage``
another stage of the table that samples answers (rloo: TRL's RLOOTrainer, the same rewards), does and costs beside
stage sft on the same rows, steps, batch and learning rate, each arm a fresh ``python -m studio train`` process on
the CPU with the built-in tiny-demo model (the arms below are named for grpo; with ``--stage rloo`` they are rloo's):

- ``sft``: supervised fine-tuning, N steps;
- ``grpo``: GRPO from the base, N steps (4 sampled answers per prompt, reward 1 where the answer is the row's label);
- ``sft+grpo``: GRPO for N steps starting from the ``sft`` arm's trained model, the usual order;
- ``sft-2x``: SFT for 2N steps, the same steps in all as ``sft+grpo``.

Every arm has the CLI's derived plan for tiny-demo, written out so the sft+grpo arm (whose model is a folder, not
tiny-demo) gets it too: full fine-tuning, batch 16, learning rate 0.002, weight decay 1.0, template studio,
cutoff_len 256; and what the comparison fixes: N steps, a constant learning rate, no held-out rows, keep-best and
early stop off, so each arm trains exactly its steps.

Data: the studio's 427 sample reviews (studio/assets/sample_reviews.csv, English and Chinese): the first 300 train
(the run holds none out), the other 127 are the test set each run is scored on by ``python -m studio eval``.
``--task labels`` (default): converted with ``python -m studio convert --task sentiment``, reward ``row_label``, scored
by accuracy. ``--task json``: the generation check's worked example (bench/generation_check.py: answer with the
review's language and sentiment as JSON), reward ``json_fields``, scored by ``eval --task generate`` (greedy):
exact match, the share of answers that parse as JSON, the share whose fields match. sft and grpo run in ABBA order
(sft, grpo, grpo, sft), then sft+grpo once from each sft run, then sft-2x once. Printed: each train command's wall time and
CPU-seconds (its process and children, ``RUSAGE_CHILDREN``), steps, the final logged loss / reward, test accuracy;
``uptime`` before and after.
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

from bench.common import timed_command, write_text_label_csv  # noqa: E402
from studio.stages import STAGES  # noqa: E402


def _last(run: Path, key: str) -> float | None:
    events = [json.loads(line) for line in (run / "trainer_log.jsonl").read_text(encoding="utf-8").splitlines()]
    values = [e[key] for e in events if isinstance(e.get(key), (int, float))]
    return values[-1] if values else None


def _scores(result: dict, task: str) -> dict[str, float]:
    """The test scores of ``python -m studio eval --json``: accuracy for labels; exact match and the JSON
    structure's parse and field-match shares for the JSON task (the generation check's tuned side)."""
    if task == "labels":
        return {"accuracy": float(result["accuracy"])}
    tuned = result.get("tuned") or result
    structure = tuned.get("structure") or {}
    return {"exact_match": float(tuned["exact_match"]), "parses": float(structure.get("parses", 0.0)),
            "fields_match": float(structure.get("fields_match", 0.0))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=["labels", "json"], default="labels")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--stage", choices=[n for n, s in STAGES.items() if s.rewards], default="grpo",
                    help="the stage that samples answers (the stage table's rows with rewards)")
    ap.add_argument("--quick", action="store_true", help="4 steps per arm (a check that it runs, not a measurement)")
    ap.add_argument("--out", default=None, help="folder for the data and runs (default: a temporary one)")
    a = ap.parse_args()
    if a.quick:
        a.steps = 4
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    work = Path(a.out or tempfile.mkdtemp(prefix=f"{a.stage}-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    py = [sys.executable, "-m", "studio"]
    if a.task == "labels":
        for name, part in (("train", rows[:300]), ("test", rows[300:])):
            timed_command(py + ["convert", str(write_text_label_csv(part, work / f"{name}.csv")), "--out", str(work / f"{name}.jsonl"),
                       "--task", "sentiment", "--replace"], env)
    else:
        from bench.generation_check import json_task
        task_rows = json_task()
        for name, part in (("train", task_rows[:300]), ("test", task_rows[300:])):
            (work / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part),
                                                encoding="utf-8")
    reward = "row_label" if a.task == "labels" else "json_fields"
    common = {"model_name_or_path": "tiny-demo", "dataset": str(work / "train.jsonl"), "val_size": 0,
              "max_steps": a.steps, "logging_steps": 5, "save_steps": 100_000, "plot_loss": False,
              "overwrite_output_dir": True, "lr_scheduler_type": "constant", "load_best_model_at_end": False,
              "early_stopping_patience": 0, "finetuning_type": "full", "per_device_train_batch_size": 16,
              "learning_rate": 0.002, "weight_decay": 1.0, "template": "studio", "cutoff_len": 256}
    rl = a.stage
    arms = {"sft": {"stage": "sft"}, rl: {"stage": rl, "reward": reward},
            "sft-2x": {"stage": "sft", "max_steps": 2 * a.steps}}
    order = [("sft", 1), (rl, 1), (rl, 2), ("sft", 2), (f"sft+{rl}", 1), (f"sft+{rl}", 2), ("sft-2x", 1)]
    print(f"data: studio/assets/sample_reviews.csv ({a.task}), 300 train / {len(rows) - 300} test; tiny-demo; "
          f"{a.steps} steps; stage {rl}, reward {reward}; work folder {work}", flush=True)
    scores = ("accuracy",) if a.task == "labels" else ("exact_match", "parses", "fields_match")
    print("| arm | rep | train wall s | train CPU-s | steps | last loss | last reward | " +
          " | ".join(f"test {k}" for k in scores) + " |")
    print("|---|---|---|---|---|---|---|" + "---|" * len(scores))
    results: list[dict] = []
    for arm, rep in order:
        run = work / f"run-{arm.replace('+', '-')}-{rep}"
        extra = arms.get(arm) or {"stage": rl, "reward": reward,
                                  "model_name_or_path": str(work / f"run-sft-{rep}" / "model")}
        cfg = {**common, "output_dir": str(run), **extra}
        (run.parent / f"{run.name}.yaml").write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in cfg.items())
                                                     + "\n", encoding="utf-8")
        wall, cpu, _ = timed_command(py + ["train", str(run.parent / f"{run.name}.yaml"), "--quiet"], env)
        status = json.loads((run / "status.json").read_text(encoding="utf-8"))
        _, _, out = timed_command(py + ["eval", "--model", str(run), "--data", str(work / "test.jsonl"), "--json",
                               "--task", "sentiment" if a.task == "labels" else "generate"], env)
        got = _scores(json.loads(out), a.task)
        loss, last_reward = _last(run, "loss"), _last(run, "reward")
        results.append({"arm": arm, "rep": rep, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                        "steps": status["step"], "last_loss": loss, "last_reward": last_reward, **got})
        shown = [f"{v:.3f}" if isinstance(v, float) else "–" for v in (loss, last_reward, *got.values())]
        print(f"| {arm} | {rep} | {wall:.0f} | {cpu:.0f} | {status['step']} | " + " | ".join(shown) + " |",
              flush=True)
    print("BENCH_RESULT " + json.dumps(results))
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
