"""What to change when a plan does not fit: the cheapest memory savings first.

Each candidate is one change to the plan, re-estimated, so the saving shown is the real
difference for this model and these settings, not a rule of thumb. Candidates come in order of
what they cost the user (speed first, then data truncation, then quality or host RAM).
"""
from __future__ import annotations

from typing import Any, Callable

from ..config.run_config import RunConfig
from ..config.vocabulary import EIGHT_BIT_ADAMW, TORCH_ADAMW, canonical_optimizer, is_torch_adamw, short_optimizer

ADAMW = short_optimizer(TORCH_ADAMW[0])   # torch's AdamW, which DeepSpeed's offload plans run (its short name)

# (label, why it costs something, plan change, RunConfig settings)
_Candidate = tuple[str, str, dict[str, Any], dict[str, Any]]


def _activations_dominate(est: Any) -> bool:
    """The saved activations are the largest term of the card's peak (long rows, big batches)."""
    parts = est.breakdown if est is not None else {}
    act = parts.get("activations", 0.0)
    return act > 0 and act >= max(v for k, v in parts.items() if k not in ("activations", "overhead"))


def _candidates(p: dict[str, Any], est: Any = None) -> list[_Candidate]:
    out: list[_Candidate] = []
    full_like = p["method"] in ("full", "freeze")
    if not p["grad_ckpt"]:
        out.append(("turn on gradient checkpointing", "about 30% slower", {"grad_ckpt": True},
                    {"gradient_checkpointing": True}))
    if p["device"] == "cuda" and not p.get("offload_activations") and _activations_dominate(est):
        # transformers' own offload (activation_checkpointing_enable(offload=True)): the checkpointed inputs wait
        # in pinned host RAM; each step copies them out and back over PCIe on the compute stream
        out.append(("keep checkpointed activations in host RAM", "slower: they cross PCIe twice a step",
                    {"grad_ckpt": True, "offload_activations": True},
                    {"gradient_checkpointing": True, "offload_activations": True}))
    if full_like and is_torch_adamw(p["optim"]) and p["deepspeed"] == "none":
        out.append(("use the 8-bit optimizer", "needs bitsandbytes",
                    {"optim": EIGHT_BIT_ADAMW}, {"optim": EIGHT_BIT_ADAMW}))
    if p["batch"] > 1:
        out.append((f"train 1 row per step and accumulate {p['batch']} steps", "same effective batch, slower",
                    {"batch": 1},
                    {"per_device_train_batch_size": 1}))
    if p["seq_len"] > 256:
        new = max(256, p["seq_len"] // 2)
        out.append((f"cut rows at {new} tokens", "longer examples get cut", {"seq_len": new}, {"cutoff_len": new}))
    if full_like:
        out.append(("use LoRA", "trains small adapters instead of every weight",
                    {"method": "lora"}, {"finetuning_type": "lora"}))
    if p["quant_bits"] != 4 and "z3" not in p["deepspeed"] and not p["layerwise_offload"]:
        out.append(("use QLoRA 4-bit", "slightly lower quality, slower",
                    {"method": "qlora", "quant_bits": 4, "deepspeed": "none" if "z3" in p["deepspeed"] else p["deepspeed"]},
                    {"finetuning_type": "lora", "quantization_bit": 4}))
    if p["device"] == "cpu":   # offload plans move memory to the host: nothing gained on a CPU run
        return out
    if p["quant_bits"] is None and p["deepspeed"] != "z3-offload":
        # DeepSpeed keeps its own fp32 masters: pure_bf16 goes (RunConfig.validate refuses the two together)
        pure = {"precision": "bf16"} if p["precision"] == "pure_bf16" else {}
        out.append(("use DeepSpeed ZeRO-3 offload", "states move to host RAM, much slower",
                    {"deepspeed": "z3-offload", "optim": ADAMW, "layerwise_offload": False, **pure},
                    {"deepspeed": "z3-offload", "optim": ADAMW, "layerwise_offload": False,
                     **({"pure_bf16": False} if pure else {})}))
    if full_like and p["quant_bits"] is None and p["deepspeed"] == "none" and not p["layerwise_offload"]:
        out.append(("turn on layer-wise offload", "layers and optimizer live in host RAM, slower",
                    {"layerwise_offload": True, "grad_ckpt": True},
                    {"layerwise_offload": True, "gradient_checkpointing": True}))
    return out


def plan_settings(p: dict[str, Any]) -> dict[str, Any]:
    """An estimator plan in RunConfig's fields: what a run of this plan would set (the inverse of
    estimator.estimate_for_config's mapping)."""
    precision = p.get("precision", "auto")
    return {"finetuning_type": "lora" if p["method"] == "qlora" else p["method"],
            "quantization_bit": p.get("quant_bits"), "deepspeed": p["deepspeed"], "cutoff_len": p["seq_len"],
            "per_device_train_batch_size": p["batch"], "gradient_checkpointing": bool(p["grad_ckpt"]),
            "optim": canonical_optimizer(p["optim"]), "layerwise_offload": bool(p["layerwise_offload"]),
            "pure_bf16": precision == "pure_bf16", "precision": "bf16" if precision == "pure_bf16" else precision,
            "offload_activations": bool(p.get("offload_activations"))}


def _problems(p: dict[str, Any]) -> set[str]:
    return set(RunConfig(model_name_or_path="plan", dataset="plan", **plan_settings(p)).validate())


def _compatible(p: dict[str, Any], base: dict[str, Any]) -> bool:
    """A combination RunConfig.validate() rejects is never suggested: the rules are config/checks.py's, asked of
    the plan as the run would set it (problems the plan had already are not the combination's)."""
    return not (_problems(p) - _problems(base))


def _run(estimate: Callable[..., Any], card: Any, plan: dict[str, Any], gpu_mem_gb: float | None,
         ram_gb: float | None) -> Any:
    keys = ("method", "quant_bits", "deepspeed", "seq_len", "batch", "grad_ckpt", "optim", "precision", "lora_rank",
            "lora_target", "freeze_layers", "layerwise_offload", "device")
    # the plan's loss and quantization details too: a re-estimate without the chunked loss counted every
    # position's logits, so each change looked larger than the plan it was meant to shrink
    return estimate(card, **{k: plan[k] for k in keys}, gpu_mem_gb=gpu_mem_gb, ram_gb=ram_gb, suggest=False,
                    offload_activations=bool(plan.get("offload_activations")),
                    chunked_loss=bool(plan.get("chunked_loss")), double_quant=plan.get("double_quant", True))


def _keys(settings: dict[str, Any]) -> str:
    """The change as RunConfig / YAML keys, for the CLI's text (the page names its own fields)."""
    return ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items())


