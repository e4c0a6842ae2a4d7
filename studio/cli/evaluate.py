"""python -m studio eval --model RUN_DIR [--data FILE] --task sentiment|generate [--json] ...

With ``--json`` stdout carries exactly one JSON object (scripts parse it); everything else —
library warnings, progress, loading messages — goes to stderr. To guarantee that, stdout is
redirected to stderr while models load and run, and the JSON is written to the real stdout last.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

from ..app import generation_report
from ..errors import StudioError
from ..evaluation.footprint import with_memory


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, metavar="PATH",
                   help="run folder (runs/<name>), model folder or adapter folder")
    p.add_argument("--data", default=None, metavar="FILE",
                   help="labelled file: alpaca .jsonl/.json (output = label) or .csv/.xlsx with "
                        "instruction/input/output or text + label columns; default: the run's validation split")
    p.add_argument("--task", choices=["sentiment", "generate"], default="sentiment",
                   help="sentiment: accuracy, per-class P/R/F1, confusion matrix; generate: the answers, and with reference "
                        "answers (the output column) exact match, chrF, BLEU, ROUGE-L, answer loss and perplexity, "
                        "answer length, and for JSON or 'label: reason' answers the share that parses and matches")
    p.add_argument("--mode", choices=["score", "generate"], default="score",
                   help="sentiment only. score (default): pick the most likely label, fast and always "
                        "parseable; generate: let the model write an answer and parse it")
    p.add_argument("--template", default=None, metavar="NAME",
                   help="prompt template to build prompts with (default: the one the run was trained with; "
                        "auto, studio, default, alpaca, llama3, qwen, chatml, gemma)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout, nothing else")
    p.add_argument("--max-rows", type=int, default=None, metavar="N", help="use at most N rows")
    p.add_argument("--prompt", default=None, metavar="TEXT", help="generate task: one instruction to answer")
    p.add_argument("--input", default="", metavar="TEXT", help="generate task: optional input for --prompt")
    p.add_argument("--max-new-tokens", type=int, default=None, metavar="N",
                   help="generate task: answer length (default: 128 for --prompt; with reference answers, the longest "
                        "reference's tokens and a quarter more)")
    p.add_argument("--temperature", type=float, default=0.0, help="generate task: 0 = greedy")
    p.add_argument("--top-p", type=float, default=1.0, help="generate task: nucleus sampling")
    p.add_argument("--compare-base", action="store_true",
                   help="also score the base model on the same rows (before/after scorecard)")
    p.add_argument("--compare-quantized", default=None, metavar="4|8|FOLDER",
                   help="sentiment: also check a 4-bit/8-bit version of --model on the same rows (4 or 8: quantize "
                        "it now with bitsandbytes; FOLDER: a quantized export) and print memory, latency and accuracy "
                        "side by side")
    p.add_argument("--deploy-report", action="store_true",
                   help="measure the run's model in every deployable form (as trained, bitsandbytes 8-bit and NF4, "
                        "GGUF f16 and q8_0) on the same rows: file size, load time, memory, latency per answer, "
                        "accuracy (labels) or the generation check's chrF and exact match (written answers) and "
                        "agreement with the full model; --model must be a finished run")
    p.add_argument("--predictions-out", default=None, metavar="FILE.csv",
                   help="also write every row's prediction to this CSV")


def _rows(args: argparse.Namespace) -> list[dict[str, str]]:
    # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
    from ..evaluation.evaluate import load_rows, validation_rows
    if args.data:
        return load_rows(args.data, args.max_rows)
    rows = validation_rows(args.model)
    return rows[:args.max_rows] if args.max_rows else rows


def _sentiment(args: argparse.Namespace, loaded: Any) -> dict:
    # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
    from ..evaluation.evaluate import batch_predict, compare_loaded, sentiment_eval
    from ..evaluation.inference import base_of
    model, tok, template = loaded.model, loaded.tokenizer, loaded.template
    rows = _rows(args)
    if args.compare_base:
        base = base_of(loaded)
        card = with_memory(compare_loaded(model, tok, template, rows, base, args.mode), model, base)
        result = dict(card["tuned"])
        result["base"] = {k: card["base"][k] for k in ("accuracy", "macro_f1", "per_class", "confusion", "n",
                                                      "unparseable", "latency_ms_per_row", "rows_per_s",
                                                      "memory_bytes", "weights")}
        result["delta"] = card["delta"]
    else:
        # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
        from ..evaluation.leakage import training_keys
        result = sentiment_eval(model, tok, template, rows, mode=args.mode, trained_keys=training_keys(args.model))
    result["task"] = "sentiment"
    if args.predictions_out:
        result["predictions_csv"] = batch_predict(model, tok, template, rows, args.predictions_out,
                                                  labels=result["labels"], mode=args.mode)["path"]
    return result


def _generate(args: argparse.Namespace, loaded: Any) -> dict:
    # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
    from ..evaluation.evaluate import _generate_rows, batch_predict, generate
    model, tok, template = loaded.model, loaded.tokenizer, loaded.template
    if args.prompt is not None:
        rows = [{"instruction": args.prompt, "input": args.input, "output": ""}]
    else:
        rows = _rows(args)
    greedy = not (args.temperature and args.temperature > 0)
    if greedy and any(str(r.get("output", "")).strip() for r in rows):  # reference answers: score them
        return _generation_check(args, loaded, rows)
    max_new = args.max_new_tokens or 128
    start = time.perf_counter()
    if not greedy:   # sampling: one row at a time, as the playground does
        answers = [str(generate(model, tok, template, r["instruction"], r["input"], max_new_tokens=max_new,
                                temperature=args.temperature, top_p=args.top_p)) for r in rows]
    else:                                           # greedy: batched with the KV cache
        answers = _generate_rows(model, tok, template, rows, max_new)
    elapsed = time.perf_counter() - start
    outputs = [{"instruction": r["instruction"], "input": r["input"], "expected": r.get("output", ""), "answer": a}
               for r, a in zip(rows, answers)]
    result: dict[str, Any] = {"task": "generate", "n": len(outputs), "outputs": outputs,
                              "rows_per_s": len(outputs) / max(elapsed, 1e-9)}
    if args.predictions_out:
        result["predictions_csv"] = batch_predict(model, tok, template, rows, args.predictions_out, mode="generate",
                                                  max_new_tokens=max_new)["path"]
    return result


def _generation_check(args: argparse.Namespace, loaded: Any, rows: list[dict[str, str]]) -> dict:
    """The generation check (studio/evaluation/generation_check.py): the page's numbers for the same rows."""
    # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
    from ..evaluation.evaluate import batch_predict
    from ..evaluation.generation_check import compare_generation
    from ..evaluation.inference import base_of
    base = base_of(loaded) if args.compare_base else None
    start = time.perf_counter()
    check = compare_generation(loaded.model, loaded.tokenizer, loaded.template, rows, base, args.compare_base,
                               args.max_new_tokens)
    result = check.to_dict()
    result["rows_per_s"] = result["n"] / max(time.perf_counter() - start, 1e-9)
    if args.predictions_out:
        result["predictions_csv"] = batch_predict(loaded.model, loaded.tokenizer, loaded.template, rows,
                                                  args.predictions_out, mode="generate",
                                                  max_new_tokens=args.max_new_tokens or 128)["path"]
    return result


