"""Studio's training loop vs a plain transformers.Trainer script: python bench/engine_overhead.py [--quick]

Both arms train the same model folder on the same tokenized rows (same prompt template,
same label masking, same right-padding collator, batch size, learning rate, schedule,
epochs and seed; fp32 on CPU). The plain arm is written the way a user would write it
from the transformers docs: default TrainingArguments plus the few settings above.

The studio arm turns gradient checkpointing off, as the plain script has it and as the studio's autoconfig
does for a model that fits (RunConfig's own default is on: backward then recomputes the forward, ~30% more
work; ``--with-ckpt`` adds that arm).

Each run is a fresh subprocess; arms alternate (ABBA) over several repeats and the median
is reported. Timed: ``trainer.train()`` only (studio reports the same span as
``train_seconds``); model building, loading and tokenization are outside the timing.
Tokens: non-pad tokens (attention_mask sum) = epochs x the rows' token count, the same for
both arms (checked: the two tokenizations are compared by hash before anything is timed).
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (TrainTimer, ab_parser, build_model, median, paired_ratios, plain_pad_collate, print_load,
                          print_machine, review_rows, run_arms, run_as_child, sized, studio_run_config, table,
                          write_jsonl)

# The tiny-demo model size: the CPU setting where loop overhead is the largest share of a step.
DIMS = {"hidden": 128, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 256}
FULL = {"rows": 640, "epochs": 3, "repeats": 5}
QUICK = {"rows": 96, "epochs": 1, "repeats": 1}
TRAIN = {"batch": 8, "lr": 2e-3, "seed": 42, "logging_steps": 10, "cutoff_len": 1024}


def features_hash(features: list[dict[str, Any]]) -> str:
    blob = json.dumps([[list(f["input_ids"]), list(f["labels"])] for f in features])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# ------------------------------------------------------------------ the two arms (child processes)
def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.engine import run_training
    if spec.get("unfused"):  # the engine before it chose the fused AdamW kernel (see --with-unfused)
        import studio.engine.arguments as engine_arguments
        engine_arguments._optimizer = lambda cfg, ds: cfg.optim
    timer = TrainTimer()
    cfg = studio_run_config(spec, template="studio",
                            **{"gradient_checkpointing": False, **spec.get("studio_overrides", {})})
    summary = run_training(cfg)
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"]}


def plain_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """What a user writes with transformers alone (no studio import)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"])
    rows = [json.loads(line) for line in Path(spec["data"]).read_text(encoding="utf-8").splitlines() if line]

    def encode(r: dict[str, str]) -> dict[str, list[int]]:
        content = f"{r['instruction']}\n{r['input']}" if r.get("input") else r["instruction"]
        prompt = [tok.bos_token_id] + tok.encode(f"### Instruction:\n{content}\n\n### Response:\n",
                                                 add_special_tokens=False)
        answer = tok.encode(r["output"], add_special_tokens=False) + [tok.eos_token_id]
        ids = (prompt + answer)[:spec["cutoff_len"]]
        labels = ([-100] * len(prompt) + answer)[:spec["cutoff_len"]]
        return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}

    train = [encode(r) for r in rows]


    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             learning_rate=spec["lr"], num_train_epochs=spec["epochs"], lr_scheduler_type="linear",
                             logging_steps=spec["logging_steps"], save_strategy="no", seed=spec["seed"],
                             report_to="none", use_cpu=True, disable_tqdm=True, remove_unused_columns=False,
                             **spec.get("plain_overrides", {}))
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=plain_pad_collate(tok.pad_token_id))
    timer = TrainTimer()  # the bench's stopwatch, not part of the user's script
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": trainer.state.global_step, "final_loss": losses[-1],
            "features": features_hash(train), "optim": str(getattr(args.optim, "value", args.optim))}


# ------------------------------------------------------------------ parent
def studio_features(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Studio's own tokenization of the bench rows (what its run trains on)."""
    from studio.config.run_config import RunConfig
    from studio.data.dataset import load_rows
    from studio.engine.run import prepare_data
    from studio.models.loading import load_tokenizer
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], cutoff_len=spec["cutoff_len"],
                    seed=spec["seed"], template="studio")
    train, _, counts = prepare_data(cfg, load_tokenizer(spec["model_dir"]), load_rows(spec["data"]))
    if counts["truncated"]:
        raise SystemExit("bench rows were truncated: raise cutoff_len so both arms see whole rows")
    return train


