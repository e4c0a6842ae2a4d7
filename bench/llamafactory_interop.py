"""Interop with LLaMA-Factory, both ways (not CI: it installs LLaMA-Factory into its own ~7 GB venv).

    python bench/llamafactory_interop.py [--venv /work/lfvenv] [--lf-repo DIR --lf-ref v0.9.5] [--steps 2]
                                         [--skip-install] [--only NAME ...] [--quick]

1. Every LLaMA-Factory SFT example YAML (``stage: sft`` under ``examples/`` of a LLaMA-Factory git checkout at
   ``--lf-ref``; without ``--lf-repo``, the copies in tests/fixtures/llamafactory/) through the studio AND through
   ``llamafactory-cli train``, with the model swapped for a local tiny Llama and the demo datasets
   (alpaca_en_demo, identity, ...) replaced by a local alpaca + ShareGPT pair registered in dataset_info.json.
2. The studio's recipes (presets/recipes/) through LLaMA-Factory and the studio, same swap; keys LLaMA-Factory
   does not know (oom_adaptive, ...) are passed with ALLOW_EXTRA_ARGS=1. ``template: auto/studio`` (names
   LLaMA-Factory lacks) become ``alpaca`` on both sides.

Loss match: every row of both datasets is the same two-turn conversation (the alpaca row carries it as
``history``), so whatever order a sampler draws, the first batch is the same; the first logged loss (step 1,
before any update) then depends only on the model, the template, the tokenization and which tokens carry loss
(both sides default to loss on every assistant turn: ``mask_history: false``). It must agree within 1%.
CPU only: ``bf16``/``fp16``, ``deepspeed``, ``quantization_bit`` and FSDP/Ray/Unsloth/Liger switches are turned
off on both sides for the run (the table's last column lists what was switched off per file).

The venv: torch 2.9.1 (CPU wheels are not on this machine's mirror for 2.13 + torchaudio; LLaMA-Factory imports
torchaudio, and torch 2.9.1 is the version with a torchvision and torchaudio that import here), then
``llamafactory==0.9.5`` with those three pinned as constraints (see install()).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures" / "llamafactory"
RECIPES = ROOT / "presets" / "recipes"
LF_VERSION = "0.9.5"
TORCH_PINS = ["torch==2.9.1", "torchvision==0.24.1", "torchaudio==2.9.1"]
# switched off on both sides: this machine has no GPU, no second process group, none of these kernels
CPU_OFF = {"bf16": False, "fp16": False, "pure_bf16": False, "deepspeed": None, "quantization_bit": None,
           "quantization_method": None, "fsdp": None, "fsdp_config": None, "ray_run": None, "ray_num_workers": None,
           "ray_init_kwargs": None, "resources_per_worker": None, "placement_strategy": None,
           "use_unsloth": None, "enable_liger_kernel": None, "flash_attn": None, "use_kt": None,
           "kt_optimize_rule": None, "cpu_infer": None, "chunk_size": None, "fp8": None, "fp8_backend": None,
           "fp8_enable_fsdp_float8_all_gather": None}
# the tiny model's tokenizer gets the special tokens of the templates these files use, so neither side splits
# a turn marker into pieces (LLaMA-Factory would add a missing stop word and resize the embeddings)
TEMPLATE_TOKENS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                   "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<start_of_turn>", "<end_of_turn>", "<bos>",
                   "<eos>"]
CONVERSATION = [("Classify the sentiment of this review: the battery lasts all day.", "positive"),
                ("And this one: it broke after a week.", "negative")]


def install(venv: Path) -> Path:
    """A venv of its own, outside the repository: torch 2.9.1 CPU stack first, then LLaMA-Factory pinned to it."""
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run(pip + TORCH_PINS[:2], check=True)
    subprocess.run(pip + [TORCH_PINS[0], "torchaudio==2.9.*"], check=True)
    constraints = venv / "constraints.txt"
    constraints.write_text("\n".join(TORCH_PINS) + "\n")
    subprocess.run(pip + ["-c", str(constraints), f"llamafactory=={LF_VERSION}"], check=True)
    # LLaMA-Factory does not depend on bitsandbytes, but its QLoRA runs (quantization_bit) and 8-bit optimizers import
    # it: without it the studio's QLoRA recipes were refused there with "You need to install `bitsandbytes`".
    import bitsandbytes  # the studio's own pin, so both sides quantize with the same release
    subprocess.run(pip + ["-c", str(constraints), f"bitsandbytes=={bitsandbytes.__version__}"], check=True)
    return venv / "bin" / "llamafactory-cli"


def lf_examples(repo: Path | None, ref: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, config) of every ``stage: sft`` YAML under examples/ of a LLaMA-Factory git dir at ``ref``."""
    if repo is None:
        return [(f.name, yaml.safe_load(f.read_text())) for f in sorted(FIXTURES.glob("*.yaml"))]
    git = ["git", "--git-dir", str(repo)] if (repo / "HEAD").is_file() else ["git", "-C", str(repo)]
    names = subprocess.run(git + ["ls-tree", "-r", "--name-only", ref, "examples"], check=True,
                           capture_output=True, text=True).stdout.split()
    out = []
    for name in names:
        if name.endswith(".yaml"):
            cfg = yaml.safe_load(subprocess.run(git + ["show", f"{ref}:{name}"], check=True, capture_output=True,
                                                text=True).stdout)
            if isinstance(cfg, dict) and cfg.get("stage") == "sft":
                out.append((name.removeprefix("examples/"), cfg))
    return out


