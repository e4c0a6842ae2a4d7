"""Label scoring speed: studio's evaluation vs the naive per-label loop: python bench/eval_speed.py [--quick]

Arms (same model, rows and labels, one process, one torch thread, ABBA order, no gradients):

- **studio**: ``evaluate._score_labels``: prompts tokenized once (cached), each batch of 32 prompts runs through
  the model once with its KV cache kept, every label is scored from that cache (studio/evaluation/label_scoring.py);
- **naive**: the strongest simple baseline: for each label, one batched forward of ``prompt + label`` for 32 rows,
  full logits, log-softmax (``label_logprobs_naive``): the prompt is computed once per label. It gets the same
  length-sorted batches as the studio, so the ratio is the prompt cache's, not the batching's;
- **concat** (full form only): the studio's previous way: every row x label in one padded batch, the output
  layer only at the answer tokens, no cache.

Scores of every arm are compared (max absolute difference, must be < 1e-4). With ``--generate`` the full form
also times greedy generation of 8 tokens: batched with the KV cache vs one ``generate`` call per row.
Model: a random Llama (hidden 512, 4 layers, vocabulary ~3000 fitted to the reviews; --quick: hidden 256, 2 layers,
short reviews), or ``--model-dir DIR``
(a real model folder, e.g. $STUDIO_MODEL_CACHE/smollm2-135m-instruct) with its own chat template.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import build_model, interleaved, median, print_machine, review_rows, table

DIMS = {"hidden": 512, "layers": 4, "heads": 8, "vocab_size": 3000, "intermediate": 1408}
QUICK_DIMS = {"hidden": 256, "layers": 2, "heads": 4, "vocab_size": 3000, "intermediate": 704}
FULL = {"rows": 256, "repeats": 3, "arms": ["studio", "naive", "concat"], "long_tail": True, "dims": DIMS}
QUICK = {"rows": 64, "repeats": 2, "arms": ["studio", "naive"], "long_tail": False, "dims": QUICK_DIMS}
LABELS = ["positive", "negative"]
BATCH = 32


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"CI size: {QUICK['rows']} rows, studio vs naive, 2 blocks")
    ap.add_argument("--repeats", type=int, help="ABBA blocks (default 3, quick 2)")
    ap.add_argument("--model-dir", help="a real model folder instead of the random local Llama")
    ap.add_argument("--generate", action="store_true", help="also time batched vs row-by-row greedy generation")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    import torch
    from transformers import AutoModelForCausalLM
    from studio.data.templates import get_template
    from studio.evaluation import evaluate as ev
    from studio.evaluation import prompts as pr
    from studio.evaluation.label_scoring import label_logprobs_concat, label_logprobs_naive
    from studio.models.loading import load_tokenizer
    torch.set_num_threads(a.threads)
    size = QUICK if a.quick else FULL
    print_machine()
    rows, source = review_rows(size["rows"], seed=9, long_tail=size["long_tail"])
    with tempfile.TemporaryDirectory(prefix="bench_eval_") as tmp:
        folder = a.model_dir or str(build_model(Path(tmp) / "model", rows, size["dims"]))
        tok = load_tokenizer(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    template = get_template("auto" if a.model_dir else "studio", tok)
    answers = [tok.encode(template.answer(lab), add_special_tokens=False) for lab in LABELS]
    prompts = [ev.prompt_ids(tok, template, r["instruction"], r["input"]) for r in rows]
    lengths = sorted(len(p) for p in prompts)
    print(f"model {a.model_dir or size['dims']}; {len(rows)} rows from {source}; prompt tokens median "
          f"{lengths[len(lengths) // 2]}, max {lengths[-1]}; labels {LABELS} = {[len(x) for x in answers]} tokens; "
          f"batch {BATCH} rows; torch threads {torch.get_num_threads()}")

    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))

    def batched(fn: Callable) -> Callable[[], list[list[float]]]:
        """Batches of similar-length prompts (as the studio makes them), scores back in the rows' order."""
        def run() -> list[list[float]]:
            out: list[list[float]] = [[] for _ in prompts]
            for i in range(0, len(order), BATCH):
                part = order[i:i + BATCH]
                for k, s in zip(part, fn(model, [prompts[j] for j in part], answers, tok.pad_token_id)):
                    out[k] = s
            return out
        return run

    def studio() -> list[list[float]]:
        pr._memo.clear()   # every studio run tokenizes its prompts again: no help from an earlier arm
        return ev._score_labels(model, tok, template, rows, LABELS, batch_rows=BATCH)

    arms = {"studio": studio, "naive": batched(label_logprobs_naive), "concat": batched(label_logprobs_concat)}
    batched(label_logprobs_naive)()   # warm-up (allocator, oneDNN kernels)
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in size["arms"]}
    scores: dict[str, list[list[float]]] = {}
    for arm in interleaved(size["arms"], a.repeats or size["repeats"]):
        out, wall, cpu = timed(arms[arm])
        scores[arm] = out
        results[arm].append((wall, cpu))
        print(f"  {arm:7s} {wall:7.2f} s wall {cpu:7.2f} s CPU  {len(rows) / cpu:7.1f} rows/CPU-s", flush=True)
    diff = max(abs(x - y) for arm in scores for ra, rb in zip(scores[arm], scores["naive"]) for x, y in zip(ra, rb))
    print(f"max |score - naive score| over {len(rows)} rows x {len(LABELS)} labels, all arms: {diff:.2e}")
    if diff >= 1e-4:
        raise SystemExit("scores differ from the naive loop by 1e-4 or more")
    print(table(["arm", "runs", "median wall s", "median CPU s", "rows/s (wall)", "rows/CPU-s"],
                [[k, len(v), median([w for w, _ in v]), median([c for _, c in v]), len(rows) / median([w for w, _ in v]),
                  len(rows) / median([c for _, c in v])] for k, v in results.items()]))
    per_cpu = [n[1] / s[1] for s, n in zip(results["studio"], results["naive"])]
    per_wall = [n[0] / s[0] for s, n in zip(results["studio"], results["naive"])]
    print(f"naive / studio per block: CPU {' '.join(f'{x:.3f}' for x in per_cpu)}; wall "
          f"{' '.join(f'{x:.3f}' for x in per_wall)}")
    if a.generate:
        gen_rows = rows[:32]
        stops = ev._stop_strings(tok, template)
        pids = [ev.prompt_ids(tok, template, r["instruction"], r["input"]) for r in gen_rows]
        from studio.evaluation.generation import generate_batch
        one = lambda: [str(ev.generate(model, tok, template, r["instruction"], r["input"], max_new_tokens=8))  # noqa
                       for r in gen_rows]
        batch = lambda: generate_batch(model, tok, pids, 8, lambda t: ev._cut(t, stops))  # noqa: E731
        g: dict[str, list[float]] = {"batched": [], "one-by-one": []}
        texts = {}
        for arm in interleaved(list(g), 2):
            texts[arm], _, cpu = timed(batch if arm == "batched" else one)
            g[arm].append(cpu)
        same = sum(x == y for x, y in zip(texts["batched"], texts["one-by-one"]))
        print(f"generation, {len(gen_rows)} rows x 8 new tokens: batched {median(g['batched']):.2f} CPU s "
              f"({len(gen_rows) / median(g['batched']):.1f} rows/CPU-s), one by one {median(g['one-by-one']):.2f} "
              f"CPU s; one-by-one / batched = {median(g['one-by-one']) / median(g['batched']):.2f}; "
              f"identical answers {same}/{len(gen_rows)}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    print(f"ratio: {median(per_cpu):.3f}  (naive per-label loop / studio label scoring, CPU seconds, median of "
          f"ABBA blocks; wall {median(per_wall):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