def _compare_quantized(args: argparse.Namespace) -> dict:
    # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
    from ..evaluation.compare import compare_full_quantized
    if args.task != "sentiment":
        raise StudioError.of("cli.compare_quantized_task", flag="--compare-quantized", needs="--task sentiment")
    result = compare_full_quantized(args.model, args.compare_quantized, _rows(args), args.mode)
    result["task"] = "compare-quantized"
    return result


def _deploy_report(args: argparse.Namespace) -> dict:
    # start-up: 0.04 s at import (yaml); `studio eval --help` never needs it
    from ..evaluation.deploy_report import deploy_report
    from ..runs.run_dir import RunDir
    if args.compare_quantized or args.compare_base or args.predictions_out:
        raise StudioError.of("cli.deploy_report_alone", flag="--deploy-report")
    run = RunDir(args.model)
    if not run.config.is_file() or run.final_model() is None:
        raise StudioError.of("cli.deploy_report_run", flag="--model", model=args.model)
    # written answers are scored by the generation check (deploy_report decides by the rows, as the page's does)
    result = deploy_report(args.model, _rows(args), mode=args.mode)
    result["task"] = "deploy-report"
    return result


def _print_deploy(result: dict) -> None:
    print(f"deploy report of {result['run']}: same {result['n']} rows, mode {result['mode']}, on {result['device']}")
    if result["mode"] == "generate-check":
        _print_deploy_generation(result)
        return
    print(f"{'form':<28}{'file MB':>9}{'load s':>8}{'memory MB':>11}{'ms/answer':>11}{'accuracy':>10}"
          f"{'agreement':>11}{'CPU-s':>8}")
    for r in result["rows"]:
        if r["unavailable"]:
            print(f"{r['name']:<28}not made here: {r['unavailable']}")
            continue
        print(f"{r['name']:<28}{r['size_bytes'] / 2**20:>9.1f}{r['load_s']:>8.2f}{r['memory_bytes'] / 2**20:>11.1f}"
              f"{r['latency_ms_per_row']:>11.1f}{r['accuracy']:>10.3f}{r['agreement']:>11.3f}{r['cpu_s']:>8.1f}")
    print("file MB: the weight files loaded (as trained: base + adapter); agreement: same label as the full model; "
          "ms/answer: batched label scoring, wall time / rows; CPU-s: load + scoring")
    print(result["gguf_reader"])


