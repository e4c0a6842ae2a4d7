"""Long answers: the studio's chunked head vs transformers' own ``logits_to_keep`` mask:
python bench/long_answers.py [--repeats 2] [--answer-tokens 200]

Both arms compute logits only where the loss is. transformers' native path (a boolean ``logits_to_keep`` mask of
the answer positions + ``shift_labels``, six lines in a collator; the library-savvy baseline of
bench/real_throughput.py) materialises ``answer tokens x vocabulary`` fp32 logits and their gradient at once; the
studio's ``engine.loss.selective_causal_lm_loss`` projects and scores them in chunks (``memory.terms`` rule) and
never holds more than one chunk. For sentiment rows (1-3 answer tokens) the two hold the same few logits; this bench
is the case where they differ: Gemma-3-270M (262,144-token vocabulary), LoRA r 8 on all linear layers, fp32, a batch
of 4 instruction rows with 40 prompt tokens and ``--answer-tokens`` answer tokens each (real review text, the
answers made of the sample reviews joined), 2 optimizer steps (AdamW). Each arm a fresh child process, one torch
thread, ABBA order; reported: peak RSS of the child (model weights included: the difference is the head's),
CPU-seconds of the 2 steps, and the first step's loss (equal between arms within 1e-4: the same computation).
"""
from __future__ import annotations

import csv
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import ab_parser, median, print_machine, run_arms, run_as_child  # noqa: E402

ARMS = ["studio_chunked", "native_keep"]


def _batch(tok: Any, rows: int, prompt_tokens: int, answer_tokens: int) -> dict[str, Any]:
    import torch
    with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as f:
        text = " ".join(r["text"] for r in csv.DictReader(f))
    ids = tok.encode(text, add_special_tokens=False)
    span = prompt_tokens + answer_tokens
    seqs = [ids[i * span:(i + 1) * span] for i in range(rows)]
    input_ids = torch.tensor(seqs)
    labels = input_ids.clone()
    labels[:, :prompt_tokens] = -100
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}


def child(arm: str, spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from studio.engine.loss import selective_causal_lm_loss
    torch.set_num_threads(1)
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    batch = _batch(tok, spec["rows"], spec["prompt_tokens"], spec["answer_tokens"])
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    losses = []
    c0 = time.process_time()
    for _ in range(spec["steps"]):
        if arm == "studio_chunked":
            loss = selective_causal_lm_loss(model, batch)
        else:
            shifted = torch.nn.functional.pad(batch["labels"][:, 1:], (0, 1), value=-100)
            keep = shifted != -100
            loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                         labels=batch["labels"], logits_to_keep=keep, shift_labels=shifted[keep]).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss))
    return {"cpu_s": time.process_time() - c0, "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            / 2**20, "rss_after_load_gib": rss_loaded, "loss0": losses[0], "losses": losses,
            "answer_positions": int((batch["labels"][:, 1:] != -100).sum())}


def main() -> None:
    ap = ab_parser(__doc__, "a smaller case (60 answer tokens)", "ABBA rounds (default 2)", threads=False)
    ap.add_argument("--answer-tokens", type=int, default=200)
    ap.add_argument("--model", default="gemma3-270m")
    a = ap.parse_args()
    if run_as_child(a, child):
        return
    from studio.models import zoo
    folder = zoo.ensure_prepared(a.model)
    spec = {"model_dir": str(folder), "rows": 4, "prompt_tokens": 40, "steps": 2,
            "answer_tokens": 60 if a.quick else a.answer_tokens}
    print_machine(1)
    import os
    print(f"model {a.model}; batch 4 x ({spec['prompt_tokens']} prompt + {spec['answer_tokens']} answer tokens); "
          f"load average before {os.getloadavg()[0]:.2f}", flush=True)

    def each(i: int, arm: str, r: dict[str, Any]) -> None:
        print(f"{i + 1}. {arm}: peak RSS {r['peak_rss_gib']:.2f} GiB (after load {r['rss_after_load_gib']:.2f}), "
              f"{r['cpu_s']:.1f} CPU-s for {spec['steps']} steps, first loss {r['loss0']:.5f}", flush=True)

    res = run_arms(Path(__file__), ARMS, a.repeats or 2, lambda i, arm: spec, each)
    s, n = res["studio_chunked"], res["native_keep"]
    print(f"peak RSS median: studio {median([r['peak_rss_gib'] for r in s]):.2f} GiB, native "
          f"{median([r['peak_rss_gib'] for r in n]):.2f} GiB; CPU-s median: studio {median([r['cpu_s'] for r in s]):.1f}, "
          f"native {median([r['cpu_s'] for r in n]):.1f}; first-step loss difference "
          f"{max(abs(x['loss0'] - y['loss0']) for x, y in zip(s, n)):.2e}")
    print(f"ratio: {median([r['peak_rss_gib'] for r in n]) / median([r['peak_rss_gib'] for r in s]):.2f} "
          f"(native / studio peak RSS); load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
