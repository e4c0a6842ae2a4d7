"""The reference experiment on a CPU (docs/logs/benchmarks-history.md §6): zero-shot vs LoRA vs QLoRA-4bit sentiment
accuracy of the built-in real models, training cost, answer latency and quantized deployment, as one table.

Every step runs in its own child process so its CPU seconds and peak RSS are its own (``/usr/bin/time -v``, or
``os.wait4``'s rusage where that tool is missing); results are appended to ``<out>/results.jsonl`` and a step already
recorded there is skipped, so the experiment can be run piecewise on a busy machine (``--force`` re-runs).

    python bench/reference_experiment.py --models smollm2 gemma                # everything, then the table
    python bench/reference_experiment.py --models smollm2 --only train:lora    # one step
    python bench/reference_experiment.py --table                               # print the table from results

Steps per model: ``train:lora`` and ``train:qlora`` (the model's CPU recipe; QLoRA = the same recipe with
``quantization_bit=4``), ``export:fp32|nf4|nf4-adapter|int8`` (of the LoRA run), and ``eval:<arm>:<rows>`` for arms
zero-shot, lora, qlora and the exports, on ``heldout`` (the recipe's held-out split of the sample reviews) and
``generated`` (``--generated N`` synthetic reviews from bench/reviews.py: other shops and phrasings). With ``--corpus``
the larger set of real reviews from bench/review_corpora.py comes in too: ``train:lora-corpus`` and
``train:qlora-corpus`` (the same recipe on ``--corpus-train`` rows per language) and ``eval:<arm>:corpus-en|zh``
(``--corpus-test`` rows per language) for zero-shot, lora, lora-corpus and qlora-corpus. All scoring is
the studio's evaluator in score mode (the likelier of the labels after the run's prompt template), torch threads =
``--threads`` for every step; latency is milliseconds per answered row.
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
from bench.common import time_v_report  # noqa: E402

MODELS = {"smollm2": ("smollm2-135m-instruct", "presets/recipes/smollm2-135m-lora-cpu.yaml"),
          "gemma": ("gemma3-270m", "presets/recipes/gemma3-270m-lora-cpu.yaml")}
EXPORTS = ("fp32", "nf4", "nf4-adapter", "int8")
ARMS = ("zero-shot", "lora", "qlora") + tuple(f"export-{e}" for e in EXPORTS)
CORPUS_ARMS = ("lora-corpus", "qlora-corpus")  # trained on the real-review corpus (--corpus)
CORPUS_ROWS = ("corpus-en", "corpus-zh")
CORPUS_EVAL_ARMS = ("zero-shot", "lora") + CORPUS_ARMS


# ------------------------------------------------------------------ child processes
def _child_eval(a: argparse.Namespace) -> None:
    import torch
    torch.set_num_threads(a.threads)
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import load_rows, sentiment_eval
    from studio.models.loading import load_for_inference
    rows = load_rows(a.data)
    t = time.time()
    model, tok, _ = load_for_inference(a.model)
    load_s = time.time() - t
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    c = time.process_time()
    r = sentiment_eval(model, tok, get_template(a.template, tok), rows)
    cpu_ms = (time.process_time() - c) * 1000 / max(1, r["n"])  # all threads; steadier than wall on a busy machine
    print("CHILD_RESULT " + json.dumps({
        "accuracy": r["accuracy"], "macro_f1": r["macro_f1"], "n": r["n"], "latency_ms": r["latency_ms_per_row"],
        "cpu_ms_per_row": round(cpu_ms), "load_s": round(load_s, 1), "model_mb": round(base.get_memory_footprint() / 2**20, 1),
        "weights": r.get("weights")}), flush=True)


def _child_export(a: argparse.Namespace) -> None:
    import torch
    torch.set_num_threads(a.threads)
    from studio.evaluation.export import export_model
    from studio.evaluation.quantize import quantize_export
    if a.kind == "fp32":
        info = export_model(a.model, a.out, merge=True, overwrite=True)
    else:
        bits = 8 if a.kind == "int8" else 4
        info = quantize_export(a.model, a.out, bits=bits, overwrite=True, keep_adapter=a.kind == "nf4-adapter")
    print("CHILD_RESULT " + json.dumps({"size_mb": info.get("size_mb"),
                                        "model_mb": round((info.get("memory_footprint_bytes") or 0) / 2**20, 1)}),
          flush=True)


# ------------------------------------------------------------------ measuring a child
def run_child(cmd: list[str], log: Path, threads: int) -> dict:
    """Run ``cmd`` with ``threads`` threads; its CPU seconds, wall seconds, peak RSS, load averages, CHILD_RESULT."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "TOKENIZERS_PARALLELISM": "false"}
    timefile = log.with_suffix(".time")
    use_time = Path("/usr/bin/time").exists()
    full = (["/usr/bin/time", "-v", "-o", str(timefile)] if use_time else []) + cmd
    load0 = os.getloadavg()[0]
    t = time.time()
    with open(log, "w") as fh:
        p = subprocess.Popen(full, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    out = {"rc": rc, "load_start": round(load0, 1), "load_end": round(os.getloadavg()[0], 1),
           "started": time.strftime("%H:%M", time.gmtime(t)), "ended": time.strftime("%H:%M", time.gmtime())}
    out.update(time_v_report(timefile) if use_time and timefile.exists() else
               {"cpu_s": round(ru.ru_utime + ru.ru_stime, 1), "wall_s": round(time.time() - t, 1),
                "peak_rss_gb": round(ru.ru_maxrss / 2**20, 2)})
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("CHILD_RESULT "):
            out.update(json.loads(line[len("CHILD_RESULT "):]))
    if rc:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        print(f"  FAILED rc={rc}: " + " | ".join(tail), flush=True)
    return out


# ------------------------------------------------------------------ the experiment
def _run_train_summary(run: Path) -> dict:
    """Steps and losses the engine recorded for a run (for the table's notes)."""
    info: dict = {}
    st = run / "status.json"
    if st.is_file():
        s = json.loads(st.read_text())
        info = {k: s[k] for k in ("state", "total_steps", "final_loss", "train_seconds") if k in s}
        info["trained_steps"] = s.get("step")  # a run stopped early (STOP flag, for time) says where
    return info


def _trained(run: Path) -> Path:
    """The run folder when it finished; else its last checkpoint (a run stopped early, e.g. for time)."""
    from studio.runs.run_dir import RunDir
    rd = RunDir(run)
    if not rd.config.exists() or rd.final_model() is not None:
        return run
    return rd.last_checkpoint() or run


def steps_for(key: str, a: argparse.Namespace, out: Path) -> list[tuple[str, list[str], Path | None]]:
    """(step id, command, run/export folder it makes) in the order they must run."""
    name, recipe = MODELS[key]
    py = [sys.executable]
    me = str(Path(__file__).resolve())
    from studio.config.run_config import RunConfig
    template = RunConfig.load(ROOT / recipe, ["dataset=unused.jsonl"]).template
    data = {"heldout": out / f"{key}-lora" / "val.jsonl", "generated": out / "generated.jsonl",
            **{rows: out / f"{rows}.jsonl" for rows in CORPUS_ROWS}}
    runs = {arm: out / f"{key}-{arm}" for arm in ("lora", "qlora") + CORPUS_ARMS}
    todo: list[tuple[str, list[str], Path | None]] = []
    for arm in ("lora", "qlora") + (CORPUS_ARMS if a.corpus else ()):
        dataset = out / ("corpus-train.jsonl" if arm.endswith("-corpus") else "reviews.jsonl")
        cmd = py + ["-m", "studio", "train", recipe, "--set", f"dataset={dataset}", "--set", f"output_dir={runs[arm]}"]
        todo.append((f"train:{arm}", cmd + (["--set", "quantization_bit=4"] if arm.startswith("qlora") else []),
                     runs[arm]))
    lora_src = _trained(runs["lora"])
    for kind in EXPORTS:
        todo.append((f"export:{kind}", py + [me, "_export", "--model", str(lora_src), "--kind", kind, "--out",
                                             str(out / f"{key}-{kind}"), "--threads", str(a.threads)],
                     out / f"{key}-{kind}"))
    sources = {"zero-shot": name, **{arm: str(run) for arm, run in runs.items()},
               **{f"export-{e}": str(out / f"{key}-{e}") for e in EXPORTS}}
    matrix = [(rows, arm) for rows in ("heldout", "generated") for arm in ARMS + (CORPUS_ARMS if a.corpus else ())]
    matrix += [(rows, arm) for rows in CORPUS_ROWS for arm in CORPUS_EVAL_ARMS] if a.corpus else []
    for rows, arm in matrix:
        src = sources[arm]
        if arm == "zero-shot":
            from studio.models.loading import resolve_model_source
            src = resolve_model_source(name)
        todo.append((f"eval:{arm}:{rows}", py + [me, "_eval", "--model", src, "--template", template, "--data",
                                                  str(data[rows]), "--threads", str(a.threads)], None))
    return todo


def load_results(path: Path) -> dict[tuple[str, str], dict]:
    res: dict[tuple[str, str], dict] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                res[(r["model"], r["step"])] = r
    return res


def _convert(csv_path: Path, jsonl: Path) -> None:
    """The sample reviews' format for every corpus file: English instruction and labels (a mixed or Chinese file
    would otherwise get Chinese ones, and a model trained on one format would be scored on another)."""
    subprocess.run([sys.executable, "-m", "studio", "convert", str(csv_path), "--out", str(jsonl), "--task", "sentiment",
                    "--text-column", "text", "--label-column", "label", "--language", "en"],
                   cwd=ROOT, check=True, capture_output=True)


def prepare_data(out: Path, generated: int, corpus: tuple[int, int] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if corpus and not (out / "corpus-train.jsonl").is_file():
        from bench.review_corpora import write
        paths = write(out / "corpus", *corpus)
        for rows in CORPUS_ROWS:
            _convert(paths[f"test-{rows[-2:]}"], out / f"{rows}.jsonl")
        _convert(paths["train"], out / "corpus-train.jsonl")
    if not (out / "reviews.jsonl").is_file():
        subprocess.run([sys.executable, "-m", "studio", "convert", "studio/assets/sample_reviews.csv", "--out",
                        str(out / "reviews.jsonl")], cwd=ROOT, check=True, capture_output=True)
    gen = out / "generated.jsonl"
    if generated and not gen.is_file():
        from bench.reviews import make_reviews, to_alpaca
        with open(gen, "w", encoding="utf-8") as fh:
            for r in to_alpaca(make_reviews(generated, seed=7, lang="mix")):
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _wanted(step: str, only: list[str] | None) -> bool:
    return not only or any(step == o or step.startswith(o + ":") for o in only)


def run_all(a: argparse.Namespace) -> None:
    out = (ROOT / a.out).resolve()
    prepare_data(out, a.generated, (a.corpus_train, a.corpus_test) if a.corpus else None)
    results_path = out / "results.jsonl"
    done = load_results(results_path)
    for key in a.models:
        for step, cmd, made in steps_for(key, a, out):
            if not _wanted(step, a.only) or (step.endswith(":generated") and not a.generated):
                continue
            if (key, step) in done and done[(key, step)].get("rc") == 0 and not a.force:
                continue
            if step.startswith("eval:"):
                src = cmd[cmd.index("--model") + 1]
                if not Path(src).exists():
                    print(f"{key} {step}: skipped, {src} does not exist yet", flush=True)
                    continue
            print(f"{key} {step} ... (load {os.getloadavg()[0]:.1f})", flush=True)
            r = run_child(cmd, out / f"{key}-{step.replace(':', '-')}.log", a.threads)
            if made is not None and step.startswith("train:"):
                r.update(_run_train_summary(made))
            if step.startswith(("export:", "eval:")):
                src = Path(cmd[cmd.index("--model") + 1])
                r["source"] = str(_trained(src) if (src / "config.yaml").exists() else src)
            r.update(model=key, step=step, threads=a.threads)
            with open(results_path, "a") as fh:
                fh.write(json.dumps(r) + "\n")
            print(f"  {json.dumps(r)}", flush=True)
    print_table(results_path)


def print_table(results_path: Path) -> None:
    res = load_results(results_path)
    def cell(key: str, step: str, fmt) -> str:
        r = res.get((key, step))
        return fmt(r) if r and r.get("rc") == 0 else "—"
    acc = lambda r: f"{r['accuracy']:.3f} / {r['macro_f1']:.3f}"  # noqa: E731
    lat = lambda r: f"{round(r['latency_ms'])} / {r.get('cpu_ms_per_row', '—')}"  # noqa: E731
    print("\n| model | arm | held-out acc / F1 | generated acc / F1 | latency ms/row wall / CPU (held-out) | model MB | "
          "train/export CPU-s | its wall s (load avg) | its peak RSS GB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in MODELS:
        if not any(k == key for k, _ in res):
            continue
        for arm in ARMS + CORPUS_ARMS:
            trained = (f"train:{arm}" if arm in ("lora", "qlora") + CORPUS_ARMS else None) or (
                f"export:{arm[7:]}" if arm.startswith("export-") else None)
            tr = res.get((key, trained)) if trained else None
            if tr is None and not any((key, f"eval:{arm}:{rows}") in res for rows in ("heldout", "generated")):
                continue  # nothing measured for this arm
            ok = tr and (tr.get("rc") == 0 or tr.get("state") == "aborted")  # aborted = stopped on request
            if ok and tr.get("state") == "aborted" and not tr.get("trained_steps"):
                st = results_path.parent / f"{key}-{arm}" / "status.json"
                tr["trained_steps"] = json.loads(st.read_text()).get("step") if st.is_file() else "?"
            stopped = f" (stopped at step {tr['trained_steps']})" if ok and tr.get("state") == "aborted" else ""
            train_cells = (f"{tr['cpu_s']}{stopped} | {tr['wall_s']} ({tr['load_start']}–{tr['load_end']}) | "
                           f"{tr['peak_rss_gb']}" if ok else "— | — | —")
            print(f"| {MODELS[key][0]} | {arm} | {cell(key, f'eval:{arm}:heldout', acc)} | "
                  f"{cell(key, f'eval:{arm}:generated', acc)} | "
                  f"{cell(key, f'eval:{arm}:heldout', lat)} | "
                  f"{cell(key, f'eval:{arm}:heldout', lambda r: str(r['model_mb']))} | {train_cells} |")
    if not any(step.startswith("eval:") and step.endswith(CORPUS_ROWS) for _, step in res):
        return
    print("\n| model | arm | real reviews, English: acc / F1 | real reviews, Chinese: acc / F1 | "
          "latency ms/row wall / CPU (English) |")
    print("|---|---|---|---|---|")
    for key in MODELS:
        for arm in CORPUS_EVAL_ARMS:
            if any((key, f"eval:{arm}:{rows}") in res for rows in CORPUS_ROWS):
                print(f"| {MODELS[key][0]} | {arm} | {cell(key, f'eval:{arm}:corpus-en', acc)} | "
                      f"{cell(key, f'eval:{arm}:corpus-zh', acc)} | {cell(key, f'eval:{arm}:corpus-en', lat)} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("_eval", "_export"):
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("--model", required=True)
        ap.add_argument("--template", default="auto")
        ap.add_argument("--data")
        ap.add_argument("--kind", choices=EXPORTS)
        ap.add_argument("--out")
        ap.add_argument("--threads", type=int, default=2)
        a = ap.parse_args()
        (_child_eval if a.cmd == "_eval" else _child_export)(a)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--only", nargs="+", default=None, metavar="STEP",
                    help="steps to run, e.g. train:lora eval:zero-shot export (prefixes match)")
    ap.add_argument("--generated", type=int, default=100, help="synthetic review rows to score too (0: none)")
    ap.add_argument("--corpus", action="store_true",
                    help="also train and score on the larger set of real reviews (bench/review_corpora.py)")
    ap.add_argument("--corpus-train", type=int, default=800, help="corpus training rows per language")
    ap.add_argument("--corpus-test", type=int, default=250, help="corpus test rows per language")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="runs/ref", help="folder for runs, exports, logs and results.jsonl")
    ap.add_argument("--force", action="store_true", help="re-run steps already recorded")
    ap.add_argument("--table", action="store_true", help="only print the table from results.jsonl")
    a = ap.parse_args()
    if a.table:
        print_table((ROOT / a.out).resolve() / "results.jsonl")
        return
    run_all(a)


if __name__ == "__main__":
    main()