def _print_deploy_generation(result: dict) -> None:
    print(f"{'form':<28}{'file MB':>9}{'load s':>8}{'memory MB':>11}{'ms/answer':>11}{'chrF':>8}{'exact':>8}"
          f"{'agreement':>11}{'CPU-s':>8}")
    for r in result["rows"]:
        if r["unavailable"]:
            print(f"{r['name']:<28}not made here: {r['unavailable']}")
            continue
        print(f"{r['name']:<28}{r['size_bytes'] / 2**20:>9.1f}{r['load_s']:>8.2f}{r['memory_bytes'] / 2**20:>11.1f}"
              f"{r['latency_ms_per_row']:>11.1f}{r['chrf']:>8.1f}{r['exact_match']:>8.3f}{r['agreement']:>11.3f}"
              f"{r['cpu_s']:>8.1f}")
    print("agreement: the same answer as the full model (case and punctuation aside); ms/answer: batched greedy "
          "generation, wall time / rows; CPU-s: load + scoring")
    print(result["gguf_reader"])


def _print_compare(result: dict) -> None:
    full, quant = result["full"], result["quantized"]
    print(f"same {result['n']} rows; full: {full['weights']}; quantized: {quant['weights']}")
    print(f"{'':<22}{'full':>12}{'quantized':>12}{'change':>12}")
    for key, name, fmt, scale in (("accuracy", "accuracy", "{:.3f}", 1), ("macro_f1", "macro-F1", "{:.3f}", 1),
                                  ("latency_ms_per_row", "latency ms/answer", "{:.1f}", 1),
                                  ("memory_bytes", "model memory MB", "{:.2f}", 2 ** -20)):
        values = (full[key] * scale, quant[key] * scale, result["delta"][key] * scale)
        print(f"{name:<22}" + "".join(f"{fmt.format(v):>12}" for v in values))