def demo_data(folder: Path, n: int = 32) -> Path:
    """The same two-turn conversation in every row: as alpaca (with history) and as ShareGPT."""
    folder.mkdir(parents=True, exist_ok=True)
    (u1, a1), (u2, a2) = CONVERSATION
    alpaca = [{"instruction": u2, "input": "", "output": a2, "history": [[u1, a1]]}] * n
    sharegpt = [{"conversations": [{"from": "human", "value": u1}, {"from": "gpt", "value": a1},
                                   {"from": "human", "value": u2}, {"from": "gpt", "value": a2}]}] * n
    (folder / "alpaca_en_demo.json").write_text(json.dumps(alpaca, ensure_ascii=False))
    (folder / "identity.json").write_text(json.dumps(sharegpt, ensure_ascii=False))
    alpaca_entry = {"file_name": "alpaca_en_demo.json",
                    "columns": {"prompt": "instruction", "query": "input", "response": "output", "history": "history"}}
    (folder / "dataset_info.json").write_text(json.dumps({
        "alpaca_en_demo": alpaca_entry, "alpaca_zh_demo": alpaca_entry,
        "identity": {"file_name": "identity.json", "formatting": "sharegpt"}}, indent=1))
    return folder


def tiny_model(folder: Path) -> Path:
    """A random-init 2-layer Llama with a BPE tokenizer trained on the conversation, template tokens added."""
    if (folder / "config.json").exists():
        return folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from studio.models.loading import DEMO_MARKER, build_tiny_llama
    from tests.conftest import make_review_rows
    texts = [f"{r['instruction']} {r['input']} {r['output']}" for r in make_review_rows(200)]
    texts += [t for pair in CONVERSATION for t in pair] * 20
    build_tiny_llama(folder, texts, hidden=64, layers=2, heads=4, vocab_size=800)
    (folder / DEMO_MARKER).unlink(missing_ok=True)  # a plain local model on both sides, not the studio's demo
    tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder)
    tok.add_special_tokens({"additional_special_tokens": TEMPLATE_TOKENS})
    model.resize_token_embeddings(len(tok))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def swapped(cfg: dict[str, Any], model: Path, data: Path, out: Path, steps: int) -> tuple[dict[str, Any], list[str]]:
    cfg = dict(cfg)
    off = [k for k in CPU_OFF if cfg.get(k) not in (None, False)]
    for key, value in CPU_OFF.items():
        if key in cfg:
            cfg[key] = value
    cfg.update(model_name_or_path=str(model), dataset="identity,alpaca_en_demo", dataset_dir=str(data),
               output_dir=str(out), max_steps=steps, logging_steps=1, save_steps=1000, cutoff_len=128,
               per_device_train_batch_size=2, gradient_accumulation_steps=1, seed=42, report_to="none",
               overwrite_output_dir=True)
    for key in ("eval_dataset",):
        if cfg.get(key):
            cfg[key] = "alpaca_en_demo"
    for key in ("adapter_name_or_path", "tokenized_path", "media_dir", "image_dir"):
        cfg.pop(key, None)
    return {k: v for k, v in cfg.items() if v is not None}, off


