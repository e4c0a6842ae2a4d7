"""Studio's best settings vs LLaMA-Factory: python bench/throughput_vs_llamafactory.py [--quick] [--venv /work/lfvenv]

Non-pad tokens per second of full fine-tuning on the skewed-length review set of bench/throughput_vs_trainer.py
(same tiny Llama, same rows, same ``alpaca`` template on every arm, 1 epoch, lr 2e-3 linear,
seed per ABBA block, fp32, one torch thread per run, gradient checkpointing off on every arm).

Arms (each a fresh subprocess; ABBA order; the training loop is timed, wall and CPU, by the same patch of
``transformers.Trainer.train`` in every arm, so imports, model loading and tokenization are outside the timing):

* ``studio``: ``run_training`` with dynamic batching (token budget = batch x mean row length) and
  ``selective_logits`` (the defaults of its CPU recipes), in the studio venv (torch 2.13).
* ``lf``: ``llamafactory.train.tuner.run_exp`` (what ``llamafactory-cli train`` runs), batch 8, its defaults;
  ``lf-packing``: the same with ``packing: true``; ``lf-neat``: with ``neat_packing: true`` (full form only).
  In LLaMA-Factory's own venv (torch 2.9.1: see bench/llamafactory_interop.py for why).
* ``plain-studio-venv`` / ``plain-lf-venv``: the same plain Trainer script (group_by_length, padding collator) run
  by each venv's Python: their ratio is the torch-version effect, so the reader can separate "studio vs LLaMA-
  Factory" from "torch 2.13 vs 2.9.1".

Each arm counts its own non-pad training tokens (the studio from its features, LLaMA-Factory from its tokenized
dataset: ids that are not the pad id, so packed rows' padding is not counted); the counts are printed side by side.
Not in CI (needs the 7 GB venv); ``--quick`` is the short form (128 rows, one repeat, studio / lf / both plains).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (CHILD_ENV, RESULT_PREFIX, ROOT, TrainTimer, build_model, emit_result, interleaved, median,
                          paired_ratios, plain_pad_collate, print_machine, review_rows, table, write_jsonl)

DIMS = {"hidden": 128, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 256}  # as in throughput_vs_trainer
FULL = {"rows": 480, "repeats": 3,
        "arms": ["studio", "lf", "lf-packing", "lf-neat", "plain-studio-venv", "plain-lf-venv"]}
QUICK = {"rows": 128, "repeats": 1, "arms": ["studio", "lf", "plain-studio-venv", "plain-lf-venv"]}
TRAIN = {"batch": 8, "lr": 2e-3, "seed": 42, "logging_steps": 10, "cutoff_len": 512, "epochs": 1}
ALPACA_SYS = ("Below is an instruction that describes a task. Write a response that appropriately "
              "completes the request.\n\n")


def _rows(path: str) -> list[dict[str, str]]:
    return json.loads(Path(path).read_text(encoding="utf-8"))  # one JSON array (what LLaMA-Factory reads)


def encode_alpaca(tok: Any, r: dict[str, str], cutoff: int) -> dict[str, list[int]]:
    """LLaMA-Factory's alpaca template written out by hand (no studio import: this also runs in the LF venv)."""
    content = f"{r['instruction']}\n{r['input']}" if r.get("input") else r["instruction"]
    prompt = tok.encode(f"{ALPACA_SYS}### Instruction:\n{content}\n\n### Response:\n", add_special_tokens=False)
    answer = tok.encode(r["output"], add_special_tokens=False) + [tok.eos_token_id] + \
        tok.encode("\n\n", add_special_tokens=False)
    prompt = prompt[max(0, len(prompt) + len(answer) - cutoff):]
    return {"input_ids": prompt + answer, "attention_mask": [1] * (len(prompt) + len(answer)),
            "labels": [-100] * len(prompt) + answer}


# ------------------------------------------------------------------ arms (child processes)
def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    timer = TrainTimer()
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="full", template="alpaca", cutoff_len=spec["cutoff_len"],
                    per_device_train_batch_size=spec["batch"], learning_rate=spec["lr"],
                    num_train_epochs=spec["epochs"], lr_scheduler_type="linear", logging_steps=spec["logging_steps"],
                    save_steps=10**6, seed=spec["seed"], precision="fp32", plot_loss=False,
                    gradient_checkpointing=False, dynamic_batching=True, max_tokens_per_batch=spec["budget"],
                    selective_logits=True)
    summary = run_training(cfg)
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
            "tokens": spec["studio_tokens"]}


