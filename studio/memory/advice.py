"""What to change when a plan does not fit: the cheapest memory savings first.

Each candidate is one change to the run config, in RunConfig's fields, re-estimated as ``cfg.replace(**settings)``,
so the saving shown is the real difference for this model and these settings, not a rule of thumb, and the
settings a suggestion shows are the ones the page applies. Candidates come in order of what they cost the user
(speed first, then data truncation, then quality or host RAM).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..config.run_config import RunConfig
from ..config.vocabulary import EIGHT_BIT_ADAMW, TORCH_ADAMW, is_torch_adamw, short_optimizer
from . import terms

ADAMW = short_optimizer(TORCH_ADAMW[0])   # torch's AdamW, which DeepSpeed's offload plans run (its short name)


@dataclass(frozen=True)
class _Candidate:
    label: str
    cost: str
    settings: dict[str, Any]   # the change, as a run config's YAML would write it (the CLI's text names these)
    # settings that hold the rest of the run as it was (the effective batch): applied with the change, not named
    keep: dict[str, Any] = field(default_factory=dict)


def _activations_dominate(est: Any) -> bool:
    """The saved activations are the largest term of the card's peak (long rows, big batches)."""
    parts = est.breakdown if est is not None else {}
    act = parts.get("activations", 0.0)
    return act > 0 and act >= max(v for k, v in parts.items() if k not in ("activations", "overhead"))


