"""8B and 70B shapes on one lent card, fair and in time: python bench/gpu_8b.py --json OUT.json --deadline S [--dry-run]

Sections, in this order (the one a short call must not lose first), each arm a fresh child process so every CUDA
peak is that arm's own, and this process never touches CUDA (the model folders are drawn in a child too):

1. ``qlora70b``: a Llama-3-70B-shape QLoRA through the studio's engine (its checkpointing, LoRA, kernels, batching,
   trainer); only the load is replaced, by a base built one NF4 layer at a time on the card (bench/gpu_layerwise.py:
   no 70B checkpoint fits the lent disk or the time). The estimator's figure beside the measured peak.
2. ``lora`` / ``qlora``: Llama-3.1-8B shape, random weights, rows of 512-2048 tokens (half answer), LoRA r 16 on
   every linear layer (QLoRA: NF4 base). ``studio`` (studio.engine.run_training) against ``savvy`` (Trainer + peft +
   SDPA + checkpointing + Liger's fused loss, or transformers' ``logits_to_keep`` where liger-kernel is missing),
   ABBA, after a ``warm`` child compiled Liger's Triton kernels for these widths into the disk cache (the 70B row's
   own compile falls in its untimed warm-up steps). The savvy arm trains the
   studio arm's batches: the same rows and tokens in every step. Tokens are counted in the training step
   (bench/gpu_probe.py), the clock runs from the end of the warm-up steps; the ratio is printed with its pairs.
3. ``zero3``: a Llama-3.2-3B-shape full fine-tune with DeepSpeed ZeRO-3 CPU offload through the engine (its host
   state, ~62 GB by the estimate, fits the lent host), decided before it starts: where DeepSpeed is missing or
   the host too small the row says "not measured on a card" and why.

Every arm is started only if the estimate of its time fits before ``--deadline`` (seconds from this script's
start; bench/gpu_check.sh passes the call's limit less a margin), and is stopped at it; every row is printed and
the JSON rewritten as soon as it exists, so a run cut short keeps what finished. Token ids are random words (the
Llama-3 tokenizer is not carried): speed and memory are the shape's, the loss means nothing. ``--dry-run`` runs
every section's code on the CPU with tiny shapes in this process (tests/bench/test_gpu_8b.py); its numbers are
not measured on a card and mean nothing.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import interleaved, run_as_child, run_child, table, write_jsonl  # noqa: E402
from bench.gpu_8b_arms import ARMS, SHAPES, SPECIAL, ESTIMATOR_MODEL  # noqa: E402

SECTIONS = ["qlora70b", "lora", "qlora", "zero3"]
# seconds an arm is expected to take on a card (start, imports, load, steps); a measured one replaces its guess
GUESS_S = {"folder": 90, "warm": 60, "layerwise": 200, "studio": 70, "savvy": 70, "zero3": 150}
MARGIN_S = 10
HEADERS = ["section", "arm", "timed steps", "tokens/step", "tokens/s", "CUDA peak GiB", "estimate GiB", "note"]


def make_rows(n: int, lo: int, hi: int, vocab: int, seed: int = 0) -> list[dict[str, str]]:
    """Instruction rows of word tokens t<id> (one token each): half prompt, half answer."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        length = rng.randint(lo, hi)
        words = [f"t{rng.randrange(len(SPECIAL), vocab)}" for _ in range(length)]
        half = length // 2
        rows.append({"instruction": " ".join(words[:half]), "input": "", "output": " ".join(words[half:])})
    return rows


def studio_features(rows: list[dict], tokenizer: Any, cutoff: int) -> list[dict[str, list[int]]]:
    """The rows as the studio's engine tokenizes them (its template and answer-only labels): the savvy arm trains
    these very features, so both arms see the same token ids."""
    from studio.config.run_config import Draft
    from studio.engine.run import prepare_data
    # only the template and the cutoff matter here: a Draft (the rows come as a list, not a dataset)
    train, _, _ = prepare_data(Draft(template="studio", cutoff_len=cutoff, val_size=0), tokenizer, rows)
    return [{"input_ids": f["input_ids"], "attention_mask": [1] * len(f["input_ids"]), "labels": f["labels"]}
            for f in train]


