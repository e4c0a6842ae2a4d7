"""Before/after scoring speed on a real built-in model: python bench/eval_real.py [--model gemma3-270m]

What a user runs after training: ``python -m studio eval --model RUN --data held.jsonl --task sentiment
--compare-base --json``, timed as a whole process (CPU-seconds of the command and its children, wall, peak RSS).
The run is the model's shipped CPU recipe stopped after 2 steps (its speed is what is measured, not its accuracy);
the held-out file is 500 real reviews, ``bench.real_throughput.real_reviews(700, seed=3)`` rows 64-563 (sample
reviews + the package corpora), the same rows docs/logs/benchmarks-history.md section 10 used. The command scores
the base model and the trained one on every row, so CPU-seconds per model = the command's CPU-seconds / 2 (model
loading included).
Run it alone on a quiet machine; it prints the load average before and after.

``--before DIR`` (another checkout of the studio, e.g. ``git worktree add /tmp/before COMMIT``) times the same
command from that checkout too, in ABBA order (now, before, before, now, ...), and prints the paired ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.real_throughput import real_reviews  # noqa: E402

RECIPES = {"gemma3-270m": "presets/recipes/gemma3-270m-lora-cpu.yaml",
           "smollm2-135m-instruct": "presets/recipes/smollm2-135m-lora-cpu.yaml"}


def _timed(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return cpu, wall, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gemma3-270m", choices=sorted(RECIPES))
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the eval command (default 1)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--before", metavar="DIR", help="another checkout to time the same command from (ABBA)")
    a = ap.parse_args()
    rows, source = real_reviews(700, seed=3)
    held = rows[64:64 + a.rows]
    work = Path(tempfile.mkdtemp(prefix="eval-real-"))
    data = work / "held.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in held), encoding="utf-8")
    train = work / "train.jsonl"
    train.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[:64]), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1",
           "OMP_NUM_THREADS": str(a.threads)}
    run = work / "run"
    _timed([sys.executable, "-m", "studio", "train", RECIPES[a.model], "--quiet", "--set", f"dataset={train}",
            "--set", f"output_dir={run}", "--set", "max_steps=2", "--set", "val_size=0", "--set", "save_steps=2"], env)
    print(f"model {a.model}; {len(held)} held-out rows ({source}); torch threads {a.threads}; "
          f"load average before {os.getloadavg()[0]:.2f}")
    cmd = [sys.executable, "-m", "studio", "eval", "--model", str(run), "--data", str(data), "--task", "sentiment",
           "--compare-base", "--json"]
    arms = {"now": ROOT} | ({"before": Path(a.before).resolve()} if a.before else {})
    order = [arm for i in range(a.repeats) for arm in (list(arms) if i % 2 == 0 else list(arms)[::-1])]
    results: dict[str, list[float]] = {arm: [] for arm in arms}
    for i, arm in enumerate(order):
        cpu, wall, done = _timed(cmd, {**env, "PYTHONPATH": str(arms[arm])}, cwd=arms[arm])
        out = json.loads(done.stdout[done.stdout.index("{"):])
        results[arm].append(cpu)
        print(f"{i + 1}. {arm}: {cpu:.1f} CPU-s for the command ({cpu / 2:.1f} per model), {wall:.1f} s wall; "
              f"accuracy base {out['base']['accuracy']:.3f} -> run {out['accuracy']:.3f}; rows/s base "
              f"{out['base']['rows_per_s']:.2f}, run {out['rows_per_s']:.2f}", flush=True)
    for arm, cpus in results.items():
        print(f"{arm}: median {statistics.median(cpus):.1f} CPU-s for the command, "
              f"{statistics.median(cpus) / 2:.1f} per model")
    if a.before:
        pairs = [b / n for n, b in zip(results["now"], results["before"])]
        print("before / now, paired: " + ", ".join(f"{r:.2f}" for r in pairs) +
              f"; median {statistics.median(pairs):.2f}x")
    print(f"peak RSS of the children {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20:.2f} GiB; "
          f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
