"""Zero-shot vs fine-tuned sentiment accuracy of a built-in real model on held-out rows
(docs/logs/benchmarks-history.md §6).

Scores each row with the studio's own evaluator (``sentiment_eval``, score mode: the more likely of the labels,
prompt built exactly as in training with the run's template), for the base model (zero-shot) and, with
``--run``, for the fine-tuned run; prints accuracy, macro-F1, latency per answer and peak RSS.

    python bench/real_models_accuracy.py --model smollm2-135m-instruct --template auto \\
        --data runs/smollm2-lora/val.jsonl --run runs/smollm2-lora
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="built-in model name")
    ap.add_argument("--template", default="auto")
    ap.add_argument("--data", required=True, help="held-out rows (alpaca .jsonl)")
    ap.add_argument("--run", default=None, help="fine-tuned run folder to score too")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-zero-shot", action="store_true", help="score only the run")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import load_rows, sentiment_eval
    from studio.models.loading import load_for_inference, load_tokenizer, resolve_model_source
    rows = load_rows(args.data)
    arms = ([] if args.no_zero_shot else [("zero-shot " + args.model, None)]) + \
        ([("LoRA " + args.run, args.run)] if args.run else [])
    print(f"{len(rows)} rows from {args.data}; threads {args.threads}")
    print("| model | accuracy | macro-F1 | latency ms/answer | load s | peak RSS GB |")
    print("|---|---|---|---|---|---|")
    for name, run in arms:
        t = time.time()
        if run is None:
            from transformers import AutoModelForCausalLM
            folder = resolve_model_source(args.model)
            tok = load_tokenizer(folder)
            model = AutoModelForCausalLM.from_pretrained(folder).eval()
        else:
            model, tok, _ = load_for_inference(run)
        load_s = time.time() - t
        r = sentiment_eval(model, tok, get_template(args.template, tok), rows)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"| {name} | {r['accuracy']:.3f} | {r['macro_f1']:.3f} | {r['latency_ms_per_row']:.0f} | "
              f"{load_s:.1f} | {rss:.2f} |", flush=True)
        print("BENCH_RESULT " + json.dumps({"arm": name, "accuracy": r["accuracy"], "macro_f1": r["macro_f1"],
                                            "latency_ms": r["latency_ms_per_row"], "load_s": load_s,
                                            "peak_rss_gb": rss}), flush=True)
        del model


if __name__ == "__main__":
    main()