def card_present() -> bool:
    """A CUDA/ROCm card answers, asked in a child: this process never initialises CUDA (nor holds its memory)."""
    probe = "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def host_ram_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def zero3_blocker(dry: bool) -> str:
    """Why the ZeRO-3 row cannot run here, decided before anything starts ("" when it can)."""
    if importlib.util.find_spec("deepspeed") is None:
        return ("not measured on a card: DeepSpeed is not installed here (PyPI ships only its source, and its "
                "CPU-Adam op is compiled on first use)")
    if dry:
        return ""
    from studio.config.run_config import Draft
    from studio.memory.estimator import estimate
    need = estimate(Draft(model_name_or_path=ESTIMATOR_MODEL["3b"], finetuning_type="full",
                          deepspeed="z3-offload", cutoff_len=2048, per_device_train_batch_size=1)).cpu_gb
    if need > 0.8 * host_ram_gib():
        return (f"not measured on a card: the estimate needs {need:.0f} GB of host RAM, this host has "
                f"{host_ram_gib():.0f}")
    return ""


class Report:
    """Rows and results, printed and written to the JSON file the moment each exists."""

    def __init__(self, path: Path | None, meta: dict[str, Any]) -> None:
        self.path, self.rows = path, []
        self.data: dict[str, Any] = {**meta, "runs": {}, "rows": self.rows, "ratios": {}}

    def save(self) -> None:
        if self.path:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)

    def run(self, section: str, arm: str, r: dict[str, Any]) -> None:
        self.data["runs"].setdefault(section, []).append({"arm": arm, **r})
        self.save()

    def row(self, section: str, arm: str, r: dict[str, Any] | None, note: str = "") -> None:
        if r is None or not r.get("train_s"):
            row = [section, arm, "-", "-", "-", "-", "-", note]
        else:
            fmt = lambda v: f"{v:.2f}" if v is not None else "-"  # noqa: E731
            per_step = r["tokens"] / max(r["timed_steps"], 1)
            row = [section, arm, r["timed_steps"], round(per_step), round(r["tokens"] / r["train_s"]),
                   fmt(r.get("peak_gib")), fmt(r.get("estimate_gib")), note]
        print("row: " + " | ".join(str(c) for c in row), flush=True)
        self.rows.append(row)
        self.save()


