"""Interop with LLaMA-Factory, both ways (not CI: it installs LLaMA-Factory into its own venv).

    python bench/llamafactory_interop.py [--steps 3] [--venv ~/.cache/studio-llamafactory/venv] [--skip-install]

1. LLaMA-Factory's SFT example YAMLs (copies in tests/fixtures/llamafactory/) through the studio and
   through LLaMA-Factory, with the model swapped for a local tiny one and its demo datasets replaced
   by a local alpaca + ShareGPT pair registered in dataset_info.json.
2. The studio's recipes (presets/recipes/) through LLaMA-Factory, same swap; keys LLaMA-Factory does
   not know (precision, oom_adaptive, ...) are passed with ALLOW_EXTRA_ARGS=1 and listed.

Prints one table: accepted / trained / first-step loss on both sides and whether they match (within 10%;
same model, data, template and seed, so the first logged loss should agree). CPU only: ``bf16``,
``deepspeed`` and ``quantization_bit`` are switched off on both sides for the run and the table says so.

LLaMA-Factory is installed with ``torch==2.13.0`` first, as a constraint, and the mirror's torchvision is
removed (it breaks ``import transformers`` with this torch).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures" / "llamafactory"
RECIPES = ROOT / "presets" / "recipes"
CPU_OFF = {"bf16": False, "fp16": False, "deepspeed": None, "quantization_bit": None}


def install(venv: Path) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    constraints = venv / "constraints.txt"
    constraints.write_text("torch==2.13.0\n")
    subprocess.run(pip + ["torch==2.13.0"], check=True)
    subprocess.run(pip + ["-c", str(constraints), "llamafactory"], check=True)
    subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], check=False)
    return venv / "bin" / "llamafactory-cli"


def demo_data(folder: Path) -> Path:
    """alpaca_en_demo + identity (ShareGPT), registered as LLaMA-Factory registers its demo data."""
    from tests.conftest import make_review_rows
    folder.mkdir(parents=True, exist_ok=True)
    rows = make_review_rows(64)
    (folder / "alpaca_en_demo.json").write_text(json.dumps(rows, ensure_ascii=False))
    conv = [{"conversations": [{"from": "human", "value": f"{r['instruction']}\n{r['input']}"},
                               {"from": "gpt", "value": r["output"]}]} for r in make_review_rows(32, seed=5)]
    (folder / "identity.json").write_text(json.dumps(conv, ensure_ascii=False))
    (folder / "dataset_info.json").write_text(json.dumps({
        "alpaca_en_demo": {"file_name": "alpaca_en_demo.json"},
        "identity": {"file_name": "identity.json", "formatting": "sharegpt"}}))
    return folder


def tiny_model(folder: Path) -> Path:
    from studio.models import build_tiny_llama
    from tests.conftest import make_review_rows
    if (folder / "config.json").exists():
        return folder
    texts = [f"{r['instruction']} {r['input']} {r['output']}" for r in make_review_rows(200)]
    return build_tiny_llama(folder, texts, hidden=64, layers=2, heads=4, vocab_size=800)


def swapped(cfg: dict[str, Any], model: Path, data: Path, out: Path, steps: int) -> dict[str, Any]:
    cfg = {k: v for k, v in cfg.items() if v is not None}
    cfg.update(model_name_or_path=str(model), dataset="identity,alpaca_en_demo", dataset_dir=str(data),
               output_dir=str(out), max_steps=steps, logging_steps=1, save_steps=1000, cutoff_len=128,
               per_device_train_batch_size=2, gradient_accumulation_steps=1, seed=42, report_to="none")
    for key, value in CPU_OFF.items():
        if key in cfg:
            cfg[key] = value
    return {k: v for k, v in cfg.items() if v is not None}


def first_loss(out: Path) -> float | None:
    for name in ("trainer_log.jsonl",):
        p = out / name
        if p.exists():
            for line in p.read_text().splitlines():
                rec = json.loads(line)
                if isinstance(rec.get("loss"), (int, float)):
                    return float(rec["loss"])
    state = sorted(out.glob("**/trainer_state.json"))
    if state:
        for h in json.loads(state[-1].read_text()).get("log_history", []):
            if "loss" in h:
                return float(h["loss"])
    return None


def run_studio(cfg: dict[str, Any], work: Path) -> tuple[str, float | None]:
    from studio.config import RunConfig
    from studio.errors import StudioError
    path = work / "studio.yaml"
    path.write_text(yaml.safe_dump(cfg))
    try:
        RunConfig.load(path).check()
    except StudioError as exc:
        return f"refused: {exc.what[:60]}", None
    res = subprocess.run([sys.executable, "-m", "studio", "train", str(path), "--quiet"], cwd=ROOT,
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return ("trained" if res.returncode == 0 else f"failed rc={res.returncode}"), first_loss(Path(cfg["output_dir"]))


def run_lf(cli: Path, cfg: dict[str, Any], work: Path, extra_ok: bool) -> tuple[str, float | None]:
    path = work / "lf.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, DISABLE_VERSION_CHECK="1", ALLOW_EXTRA_ARGS="1" if extra_ok else "0",
               CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1")
    res = subprocess.run([str(cli), "train", str(path)], capture_output=True, text=True, env=env, cwd=work)
    out = Path(cfg["output_dir"])
    trained = res.returncode == 0 and any(out.glob("*.safetensors"))
    if res.returncode != 0:
        return f"refused rc={res.returncode}: {res.stderr.strip().splitlines()[-1][:60] if res.stderr else ''}", None
    return ("trained" if trained else "exit 0, no model"), first_loss(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "studio-llamafactory" / "venv")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "studio-llamafactory" / "work")
    ap.add_argument("--skip-install", action="store_true")
    args = ap.parse_args()
    cli = args.venv / "bin" / "llamafactory-cli" if args.skip_install else install(args.venv)
    model, data = tiny_model(args.work / "model"), demo_data(args.work / "data")
    rows = []
    cases = [("LF example", f) for f in sorted(FIXTURES.glob("*.yaml"))] + \
            [("studio recipe", f) for f in sorted(RECIPES.glob("*.yaml"))]
    for kind, f in cases:
        work = args.work / kind.replace(" ", "_") / f.stem
        work.mkdir(parents=True, exist_ok=True)
        raw = yaml.safe_load(f.read_text())
        if raw.get("model_name_or_path") == "tiny-demo" or raw.get("template") in ("studio", "auto"):
            raw["template"] = "alpaca"  # LLaMA-Factory has no 'studio'/'auto'; alpaca is the nearest it knows
        s_cfg = swapped(raw, model, data, work / "studio_out", args.steps)
        l_cfg = swapped(raw, model, data, work / "lf_out", args.steps)
        studio = run_studio(s_cfg, work) if kind == "LF example" else ("(recipe)", None)
        lf = run_lf(cli, l_cfg, work, extra_ok=kind == "studio recipe")
        if kind == "studio recipe":
            studio = run_studio(s_cfg, work)
        a, b = studio[1], lf[1]
        match = "yes" if a and b and abs(a - b) <= 0.1 * b else ("-" if a is None or b is None else "no")
        rows.append((kind, f.name, studio[0], lf[0], a, b, match))
    print(f"{'kind':<14}{'file':<36}{'studio':<28}{'LLaMA-Factory':<34}{'loss studio':>12}{'loss LF':>9}  match")
    for kind, name, s, lf_state, a, b, m in rows:
        fa = f"{a:.3f}" if a is not None else "-"
        fb = f"{b:.3f}" if b is not None else "-"
        print(f"{kind:<14}{name:<36}{s[:27]:<28}{lf_state[:33]:<34}{fa:>12}{fb:>9}  {m}")
    print(f"(CPU run: {', '.join(CPU_OFF)} switched off on both sides; {args.steps} steps; tiny local model)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