def main(argv: list[str] | None = None) -> int:
    ap = ab_parser(__doc__, "CI size: 1 repeat of a short run (< 2 min on 2 cores)",
                   "runs per arm (default 5, quick 1)")
    ap.add_argument("--with-unfused", action="store_true",
                    help="add a third arm: studio with torch's unfused AdamW (what it used before choosing fused)")
    ap.add_argument("--with-ckpt", action="store_true",
                    help="add an arm: studio with RunConfig's default gradient checkpointing (the plain script has none)")
    ap.add_argument("--long-rows", action="store_true", help="add a long tail of long reviews (longer steps)")
    a = ap.parse_args(argv)
    def child_arm(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        if name == "plain":
            return plain_arm(spec)
        if name == "studio-ckpt":
            spec["studio_overrides"] = {**spec.get("studio_overrides", {}), "gradient_checkpointing": True}
        return studio_arm({**spec, "unfused": name == "studio-unfused"})

    if run_as_child(a, child_arm):
        return 0
    size, repeats = sized(a, QUICK, FULL)
    print_machine(a.threads)
    with tempfile.TemporaryDirectory(prefix="bench_overhead_") as tmp:
        root = Path(tmp)
        # short reviews: short steps, where any per-step overhead of the engine shows the most
        rows, source = review_rows(size["rows"], seed=1, long_tail=a.long_rows)
        data = write_jsonl(root / "reviews.jsonl", rows)
        model_dir = build_model(root / "model", rows, DIMS)
        spec = {"model_dir": str(model_dir), "data": str(data), "epochs": size["epochs"], **TRAIN}
        feats = studio_features(spec)
        tokens = size["epochs"] * sum(len(f["input_ids"]) for f in feats)
        print(f"data: {len(feats)} rows from {source}, {tokens} non-pad tokens per run; model {DIMS}")
        arms = ["studio", "plain"] + (["studio-unfused"] if a.with_unfused else []) + \
            (["studio-ckpt"] if a.with_ckpt else [])

        def each(i: int, arm: str, r: dict[str, Any]) -> None:
            if arm == "plain" and r["features"] != features_hash(feats):
                raise SystemExit("the plain script tokenized the rows differently from studio: not comparable")
            r["tok_s"], r["cpu_tok_s"] = tokens / r["train_s"], tokens / r["cpu_s"]
            print(f"  run {i + 1}: {arm:14s} {r['train_s']:7.2f} s wall {r['cpu_s']:7.2f} s CPU  "
                  f"{r['tok_s']:9.1f} tok/s  steps {r['steps']}", flush=True)
        results = run_arms(Path(__file__), arms, repeats, lambda i, arm: {**spec, "out": str(root / f"run{i}-{arm}")},
                           each, threads=a.threads)
    steps = {r["steps"] for rs in results.values() for r in rs}
    if len(steps) != 1:
        raise SystemExit(f"arms ran different step counts {steps}: not comparable")
    med = {arm: median([r["tok_s"] for r in rs]) for arm, rs in results.items()}
    cpu_med = {arm: median([r["cpu_tok_s"] for r in rs]) for arm, rs in results.items()}
    rows_out = [[arm, len(rs), rs[0]["steps"], median([r["train_s"] for r in rs]), med[arm],
                 min(r["tok_s"] for r in rs), max(r["tok_s"] for r in rs), cpu_med[arm], rs[-1]["final_loss"]]
                for arm, rs in results.items()]
    print()
    print(table(["arm", "runs", "steps", "median wall s", "median tok/s", "min tok/s", "max tok/s",
                 "median tok/CPU-s", "final loss"], rows_out))
    print(f"plain Trainer optimizer (its default): {results['plain'][0]['optim']}")
    print_load()
    for other in [k for k in results if k != "plain"]:
        wall, cpu = (paired_ratios(results, other, "plain", k) for k in ("tok_s", "cpu_tok_s"))
        print(f"{other} / plain per block: wall {' '.join(f'{x:.3f}' for x in wall)}; "
              f"CPU {' '.join(f'{x:.3f}' for x in cpu)}")
        print(f"{other} / plain: ratio of medians {med[other] / med['plain']:.3f} wall, "
              f"{cpu_med[other] / cpu_med['plain']:.3f} CPU; median paired {median(wall):.3f} wall, "
              f"{median(cpu):.3f} CPU")
    wall = median(paired_ratios(results, "studio", "plain", "tok_s"))
    print(f"ratio: {wall:.3f}  (studio / plain non-pad tokens/s, wall clock, median of paired runs; goal >= 0.97)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