class Runner:
    """Starts each arm in a child (in this process on the dry run) if its expected time fits before the deadline."""

    def __init__(self, dry: bool, deadline: float, report: Report) -> None:
        self.dry, self.deadline, self.report = dry, deadline, report
        self.took: dict[str, float] = {}

    def left(self) -> float:
        return self.deadline - time.monotonic() - MARGIN_S

    def __call__(self, arm: str, spec: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """(result, "") or (None, why it did not run or failed)."""
        need = self.took.get(arm, GUESS_S[arm])
        if not self.dry and self.left() < need:
            return None, f"not run: {self.left():.0f} s left before the deadline, ~{need:.0f} s needed"
        t0 = time.monotonic()
        try:
            if self.dry:
                r = ARMS[arm](spec)
            else:
                r = run_child(Path(__file__), arm, spec, threads=8, timeout=max(1, int(min(self.left(), 10**6))))
        except subprocess.TimeoutExpired:
            return None, f"stopped at the deadline after {time.monotonic() - t0:.0f} s"
        except Exception as exc:  # noqa: BLE001 - a failed arm is a row that says so, the next arm still runs
            lines = [ln for ln in str(exc).splitlines() if ln.strip()] or [type(exc).__name__]
            oom = "OutOfMemoryError" in str(exc) or "out of memory" in str(exc)
            return None, "does not fit this card (CUDA out of memory)" if oom else "failed: " + lines[-1][:160]
        self.took[arm] = 1.15 * (time.monotonic() - t0)
        return r, ""


def compare(section: str, runs: list[dict[str, Any]], report: Report) -> None:
    """The studio/savvy ratio of tokens/s and CUDA peak, per ABBA pair and their median; whether each pair trained
    the same rows with the same tokens in every step."""
    studio = [r for r in runs if r["arm"] == "studio" and r.get("train_s")]
    savvy = [r for r in runs if r["arm"] == "savvy" and r.get("train_s")]
    pairs = list(zip(studio, savvy))
    if not pairs:
        print(f"ratio: {section} studio/savvy not measured (no complete pair)", flush=True)
        return
    speed = [(a["tokens"] / a["train_s"]) / (b["tokens"] / b["train_s"]) for a, b in pairs]
    peak = [a["peak_gib"] / b["peak_gib"] for a, b in pairs if a.get("peak_gib") and b.get("peak_gib")]
    same = all(a["rows"] == b["rows"] and a["step_tokens"] == b["step_tokens"] for a, b in pairs)
    fmt = lambda xs: f"{statistics.median(xs):.2f} (pairs {', '.join(f'{x:.2f}' for x in xs)})" if xs else "-"  # noqa
    print(f"ratio: {section} studio/savvy tokens/s {fmt(speed)}; CUDA peak {fmt(peak)}; "
          f"{'same rows and tokens in every step' if same else 'ROWS DIFFER between the arms'}", flush=True)
    report.data["ratios"][section] = {"tokens_per_s": speed, "peak": peak, "same_rows": same}
    report.save()


def batches_of(studio: dict[str, Any], index: dict[str, int]) -> list[list[int]] | None:
    """The studio arm's steps as feature indices (for the savvy arm to replay), or None if a row is unknown."""
    try:
        return [[index[p] for p in step] for step in studio["rows"]]
    except KeyError:
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU, in this process")
    ap.add_argument("--sections", nargs="+", default=SECTIONS, choices=SECTIONS)
    ap.add_argument("--steps", type=int, default=6, help="timed optimizer steps per 8B arm (70B: 3)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed optimizer steps before the clock starts")
    ap.add_argument("--deadline", type=float, default=float("inf"), help="seconds from now by which to be done")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if run_as_child(a, lambda name, spec: ARMS[name](spec)):
        return 0
    dry = a.dry_run
    if dry:   # the arms share this process: one thread each, as a card run's children would not contend either
        import torch
        torch.set_num_threads(1)
    if not dry and not card_present():
        print("no CUDA/ROCm card: use --dry-run on a CPU", file=sys.stderr)
        return 1
    shape, big, mid = ("tiny", "tiny", "tiny") if dry else ("8b", "70b", "3b")
    lo, hi, batch = (16, 48, 2) if dry else (512, 2048, 4)
    steps = a.warmup + a.steps
    report = Report(a.json, {"dry_run": dry, "shape": shape, "deadline_s": a.deadline, "warmup": a.warmup})
    run = Runner(dry, time.monotonic() + a.deadline, report)
    blocker = zero3_blocker(dry) if "zero3" in a.sections else ""
    with tempfile.TemporaryDirectory(prefix="gpu_8b_") as tmp:
        root = Path(tmp)
        vocab = SHAPES[shape]["vocab_size"]
        rows = make_rows(batch * steps * 2, lo, hi, vocab)
        data = write_jsonl(root / "rows.jsonl", rows)
        from bench.gpu_8b_arms import folder_arm, word_tokenizer   # transformers only: no CUDA in this process
        feats = studio_features(rows, word_tokenizer(vocab), hi + 16)
        features = write_jsonl(root / "features.jsonl", feats)
        from bench.gpu_probe import fingerprint
        index = {fingerprint(f["input_ids"]): i for i, f in enumerate(feats)}
        base = {"data": str(data), "features": str(features), "cutoff": hi + 16, "batch": batch, "steps": steps,
                "warmup": a.warmup, "shape": "8b"}
        if "qlora70b" in a.sections:   # first: the row a short call must not lose
            folder_arm({"folders": [{"path": str(root / "70b"), "shape": big}]})   # config + tokenizer only
            spec = {**base, "model_dir": str(root / "70b"), "out": str(root / "70b-run"), "shape": "70b",
                    "build": big, "batch": 1, "steps": a.warmup + min(a.steps, 3)}
            r, why = run("layerwise", spec)
            if r:
                report.run("qlora70b", "studio", r)
            report.row("qlora 70b", "studio engine, base built layer by layer", r, why)
        eight = [s for s in ("lora", "qlora") if s in a.sections]
        folders = [{"path": str(root / "8b"), "shape": shape, "weights": True},
                   {"path": str(root / "8b-1layer"), "shape": shape, "layers": 1, "weights": True}]
        if "zero3" in a.sections and not blocker:
            folders.append({"path": str(root / "3b"), "shape": mid, "weights": True})
        made, why = run("folder", {"folders": folders}) if eight or len(folders) > 2 else ({}, "")
        if made is None:
            report.row("model folders", "-", None, why)
        elif eight:
            warm, why = run("warm", {**base, "model_dir": str(root / "8b-1layer"), "steps": 3,
                                     "out": str(root / "warm")})
            report.row("warm-up (Triton cache)", "both", None, why or f"done in {warm['warm_s']:.0f} s, "
                       f"Liger {'on' if warm['liger'] else 'not installed: savvy uses logits_to_keep'}")
        for section in eight if made is not None else []:
            quant = 4 if section == "qlora" else None
            runs, replay = [], None
            for i, arm in enumerate(interleaved(["studio", "savvy"], 2)):
                spec = {**base, "model_dir": str(root / "8b"), "quant": quant, "batches": replay,
                        "out": str(root / f"{section}-{i}-{arm}")}
                r, why = run(arm, spec)
                if r and arm == "studio" and replay is None:
                    replay = batches_of(r, index)
                if r:
                    runs.append({"arm": arm, **r})
                    report.run(section, arm, r)
                    if arm == "savvy" and not r.get("liger"):
                        why = "liger-kernel not installed: logits_to_keep"
                    if arm == "savvy" and not r.get("replayed"):
                        why = (why + "; " if why else "") + "own length-grouped batches (no studio batches)"
                report.row(section, arm, r, why)
            compare(section, runs, report)
        if "zero3" in a.sections:
            r, why = (None, blocker or "not run: the model folders were not made") if blocker or made is None else run(
                "zero3", {**base, "model_dir": str(root / "3b"), "out": str(root / "zero3"), "shape": "3b",
                          "batch": 1, "steps": a.warmup + min(a.steps, 3), "deepspeed": zero3_config(dry, root)})
            if r:
                report.run("zero3", "studio", r)
            report.row("3b full ZeRO-3 offload", "studio", r, why)
    print(table(HEADERS, report.rows), flush=True)
    if dry:
        print("dry run on the CPU: tiny shapes, numbers not measured on a card and meaningless", flush=True)
    return 0


def zero3_config(dry: bool, root: Path) -> str:
    """The preset on a card; on the CPU dry run the preset with torch's AdamW kept on the host (DeepSpeed would
    otherwise compile its CPU-Adam op, minutes in a fresh environment, which the dry run is not about)."""
    if not dry:
        return "z3-offload"
    from studio.config.deepspeed import deepspeed_json
    path = root / "ds_z3_offload_torch_adam.json"
    path.write_text(json.dumps({**deepspeed_json("z3-offload"), "zero_force_ds_cpu_optimizer": False}),
                    encoding="utf-8")
    return str(path)


if __name__ == "__main__":
    sys.exit(main())
