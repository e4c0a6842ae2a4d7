"""Check the memory estimator against measured peaks: python bench/memory_bench.py [--quick] [--json]

Each configuration trains a few steps of a tiny random-init Llama (built locally from a
LlamaConfig, no downloads) in a fresh subprocess, so one run's memory never leaks into the
next, and reports the peak RSS (``VmHWM``, the kernel's high-water mark of this process)
next to ``studio.memory.estimator.estimate(device='cpu')``.
The subprocess mirrors the engine's choices (fp32 on CPU, peft LoRA on all linear layers,
``prepare_model_for_kbit_training`` for QLoRA, non-reentrant gradient checkpointing, AdamW or
bitsandbytes AdamW8bit, gradient clipping) with plain torch/transformers/peft, so the benchmark
does not depend on the training engine being importable.

The baseline (RSS right after importing torch + transformers + peft) is measured in the same
run and printed, so a reader can see how much of each peak the model itself accounts for.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Big enough that weights + states + activations are most of the peak, small enough for 2 cores.
MODEL = {"hidden": 512, "layers": 8, "heads": 8, "intermediate": 1376, "vocab": 8000}
QUICK_MODEL = {"hidden": 384, "layers": 6, "heads": 6, "intermediate": 1024, "vocab": 6000}
CONFIGS: list[dict[str, Any]] = [
    {"name": "full", "method": "full", "grad_ckpt": False, "optim": "adamw"},
    {"name": "lora", "method": "lora", "grad_ckpt": False, "optim": "adamw"},
    {"name": "full+grad-ckpt", "method": "full", "grad_ckpt": True, "optim": "adamw"},
    {"name": "full+adamw_8bit", "method": "full", "grad_ckpt": False, "optim": "adamw_8bit"},
    {"name": "qlora-4bit", "method": "qlora", "grad_ckpt": False, "optim": "adamw"},
]
SEQ, BATCH, STEPS = 256, 4, 4   # RSS plateaus after 3-5 steps (glibc arenas settle)


def build_model(folder: Path, dims: dict[str, int]) -> Path:
    """Save a random-init Llama of ``dims`` to ``folder`` (what from_pretrained then loads)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=dims["vocab"], hidden_size=dims["hidden"], intermediate_size=dims["intermediate"],
                      num_hidden_layers=dims["layers"], num_attention_heads=dims["heads"],
                      num_key_value_heads=dims["heads"], max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder


def _status_gb(field: str) -> float:
    """VmHWM (peak RSS) or VmRSS from /proc/self/status, in GiB.

    Why not ru_maxrss: Linux carries the parent's high-water mark across fork+exec into it, so
    a child started from a big process (pytest after other tests) would report the parent's peak.
    VmHWM belongs to this process image only. Falls back to ru_maxrss off Linux.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024 ** 2   # kB
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Train ``spec`` for a few steps in this (fresh) process; return the measured peaks in GB."""
    import torch
    import transformers  # noqa: F401  (part of the baseline the estimator assumes)
    import peft
    if spec["optim"] == "adamw_8bit" or spec["method"] == "qlora":
        import bitsandbytes as bnb
    torch.set_num_threads(2)
    baseline = _status_gb("VmRSS")
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    kwargs: dict[str, Any] = {"dtype": torch.float32}
    if spec["method"] == "qlora":
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.float32)
        kwargs["device_map"] = {"": "cpu"}
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], **kwargs)
    if spec["grad_ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    if spec["method"] in ("lora", "qlora"):
        if spec["method"] == "qlora":
            model = peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=spec["grad_ckpt"])
        model = peft.get_peft_model(model, peft.LoraConfig(r=8, lora_alpha=16, target_modules="all-linear",
                                                           task_type="CAUSAL_LM"))
        if spec["grad_ckpt"]:
            model.enable_input_require_grads()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = bnb.optim.AdamW8bit(params, lr=1e-4) if spec["optim"] == "adamw_8bit" else torch.optim.AdamW(params, 1e-4)
    loaded = _status_gb("VmHWM")
    gen = torch.Generator().manual_seed(0)
    t0 = time.time()
    for _ in range(spec["steps"]):
        ids = torch.randint(0, spec["vocab"], (spec["batch"], spec["seq"]), generator=gen)
        loss = model(input_ids=ids, labels=ids).loss   # no reference kept to the logits
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return {"baseline_gb": baseline, "loaded_gb": loaded, "peak_gb": _status_gb("VmHWM"),
            "step_s": (time.time() - t0) / spec["steps"], "loss": float(loss)}


def predict(spec: dict[str, Any]) -> float:
    from studio.config.run_config import Draft
    from studio.memory.estimator import ArchCard, estimate
    d = spec["dims"]
    card = ArchCard("bench", d["hidden"], d["intermediate"], d["layers"], d["heads"], d["heads"], d["vocab"])
    qlora = spec["method"] == "qlora"
    # the child trains every position's logits (no chunked loss), as plain transformers does
    cfg = Draft(model_name_or_path=spec["model_dir"], finetuning_type="lora" if qlora else spec["method"],
                quantization_bit=4 if qlora else None, cutoff_len=spec["seq"],
                per_device_train_batch_size=spec["batch"], gradient_checkpointing=spec["grad_ckpt"],
                optim=spec["optim"], precision="fp32", lora_rank=8, selective_logits=False)
    # the card of the benchmark's own dimensions, so the prediction needs no model folder on disk
    return estimate(cfg, device="cpu", card=card).cpu_gb


def measure(spec: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    """Run one configuration in a fresh interpreter; measured and predicted GB and their ratio."""
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        return {**spec, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    predicted = predict(spec)
    return {**spec, **result, "predicted_gb": predicted, "ratio": predicted / result["peak_gb"]}


def specs(model_dir: Path, dims: dict[str, int], names: list[str] | None = None, *, seq: int = SEQ,
          batch: int = BATCH, steps: int = STEPS) -> list[dict[str, Any]]:
    return [{**c, "model_dir": str(model_dir), "dims": dims, "vocab": dims["vocab"], "seq": seq, "batch": batch,
             "steps": steps} for c in CONFIGS if names is None or c["name"] in names]


def table(rows: list[dict[str, Any]]) -> str:
    out = [f"{'config':<17}{'baseline':>9}{'measured':>10}{'predicted':>11}{'ratio':>7}{'s/step':>8}"]
    for r in rows:
        if "error" in r:
            out.append(f"{r['name']:<17} failed: {r['error']}")
            continue
        out.append(f"{r['name']:<17}{r['baseline_gb']:>8.3f}G{r['peak_gb']:>9.3f}G{r['predicted_gb']:>10.3f}G"
                   f"{r['ratio']:>7.2f}{r['step_s']:>8.1f}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller model, 3 steps (about 1-1.5 minutes on 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    dims = QUICK_MODEL if args.quick else MODEL
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_model(Path(tmp) / "model", dims)
        rows = [measure(s) for s in specs(folder, dims, steps=3 if args.quick else STEPS)]
    print(json.dumps(rows, indent=1) if args.json else
          f"model {dims}, seq {SEQ} x batch {BATCH}, fp32 on CPU\n" + table(rows))
    bad = [r for r in rows if "error" in r or not 0.85 <= r["ratio"] <= 1.15]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