def first_loss(out: Path) -> float | None:
    p = out / "trainer_log.jsonl"
    if p.exists():
        for line in p.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec.get("loss"), (int, float)):
                return float(rec["loss"])
    for state in sorted(out.glob("**/trainer_state.json")):
        for h in json.loads(state.read_text()).get("log_history", []):
            if "loss" in h:
                return float(h["loss"])
    return None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.startswith(("  ", "\t"))]
    errors = [ln for ln in lines if "Error" in ln or "error" in ln]
    return (errors or lines or [""])[-1][:160]


def run_studio(cfg: dict[str, Any], work: Path, timeout: int) -> tuple[str, float | None, str]:
    from studio.config.run_config import RunConfig
    from studio.errors import ConfigError, StudioError
    path = work / "studio.yaml"
    path.write_text(yaml.safe_dump(cfg))
    shutil.rmtree(cfg["output_dir"], ignore_errors=True)
    try:
        RunConfig.load(path)  # checked as it is built
    except ConfigError as exc:
        return "refused", None, "; ".join(exc.problems)[:300]
    except StudioError as exc:
        return "refused", None, exc.what[:300]
    try:
        res = subprocess.run([sys.executable, "-m", "studio", "train", str(path), "--quiet"], cwd=ROOT,
                             capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ, PYTHONPATH=str(ROOT), STUDIO_TOKEN_CACHE="off"))
    except subprocess.TimeoutExpired:
        return "timeout", None, f"> {timeout} s"
    if res.returncode != 0:
        return f"failed rc={res.returncode}", None, _last_line(res.stderr + res.stdout)
    return "trained", first_loss(Path(cfg["output_dir"])), ""