def _candidates(est: Any) -> list[_Candidate]:
    """The changes worth trying for ``est``'s config, read from the plan it amounts to (``est.setup``: what
    checkpointing, DeepSpeed and offload do on this device, whatever the fields say)."""
    cfg, s = est.config, est.setup
    out: list[_Candidate] = []
    full_like = s.method in ("full", "freeze")
    if not s.grad_ckpt:
        out.append(_Candidate("turn on gradient checkpointing", "about 30% slower", {"gradient_checkpointing": True}))
    if s.device == "cuda" and not terms.offloads_activations(s) and _activations_dominate(est):
        # transformers' own offload (activation_checkpointing_enable(offload=True)): the checkpointed inputs wait
        # in pinned host RAM; each step copies them out and back over PCIe on the compute stream
        out.append(_Candidate("keep checkpointed activations in host RAM", "slower: they cross PCIe twice a step",
                              {"gradient_checkpointing": True, "offload_activations": True}))
    if full_like and is_torch_adamw(s.optim) and s.ds == "none":
        out.append(_Candidate("use the 8-bit optimizer", "needs bitsandbytes", {"optim": EIGHT_BIT_ADAMW}))
    batch = cfg.per_device_train_batch_size
    if batch > 1:
        out.append(_Candidate(f"train 1 row per step and accumulate {batch} steps", "same effective batch, slower",
                              {"per_device_train_batch_size": 1},
                              {"gradient_accumulation_steps": cfg.gradient_accumulation_steps * batch}))
    if cfg.cutoff_len > 256:
        new = max(256, cfg.cutoff_len // 2)
        out.append(_Candidate(f"cut rows at {new} tokens", "longer examples get cut", {"cutoff_len": new}))
    if full_like:
        out.append(_Candidate("use LoRA", "trains small adapters instead of every weight", {"finetuning_type": "lora"}))
    if s.quant_bits != 4 and "z3" not in s.ds and not s.layerwise:
        out.append(_Candidate("use QLoRA 4-bit", "slightly lower quality, slower",
                              {"finetuning_type": "lora", "quantization_bit": 4}))
    if s.device == "cpu":   # offload plans move memory to the host: nothing gained on a CPU run
        return out
    if s.quant_bits is None and s.ds != "z3-offload":
        # DeepSpeed keeps its own fp32 masters: pure_bf16 goes (RunConfig.validate refuses the two together)
        out.append(_Candidate("use DeepSpeed ZeRO-3 offload", "states move to host RAM, much slower",
                              {"deepspeed": "z3-offload", "optim": ADAMW, "layerwise_offload": False,
                               **({"pure_bf16": False} if s.precision == "pure_bf16" else {})}))
    if full_like and s.quant_bits is None and s.ds == "none" and not s.layerwise:
        out.append(_Candidate("turn on layer-wise offload", "layers and optimizer live in host RAM, slower",
                              {"layerwise_offload": True, "gradient_checkpointing": True}))
    return out


def _compatible(trial: RunConfig, base: RunConfig) -> bool:
    """A change or combination RunConfig.validate() rejects is never suggested: the rules are config/checks.py's
    (problems the config had already are not the change's)."""
    return not (set(trial.validate()) - set(base.validate()))


def _applied(cfg: RunConfig, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as the changed config holds them (the optimizer under transformers' name), for the page."""
    return {k: getattr(cfg, k) for k in settings}


def _keys(settings: dict[str, Any]) -> str:
    """The change as RunConfig / YAML keys, for the CLI's text (the page names its own fields)."""
    return ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items())


def _host_note(est: Any) -> str:
    host = est.host_breakdown.get("offloaded_states", 0) + est.host_breakdown.get("offloaded_activations", 0)
    pcie = round(terms.activation_pcie_seconds(est.card, est.setup), 3) if est.card and est.setup else 0
    return (f", needs {est.cpu_gb:,.0f} GB host RAM" if host > 1 else "") + \
        (f", ~{pcie:.2f} s a step over PCIe" if pcie else "")


def suggest_fixes(est: Any, again: Callable[[RunConfig], Any]) -> list[dict[str, Any]]:
    """Ordered fixes for ``est``, a plan that does not fit: single changes that fit alone first, then the rest,
    then (if no single change is enough) the cheapest combination found by adding changes in order.

    ``again`` estimates a changed config on the same machine (the estimator's, passed in so that this module does
    not import it back)."""
    base = est.config
    # Save on whatever is short: card memory, or host RAM when only an offload plan's RAM is.
    on_host = est.host_short or est.machine.device == "cpu"
    used = (lambda e: e.cpu_gb) if on_host else (lambda e: e.gpu_gb)
    unit = " host RAM" if on_host else ""
    singles: list[dict[str, Any]] = []
    for c in _candidates(est):
        changed = base.replace(**c.settings, **c.keep)
        if not _compatible(changed, base):   # 8-bit Adam for a config that names DeepSpeed, on a CPU run
            continue
        new = again(changed)
        saving = used(est) - used(new)
        if saving < 0.05:
            continue
        verdict = "fits" if new.fits else "still too big"
        singles.append({"text": f"{c.label} ({_keys(c.settings)}; -{saving:.1f} GB{unit} -> {used(new):.1f} GB, "
                                f"{verdict}; {c.cost}{'' if unit else _host_note(new)})",
                        "change": c.label, "saving_gb": round(saving, 2), "gpu_gb": round(new.gpu_gb, 2),
                        "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits),
                        "settings": _applied(changed, {**c.settings, **c.keep}),
                        "on_host": on_host, "host_short": bool(new.host_short)})
    ordered = [s for s in singles if s["fits"]] + [s for s in singles if not s["fits"]]
    if any(s["fits"] for s in singles):
        return ordered
    cfg, steps, shown, kept, new = base, [], {}, {}, est
    for c in _candidates(est):
        trial_cfg = cfg.replace(**c.settings, **c.keep)
        if not _compatible(trial_cfg, base):
            continue
        trial = again(trial_cfg)
        if used(trial) < used(new) - 0.05 and (on_host or trial.gpu_gb < new.gpu_gb - 0.05):
            cfg, new = trial_cfg, trial
            steps.append(c.label)
            shown.update(c.settings)
            kept.update(c.keep)
            if new.fits:
                break
    if steps:
        verdict = "fits" if new.fits else "still too big: use a card with more memory or a smaller model"
        ordered.append({"text": f"together: {' + '.join(steps)} ({_keys(shown)}; -> {used(new):.1f} GB{unit}, "
                                f"{verdict}{'' if unit else _host_note(new)})",
                        "change": " + ".join(steps), "saving_gb": round(used(est) - used(new), 2),
                        "gpu_gb": round(new.gpu_gb, 2), "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits),
                        "settings": _applied(cfg, {**shown, **kept}), "on_host": on_host,
                        "host_short": bool(new.host_short)})
    return ordered
