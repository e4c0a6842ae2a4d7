"""LoRA throughput of the built-in models' shapes on a card: python bench/gpu_real_lora.py --assets DIR

The lent GPU machine has no network and the built-in models' packages (GGUF inside pip packages) are too large to
carry, so this bench carries what decides the speed and nothing else: each model's own ``config.json`` and
tokenizer (bench/gpu_assets.sh writes them, gzip'd, from the prepared folders) and real review rows. On the card the
model is built from its config with **random weights** (same architecture, shapes, vocabulary and tokenization as
SmolLM2-135M-Instruct and Gemma-3-270M, so tokens/s and memory are those of the real model; the loss is not).

Arms, every one a fresh child process, LoRA r 8 / alpha 16 on all linear layers, batch 8, cutoff 256, one epoch,
the alpaca-style ``studio`` template and answer-only labels, bf16 autocast over fp32 weights on every arm:

* ``studio``: the shipped recipe (presets/recipes/*-lora-cpu.yaml: dynamic batching, selective logits) through
  ``studio.engine.run_training`` with ``precision: auto`` (the card's bf16 mixed precision);
* ``plain``: transformers Trainer + peft + ``train_sampling_strategy="group_by_length"`` + ``bf16=True``;
* ``savvy``: ``plain`` + transformers' ``logits_to_keep`` mask and ``shift_labels`` (bench/real_throughput.py).

Metric: non-pad training tokens per second of ``Trainer.train`` (wall; the loop ends with a host read of the loss,
so the card is synchronised) and the CUDA peak (``max_memory_allocated``). ``--device cpu`` runs the same code on
a tiny slice (the dry run of bench/gpu_check.sh); its numbers mean nothing.
"""
from __future__ import annotations

import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import TrainTimer, ab_parser, interleaved, run_as_child, run_child, table, write_jsonl

RECIPES = {"smollm2-135m-instruct": ROOT / "presets/recipes/smollm2-135m-lora-cpu.yaml",
           "gemma3-270m": ROOT / "presets/recipes/gemma3-270m-lora-cpu.yaml"}
ARMS = ["studio", "plain", "savvy"]
TRAIN = {"batch": 8, "lr": 5e-4, "seed": 42, "cutoff_len": 256, "warmup": 0.05}


def random_model_folder(assets: Path, name: str, dest: Path, device: str) -> Path:
    """``dest``: the model's config and tokenizer from ``assets/name`` and weights drawn at random from its config."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    src = assets / name
    dest.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.suffix == ".gz":
            with gzip.open(f, "rb") as fin, open(dest / f.stem, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(f, dest / f.name)
    cfg = AutoConfig.from_pretrained(dest)
    if device == "cpu":  # the dry run: the same code on a slice of the model (numbers meaningless)
        for key in ("num_hidden_layers",):
            setattr(cfg, key, 2)
        if hasattr(cfg, "layer_types") and cfg.layer_types:
            cfg.layer_types = cfg.layer_types[:2]
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.save_pretrained(dest)
    return dest


def _cuda_peak_gib() -> float | None:
    import torch
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    timer = TrainTimer()
    over = [f"dataset={spec['data']}", f"model_name_or_path={spec['model_dir']}", f"output_dir={spec['out']}",
            f"cutoff_len={spec['cutoff_len']}", "template=studio", "max_steps=-1", "num_train_epochs=1",
            "val_size=0", "save_steps=1000000", "plot_loss=false", "logging_steps=1", f"seed={spec['seed']}"]
    cfg = RunConfig.load(spec["recipe"], over)
    summary = run_training(cfg)
    from studio.runs.run_dir import RunDir
    status = RunDir(cfg.output_dir).read_status()
    return {"train_s": timer.wall, "steps": summary["step"], "tokens": spec["studio_tokens"],
            "peak_gib": _cuda_peak_gib(), "precision": status.get("precision"), "final_loss": summary["final_loss"]}


def plain_arm(spec: dict[str, Any], savvy: bool) -> dict[str, Any]:
    """bench/real_throughput.py's plain / savvy arm as it is (bf16 autocast when a card is there), plus the peak."""
    import torch
    from bench.real_throughput import plain_arm as cpu_bench_arm
    r = cpu_bench_arm(spec, savvy)
    return {**r, "peak_gib": _cuda_peak_gib(), "precision": "bf16 autocast" if torch.cuda.is_available() else "fp32"}