def run_lf(cli: Path, cfg: dict[str, Any], work: Path, extra_ok: bool, timeout: int) -> tuple[str, float | None, str]:
    path = work / "lf.yaml"
    path.write_text(yaml.safe_dump(cfg))
    shutil.rmtree(cfg["output_dir"], ignore_errors=True)
    env = dict(os.environ, DISABLE_VERSION_CHECK="1", ALLOW_EXTRA_ARGS="1" if extra_ok else "0",
               CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", WANDB_DISABLED="true")
    env.pop("PYTHONPATH", None)
    try:
        res = subprocess.run([str(cli), "train", str(path)], capture_output=True, text=True, env=env, cwd=work,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, f"> {timeout} s"
    (work / "lf.log").write_text(res.stdout + res.stderr)
    out = Path(cfg["output_dir"])
    if res.returncode != 0:
        return "refused" if "Error" in res.stderr else f"failed rc={res.returncode}", None, \
            _last_line(res.stderr + res.stdout)
    trained = any(out.glob("*.safetensors")) or (out / "trainer_log.jsonl").exists()
    return ("trained" if trained else "exit 0, no model"), first_loss(out), \
        "" if trained else _last_line(res.stderr + res.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--venv", type=Path, default=Path("/work/lfvenv"))
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "studio-llamafactory" / "work")
    ap.add_argument("--lf-repo", type=Path, default=None, help="a LLaMA-Factory git dir (bare or checkout)")
    ap.add_argument("--lf-ref", default=f"v{LF_VERSION}")
    ap.add_argument("--skip-install", action="store_true")
    ap.add_argument("--only", nargs="*", default=None, help="run only files whose name contains one of these")
    ap.add_argument("--quick", action="store_true", help="one LF example and one recipe")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --json")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once")
    ap.add_argument("--first", nargs="*", default=None, help="name parts of the cases to run first")
    args = ap.parse_args()
    cli = args.venv / "bin" / "llamafactory-cli" if args.skip_install else install(args.venv)
    model, data = tiny_model(args.work / "model"), demo_data(args.work / "data")
    cases = [("LF example", n, c) for n, c in lf_examples(args.lf_repo, args.lf_ref)] + \
            [("studio recipe", f.name, yaml.safe_load(f.read_text())) for f in sorted(RECIPES.glob("*.yaml"))]
    if args.only:
        cases = [c for c in cases if any(o in c[1] for o in args.only)]
    if args.first:  # run these first (a long run can then be cut short with the main cases done)
        cases.sort(key=lambda c: next((i for i, p in enumerate(args.first) if p in c[1]), len(args.first)))
    if args.quick:
        cases = [next(c for c in cases if c[0] == "LF example"), next(c for c in cases if c[0] != "LF example")]
    done: dict[tuple[str, str], dict] = {}
    if args.json and args.json.exists() and args.resume:
        done = {(r["kind"], r["file"]): r for r in json.loads(args.json.read_text())}

    def one(case: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
        kind, name, raw = case
        if (kind, name) in done:
            return done[(kind, name)]
        work = args.work / kind.replace(" ", "_") / name.replace("/", "__").removesuffix(".yaml")
        work.mkdir(parents=True, exist_ok=True)
        raw = dict(raw)
        if raw.get("template") in (None, "studio", "auto"):
            raw["template"] = "alpaca"  # LLaMA-Factory has no 'studio'/'auto'; alpaca is the nearest it knows
        s_cfg, off = swapped(raw, model, data, work / "studio_out", args.steps)
        l_cfg, _ = swapped(raw, model, data, work / "lf_out", args.steps)
        t0 = time.time()
        studio = run_studio(s_cfg, work, args.timeout)
        t1 = time.time()
        lf = run_lf(cli, l_cfg, work, extra_ok=kind == "studio recipe", timeout=args.timeout)
        a, b = studio[1], lf[1]
        match = "-" if a is None or b is None else "yes" if abs(a - b) <= 0.01 * b else "no"
        row = {"kind": kind, "file": name, "studio": studio[0], "studio_why": studio[2], "lf": lf[0],
               "lf_why": lf[2], "loss_studio": a, "loss_lf": b, "match": match, "off": off,
               "s_seconds": round(t1 - t0, 1), "lf_seconds": round(time.time() - t1, 1)}
        print(json.dumps(row), file=sys.stderr, flush=True)
        return row

    # cases are independent (own folders); a few at a time keeps a shared 2-core machine's queue short
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one, cases))
    print("| kind | file | studio | LLaMA-Factory | loss studio | loss LF | match | switched off (CPU) |")
    print("|---|---|---|---|---:|---:|---|---|")
    for r in rows:
        fa = f"{r['loss_studio']:.4f}" if r["loss_studio"] is not None else "-"
        fb = f"{r['loss_lf']:.4f}" if r["loss_lf"] is not None else "-"
        print(f"| {r['kind']} | {r['file']} | {r['studio']} | {r['lf']} | {fa} | {fb} | {r['match']} | "
              f"{', '.join(r['off']) or '-'} |")
    print("\nReasons (first line of each refusal or failure):")
    for r in rows:
        for side in ("studio", "lf"):
            if r[f"{side}_why"]:
                print(f"- {r['file']} [{'studio' if side == 'studio' else 'LLaMA-Factory'}]: {r[f'{side}_why']}")
    n = len(rows)
    print(f"\n{n} files; studio accepted {sum(r['studio'] != 'refused' for r in rows)}, trained "
          f"{sum(r['studio'] == 'trained' for r in rows)}; LLaMA-Factory trained {sum(r['lf'] == 'trained' for r in rows)}; "
          f"both trained {sum(r['studio'] == r['lf'] == 'trained' for r in rows)}, first-step loss matched "
          f"{sum(r['match'] == 'yes' for r in rows)}. ({args.steps} steps, tiny local Llama, CPU)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
