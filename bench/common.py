"""Helpers shared by the engine benchmarks: review data, the model folder, child processes, tables.

Every measured arm runs in its own fresh ``python`` subprocess (same start conditions:
nothing imported, nothing cached, same thread count), so one arm's warm caches or
allocator state never help or hurt the next. Results come back as one JSON line.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parent.parent
RESULT_PREFIX = "BENCH_RESULT "
CHILD_ENV = {"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
             "TRANSFORMERS_VERBOSITY": "error"}
INSTRUCTION = "Classify the sentiment of this review as positive or negative."

_POS = ["great", "works well", "very good", "happy with it", "excellent value", "太好了", "很满意"]
_NEG = ["terrible", "broke in a week", "awful", "a waste of money", "disappointing", "太差了", "不满意"]
_THINGS = ["phone", "pair of shoes", "book", "kettle", "headset", "charger", "手机", "衣服"]
_FILLER = ["I bought it last month for my sister.", "Delivery took four days and the box was dented.",
           "The colour is a little darker than in the photos.", "Setup was easy and the manual is clear.",
           "I compared it with two other brands before ordering.", "Customer service answered within a day.",
           "After a few weeks of daily use my opinion has not changed.", "The price went up since I ordered."]


def _extra_parts(rng: random.Random) -> int:
    """How many more pieces a review gets: ~45% none, geometric after that, and a 5% tail of essays."""
    extra = 0
    while rng.random() < 0.55 and extra < 30:
        extra += 1
    if rng.random() < 0.05:
        extra += rng.randint(10, 25)
    return extra


def skewed_reviews(n: int, seed: int = 0) -> list[dict[str, str]]:
    """Labelled reviews with real-world lengths: most are one line, a long tail runs to paragraphs.

    The fallback when bench/reviews.py is absent.
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        head = f"The {rng.choice(_THINGS)} is {rng.choice(_POS if positive else _NEG)}."
        body = " ".join([head] + [rng.choice(_FILLER) for _ in range(_extra_parts(rng))])
        rows.append({"instruction": INSTRUCTION, "input": body, "output": "positive" if positive else "negative"})
    return rows


def review_rows(n: int, seed: int = 0, long_tail: bool = True) -> tuple[list[dict[str, str]], str]:
    """Alpaca rows of skewed length: many short reviews, a long tail of long ones.

    Texts come from bench/reviews.py's ``make_reviews`` when it is there (realistic English
    and Chinese reviews, each a few clauses long); a long review is then several reviews of
    the same language and label run together, as multi-paragraph reviews read. Without that
    module, ``skewed_reviews``. ``long_tail=False`` keeps every review as generated (short).
    Returns the rows and a description of their source.
    """
    try:
        from bench.reviews import SENTIMENT_INSTRUCTION, make_reviews
    except ImportError:
        return skewed_reviews(n, seed), "bench/common.py skewed_reviews (bench/reviews.py not found)"
    rng = random.Random(seed)
    pool = make_reviews(4 * n, seed=seed)
    by_kind: dict[tuple[str, str], list[str]] = {}
    for r in pool:
        by_kind.setdefault((r["lang"], r["label"]), []).append(r["text"])
    rows = []
    for r in pool[:n]:
        same = by_kind[(r["lang"], r["label"])]
        sep = " " if r["lang"] == "en" else ""
        extra = _extra_parts(rng) if long_tail else 0
        text = sep.join([r["text"]] + [rng.choice(same) for _ in range(extra)])
        rows.append({"instruction": SENTIMENT_INSTRUCTION, "input": text, "output": r["label"]})
    return rows, ("bench/reviews.py make_reviews" +
                  (", long tail = several same-label reviews joined" if long_tail else ", as generated"))


