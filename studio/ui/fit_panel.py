"""The Settings tab's "will it fit" panel and its check: the estimate against the machine typed in, its suggestions
(the "Apply" list) and every problem before Start, in the page's words.

The numbers come from studio.memory (through ``autoconfig.fit_estimate``) and the checks from ``Draft.validate()``;
this module only words them, and answers the panel's events (the estimate, the "Apply" list and its button); the
tab (studio/ui/settings_tab.py) wires them to its components.
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import gradio as gr

from . import forms
from .common import ui_errors
from .inputs import Values
from ..app.context import AppContext
from ..app.paths import estimate_paths, resolve_run_paths
from ..app.run_estimate import time_line
from ..app.settings import error_line, field_label, hardware, learning_lines, problem_line, reason_text
from ..autoconfig import Hardware, fit_estimate, offload_disk_problem
from ..config.run_config import Draft
from ..errors import StudioError
from ..memory.estimator import estimate as memory_estimate
from ..models.kernels import SOFTCAPPED_MODEL_TYPES, kernel_plan
from ..words.render import has
from .i18n import msg


def estimate_markdown(cfg: Draft, gpu_mem_gb: float | None, lang: str = "en", ram_gb: float | None = None) -> str:
    """The "will it fit" panel against this machine: the card (plus host RAM for offloaded states) or, with
    no card (``gpu_mem_gb`` 0 or None), host RAM alone, since training then runs on the CPU."""
    return fit_panel(cfg, gpu_mem_gb, lang, ram_gb)[0]


def fit_panel(cfg: Draft, gpu_mem_gb: float | None, lang: str = "en", ram_gb: float | None = None
              ) -> tuple[str, str | None]:
    """(the "will it fit" panel, the Settings check's line when the plan does not fit, else None): both from the
    one estimate, so the check never says "No problems found" beside "Does not fit"."""
    hw = Hardware(gpu_gb=gpu_mem_gb or None, ram_gb=ram_gb)
    try:
        est = fit_estimate(cfg, hw, memory_estimate)
    except StudioError as exc:
        return f"⚠️ {error_line(exc, lang)}", None
    d = est.to_dict()
    # offload plans write whole-model checkpoints: a disk too small for one is a plan that does not fit
    disk = offload_disk_problem(cfg, est, Hardware(gpu_mem_gb or None, ram_gb, _free_disk(cfg.output_dir))) \
        if "offload" in str(cfg.deepspeed) or cfg.layerwise_offload else None
    fits = d["fits"] and not disk if d["fits"] is not None else None
    verdict = ("" if fits is None else
               f"**{msg('tight', lang) if d['tight'] and fits else msg('fits' if fits else 'no_fit', lang)}** — ")
    ram = f" / {ram_gb:.1f} GB" if ram_gb else ""
    if hw.device == "cpu":
        lines = [msg("hw.cpu", lang, ram=ram_gb or 0), "",
                 f"{verdict}{msg('cpu', lang)} **{d['cpu_gb']:.2f} GB**{ram}", ""]
    else:
        lines = [f"{verdict}{msg('gpu', lang)} **{d['gpu_gb']:.2f} GB** / {gpu_mem_gb:g} GB, "
                 f"{msg('cpu', lang)} {d['cpu_gb']:.2f} GB{ram}", ""]
        if d["host_short"]:
            lines += [msg("host_short", lang, need=d["cpu_gb"], ram=ram_gb or 0), ""]
    lines += [f"- {_part(k, lang)}: {v:.2f} GB" for k, v in d["breakdown"].items()]
    lines += ["", kernel_line(cfg, getattr(est.card, "model_type", "") or None, hw.device, lang)]
    if disk:
        lines += ["", f"❌ {reason_text(disk, lang)}"]
    if d["suggestions"]:
        lines += [""] + [f"💡 {suggestion_label(s, lang)}" for s in d["suggestion_details"][:3]]
    if fits is False and not any(s.get("fits") for s in d["suggestion_details"]):
        # no change on this page is enough: say what would be (the list was just empty)
        best = min([d] + d["suggestion_details"], key=lambda s: s["gpu_gb"] if hw.device == "cuda" else s["cpu_gb"])
        lines += ["", "➡️ " + (msg("nothing_fits_card", lang, gpu=best["gpu_gb"], ram=best["cpu_gb"])
                              if hw.device == "cuda" else msg("nothing_fits_ram", lang, ram=best["cpu_gb"]))]
    problem = None
    if fits is False:
        problem = reason_text(disk, lang) if disk and d["fits"] else (
            msg("fit.no_fit", lang, gpu=d["gpu_gb"], ram=d["cpu_gb"]) if hw.device == "cuda" else
            msg("fit.no_fit_cpu", lang, ram=d["cpu_gb"]))
    return "\n".join(lines), problem


def kernel_line(cfg: Draft, model_type: str | None, device: str, lang: str = "en") -> str:
    """The plan's kernels on the page: "Fast kernels: Liger" or the studio's own and why (models/kernels.py)."""
    plan = kernel_plan(device, model_type, 30.0 if model_type in SOFTCAPPED_MODEL_TYPES else None,
                       cfg.enable_liger_kernel)
    return plan.words(lang, "page")


def _free_disk(where: str | Path | None = None) -> float | None:
    """Free GB on the disk the run folder goes to (its nearest existing parent folder)."""
    path = Path(where or ".").expanduser().absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free / 1024 ** 3
    except OSError:
        return None


def _part(name: str, lang: str) -> str:
    key = f"breakdown.{name}"
    return msg(key, lang) if lang != "en" and has(key) else name


def suggestion_label(detail: dict[str, Any], lang: str = "en") -> str:
    """One estimator suggestion as a plain sentence in the page's field names, with what it then needs.

    The verdict is the estimator's own for the changed plan against the same card and host RAM the panel
    uses, so the list and the panel never disagree."""
    settings = ", ".join(f"{field_label(k, lang)} = {_shown(v, lang)}" for k, v in detail.get("settings", {}).items())
    verdict = msg("fits", lang) if detail.get("fits") else msg("still_too_big", lang)
    if detail.get("on_host"):
        need = msg("sugg.need_ram", lang, gb=detail.get("cpu_gb", 0.0))
    else:
        need = msg("sugg.need_card", lang, gb=detail.get("gpu_gb", 0.0))
        if detail.get("cpu_gb", 0.0) > 4:   # offload plans: the host RAM they need too
            need += msg("sugg.and_ram", lang, gb=detail.get("cpu_gb", 0.0))
    return msg("suggestion", lang, change=_change_text(detail.get("change", ""), lang), settings=settings,
               need=need, verdict=verdict)


def _shown(value: Any, lang: str) -> str:
    """A suggested setting's value as the form shows it: a switch as on / off in ``lang``."""
    return msg("on" if value else "off", lang) if isinstance(value, bool) else str(value)


def _change_text(change: Any, lang: str) -> str:
    """The suggested change in ``lang``: the estimator says it by code (studio/memory/advice.py)."""
    return change.text(lang) if hasattr(change, "text") else str(change)


def _suggestions(cfg: Draft, gpu_mem_gb: float | None, ram_gb: float | None = None) -> list[dict[str, Any]]:
    """The estimator's suggestion_details for ``cfg`` against the same machine as the panel (card memory typed in,
    host RAM): [] when it fits, is missing, or cannot read the model."""
    try:
        target = Hardware(gpu_gb=gpu_mem_gb or None, ram_gb=ram_gb)
        return fit_estimate(cfg, target, memory_estimate).suggestion_details
    except StudioError:
        return []


def suggestion_choices(values: list[Any], gpu_mem: float | None, lang: str = "en",
                       ram_gb: float | None = None, ctx: AppContext | None = None) -> list[tuple[str, int]]:
    """(label, index) choices for the "Apply" dropdown; [] while the form has a wrong-typed value or, with the
    page's ``ctx``, a path outside its root (the estimate would read that model's config.json or DeepSpeed JSON)."""
    try:
        cfg = forms.values_to_draft(values)
        if ctx is not None:
            cfg = estimate_paths(cfg, ctx)
    except StudioError:
        return []
    return [(suggestion_label(d, lang), i) for i, d in enumerate(_suggestions(cfg, gpu_mem, ram_gb))]


def target_ram(ctx: AppContext, ram: Any = None) -> float | None:
    """The host RAM to plan for: the number typed in Host RAM (another server), else this machine's."""
    if isinstance(ram, (int, float)) and not isinstance(ram, bool) and math.isfinite(ram) and 0 < ram < 1e6:
        return float(ram)
    return hardware(ctx).ram_gb


def apply_suggestion(ctx: AppContext, values: list[Any], gpu_mem: float | None,
                     index: int | float | None, ram: float | None = None) -> tuple[list[Any], str, str]:
    """Put suggestion ``index`` of the current estimate into the form -> (new form values, fit, check).

    The suggestions are recomputed from ``values``: the index refers to the list the dropdown shows,
    which is refreshed every time the estimate changes.

    Raises:
        StudioError: nothing picked, or the pick is not among the current suggestions.
        ConfigError: a form value of the wrong type.
    """
    cfg = forms.values_to_draft(values)
    details = _suggestions(estimate_paths(cfg, ctx), gpu_mem, target_ram(ctx, ram))  # paths confined first
    if index is None or not 0 <= int(index) < len(details):
        raise StudioError.of("page.no_suggestion")
    new_values = forms.config_to_values(cfg.replace(**details[int(index)]["settings"]))
    fit, check = on_change(ctx, new_values, gpu_mem, ram)
    return new_values, fit, check


def check_markdown(cfg: Draft, ctx: AppContext, no_fit: str | None = None) -> str:
    """Every problem before Start: the plan that does not fit (``no_fit``, from the panel's own estimate), choices
    that will not learn, then the config's own checks, in the page's words."""
    problems = ([no_fit] if no_fit else []) + learning_lines(cfg, ctx) + [problem_line(p, ctx.lang) for p in cfg.validate()]
    try:
        resolve_run_paths(cfg, ctx)
    except StudioError as exc:
        problems.append(error_line(exc, ctx.lang))
    if not problems:
        return "✅ " + msg("no_problems", ctx.lang)
    return "\n".join(f"- ❌ {p}" for p in dict.fromkeys(problems))


def on_change(ctx: AppContext, values: list[Any], gpu_mem: float | None, ram: float | None = None
              ) -> tuple[str, str]:
    """Live panel update for the target machine (card memory, host RAM: ``target_ram``); a value of the wrong
    type shows up as a problem, not a popup."""
    try:
        cfg = forms.values_to_draft(values)
    except StudioError as exc:
        return "", "- ❌ " + error_line(exc, ctx.lang)
    gpu_mem = gpu_mem if isinstance(gpu_mem, (int, float)) and math.isfinite(gpu_mem) and gpu_mem > 0 else None
    try:
        confined = estimate_paths(cfg, ctx)  # before the estimator reads config.json / the DeepSpeed JSON
    except StudioError as exc:
        return f"⚠️ {error_line(exc, ctx.lang)}", check_markdown(cfg, ctx)
    panel, no_fit = fit_panel(confined, gpu_mem, ctx.lang, target_ram(ctx, ram))
    timing = time_line(ctx, confined)  # how long on this machine (the confined model folder only)
    return (f"{panel}\n\n{timing}" if timing else panel), check_markdown(cfg, ctx, no_fit)


# ------------------------------------------------------------------ the panel's handlers (wired by settings_tab.py)
def estimate_handler(ctx: AppContext, v: Values) -> tuple[str, str]:
    """The "will it fit" panel and the check, for the form and the machine typed in (app.py's page load too)."""
    return on_change(ctx, forms.form_list(v.form), v.gpu_mem, v.host_ram)


def _suggestion_update(ctx: AppContext, values: list[Any], v: Values) -> Any:
    choices = suggestion_choices(values, v.gpu_mem, ctx.lang, target_ram(ctx, v.host_ram), ctx=ctx)
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


def refresh_suggestions(ctx: AppContext, v: Values) -> Any:
    return _suggestion_update(ctx, forms.form_list(v.form), v)


@ui_errors
def apply(ctx: AppContext, v: Values) -> list[Any]:
    values, fit_md, check_md = apply_suggestion(ctx, forms.form_list(v.form), v.gpu_mem, v.pick, v.host_ram)
    return values + [fit_md, check_md, _suggestion_update(ctx, values, v)]



__all__ = ["apply", "apply_suggestion", "estimate_handler", "refresh_suggestions", "check_markdown", "estimate_markdown", "fit_panel", "kernel_line", "on_change",
           "suggestion_choices", "suggestion_label", "target_ram"]