def plain_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """The same plain Trainer script in either venv: group_by_length + a padding collator."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"])
    train = [encode_alpaca(tok, r, spec["cutoff_len"]) for r in _rows(spec["data"])]
    grouping = {"train_sampling_strategy": "group_by_length"} \
        if "train_sampling_strategy" in TrainingArguments.__dataclass_fields__ else {"group_by_length": True}
    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             learning_rate=spec["lr"], num_train_epochs=spec["epochs"], lr_scheduler_type="linear",
                             logging_steps=spec["logging_steps"], save_strategy="no", seed=spec["seed"],
                             report_to="none", use_cpu=True, disable_tqdm=True, remove_unused_columns=False,
                             **grouping)
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=plain_pad_collate(tok.pad_token_id))
    timer = TrainTimer()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    import transformers
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": trainer.state.global_step, "final_loss": losses[-1],
            "tokens": sum(len(f["input_ids"]) for f in train) * spec["epochs"],
            "torch": torch.__version__, "transformers": transformers.__version__}


def lf_arm(spec: dict[str, Any], mode: str) -> dict[str, Any]:
    """LLaMA-Factory's own entry point, timed by the same Trainer.train patch; tokens counted from its dataset."""
    import torch
    import transformers
    timer = TrainTimer()
    seen: dict[str, Any] = {}
    real = transformers.Trainer.train

    def counting(trainer: Any, *args: Any, **kwargs: Any) -> Any:
        pad = trainer.processing_class.pad_token_id if trainer.processing_class is not None else None
        ds = trainer.train_dataset
        seen["tokens"] = sum(sum(1 for t in ids if t != pad) for ids in ds["input_ids"]) * spec["epochs"]
        seen["rows"] = len(ds)
        out = real(trainer, *args, **kwargs)
        seen["steps"] = trainer.state.global_step
        # packed runs take few steps (128 rows pack into ~4 batches): fewer than logging_steps logs no step loss,
        # so fall back to Trainer's mean training loss of the run
        seen["losses"] = [h["loss"] for h in trainer.state.log_history if "loss" in h] or \
            [h["train_loss"] for h in trainer.state.log_history if "train_loss" in h]
        return out

    transformers.Trainer.train = counting  # type: ignore[method-assign]
    from llamafactory.train.tuner import run_exp
    data_dir = Path(spec["data"]).parent
    (data_dir / "dataset_info.json").write_text(json.dumps({"reviews": {"file_name": Path(spec["data"]).name}}))
    run_exp({"stage": "sft", "do_train": True, "model_name_or_path": spec["model_dir"], "dataset": "reviews",
             "dataset_dir": str(data_dir), "template": "alpaca", "finetuning_type": "full",
             "cutoff_len": spec["cutoff_len"], "per_device_train_batch_size": spec["batch"],
             "gradient_accumulation_steps": 1, "learning_rate": spec["lr"], "num_train_epochs": spec["epochs"],
             "lr_scheduler_type": "linear", "logging_steps": spec["logging_steps"], "save_strategy": "no",
             "output_dir": spec["out"], "overwrite_output_dir": True, "seed": spec["seed"], "report_to": "none",
             "bf16": False, "plot_loss": False, "disable_gradient_checkpointing": True,
             "packing": mode in ("packing", "neat"), "neat_packing": mode == "neat", "overwrite_cache": True,
             "disable_tqdm": True})
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": seen["steps"], "final_loss": seen["losses"][-1],
            "tokens": seen["tokens"], "rows": seen["rows"], "torch": torch.__version__,
            "transformers": transformers.__version__}


def run_in(python: str, mode: str, spec: dict[str, Any], threads: int, timeout: int = 3600) -> dict[str, Any]:
    env = {**os.environ, **CHILD_ENV, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "DISABLE_VERSION_CHECK": "1", "CUDA_VISIBLE_DEVICES": "", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--child", mode, "--spec", json.dumps(spec)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    raise RuntimeError(f"{mode} child failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def studio_tokens(spec: dict[str, Any]) -> list[int]:
    from studio.config.run_config import RunConfig
    from studio.data.dataset import load_rows
    from studio.engine.run import prepare_data
    from studio.models.loading import load_tokenizer
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], cutoff_len=spec["cutoff_len"],
                    seed=spec["seed"], template="alpaca")
    train, _, _ = prepare_data(cfg, load_tokenizer(spec["model_dir"]), load_rows(spec["data"]))
    return [len(f["input_ids"]) for f in train]