def child(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return studio_arm(spec) if name == "studio" else plain_arm(spec, savvy=name == "savvy")


def main(argv: list[str] | None = None) -> int:
    ap = ab_parser(__doc__, "unused", "runs per arm (default 1: a b c)", threads=False)
    ap.add_argument("--assets", type=Path, required=False, help="config + tokenizer per model (bench/gpu_assets.sh)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--rows", type=int, default=512, help="training rows (default 512 = 64 steps of batch 8)")
    ap.add_argument("--models", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--arms", nargs="+", default=ARMS, choices=ARMS, help="the arms to run (default: all three)")
    a = ap.parse_args(argv)
    if run_as_child(a, child):
        return 0
    import torch
    if a.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA card: run with --device cpu for the dry run", file=sys.stderr)
        return 1
    from bench.common import studio_row_lengths
    data_rows = [json.loads(x) for x in (a.assets / "reviews.jsonl").read_text(encoding="utf-8").splitlines() if x]
    rows = (data_rows * (a.rows // max(len(data_rows), 1) + 1))[: a.rows]
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="gpu_real_lora_") as tmp:
        root = Path(tmp)
        data = write_jsonl(root / "train.jsonl", rows)
        for name in a.models:
            folder = random_model_folder(a.assets, name, root / name / "model", a.device)
            spec = {"model_dir": str(folder), "data": str(data), "recipe": str(RECIPES[name]), **TRAIN}
            lengths = studio_row_lengths(spec)
            spec["studio_tokens"] = sum(lengths)
            print(f"## {name}: {len(lengths)} rows, {sum(lengths)} non-pad tokens (studio tokenization)", flush=True)
            for i, arm in enumerate(interleaved(a.arms, a.repeats or 1)):
                try:
                    r = run_child(Path(__file__), arm, {**spec, "out": str(root / name / f"run{i}-{arm}")},
                                  threads=4 if a.device == "cuda" else 1)
                except RuntimeError as exc:  # e.g. savvy's 2-D logits_to_keep needs a newer transformers
                    why = [ln for ln in str(exc).splitlines() if ln.strip()][-1][:160]
                    print(f"  {arm:6s} FAILED: {why}", flush=True)
                    results.setdefault(name, {}).setdefault(arm, []).append({"failed": why})
                    continue
                r["tok_s"] = r["tokens"] / r["train_s"]
                peak = f"{r['peak_gib']:.2f} GiB" if r["peak_gib"] is not None else "-"
                print(f"  {arm:6s} {r['steps']} steps {r['tokens']} tok {r['train_s']:.2f} s "
                      f"{r['tok_s']:.0f} tok/s peak {peak} loss {r['final_loss']:.3f} ({r['precision']})", flush=True)
                results.setdefault(name, {}).setdefault(arm, []).append(r)
    out = []
    for name, res in results.items():
        def med(arm: str) -> float | None:
            xs = sorted(r["tok_s"] for r in res.get(arm, []) if "tok_s" in r)
            return xs[len(xs) // 2] if xs else None
        for arm, rs in res.items():
            ok = [r for r in rs if "tok_s" in r]
            if not ok:
                out.append([name, arm, "-", "-", "failed: " + rs[0]["failed"], "-", "-", "-", "-"])
                continue
            tok_s = med(arm)
            ratio = lambda den: round(tok_s / med(den), 2) if med(den) else "-"  # noqa: E731
            out.append([name, arm, ok[0]["steps"], ok[0]["tokens"], round(tok_s), ratio("plain"), ratio("savvy"),
                        round(ok[0]["peak_gib"], 2) if ok[0]["peak_gib"] is not None else "-", ok[0]["precision"]])
    print(table(["model shape", "arm", "steps", "tokens", "tokens/s", "/ plain", "/ savvy", "CUDA peak GiB",
                 "precision"], out))
    if a.json:
        a.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
