"""Studio's best settings vs a plain Trainer with group_by_length: python bench/throughput_vs_trainer.py [--quick]

Non-pad tokens per second on a skewed-length review set, against the
strongest plain-transformers baseline, i.e. ``Trainer`` with length-grouped batches
(``train_sampling_strategy="group_by_length"``, what ``group_by_length=True`` is called in
transformers 5), a right-padding collator and the default fused AdamW.

Arms (each a fresh subprocess, ABBA order, median of paired ratios):

* ``plain``: the script a user writes with transformers alone (no studio import).
* ``studio``: ``run_training`` with dynamic batching (token budget = batch x mean row length)
  and ``selective_logits`` (the output layer only at answer tokens; the default).
* ``studio-packed`` (full form): the same with ``neat_packing`` (padding-free rows).
* ``studio-full-logits`` (full form): ``studio`` with ``selective_logits: false``, to show what
  each of the two changes contributes.

Same rows, template, label masking, learning rate, schedule, epochs and seed; fp32 on CPU.
Final quality: every arm's trained model is scored on the same 64 held-out rows (mean
cross-entropy per answer token, same code for every arm), so "faster" cannot hide "worse". Each
ABBA block uses its own seed (shared by its arms), so the spread of held-out losses across blocks
shows the seed-to-seed noise the arms' difference is compared with.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (TrainTimer, ab_parser, build_model, median, paired_ratios, plain_pad_collate, print_load,
                          print_machine, review_rows, run_arms, run_as_child, sized, studio_row_lengths,
                          studio_run_config, table, write_jsonl)

DIMS = {"hidden": 128, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 256}  # tiny-demo size
FULL = {"rows": 480, "epochs": 1, "repeats": 3, "arms": ["studio", "plain", "studio-packed", "studio-full-logits"]}
QUICK = {"rows": 128, "epochs": 1, "repeats": 1, "arms": ["studio", "plain"]}
TRAIN = {"batch": 8, "lr": 2e-3, "seed": 42, "logging_steps": 10, "cutoff_len": 512}
HELDOUT = 64


def encode_plain(tok: Any, r: dict[str, str], cutoff: int) -> dict[str, list[int]]:
    """Studio's own 'studio' template (alpaca-style) and label masking, written out as a user would."""
    content = f"{r['instruction']}\n{r['input']}" if r.get("input") else r["instruction"]
    prompt = [tok.bos_token_id] + tok.encode(f"### Instruction:\n{content}\n\n### Response:\n",
                                             add_special_tokens=False)
    answer = tok.encode(r["output"], add_special_tokens=False) + [tok.eos_token_id]
    if len(prompt) + len(answer) > cutoff:  # keep the answer, cut the prompt's start (as studio does)
        prompt = prompt[:1] + prompt[len(prompt) - (cutoff - len(answer) - 1):]
    return {"input_ids": prompt + answer, "attention_mask": [1] * (len(prompt) + len(answer)),
            "labels": [-100] * len(prompt) + answer}


def heldout_loss(model: Any, tok: Any, rows: list[dict[str, str]], cutoff: int) -> float:
    """Mean cross-entropy per answer token on held-out rows, one row at a time (no padding effects)."""
    import torch
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for r in rows:
            f = encode_plain(tok, r, cutoff)
            n = sum(1 for x in f["labels"][1:] if x != -100)
            out = model(**{k: torch.tensor([v]) for k, v in f.items()})
            total += float(out.loss) * n
            count += n
    return total / count


def _rows(path: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]


# ------------------------------------------------------------------ arms (child processes)
def studio_arm(spec: dict[str, Any], packed: bool = False, selective: bool = True) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from studio.engine import run_training
    timer = TrainTimer()
    cfg = studio_run_config(spec, template="studio", dynamic_batching=True, max_tokens_per_batch=spec["budget"],
                            selective_logits=selective, neat_packing=packed)
    summary = run_training(cfg)
    model_dir = Path(spec["out"]) / "model"
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tok = AutoTokenizer.from_pretrained(model_dir)
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
            "heldout": heldout_loss(model, tok, _rows(spec["heldout"]), spec["cutoff_len"])}