def _print_human(result: dict) -> None:
    if result.get("task") == "compare-quantized":
        _print_compare(result)
        return
    if result.get("task") == "deploy-report":
        _print_deploy(result)
        return
    if result.get("task") == "generate" and "tuned" in result:
        generation_report.text(result)
        return
    if result.get("task") == "generate":
        for o in result["outputs"]:
            print(f"> {o['instruction']} {o['input']}".rstrip())
            print(o["answer"])
            print()
        print(f"{result['n']} rows, {result['rows_per_s']:.2f} rows/s")
        return
    print(f"accuracy {result['accuracy']:.3f}  macro-F1 {result['macro_f1']:.3f}  n={result['n']}  "
          f"unparseable={result['unparseable']}  {result['rows_per_s']:.1f} rows/s "
          f"({result['latency_ms_per_row']:.1f} ms/row)  mode={result['mode']}")
    if "base" in result:
        print(f"base model accuracy {result['base']['accuracy']:.3f}  (change {result['delta']['accuracy']:+.3f})")
        print(f"{'':<22}{'base':>12}{'fine-tuned':>12}")
        for key, name, fmt in (("accuracy", "accuracy", "{:.3f}"), ("macro_f1", "macro-F1", "{:.3f}"),
                               ("latency_ms_per_row", "latency ms/answer", "{:.1f}"),
                               ("memory_bytes", "model memory MB", "{:.2f}")):
            scale = 2 ** -20 if key == "memory_bytes" else 1
            print(f"{name:<22}" + "".join(f"{fmt.format(r[key] * scale):>12}" for r in (result["base"], result)))
    print(f"{'label':<16}{'precision':>10}{'recall':>10}{'f1':>10}{'support':>9}")
    for lab, c in result["per_class"].items():
        print(f"{lab:<16}{c['precision']:>10.3f}{c['recall']:>10.3f}{c['f1']:>10.3f}{c['support']:>9}")
    labels = result["confusion"]["labels"]
    print("confusion (rows: true, columns: predicted):", ", ".join(labels))
    for lab, row in zip(labels, result["confusion"]["matrix"]):
        print(f"  {lab:<14}" + "".join(f"{v:>8}" for v in row))
    for m in result["misclassified"][:10]:
        print(f"  wrong: expected {m['expected']}, got {m['parsed']!r}: {m['input'][:80]}")
    if result.get("skipped_rows"):
        print(f"{result['skipped_rows']} rows had an output that is none of the labels and were not scored")
    leak = result.get("leakage")
    if leak and leak["seen_rows"]:
        unseen = "n/a (every row was a training row)" if leak["unseen_accuracy"] is None else \
            f"{leak['unseen_accuracy']:.3f} on the {leak['unseen_rows']} rows it never saw"
        print(f"leakage: {leak['seen_rows']} of {leak['rows']} rows were training rows of this run; accuracy {unseen}")
    if result.get("predictions_csv"):
        print(f"predictions written to {result['predictions_csv']}")


def main(args: argparse.Namespace) -> int:
    """Evaluate and print (human table or one JSON object). Raises StudioError for user errors."""
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        # start-up: 0.07-0.17 s at import (yaml, the loader); `studio eval --help` never needs it
        from ..evaluation.inference import load_model
        if args.task == "generate" and args.prompt is None and not args.data:
            # start-up: 0.04 s at import (yaml); `studio eval --help` never needs it
            from ..runs.run_dir import RunDir
            if not RunDir(args.model).config.exists():
                raise StudioError.of("cli.generate_input", flag="--task generate", prompt="--prompt TEXT",
                                     data="--data FILE")
        if getattr(args, "deploy_report", False):  # loads each form itself, one after the other
            return _emit(args, _deploy_report(args), real_stdout)
        if getattr(args, "compare_quantized", None):  # loads both models itself, one after the other
            result = _compare_quantized(args)
            return _emit(args, result, real_stdout)
        # the engine's rule for CPU threads (one per core other processes leave free, measured while the model
        # loads): beside others' work, two threads of a 2-core CPU wait for each other at every one of a decoding
        # step's small operations (Gemma-3-270M, the check's base side on 64 rows: 76 s wall with 2 threads
        # against 28 s with 1, at load average 4)
        from ..runs.cpu_threads import FreeCores  # start-up: torch; `studio eval --help` never needs it
        free = FreeCores()
        loaded = load_model(args.model)
        if getattr(args, "template", None):
            from ..data.templates import get_template  # start-up: 0.01 s at import; `studio eval --help` never needs it
            loaded.template = get_template(args.template, loaded.tokenizer)
        free.apply()
        try:
            result = (_sentiment if args.task == "sentiment" else _generate)(args, loaded)
        finally:
            free.restore()
        result["template"] = loaded.template.name
    return _emit(args, result, real_stdout)


def _emit(args: argparse.Namespace, result: dict, real_stdout: Any) -> int:
    if args.json:
        real_stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        real_stdout.flush()
    else:
        with contextlib.redirect_stdout(real_stdout):
            _print_human(result)
    return 0


if __name__ == "__main__":  # also runnable without the dispatcher: python -m studio.cli.evaluate ...
    parser = argparse.ArgumentParser(prog="python -m studio eval")
    add_arguments(parser)
    raise SystemExit(main(parser.parse_args()))
