"""Peak RSS with a 128k-vocabulary model at 1024 tokens, studio vs plain Trainer: python bench/peak_memory_vocab.py

Goal: studio <= 0.75x the plain Trainer's peak. A Llama with a
128,256-entry vocabulary (Llama-3's size; hidden 256, 2 layers, so the vocabulary dominates as
in small modern models) is LoRA-trained (r 8, all linear layers, fp32 on CPU) for a few steps on
rows of 1024 tokens, batch 1, in fresh subprocesses; the peak is the process's ``VmHWM``.

* ``studio`` / ``plain``: the default, loss on the answer only (the prompt masked);
* ``studio-all`` / ``plain-all`` (``train_on_prompt``): loss on every position, so only the
  chunked loss (not the selection) can help; the strict case.

The model's tokenizer is fitted to the review text (a few thousand tokens), and the model's
embedding and head have 128,256 rows, as a padded vocabulary does; memory and compute depend on
the rows, not on which ids the text uses.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ab_parser, median, paired_ratios, print_machine, review_rows, run_arms, run_as_child, table, \
    write_jsonl
from bench.throughput_vs_trainer import encode_plain

VOCAB, HIDDEN, LAYERS, SEQ, STEPS = 128_256, 256, 2, 1024, 3


def peak_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def build(folder: Path, rows: list[dict[str, str]]) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM
    from studio.models.loading import build_tiny_llama, demo_texts
    build_tiny_llama(folder, demo_texts(rows), hidden=32, layers=1, heads=2, vocab_size=3000)
    import torch
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=LAYERS,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                      tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder


def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="lora", lora_target="all", template="studio", cutoff_len=SEQ,
                    per_device_train_batch_size=1, max_steps=STEPS, logging_steps=1, save_steps=10**6,
                    precision="fp32", plot_loss=False, train_on_prompt=spec["all"])
    summary = run_training(cfg)
    return {"peak_gb": peak_gb(), "final_loss": summary["final_loss"]}


def plain_arm(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(spec["model_dir"]),
                           LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"))
    rows = [json.loads(line) for line in Path(spec["data"]).read_text(encoding="utf-8").splitlines() if line]
    train = [encode_plain(tok, r, SEQ) for r in rows]
    if spec["all"]:
        train = [{**f, "labels": list(f["input_ids"])} for f in train]
    collate = lambda b: {k: torch.tensor([f[k] for f in b]) for k in ("input_ids", "attention_mask", "labels")}  # noqa
    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=1, max_steps=STEPS, logging_steps=1,
                             save_strategy="no", report_to="none", use_cpu=True, disable_tqdm=True,
                             remove_unused_columns=False, learning_rate=2e-4)
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collate)
    trainer.train()
    return {"peak_gb": peak_gb(), "final_loss": [h["loss"] for h in trainer.state.log_history if "loss" in h][-1]}


def main(argv: list[str] | None = None) -> int:
    a = ab_parser(__doc__, "CI size: 1 run per arm, answer-only loss", "runs per arm (default 2, quick 1)",
                  threads=False).parse_args(argv)
    if run_as_child(a, lambda name, spec: plain_arm(spec) if name.startswith("plain") else studio_arm(spec)):
        return 0
    repeats = a.repeats or (1 if a.quick else 2)
    arms = ["studio", "plain"] if a.quick else ["studio", "plain", "studio-all", "plain-all"]
    print_machine()
    with tempfile.TemporaryDirectory(prefix="bench_vocab_mem_") as tmp:
        root = Path(tmp)
        short, source = review_rows(400, seed=4, long_tail=False)
        # rows of >= 1024 tokens: many same-label reviews run together (cut to 1024, answer kept)
        rows = [{**short[i], "input": " ".join(r["input"] for r in short[i:i + 60])} for i in range(0, 8)]
        data = write_jsonl(root / "long.jsonl", rows)
        model_dir = build(root / "model", short)
        spec = {"model_dir": str(model_dir), "data": str(data)}
        print(f"model: Llama, vocabulary {VOCAB:,}, hidden {HIDDEN}, {LAYERS} layers, untied head; LoRA r8 all "
              f"linear, fp32; {STEPS} steps of 1 row x {SEQ} tokens; data from {source}")

        def each(i: int, arm: str, r: dict[str, Any]) -> None:
            print(f"  run {i + 1}: {arm:10s} peak RSS {r['peak_gb']:.3f} GiB  loss {r['final_loss']:.3f}", flush=True)
        results = run_arms(Path(__file__), arms, repeats, lambda i, arm: {
            **spec, "all": arm.endswith("-all"), "out": str(root / f"r{i}")}, each)
    print()
    print(table(["arm", "runs", "median peak RSS GiB", "min", "max"],
                [[k, len(rs), median([r["peak_gb"] for r in rs]), min(r["peak_gb"] for r in rs),
                  max(r["peak_gb"] for r in rs)] for k, rs in results.items()]))
    if "plain-all" in results:
        all_ratio = median(paired_ratios(results, "studio-all", "plain-all", "peak_gb"))
        print(f"studio-all / plain-all (loss on every token): {all_ratio:.3f}")
    ratio = median(paired_ratios(results, "studio", "plain", "peak_gb"))
    print(f"ratio: {ratio:.3f}  (studio / plain Trainer peak RSS, answer-only loss, median of paired runs; "
          f"goal <= 0.75)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