def write_jsonl(path: Path, rows: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def build_model(folder: Path, rows: list[dict], dims: dict[str, int]) -> Path:
    """A random-init tiny Llama + tokenizer fitted to ``rows`` (built once, outside every timing)."""
    from studio.models.loading import build_tiny_llama, demo_texts
    return build_tiny_llama(folder, demo_texts(rows), seed=0, **dims)


def run_child(script: Path, mode: str, spec: dict[str, Any], threads: int = 1, timeout: int = 1800,
              python: str | None = None) -> dict[str, Any]:
    """Run ``script --child MODE --spec JSON`` in a fresh interpreter (``python``, default this one); return its
    result dict.

    ``threads`` pins torch's intra-op threads (OMP/MKL): on a small shared machine, two
    OpenMP threads fighting other processes for two cores make step times swing by 10x;
    one thread per arm keeps the comparison stable (both arms always get the same setting).

    Raises:
        RuntimeError: the child failed or printed no result (its stderr tail is included).
    """
    env = {**os.environ, **CHILD_ENV, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    if os.environ.get("PYTHONPATH"):  # keep what the caller added (bench/gpu_check.sh's carried packages)
        env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{os.environ['PYTHONPATH']}"
    proc = subprocess.run([python or sys.executable, str(script), "--child", mode, "--spec", json.dumps(spec)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    raise RuntimeError(f"{mode} child failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def ab_parser(doc: str, quick: str, repeats: str, threads: bool = True) -> argparse.ArgumentParser:
    """The flags every A/B bench shares: --quick (the CI size), --repeats, --threads (torch threads per child
    run), and the hidden --child ARM --spec JSON that a child run is started with (see ``run_arms``)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument("--repeats", type=int, help=repeats)
    if threads:
        ap.add_argument("--threads", type=int, default=1,
                        help="torch threads per run (default 1: stable on shared CPUs)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    return ap


def run_as_child(args: argparse.Namespace, arm: Callable[[str, dict[str, Any]], dict[str, Any]]) -> bool:
    """Started as a child (``--child ARM``): run ``arm(ARM, spec)`` and print its result line; True if so."""
    if not args.child:
        return False
    emit_result(arm(args.child, json.loads(args.spec)))
    return True


def run_arms(script: Path, arms: list[str], repeats: int, spec: Callable[[int, str], dict[str, Any]],
             each: Callable[[int, str, dict[str, Any]], None], threads: int = 1,
             pythons: dict[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every arm ``repeats`` times in ABBA order, each run a fresh child of ``script`` on ``spec(i, arm)``
    (with the interpreter ``pythons[arm]`` where given, e.g. another venv's); ``each(i, arm, result)`` checks
    the result, adds derived numbers and prints the run's line."""
    results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    for i, arm in enumerate(interleaved(arms, repeats)):
        r = run_child(script, arm, spec(i, arm), threads=threads, python=(pythons or {}).get(arm))
        each(i, arm, r)
        results[arm].append(r)
    return results


def time_v_report(path: Path) -> dict[str, float]:
    """CPU seconds, wall seconds and peak RSS of a command from the file ``/usr/bin/time -v -o FILE`` wrote."""
    import re
    text = Path(path).read_text()

    def num(label: str) -> float:
        return float(re.search(re.escape(label) + r":\s*([\d.]+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time.*?:\s*([\d:.]+)\s*$", text, re.M).group(1).split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    return {"cpu_s": round(num("User time (seconds)") + num("System time (seconds)"), 1), "wall_s": round(wall_s, 1),
            "peak_rss_gb": round(num("Maximum resident set size (kbytes)") / 2**20, 2)}


def print_load() -> None:
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")


def emit_result(result: dict[str, Any]) -> None:
    """The one line a child prints for its parent to read."""
    print(RESULT_PREFIX + json.dumps(result), flush=True)


class TrainTimer:
    """Times every ``transformers.Trainer.train`` call in this process: wall and CPU seconds.

    Patched on the class so both arms are timed by the same code over the same span
    (the training loop only: no imports, model loading or tokenization). CPU time is the
    steadier number on a busy shared machine; wall time is what a user waits.
    """

    def __init__(self) -> None:
        from transformers import Trainer
        self.wall = 0.0
        self.cpu = 0.0
        real = Trainer.train

        def timed(trainer: Any, *args: Any, **kwargs: Any) -> Any:
            w, c = time.perf_counter(), time.process_time()
            try:
                return real(trainer, *args, **kwargs)
            finally:
                self.wall += time.perf_counter() - w
                self.cpu += time.process_time() - c

        Trainer.train = timed  # type: ignore[method-assign]


def interleaved(arms: list[str], repeats: int) -> list[str]:
    """ABBA order (A B B A A B ...): drifts in machine speed hit both arms alike."""
    order: list[str] = []
    for r in range(repeats):
        order += arms if r % 2 == 0 else list(reversed(arms))
    return order


def paired_ratios(results: dict[str, list[dict[str, Any]]], num: str, den: str, key: str) -> list[float]:
    """``num/den`` of ``key`` within each ABBA block (runs that sat next to each other in time).

    Why: on a shared machine the load drifts over minutes; two adjacent runs see nearly the
    same load, so the median of per-block ratios is far steadier than a ratio of medians.
    """
    return [a[key] / b[key] for a, b in zip(results[num], results[den])]


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table (pasted as-is into docs/BENCHMARKS.md)."""
    cells = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cells])


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3f}"
    return str(v)


def machine_info() -> dict[str, str]:
    """What the numbers were measured on (goes into the docs next to them)."""
    import torch
    import transformers
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        kb = int(next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")).split()[1])
        ram = f"{kb / 2**20:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()  # = nproc
    return {"nproc": str(cores), "cpu": cpu, "ram": ram, "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "load_avg_1m": f"{os.getloadavg()[0]:.2f}"}


def print_machine(threads: int | None = None) -> None:
    info = machine_info()
    print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    if threads is not None:
        print(f"torch threads per run: {threads}")


def sized(args: argparse.Namespace, quick: dict[str, Any], full: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """(the QUICK or FULL size, runs per arm): --quick picks the size, --repeats overrides its repeats."""
    size = quick if args.quick else full
    return size, args.repeats or size["repeats"]


def studio_run_config(spec: dict[str, Any], **extra: Any) -> Any:
    """The studio arm's RunConfig: a full fine-tune in fp32 of ``spec``'s model on its data (model_dir, data, out,
    cutoff_len, batch, lr, epochs, logging_steps, seed), linear schedule, no checkpoint inside the timed span.

    Gradient checkpointing off unless ``extra`` turns it on: the plain baselines do not recompute the forward, and
    RunConfig's default (on, as LLaMA-Factory's) made the studio arm of throughput_vs_trainer do ~30% more work, so
    that its CI check compared unequal work and failed (ratio 1.03; docs/logs/benchmarks-history.md section 7)."""
    from studio.config.run_config import RunConfig
    return RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                     finetuning_type="full", cutoff_len=spec["cutoff_len"], per_device_train_batch_size=spec["batch"],
                     learning_rate=spec["lr"], num_train_epochs=spec["epochs"], lr_scheduler_type="linear",
                     logging_steps=spec["logging_steps"], save_steps=10**6, seed=spec["seed"], precision="fp32",
                     plot_loss=False, **{"gradient_checkpointing": False, **extra})


def studio_row_lengths(spec: dict[str, Any]) -> list[int]:
    """Token lengths of the rows as the studio's engine tokenizes them (``spec``: model_dir, data, cutoff_len,
    seed), with the ``studio`` template that the plain baselines reproduce."""
    from studio.config.run_config import RunConfig
    from studio.data.dataset import load_rows
    from studio.engine.run import prepare_data
    from studio.models.loading import load_tokenizer
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], cutoff_len=spec["cutoff_len"],
                    seed=spec["seed"], template="studio")
    train, _, _ = prepare_data(cfg, load_tokenizer(spec["model_dir"]), load_rows(spec["data"]))
    return [len(f["input_ids"]) for f in train]


def plain_pad_collate(pad_token_id: int) -> Any:
    """The baselines' collator: what a plain Trainer script writes (right-pad ids, mask and -100 labels)."""
    import torch

    def collate(batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        n = max(len(f["input_ids"]) for f in batch)
        pad = lambda xs, v: [x + [v] * (n - len(x)) for x in xs]  # noqa: E731
        return {"input_ids": torch.tensor(pad([f["input_ids"] for f in batch], pad_token_id)),
                "attention_mask": torch.tensor(pad([f["attention_mask"] for f in batch], 0)),
                "labels": torch.tensor(pad([f["labels"] for f in batch], -100))}
    return collate


def timed_command(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, str]:
    """Run a whole command as a child: (wall seconds, the child's CPU-seconds, its stdout); exits with its output's
    tail when it fails (a bench arm that failed has no number to report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def write_text_label_csv(rows: list[dict[str, str]], path: Path) -> Path:
    """Rows with ``text`` and ``label`` as the spreadsheet a person would convert (two columns, a header)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["text", "label"])
        w.writeheader()
        w.writerows({"text": r["text"], "label": r["label"]} for r in rows)
    return path


def script_child(script: Path, args: list[str], log: Path, threads: int, marker: str) -> dict[str, Any]:
    """One child process of a bench ``script`` (its own ``args`` verb), its output in ``log``: the JSON of its
    line starting with ``marker``, its CPU-seconds (user + sys), wall seconds and peak RSS (``os.wait4``).

    Raises:
        RuntimeError: the child failed, with its log's tail.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "TOKENIZERS_PARALLELISM": "false"}
    t = time.perf_counter()
    with open(log, "w") as fh:
        p = subprocess.Popen([sys.executable, str(script), *args], cwd=ROOT, env=env, stdout=fh,
                             stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    out: dict[str, Any] = {"rc": os.waitstatus_to_exitcode(status), "cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
                           "wall_s": round(time.perf_counter() - t, 1),
                           "peak_rss_gib": round(ru.ru_maxrss / 2**20, 2)}  # Linux: ru_maxrss in KiB
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(marker):
            out.update(json.loads(line[len(marker):]))
    if out["rc"]:
        raise RuntimeError(f"{args[0]} failed (rc {out['rc']}): " + log.read_text(errors="replace")[-3000:])
    return out
