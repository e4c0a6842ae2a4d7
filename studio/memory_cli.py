"""python -m studio estimate: will this plan fit on my card, and what to change if not.

    python -m studio estimate --model llama3-8b --method qlora --gpu-mem 24
    python -m studio estimate --config presets/recipes/tiny-demo-cpu.yaml --gpu-mem 8 --json

With ``--config`` the run config's fields are used; flags given next to it override them.
Imports no torch, so it answers in well under a second.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from .errors import StudioError
from .memory import DEEPSPEED_PLANS, METHODS, Estimate, estimate, estimate_for_config, load_card

_LABELS = {"weights": "weights", "gradients": "gradients", "optimizer": "optimizer states",
           "activations": "activations", "logits": "logits + loss", "overhead": "CUDA context + fragmentation",
           "baseline": "process baseline", "offloaded_states": "offloaded states (DeepSpeed / layerwise)",
           "allocator": "malloc slack (freed, not returned)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="NAME_OR_PATH",
                     help="a card name (e.g. llama3-8b, qwen2.5-7b), its hub id, a local model folder, or tiny-demo")
    src.add_argument("--config", metavar="RUN.yaml", help="a run config; its model and memory plan are estimated")
    parser.add_argument("--method", choices=METHODS, help="full, freeze, lora or qlora (default: lora)")
    parser.add_argument("--quant-bits", type=int, choices=[4, 8], help="quantize the base model (QLoRA)")
    parser.add_argument("--deepspeed", choices=DEEPSPEED_PLANS, help="DeepSpeed plan (default: none)")
    parser.add_argument("--gpu-mem", type=float, metavar="GB", help="card memory in GB; gives a verdict and fixes")
    parser.add_argument("--ram", type=float, metavar="GB", help="host RAM in GB (checked for offload plans)")
    parser.add_argument("--seq-len", type=int, metavar="N", help="tokens per example, cutoff_len (default: 1024)")
    parser.add_argument("--batch", type=int, metavar="N", help="per-device batch size (default: 1)")
    parser.add_argument("--grad-ckpt", action="store_true", default=None, help="gradient checkpointing on")
    parser.add_argument("--optim", choices=["adamw", "adamw_8bit"], help="optimizer (default: adamw)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cuda: GPU peak (default); cpu: peak RAM of a CPU run")
    parser.add_argument("--json", action="store_true", help="print the estimate as JSON")


def _from_config(args: argparse.Namespace) -> Estimate:
    from .config import RunConfig
    overrides: dict[str, Any] = {}
    if args.method:
        overrides["finetuning_type"] = "lora" if args.method == "qlora" else args.method
        if args.method == "qlora" and not args.quant_bits:
            overrides["quantization_bit"] = 4
    if args.quant_bits:
        overrides["quantization_bit"] = args.quant_bits
    for flag, key in (("deepspeed", "deepspeed"), ("seq_len", "cutoff_len"), ("batch", "per_device_train_batch_size"),
                      ("grad_ckpt", "gradient_checkpointing")):
        if getattr(args, flag) is not None:
            overrides[key] = getattr(args, flag)
    if args.optim:
        overrides["optim"] = "adamw_torch" if args.optim == "adamw" else args.optim
    cfg = RunConfig.load(args.config)
    if overrides:
        cfg = cfg.replace(**overrides)
    return estimate_for_config(cfg, args.gpu_mem, device=args.device, ram_gb=args.ram)


def run_estimate(args: argparse.Namespace) -> Estimate:
    """The Estimate the flags ask for (shared by main and tests).

    Raises:
        StudioError: unknown model (lists the cards), bad config file, or an invalid combination.
    """
    if args.config:
        return _from_config(args)
    card = load_card(args.model)
    return estimate(card, method=args.method or "lora", quant_bits=args.quant_bits, deepspeed=args.deepspeed or "none",
                    seq_len=args.seq_len or 1024, batch=args.batch or 1, grad_ckpt=bool(args.grad_ckpt),
                    optim=args.optim or "adamw", gpu_mem_gb=args.gpu_mem, ram_gb=args.ram, device=args.device)


def format_estimate(est: Estimate) -> str:
    """A readable table: plan, per-part GB, totals, verdict, fixes."""
    p = est.plan
    card = est.card
    lines = []
    if card is not None:
        lines.append(f"Model: {card.name} ({card.n_params / 1e9:.2f}B parameters, {card.num_layers} layers, "
                     f"hidden {card.hidden_size}, vocab {card.vocab_size})")
    plan = [p["method"] + (f" {p['quant_bits']}-bit" if p["quant_bits"] else ""), p["precision"],
            f"seq {p['seq_len']} x batch {p['batch']}",
            "gradient checkpointing " + ("on" if p["grad_ckpt"] else "off"), f"optim {p['optim']}"]
    if p["deepspeed"] != "none":
        plan.append(f"DeepSpeed {p['deepspeed']}")
    if p["layerwise_offload"]:
        plan.append("layerwise offload")
    lines.append("Plan: " + ", ".join(plan))
    where = "GPU" if p["device"] == "cuda" else "RAM (CPU run)"
    parts = est.breakdown if p["device"] == "cuda" else est.host_breakdown
    lines.append(f"  {'part':<42}{where:>14}")
    for key, gb in parts.items():
        lines.append(f"  {_LABELS.get(key, key):<42}{gb:>11.2f} GB")
    if p["device"] == "cuda":
        lines.append(f"  {'= GPU peak':<42}{est.gpu_gb:>11.2f} GB")
        lines.append(f"  {'host RAM':<42}{est.cpu_gb:>11.2f} GB")
    else:
        lines.append(f"  {'= peak RAM':<42}{est.cpu_gb:>11.2f} GB")
    lines.append("  (peak = weights + optimizer + the larger of activations + logits and gradients + optimizer-step "
                 "temporaries, since gradients build up while activations are freed)")
    if est.fits is not None:
        total = est.gpu_gb if p["device"] == "cuda" else est.cpu_gb
        lines.append(("FITS" if est.fits else "DOES NOT FIT") + f": {total:.1f} GB of {est.mem_gb:g} GB"
                     + (" (tight: under 10% headroom, within the estimate's error)" if est.tight else ""))
    if est.suggestions:
        lines.append("To make it fit (cheapest first):")
        lines += [f"  {n}. {s}" for n, s in enumerate(est.suggestions, 1)]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """Print the estimate; exit 0 when it fits or no memory size was given, 1 when it does not fit."""
    for name in ("seq_len", "batch"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise StudioError(f"--{name.replace('_', '-')} must be at least 1 (got {value})", "give a positive number")
    est = run_estimate(args)
    print(json.dumps(est.to_dict(), indent=1) if args.json else format_estimate(est))
    return 1 if est.fits is False else 0
