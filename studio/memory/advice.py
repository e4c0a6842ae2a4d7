"""What to change when a plan does not fit: the cheapest memory savings first.

Each candidate is one change to the run config, in RunConfig's fields, re-estimated as ``cfg.replace(**settings)``,
so the saving shown is the real difference for this model and these settings, not a rule of thumb, and the
settings a suggestion shows are the ones the page applies. Candidates come in order of what they cost the user
(speed first, then data truncation, then quality or host RAM). Each change is said by code (``advice.<code>`` and
its ``.cost``, studio/words/settings_words.py): a suggestion's ``change`` and ``text`` are the command line's
English that also carry their codes, so a page shows the change in its own language.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..config.run_config import Draft
from ..config.vocabulary import EIGHT_BIT_ADAMW, TORCH_ADAMW, is_torch_adamw, short_optimizer
from ..words.said import Said
from . import terms

ADAMW = short_optimizer(TORCH_ADAMW[0])   # torch's AdamW, which DeepSpeed's offload plans run (its short name)


@dataclass(frozen=True)
class _Candidate:
    code: str                  # the change's words: advice.<code> and advice.<code>.cost
    settings: dict[str, Any]   # the change, as a run config's YAML would write it (the CLI's text names these)
    # settings that hold the rest of the run as it was (the effective batch): applied with the change, not named
    keep: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # the values its words name (a batch, a row length)

    @property
    def label(self) -> Said:
        return Said.of(f"advice.{self.code}", **self.values)

    @property
    def cost(self) -> Said:
        return Said.of(f"advice.{self.code}.cost", **self.values)


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
        out.append(_Candidate("ckpt", {"gradient_checkpointing": True}))
    if s.device == "cuda" and not terms.offloads_activations(s) and _activations_dominate(est):
        # transformers' own offload (activation_checkpointing_enable(offload=True)): the checkpointed inputs wait
        # in pinned host RAM; each step copies them out and back over PCIe on the compute stream
        out.append(_Candidate("offload_activations", {"gradient_checkpointing": True, "offload_activations": True}))
    if full_like and is_torch_adamw(s.optim) and s.ds == "none":
        out.append(_Candidate("adam8", {"optim": EIGHT_BIT_ADAMW}))
    batch = cfg.per_device_train_batch_size
    if batch > 1:
        out.append(_Candidate("one_row", {"per_device_train_batch_size": 1},
                              {"gradient_accumulation_steps": cfg.gradient_accumulation_steps * batch},
                              {"batch": batch}))
    if cfg.cutoff_len > 256:
        new = max(256, cfg.cutoff_len // 2)
        out.append(_Candidate("cut", {"cutoff_len": new}, values={"new": new}))
    if full_like:
        out.append(_Candidate("lora", {"finetuning_type": "lora"}))
    if s.quant_bits != 4 and "z3" not in s.ds and not s.layerwise:
        out.append(_Candidate("qlora", {"finetuning_type": "lora", "quantization_bit": 4}))
    if s.device == "cpu":   # offload plans move memory to the host: nothing gained on a CPU run
        return out
    if s.quant_bits is None and s.ds != "z3-offload":
        # DeepSpeed keeps its own fp32 masters: pure_bf16 goes (RunConfig.validate refuses the two together)
        out.append(_Candidate("zero3", {"deepspeed": "z3-offload", "optim": ADAMW, "layerwise_offload": False,
                                        **({"pure_bf16": False} if s.precision == "pure_bf16" else {})}))
    if full_like and s.quant_bits is None and s.ds == "none" and not s.layerwise:
        out.append(_Candidate("layerwise", {"layerwise_offload": True, "gradient_checkpointing": True}))
    return out


def _compatible(trial: Draft, base: Draft) -> bool:
    """A change or combination Draft.validate() rejects is never suggested: the rules are config/checks.py's
    (problems the config had already are not the change's)."""
    return not (set(trial.validate()) - set(base.validate()))


def _applied(cfg: Draft, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as the changed config holds them (the optimizer under transformers' name), for the page."""
    return {k: getattr(cfg, k) for k in settings}


def _keys(settings: dict[str, Any]) -> str:
    """The change as RunConfig / YAML keys, for the CLI's text (the page names its own fields)."""
    return ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items())


def _host_note(est: Any) -> Said:
    """What an offloading plan also costs: the host RAM it needs, the seconds a step spends on PCIe."""
    host = est.host_breakdown.get("offloaded_states", 0) + est.host_breakdown.get("offloaded_activations", 0)
    pcie = round(terms.activation_pcie_seconds(est.card, est.setup), 3) if est.card and est.setup else 0
    return Said.of("advice.note", host=Said.of("advice.needs_host", gb=est.cpu_gb) if host > 1 else "",
                   pcie=Said.of("advice.pcie", s=pcie) if pcie else "")


def suggest_fixes(est: Any, again: Callable[[Draft], Any]) -> list[dict[str, Any]]:
    """Ordered fixes for ``est``, a plan that does not fit: single changes that fit alone first, then the rest,
    then (if no single change is enough) the cheapest combination found by adding changes in order.

    ``again`` estimates a changed config on the same machine (the estimator's, passed in so that this module does
    not import it back)."""
    base = est.config.draft()  # a candidate may break a rule: it is tried as a Draft and asked of validate()
    # Save on whatever is short: card memory, or host RAM when only an offload plan's RAM is.
    on_host = est.host_short or est.machine.device == "cpu"
    used = (lambda e: e.cpu_gb) if on_host else (lambda e: e.gpu_gb)
    unit = Said.of("advice.host_ram") if on_host else ""
    singles: list[dict[str, Any]] = []
    for c in _candidates(est):
        changed = base.replace(**c.settings, **c.keep)
        if not _compatible(changed, base):   # 8-bit Adam for a config that names DeepSpeed, on a CPU run
            continue
        new = again(changed)
        saving = used(est) - used(new)
        if saving < 0.05:
            continue
        verdict = Said.of("advice.fits" if new.fits else "still_too_big")
        text = Said.of("advice.single", change=c.label, keys=_keys(c.settings), saving=saving, unit=unit,
                       used=used(new), verdict=verdict, cost=c.cost, note="" if unit else _host_note(new))
        singles.append({"text": text, "change": c.label, "saving_gb": round(saving, 2), "gpu_gb": round(new.gpu_gb, 2),
                        "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits),
                        "settings": _applied(changed, {**c.settings, **c.keep}),
                        "on_host": on_host, "host_short": bool(new.host_short)})
    ordered = [s for s in singles if s["fits"]] + [s for s in singles if not s["fits"]]
    if any(s["fits"] for s in singles):
        return ordered
    cfg, steps, shown, kept, new = base, [], {}, {}, est  # steps: the labels of the changes made together
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
        verdict = Said.of("advice.fits" if new.fits else "advice.too_big_all")
        change = Said.of("advice.together", changes=steps)
        text = Said.of("advice.combined", change=change, keys=_keys(shown), used=used(new), unit=unit,
                       verdict=verdict, note="" if unit else _host_note(new))
        ordered.append({"text": text, "change": change, "saving_gb": round(used(est) - used(new), 2),
                        "gpu_gb": round(new.gpu_gb, 2), "cpu_gb": round(new.cpu_gb, 2), "fits": bool(new.fits),
                        "settings": _applied(cfg, {**shown, **kept}), "on_host": on_host,
                        "host_short": bool(new.host_short)})
    return ordered
