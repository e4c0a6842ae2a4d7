"""python -m studio estimate: will this plan fit on my card, and what to change if not.

    python -m studio estimate --model llama3-8b --method qlora --gpu-mem 24
    python -m studio estimate --config presets/recipes/tiny-demo-cpu.yaml --gpu-mem 8 --json

With ``--config`` the run config's fields are used; flags given next to it override them.
Imports no torch, so it answers in well under a second.
"""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ..config.run_config import Draft
from ..config.vocabulary import accepted_optimizers
from ..errors import StudioError
from ..memory.estimator import DEEPSPEED_PLANS, METHODS, Estimate, detect_gpu_mem_gb, estimate, host_ram_gb

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
    parser.add_argument("--gpu-mem", type=_gb, metavar="GB", help="card memory in GB, or 'auto' (nvidia-smi, amd-smi "
                        "or rocm-smi); gives a verdict and fixes")
    parser.add_argument("--ram", type=_gb, metavar="GB", help="host RAM in GB, or 'auto' (checked for offload plans "
                        "and CPU runs)")
    parser.add_argument("--seq-len", type=int, metavar="N", help="tokens per example, cutoff_len (default: 1024)")
    parser.add_argument("--batch", type=int, metavar="N", help="per-device batch size (default: 1)")
    parser.add_argument("--grad-ckpt", action="store_true", default=None, help="gradient checkpointing on")
    parser.add_argument("--optim", choices=accepted_optimizers(), metavar="NAME",
                        help="optimizer: any name a run config accepts, e.g. adamw (= adamw_torch), adamw_8bit, "
                             "paged_adamw_32bit, lion_8bit, adafactor, sgd (default: adamw)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cuda: GPU peak (default); cpu: peak RAM of a CPU run")
    parser.add_argument("--json", action="store_true", help="print the estimate as JSON")


def _gb(text: str) -> float | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of GB or 'auto'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of GB or 'auto'")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"memory must be above 0 GB (got {text})")
    return value


def _resolve_auto(args: argparse.Namespace) -> None:
    """Turn --gpu-mem auto / --ram auto into numbers, or say why not."""
    if args.gpu_mem == "auto":
        args.gpu_mem = detect_gpu_mem_gb()
        if args.gpu_mem is None:
            raise StudioError.of("cli.gpu_mem_auto", flag="--gpu-mem")
    if args.ram == "auto":
        args.ram = host_ram_gb()
        if args.ram is None:
            raise StudioError.of("cli.ram_auto", flag="--ram")


# What --model estimates where no flag says otherwise: the plain plan the flags' help names (LoRA, seq 1024, batch 1,
# no checkpointing, AdamW, every position's logits), not RunConfig's defaults, so that a figure from --model is the
# one this verb has always given and compares with published tables measured without the studio's savings
MODEL_PLAN: dict[str, Any] = {"finetuning_type": "lora", "cutoff_len": 1024, "per_device_train_batch_size": 1,
                              "gradient_checkpointing": False, "optim": "adamw", "selective_logits": False}


def _flag_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The plan flags given, as RunConfig settings."""
    settings: dict[str, Any] = {}
    if args.method:
        settings["finetuning_type"] = "lora" if args.method == "qlora" else args.method
        if args.method == "qlora" and not args.quant_bits:
            settings["quantization_bit"] = 4
    if args.quant_bits:
        settings["quantization_bit"] = args.quant_bits
    for flag, key in (("deepspeed", "deepspeed"), ("seq_len", "cutoff_len"), ("batch", "per_device_train_batch_size"),
                      ("grad_ckpt", "gradient_checkpointing")):
        if getattr(args, flag) is not None:
            settings[key] = getattr(args, flag)
    if args.optim:
        settings["optim"] = args.optim   # RunConfig resolves the studio's aliases (adamw -> adamw_torch)
    return settings


def plan_config(args: argparse.Namespace) -> Any:
    """The run config the flags describe: --config's file, or --model's MODEL_PLAN, with the plan flags on top.

    Raises:
        StudioError: a bad config file.
    """
    if args.config:
        cfg, settings = Draft.load(args.config), _flag_settings(args)
    else:
        cfg, settings = Draft(model_name_or_path=args.model), {**MODEL_PLAN, **_flag_settings(args)}
    return cfg.replace(**settings) if settings else cfg


def run_estimate(args: argparse.Namespace) -> Estimate:
    """The Estimate the flags ask for (shared by main and tests).

    Raises:
        StudioError: unknown model (lists the cards), bad config file, or an invalid combination.
    """
    return estimate(plan_config(args), args.gpu_mem, device=args.device, ram_gb=args.ram)


def format_estimate(est: Estimate) -> str:
    """A readable table: plan, per-part GB, totals, verdict, fixes."""
    p = est.plan
    card = est.card
    lines = []
    if card is not None:
        size = f"{card.n_params / 1e9:.2f}B" if card.n_params >= 1e9 else f"{card.n_params / 1e6:.1f}M"
        lines.append(f"Model: {card.name} ({size} parameters, {card.num_layers} layers, "
                     f"hidden {card.hidden_size}, vocab {card.vocab_size})")
        if card.experts:
            lines.append(f"  MoE: {card.experts} experts, {card.experts_per_token} per token; "
                         f"{card.active_params / 1e9:.2f}B parameters active per token")
            if p["quant_bits"] and card.experts_fused:
                lines.append("  the experts are fused tensors, which bitsandbytes does not quantize (transformers 5); "
                             "they stay unquantized and peft's kbit preparation casts them to fp32")
        if card.exact is not None:
            lines.append("  counted from the model's own config (skeleton on the meta device)")
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
        if est.host_short:
            verdict = f"host RAM {est.cpu_gb:,.1f} GB of {p['ram_gb']:g} GB" + (
                f" (the card's {est.gpu_gb:.1f} GB of {est.mem_gb:g} GB is fine)" if est.mem_gb else "")
        elif p["device"] == "cuda" and est.mem_gb is not None:
            verdict = f"{est.gpu_gb:.1f} GB of {est.mem_gb:g} GB"
            if p.get("ram_gb") is not None:
                verdict += f", host RAM {est.cpu_gb:,.1f} GB of {p['ram_gb']:g} GB"
        else:
            verdict = f"{est.cpu_gb:.1f} GB of {est.mem_gb:g} GB RAM" if est.mem_gb else "host RAM only"
        lines.append(("FITS" if est.fits else "DOES NOT FIT") + ": " + verdict
                     + (" (tight: under 10% headroom, within the estimate's error)" if est.tight else ""))
    if est.fits is False and not est.suggestions:
        lines.append("No change to the plan saves enough here: use a machine with more memory or a smaller model.")
    if est.suggestions:
        lines.append("To make it fit (cheapest first):")
        lines += [f"  {n}. {s}" for n, s in enumerate(est.suggestions, 1)]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """Print the estimate; exit 0 when it fits or no memory size was given, 1 when it does not fit."""
    for name in ("seq_len", "batch"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise StudioError.of("cli.at_least_one", flag=f"--{name.replace('_', '-')}", got=value)
    _resolve_auto(args)
    est = run_estimate(args)
    print(json.dumps(est.to_dict(), indent=1) if args.json else format_estimate(est))
    return 1 if est.fits is False else 0