def _host_note(est: Any) -> str:
    host = est.host_breakdown.get("offloaded_states", 0) + est.host_breakdown.get("offloaded_activations", 0)
    pcie = est.plan.get("activation_pcie_s", 0)
    return (f", needs {est.cpu_gb:,.0f} GB host RAM" if host > 1 else "") + \
        (f", ~{pcie:.2f} s a step over PCIe" if pcie else "")


def suggest_fixes(card: Any, est: Any, gpu_mem_gb: float | None, ram_gb: float | None,
                  estimate: Callable[..., Any]) -> list[dict[str, Any]]:
    """``estimate`` is the estimator itself, passed in so that this module does not import it back.

    Ordered fixes for a plan that does not fit: single changes that fit alone first, then the rest,
    then (if no single change is enough) the cheapest combination found by adding changes in order."""
    base = est.plan
    # Save on whatever is short: card memory, or host RAM when only an offload plan's RAM is.
    on_host = est.host_short or base["device"] == "cpu"
    used = (lambda e: e.cpu_gb) if on_host else (lambda e: e.gpu_gb)
    unit = " host RAM" if on_host else ""
    singles: list[dict[str, Any]] = []
    for label, cost, change, settings in _candidates(base, est):
        new = _run(estimate, card, {**base, **change}, gpu_mem_gb, ram_gb)
        saving = used(est) - used(new)
        if saving < 0.05:
            continue
        verdict = "fits" if new.fits else "still too big"
        singles.append({"text": f"{label} ({_keys(settings)}; -{saving:.1f} GB{unit} -> {used(new):.1f} GB, {verdict}; "
                                f"{cost}{'' if unit else _host_note(new)})",
                        "change": label, "saving_gb": round(saving, 2), "gpu_gb": round(new.gpu_gb, 2),
                        "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits), "settings": dict(settings),
                        "on_host": on_host, "host_short": bool(new.host_short)})
    ordered = [s for s in singles if s["fits"]] + [s for s in singles if not s["fits"]]
    if any(s["fits"] for s in singles):
        return ordered
    plan, steps, settings_all, new = dict(base), [], {}, est
    for label, _cost, change, settings in _candidates(base, est):
        trial_plan = {**plan, **change}
        if not _compatible(trial_plan, base):
            continue
        trial = _run(estimate, card, trial_plan, gpu_mem_gb, ram_gb)
        if used(trial) < used(new) - 0.05 and (on_host or trial.gpu_gb < new.gpu_gb - 0.05):
            plan, new = trial_plan, trial
            steps.append(label)
            settings_all.update(settings)
            if new.fits:
                break
    if steps:
        verdict = "fits" if new.fits else "still too big: use a card with more memory or a smaller model"
        ordered.append({"text": f"together: {' + '.join(steps)} ({_keys(settings_all)}; -> {used(new):.1f} GB{unit}, "
                                f"{verdict}{'' if unit else _host_note(new)})",
                        "change": " + ".join(steps), "saving_gb": round(used(est) - used(new), 2),
                        "gpu_gb": round(new.gpu_gb, 2), "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits),
                        "settings": settings_all, "on_host": on_host, "host_short": bool(new.host_short)})
    return ordered