def plain_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """What a user writes with transformers alone: Trainer + group_by_length + a padding collator."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"])
    train = [encode_plain(tok, r, spec["cutoff_len"]) for r in _rows(spec["data"])]


    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             learning_rate=spec["lr"], num_train_epochs=spec["epochs"], lr_scheduler_type="linear",
                             logging_steps=spec["logging_steps"], save_strategy="no", seed=spec["seed"],
                             report_to="none", use_cpu=True, disable_tqdm=True, remove_unused_columns=False,
                             train_sampling_strategy="group_by_length")
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=plain_pad_collate(tok.pad_token_id))
    timer = TrainTimer()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": trainer.state.global_step, "final_loss": losses[-1],
            "heldout": heldout_loss(model, tok, _rows(spec["heldout"]), spec["cutoff_len"]),
            "tokens": sum(len(f["input_ids"]) for f in train) * spec["epochs"]}


# ------------------------------------------------------------------ parent
def main(argv: list[str] | None = None) -> int:
    a = ab_parser(__doc__, "CI size: 1 repeat of studio vs plain on 128 rows",
                  "runs per arm (default 3, quick 1)").parse_args(argv)
    if run_as_child(a, lambda name, spec: plain_arm(spec) if name == "plain" else
                    studio_arm(spec, packed=name == "studio-packed", selective=name != "studio-full-logits")):
        return 0
    size, repeats = sized(a, QUICK, FULL)
    print_machine(a.threads)
    with tempfile.TemporaryDirectory(prefix="bench_vs_trainer_") as tmp:
        root = Path(tmp)
        rows, source = review_rows(size["rows"] + HELDOUT, seed=2)
        data = write_jsonl(root / "reviews.jsonl", rows[:size["rows"]])
        heldout = write_jsonl(root / "heldout.jsonl", rows[size["rows"]:])
        model_dir = build_model(root / "model", rows, DIMS)
        spec = {"model_dir": str(model_dir), "data": str(data), "heldout": str(heldout), "epochs": size["epochs"],
                **TRAIN}
        lengths = sorted(studio_row_lengths(spec))
        mean = statistics.mean(lengths)
        tokens = size["epochs"] * sum(lengths)
        spec["budget"] = int(round(TRAIN["batch"] * mean))
        print(f"data: {len(lengths)} rows from {source}; tokens per row median {lengths[len(lengths) // 2]}, "
              f"mean {mean:.0f}, max {lengths[-1]}; {tokens} non-pad tokens per run; model {DIMS}")
        print(f"plain: batch {TRAIN['batch']}, train_sampling_strategy=group_by_length; studio: dynamic batching, "
              f"max_tokens_per_batch {spec['budget']}, selective_logits; held-out: {HELDOUT} rows")

        def each(i: int, arm: str, r: dict[str, Any]) -> None:
            if arm == "plain" and r["tokens"] != tokens:
                raise SystemExit(f"plain script trained on {r['tokens']} tokens, studio on {tokens}: not comparable")
            r["tok_s"], r["cpu_tok_s"] = tokens / r["train_s"], tokens / r["cpu_s"]
            print(f"  run {i + 1}: {arm:13s} {r['train_s']:7.2f} s wall {r['cpu_s']:7.2f} s CPU {r['tok_s']:9.1f} "
                  f"tok/s  steps {r['steps']}  held-out loss {r['heldout']:.4f}", flush=True)
        # a new seed per ABBA block, the same for its arms
        results = run_arms(Path(__file__), size["arms"], repeats, lambda i, arm: {
            **spec, "seed": TRAIN["seed"] + i // len(size["arms"]), "out": str(root / f"run{i}-{arm}")},
            each, threads=a.threads)
    out = [[arm, len(rs), rs[0]["steps"], median([r["train_s"] for r in rs]), median([r["tok_s"] for r in rs]),
            median([r["cpu_tok_s"] for r in rs]), median([r["heldout"] for r in rs]),
            max(r["heldout"] for r in rs) - min(r["heldout"] for r in rs)] for arm, rs in results.items()]
    print()
    print(table(["arm", "runs", "steps", "median wall s", "median tok/s", "median tok/CPU-s",
                 "median held-out loss", "held-out spread"], out))
    print_load()
    for other in [k for k in results if k != "plain"]:
        wall, cpu = (paired_ratios(results, other, "plain", k) for k in ("tok_s", "cpu_tok_s"))
        print(f"{other} / plain per block: wall {' '.join(f'{x:.3f}' for x in wall)}; "
              f"CPU {' '.join(f'{x:.3f}' for x in cpu)}; median paired {median(wall):.3f} wall, {median(cpu):.3f} CPU")
        d = [r["heldout"] - p["heldout"] for r, p in zip(results[other], results["plain"])]
        print(f"{other} - plain held-out loss per block: {' '.join(f'{x:+.4f}' for x in d)}")
    wall = median(paired_ratios(results, "studio", "plain", "tok_s"))
    print(f"ratio: {wall:.3f}  (studio / plain Trainer + group_by_length, non-pad tokens/s, wall clock, "
          f"median of paired runs; goal >= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
