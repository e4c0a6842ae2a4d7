"""Selective logits on a real model: python bench/selective_logits_real.py --model-dir DIR [--steps 3]

One LoRA training step (r 8, all linear layers, fp32, forward + backward) on a batch of 8 sentiment
reviews in the model's own chat template, with the loss computed (a) the normal way, the model's
forward projecting every position onto the vocabulary, and (b) studio's ``selective_logits``
(studio/engine/loss.py: the output layer only at the answer tokens, fused chunked cross-entropy).
Arms alternate A B B A in one process after one warm-up step each; CPU seconds per step (steady on
a shared machine) and wall seconds are reported, with the loss of both arms on the same batch, and each
step's memory peak: the RSS high-water mark is reset before the step (Linux ``/proc/self/clear_refs``)
and read after it, minus the RSS before it (what the step adds on top of the loaded model).
Model folders come from ``studio.zoo`` (e.g. workspace/models/gemma3-270m).
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak_rss() -> int:
    """Reset this process's RSS high-water mark to its current RSS (Linux: clear_refs 5); return that RSS (KiB)."""
    Path("/proc/self/clear_refs").write_text("5")
    return _rss_kib("VmRSS")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--steps", type=int, default=3, help="timed steps per arm (after one warm-up each)")
    ap.add_argument("--cutoff", type=int, default=128)
    a = ap.parse_args(argv)
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from bench.common import print_machine, review_rows
    from studio.data.templates import get_template
    from studio.data.tokenize import encode_examples
    from studio.engine.loss import selective_causal_lm_loss
    print_machine()
    torch.set_num_threads(1)
    tok = AutoTokenizer.from_pretrained(a.model_dir)
    model = AutoModelForCausalLM.from_pretrained(a.model_dir, dtype=torch.float32)
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"))
    rows, _ = review_rows(8, seed=5, long_tail=False)
    feats = encode_examples(tok, get_template("auto", tok), rows, a.cutoff)
    n = max(len(f["input_ids"]) for f in feats)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    batch = {"input_ids": torch.tensor([f["input_ids"] + [pad] * (n - len(f["input_ids"])) for f in feats]),
             "attention_mask": torch.tensor([[1] * len(f["input_ids"]) + [0] * (n - len(f["input_ids"]))
                                             for f in feats]),
             "labels": torch.tensor([f["labels"] + [-100] * (n - len(f["labels"])) for f in feats])}
    answer = int((batch["labels"][:, 1:] != -100).sum())
    real = int(batch["attention_mask"].sum())
    vocab = model.get_base_model().get_output_embeddings().weight.shape[0]
    print(f"model {a.model_dir}: vocabulary {vocab:,}; batch 8 x {n} tokens ({real} real, {answer} carry loss)")
    model.train()

    def step(selective: bool) -> tuple[float, float, float, float]:
        model.zero_grad(set_to_none=True)
        gc.collect()
        base = _reset_peak_rss()
        w, c = time.perf_counter(), time.process_time()
        loss = selective_causal_lm_loss(model, batch) if selective else model(**batch).loss
        loss.backward()
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        value = float(loss.detach())
        del loss
        return wall, cpu, value, (_rss_kib("VmHWM") - base) / 2**20

    times: dict[str, list[tuple[float, float, float]]] = {"full": [], "selective": []}
    step(False), step(True)  # warm-up
    for i in range(a.steps):
        for name in (["full", "selective"] if i % 2 == 0 else ["selective", "full"]):
            times[name].append(step(name == "selective"))
            print(f"  {name:9s} wall {times[name][-1][0]:6.2f} s  CPU {times[name][-1][1]:6.2f} s  "
                  f"loss {times[name][-1][2]:.5f}  step peak +{times[name][-1][3]:.3f} GiB RSS", flush=True)
    med = {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for k, v in times.items()}
    print(f"median step: full {med['full'][0]:.2f} s wall / {med['full'][1]:.2f} s CPU; selective "
          f"{med['selective'][0]:.2f} s wall / {med['selective'][1]:.2f} s CPU")
    print(f"loss difference (same batch and weights): {abs(times['full'][0][2] - times['selective'][0][2]):.2e}")
    mem = {k: statistics.median(t[3] for t in v) for k, v in times.items()}
    print(f"step peak memory above the model (RSS high-water mark during forward + backward): full {mem['full']:.3f} "
          f"GiB, selective {mem['selective']:.3f} GiB; selective / full = {mem['selective'] / max(mem['full'], 1e-9):.3f}")
    print(f"ratio: {med['full'][1] / med['selective'][1]:.3f}  (full / selective CPU seconds per LoRA step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