# ------------------------------------------------------------------ parent
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="128 rows, one repeat, studio / lf / plain in both venvs")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--rows", type=int)
    ap.add_argument("--arms", nargs="*")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--venv", type=Path, default=Path("/work/lfvenv"),
                    help="LLaMA-Factory's venv (bench/llamafactory_interop.py builds it)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        spec = json.loads(a.spec)
        if a.child == "studio":
            emit_result(studio_arm(spec))
        elif a.child.startswith("plain"):
            emit_result(plain_arm(spec))
        else:
            emit_result(lf_arm(spec, {"lf": "none", "lf-packing": "packing", "lf-neat": "neat"}[a.child]))
        return 0
    size = dict(QUICK if a.quick else FULL)
    repeats, arms = a.repeats or size["repeats"], a.arms or size["arms"]
    lf_python = str(a.venv / "bin" / "python")
    if not Path(lf_python).exists():
        raise SystemExit(f"no LLaMA-Factory venv at {a.venv}: run bench/llamafactory_interop.py first (it builds it)")
    print_machine()
    print(f"LLaMA-Factory venv: {subprocess.run([lf_python, '-c', 'import torch, transformers, llamafactory; print(torch.__version__, transformers.__version__, llamafactory.__version__)'], capture_output=True, text=True).stdout.strip()} (torch, transformers, llamafactory)")
    print(f"torch threads per run: {a.threads}")
    with tempfile.TemporaryDirectory(prefix="bench_vs_lf_") as tmp:
        root = Path(tmp)
        rows, source = review_rows(a.rows or size["rows"], seed=2)
        (root / "data").mkdir()
        data = write_jsonl(root / "data" / "reviews.json", [])
        data.write_text(json.dumps(rows, ensure_ascii=False))  # LLaMA-Factory reads .json; so does the studio
        model_dir = build_model(root / "model", rows, DIMS)
        spec = {"model_dir": str(model_dir), "data": str(data), **TRAIN}
        lengths = sorted(studio_tokens(spec))
        spec["studio_tokens"] = sum(lengths) * TRAIN["epochs"]
        spec["budget"] = int(round(TRAIN["batch"] * statistics.mean(lengths)))
        print(f"data: {len(lengths)} rows from {source}; tokens per row median {lengths[len(lengths) // 2]}, mean "
              f"{statistics.mean(lengths):.0f}, max {lengths[-1]}; model {DIMS}; studio budget {spec['budget']} tokens")
        results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
        for i, arm in enumerate(interleaved(arms, repeats)):
            seed = TRAIN["seed"] + i // len(arms)
            python = lf_python if arm.startswith("lf") or arm == "plain-lf-venv" else sys.executable
            r = run_in(python, arm, {**spec, "seed": seed, "out": str(root / f"run{i}-{arm}")}, a.threads)
            r["tok_s"], r["cpu_tok_s"] = r["tokens"] / r["train_s"], r["tokens"] / r["cpu_s"]
            results[arm].append(r)
            print(f"  run {i + 1}: {arm:18s} {r['train_s']:7.2f} s wall {r['cpu_s']:7.2f} s CPU {r['tok_s']:8.1f} "
                  f"tok/s  tokens {r['tokens']}  steps {r['steps']}  final loss {r['final_loss']:.4f}  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    print()
    print(table(["arm", "runs", "steps", "tokens", "median wall s", "median CPU s", "median tok/s",
                 "median tok/CPU-s", "median final loss"],
                [[arm, len(rs), rs[0]["steps"], rs[0]["tokens"], median([r["train_s"] for r in rs]),
                  median([r["cpu_s"] for r in rs]), median([r["tok_s"] for r in rs]),
                  median([r["cpu_tok_s"] for r in rs]), median([r["final_loss"] for r in rs])]
                 for arm, rs in results.items()]))
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    pairs = [("studio", b) for b in arms if b.startswith("lf")] + \
        [("plain-studio-venv", "plain-lf-venv")] * ("plain-lf-venv" in arms and "plain-studio-venv" in arms)
    for num, den in pairs:
        wall, cpu = (paired_ratios(results, num, den, k) for k in ("tok_s", "cpu_tok_s"))
        print(f"ratio {num} / {den}: wall {median(wall):.3f} (per block {' '.join(f'{x:.3f}' for x in wall)}), "
              f"CPU {median(cpu):.3f} (per block {' '.join(f'{x:.3f}' for x in cpu)})")
    if "plain-lf-venv" in arms and "plain-studio-venv" in arms and "lf" in arms:
        torch_effect = median(paired_ratios(results, "plain-studio-venv", "plain-lf-venv", "cpu_tok_s"))
        best_lf = max((b for b in arms if b.startswith("lf")),
                      key=lambda b: median([r["cpu_tok_s"] for r in results[b]]))
        vs = median(paired_ratios(results, "studio", best_lf, "cpu_tok_s"))
        print(f"studio / best LLaMA-Factory arm ({best_lf}), CPU: {vs:.3f}; torch-version effect (plain 2.13 / plain "
              f"2.9.1, CPU): {torch_effect:.3f}; studio's edge with the torch effect divided out: "
              f"{vs / torch_effect:.3f}  (goal >= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
