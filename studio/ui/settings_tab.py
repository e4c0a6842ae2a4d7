"""Settings tab: model, method, preset, hyperparameters and memory plan, with a live "will it fit".

The form comes from studio/ui/forms.py (generated from RunConfig); checks come from
Draft.validate() and the estimate from studio.memory, so this module only displays them.
"""
from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from .text import Markdown

from ..config.run_config import Draft
from ..safe_files import copyfile
from ..workspace import PRESETS_DIR
from ..errors import StudioError
from . import forms
from ..app import gguf_upload, model_download
from .common import info, ui_errors, warning
from ..app.context import AppContext
from .handlers import for_each_browser, owner_action
from .inputs import Values, named
from .i18n import msg
from ..words.render import has
from ..app.paths import estimate_paths, resolve_run_paths
from ..app.form_values import command_line, load_settings, save_settings
from ..app.uploads import check_data_upload
from ..app.model_list import model_choices
from ..app.run_estimate import time_line
from ..app.datasets import dataset_choices, dataset_info
from ..app.settings import (derive, field_label, hardware, learning_lines, settings_version, error_line, problem_line,
                            reason_text, restore, save_state)
from ..autoconfig import BUDGETS
from ..config.run_config import DEMO_MODEL
from ..data.convert import TASKS
from ..autoconfig import Hardware, fit_estimate, offload_disk_problem
from ..memory.estimator import estimate as memory_estimate
from ..memory.gpus import gpu_choices, gpu_memory
from ..models.kernels import SOFTCAPPED_MODEL_TYPES, kernel_plan

RECIPES = PRESETS_DIR / "recipes"


def preset_choices() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


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


# ------------------------------------------------------------------ handlers
# Each takes the browser's ``ctx`` and its inputs by name (``v``: studio/ui/inputs.py); ``wire_settings_tab`` below
# says which components they are. ``v.form`` is the Settings form, field name -> value.


def _number(value: Any) -> float | None:
    """A number typed in the card memory or Host RAM box, else None (a half-typed box, a script's string)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return value if ok else None


def estimate_handler(ctx: AppContext, v: Values) -> tuple[str, str]:
    """The "will it fit" panel and the check, for the form and the machine typed in (app.py's page load too)."""
    return on_change(ctx, forms.form_list(v.form), v.gpu_mem, v.host_ram)


def remember(ctx: AppContext, v: Values) -> int | None:
    """Every change of the form is kept for this login (a reload or another browser restores it); a page loaded
    before the last save (``v.loaded``, the version it showed) does not overwrite it."""
    saved = save_state(ctx, forms.form_list(v.form), {"task": v.task, "budget": v.budget, "gpu_mem": _number(v.gpu_mem),
                                                "host_ram": _number(v.host_ram)}, v.loaded)
    if saved is None:
        warning(msg("settings_stale", ctx.lang), ctx.lang)
        return v.loaded
    return saved


def relist_models(ctx: AppContext, v: Values) -> Any:
    """The Model list's times from the form the panel just estimated (the same function, the same form), so they
    follow every change of it, a dataset chosen from the Data tab included."""
    card = v.gpu_mem if isinstance(v.gpu_mem, (int, float)) and not isinstance(v.gpu_mem, bool) else None
    return gr.update(choices=model_choices(hardware(ctx), None, v.task, ctx.lang, v.model, ctx=ctx, dataset=v.data,
                                           budget=v.budget, form=forms.form_list(v.form), gpu_mem=card))


@ui_errors
def derive_short(ctx: AppContext, v: Values) -> list:
    """The short form (model, task, time budget, data) fills the full form -> its values and the reasons."""
    new_values, why_md = derive(ctx, v.model, v.task, v.budget, v.data, forms.form_list(v.form), v.gpu_mem)
    return new_values + [why_md]


def derive_for_data(ctx: AppContext, v: Values) -> list:
    """``derive_short`` once a dataset converted on the Data tab is the training data (nothing when none is)."""
    return derive_short(ctx, v) if v.data else [gr.skip()] * (len(forms.FIELD_NAMES) + 1)


def relabel(ctx: AppContext, v: Values) -> Any:
    """The Model list's times follow the task, the time budget and the chosen data."""
    info = dataset_info(ctx, v.data)
    return gr.update(choices=model_choices(hardware(ctx), info and info["rows"], v.task, ctx.lang, v.model, ctx=ctx,
                                           dataset=v.data, budget=v.budget))


def demo_note_visible(ctx: AppContext, model: str | None) -> Any:
    return gr.update(visible=(model or "").strip() == DEMO_MODEL)  # it stayed for Gemma


def card_memory(ctx: AppContext, name: str | None) -> Any:
    """A listed card fills in its memory; any other value (from the browser) changes nothing."""
    return gpu_memory(name) or gr.skip()


@ui_errors
def upload_gguf(ctx: AppContext, path: str | None, task_v: str, progress: Any = gr.Progress()) -> tuple[Any, Any, Any]:
    """An uploaded .gguf: kept in the workspace, prepared once (with progress), then it is the Model."""
    if not path:
        return gr.skip(), gr.skip(), gr.skip()
    folder, text = gguf_upload.accept_gguf(ctx, path, ctx.lang, progress=lambda f, m: progress(f, desc=m))
    return (gr.update(choices=model_choices(hardware(ctx), None, task_v, ctx.lang, folder, ctx=ctx), value=folder),
            folder, text)


def get_button(ctx: AppContext, model_v: str | None) -> Any:
    return gr.update(**model_download.button(model_v, ctx.lang))


@ui_errors
def download_model(ctx: AppContext, model_v: str | None, task_v: str, progress: Any = gr.Progress()) -> tuple:
    """The explicit download of a built-in model's file (its size is on the button)."""
    text = model_download.download(model_v, ctx.lang, progress=lambda f, m: progress(f, desc=m))
    return (gr.update(choices=model_choices(hardware(ctx), None, task_v, ctx.lang, model_v, ctx=ctx), value=model_v),
            text, gr.update(**model_download.button(model_v, ctx.lang)))


def pick_dataset(ctx: AppContext, path: str | None) -> tuple[Any, Any]:
    """A dataset just converted on the Data tab: list it, choose it, take its task (then it is derived for)."""
    if not path:
        return gr.skip(), gr.skip()
    info = dataset_info(ctx, path)
    choices = dataset_choices(ctx, ctx.lang)
    return gr.update(choices=choices, value=info["path"] if info else path), (info or {}).get("task") or gr.skip()


def on_load(ctx: AppContext) -> list[Any]:
    """The settings this login saved, back on the page (``load_outputs``' order)."""
    values, choices, why_md = restore(ctx)
    version = settings_version(ctx)
    cfg = dict(zip(forms.FIELD_NAMES, values))
    info = dataset_info(ctx, cfg.get("dataset"))
    data_value = info["path"] if info else None
    model_v = cfg.get("model_name_or_path") or DEMO_MODEL
    return values + [gr.update(choices=model_choices(hardware(ctx), info and info["rows"], choices["task"], ctx.lang,
                                                     model_v, ctx=ctx, dataset=data_value, budget=choices["budget"]),
                               value=model_v), choices["task"], choices["budget"],
                     gr.update(choices=dataset_choices(ctx, ctx.lang), value=data_value), why_md,
                     gguf_upload.note(ctx, ctx.lang),  # in this browser's language (handlers.py)
                     version,
                     # the card memory planned for (it went back to 0 on reload)
                     choices["gpu_mem"] if choices.get("gpu_mem") is not None else gr.skip(),
                     choices["host_ram"] if choices.get("host_ram") is not None else gr.skip()]


@ui_errors
def pick_preset(ctx: AppContext, v: Values) -> list[Any]:
    if not v.preset:
        return [gr.skip()] * len(forms.FIELD_NAMES)
    return load_settings(RECIPES / f"{v.preset}.yaml", forms.form_list(v.form))


@ui_errors
def upload_yaml(ctx: AppContext, v: Values) -> list[Any]:
    if not v.path:
        return [gr.skip()] * len(forms.FIELD_NAMES)
    check_data_upload(v.path, ctx.max_upload_mb, (".yaml", ".yml"))
    try:
        return load_settings(v.path, forms.form_list(v.form))
    except StudioError as exc:  # name the person's file, not Gradio's upload-cache path (a value of its code)
        raise exc.with_values(**{k: Path(v.path).name for k, value in (exc.values or {}).items()
                                 if value == str(v.path)}) from None


@ui_errors
def save(ctx: AppContext, v: Values) -> str:
    path = save_settings(ctx, forms.form_list(v.form))
    tmp = Path(tempfile.mkdtemp(prefix="studio-settings-")) / path.name  # a copy for the download link
    copyfile(path, tmp, [ctx.workspace])
    info(msg("saved", ctx.lang, path=path), ctx.lang)
    return str(tmp)


@ui_errors
def show(ctx: AppContext, v: Values) -> str:
    return command_line(ctx, forms.form_list(v.form))


def warn_remote(ctx: AppContext, on: bool) -> None:
    if on:
        warning(msg("trust_warning", ctx.lang), ctx.lang)


def _suggestion_update(ctx: AppContext, values: list[Any], v: Values) -> Any:
    choices = suggestion_choices(values, v.gpu_mem, ctx.lang, target_ram(ctx, v.host_ram), ctx=ctx)
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


def refresh_suggestions(ctx: AppContext, v: Values) -> Any:
    return _suggestion_update(ctx, forms.form_list(v.form), v)


@ui_errors
def apply(ctx: AppContext, v: Values) -> list[Any]:
    values, fit_md, check_md = apply_suggestion(ctx, forms.form_list(v.form), v.gpu_mem, v.pick, v.host_ram)
    return values + [fit_md, check_md, _suggestion_update(ctx, values, v)]


def from_file(ctx: AppContext, name: str | None) -> Any:  # the reasons above no longer describe the form
    return msg("why.from_file", ctx.lang, name=Path(str(name)).name) if name else gr.skip()


# ------------------------------------------------------------------ components
@dataclass
class SettingsTab:
    """The Settings tab's components by name (``build_settings_tab``); ``form`` maps field name -> component."""
    form: dict[str, Any]
    model: Any          # the short form: model, task, time budget, training data
    task: Any
    budget: Any
    data: Any
    why: Any            # why the short form chose what it did
    get_btn: Any
    get_info: Any
    gguf_in: Any
    gguf_info: Any
    demo_note: Any
    preset: Any
    save_btn: Any
    show_btn: Any
    yaml_in: Any
    yaml_out: Any
    command: Any
    check: Any
    fit: Any
    suggest: Any
    apply: Any
    gpu_pick: Any
    gpu_mem: Any
    host_ram: Any
    loaded: Any         # the settings version this page showed (server-side)

    def short(self) -> dict[str, Any]:
        return {"model": self.model, "task": self.task, "budget": self.budget, "data": self.data}

    def planned(self) -> dict[str, Any]:
        """The form and the machine it is planned for: what the estimate reads."""
        return {"form": self.form, "gpu_mem": self.gpu_mem, "host_ram": self.host_ram}

    def derived(self) -> tuple[Callable, list[Any]]:
        """``derive_short`` and its inputs, by name."""
        return named(derive_short, {**self.short(), "form": self.form, "gpu_mem": self.gpu_mem})

    def load_outputs(self) -> list[Any]:
        """What ``on_load`` fills, in its order."""
        return [*self.form.values(), *self.short().values(), self.why, self.gguf_info, self.loaded, self.gpu_mem,
                self.host_ram]


def build_settings_tab(ctx: AppContext, T: Any) -> SettingsTab:
    """Draw the Settings tab and wire its events; its components by name.

    The short form (model, task, training data, time budget) comes first and fills the full form,
    which waits under "Advanced"; the panels on the right check whatever the full form holds.
    """
    tab = draw_settings_tab(ctx, T)
    wire_settings_tab(ctx, tab)
    return tab


def draw_settings_tab(ctx: AppContext, T: Any) -> SettingsTab:
    """The components only, in their places; nothing wired."""
    lang = ctx.lang
    hw = hardware(ctx)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            Markdown(T("set.simple_intro"))
            model_pick = gr.Dropdown(choices=model_choices(hw, None, "sentiment", lang, ctx=ctx), value=DEMO_MODEL,
                                     allow_custom_value=True, label=T("set.model"), info=T("set.model_info"),
                                     elem_id="simple-model")
            with gr.Row(equal_height=True):
                get_btn = gr.Button(T("set.model_get"), elem_id="model-get", scale=1,
                                    **model_download.button(DEMO_MODEL, lang))
                get_info = Markdown(elem_id="model-get-info")
            with gr.Row(equal_height=True):
                gguf_in = gr.File(label=T("set.gguf_upload"), type="filepath",  # any file: accept_gguf refuses in words
                                  elem_id="gguf-upload", height=90, scale=2)
                gguf_info = Markdown(gguf_upload.note(ctx, lang), elem_id="gguf-info")
            with gr.Row():
                task = gr.Radio([(T(f"task.{t}"), t) for t in TASKS], value="sentiment", label=T("data.task"),
                                elem_id="simple-task")
                budget = gr.Radio([(T(f"budget.{b}"), b) for b in BUDGETS], value="balanced",
                                  label=T("set.budget"), info=T("set.budget_info"), elem_id="simple-budget")
            data_pick = gr.Dropdown(choices=dataset_choices(ctx, lang), value=None, label=T("set.data"),
                                    info=T("set.data_info"), elem_id="simple-data")
            why = Markdown(elem_id="why")
            with gr.Accordion(T("set.advanced"), open=False, elem_id="advanced"):
                demo_note = Markdown(T("set.demo"), elem_id="demo-note")  # only while tiny-demo is the model
                preset = gr.Dropdown(choices=preset_choices(), value=None, label=T("set.preset"),
                                     info=T("set.preset_info"), elem_id="preset")
                form = forms.build_form(T)
                if not getattr(ctx, "allow_remote_code", False):  # only launch.py's flag can allow it
                    form["trust_remote_code"].interactive = False
                    form["trust_remote_code"].info = T("set.remote_locked")
                with gr.Row():
                    save_btn = gr.Button(T("set.save"))
                    show_btn = gr.Button(T("set.show_cmd"))
                yaml_in = gr.File(label=T("set.load"), type="filepath",  # any file: the check refuses in words
                                  elem_id="yaml-in")
                yaml_out = gr.File(label=T("set.yaml_file"), interactive=False)
                command = gr.Code(label=T("set.command"), language="shell", interactive=False)
        with gr.Column(scale=2):
            Markdown(T("set.check_title"))
            check = Markdown(elem_id="check")
            Markdown(T("set.fit_title"))
            fit = Markdown(elem_id="fit")
            with gr.Row(equal_height=True):
                suggest = gr.Dropdown(choices=[], value=None, label=T("set.suggest"), info=T("set.suggest_info"),
                                      elem_id="fit-suggestion", scale=4)
                apply_btn = gr.Button(T("set.apply"), elem_id="fit-apply", scale=1)
            gpu_pick = gr.Dropdown(choices=gpu_choices(), value=None, label=T("set.gpu_pick"), elem_id="gpu-pick")
            gpu_mem = gr.Number(value=hw.gpu_gb or 0, minimum=0, label=T("set.gpu_mem"), info=T("set.gpu_mem_info"),
                                elem_id="gpu-mem")
            host_ram = gr.Number(value=0, minimum=0, label=T("set.host_ram"), info=T("set.host_ram_info"),
                                 elem_id="host-ram")
    return SettingsTab(form=form, model=model_pick, task=task, budget=budget, data=data_pick, why=why,
                       get_btn=get_btn, get_info=get_info, gguf_in=gguf_in, gguf_info=gguf_info, demo_note=demo_note,
                       preset=preset, save_btn=save_btn, show_btn=show_btn, yaml_in=yaml_in, yaml_out=yaml_out,
                       command=command, check=check, fit=fit, suggest=suggest, apply=apply_btn, gpu_pick=gpu_pick,
                       gpu_mem=gpu_mem, host_ram=host_ram, loaded=gr.State(None))


def wire_settings_tab(ctx: AppContext, t: SettingsTab) -> None:
    """The tab's events: which handler answers which component, with which inputs by name."""
    comps = list(t.form.values())
    private = {"api_visibility": "private", "show_progress": "hidden"}
    t.gpu_pick.input(for_each_browser(ctx, card_memory), t.gpu_pick, t.gpu_mem, **private)
    # the one "always_last" listener of the form's changes: Gradio 6.31's page re-sends a deferred change to every
    # listener of that change, so two such listeners re-trigger each other for ever (test_ui_events.py);
    # keeping the settings follows it with .then below
    fn, inputs = named(estimate_handler, t.planned())
    estimate = gr.on([c.change for c in comps] + [t.gpu_mem.change, t.host_ram.change], for_each_browser(ctx, fn),
                     inputs, [t.fit, t.check], api_name="estimate", trigger_mode="always_last",
                     show_progress="hidden", concurrency_limit=8)
    t.form["model_name_or_path"].change(for_each_browser(ctx, demo_note_visible), t.form["model_name_or_path"],
                                        t.demo_note, trigger_mode="multiple", **private)  # cheap
    keep, keep_inputs = named(remember, {"loaded": t.loaded, "task": t.task, "budget": t.budget,
                                         "gpu_mem": t.gpu_mem, "host_ram": t.host_ram, "form": t.form})
    estimate.then(for_each_browser(ctx, keep), keep_inputs, t.loaded, **private)
    fn, inputs = named(relist_models, {**t.short(), "form": t.form, "gpu_mem": t.gpu_mem})
    estimate.then(for_each_browser(ctx, fn), inputs, t.model, **private)
    gr.on([t.task.change, t.budget.change], for_each_browser(ctx, keep), keep_inputs, t.loaded,
          trigger_mode="always_last", **private)

    derived, derive_in = t.derived()
    t.gguf_in.upload(owner_action(ctx, upload_gguf), [t.gguf_in, t.task],
                     [t.model, t.form["model_name_or_path"], t.gguf_info], api_name="upload_gguf").success(
        for_each_browser(ctx, derived), derive_in, comps + [t.why], api_visibility="private")
    t.model.change(for_each_browser(ctx, get_button), t.model, t.get_btn, **private)
    t.get_btn.click(owner_action(ctx, download_model), [t.model, t.task], [t.model, t.get_info, t.get_btn],
                    api_name="download_model", concurrency_limit=1)
    for comp in (t.model, t.task, t.budget, t.data):
        comp.input(for_each_browser(ctx, derived), derive_in, comps + [t.why], api_visibility="private")
    fn, inputs = named(relabel, t.short())
    for comp in (t.task, t.budget, t.data):
        comp.input(for_each_browser(ctx, fn), inputs, t.model, **private)

    # fit changes on every estimate (also the page-load one in app.py), so the list never goes stale
    fn, inputs = named(refresh_suggestions, t.planned())
    t.fit.change(for_each_browser(ctx, fn), inputs, t.suggest, **private)
    fn, inputs = named(apply, {**t.planned(), "pick": t.suggest})
    t.apply.click(for_each_browser(ctx, fn), inputs, comps + [t.fit, t.check, t.suggest], api_name="apply_suggestion")
    fn, inputs = named(pick_preset, {"preset": t.preset, "form": t.form})
    t.preset.change(for_each_browser(ctx, fn), inputs, comps, api_name="load_preset").success(
        for_each_browser(ctx, from_file), t.preset, t.why, api_visibility="private")
    fn, inputs = named(upload_yaml, {"path": t.yaml_in, "form": t.form})
    t.yaml_in.upload(for_each_browser(ctx, fn), inputs, comps, api_name="load_yaml").success(
        for_each_browser(ctx, from_file), t.yaml_in, t.why, api_visibility="private")
    fn, inputs = named(save, {"form": t.form})
    t.save_btn.click(for_each_browser(ctx, fn), inputs, t.yaml_out, api_name="save_settings")
    fn, inputs = named(show, {"form": t.form})
    t.show_btn.click(for_each_browser(ctx, fn), inputs, t.command, api_name="show_command")
    t.form["trust_remote_code"].input(for_each_browser(ctx, warn_remote), t.form["trust_remote_code"], None)


def wire_settings_page(ctx: AppContext, app: Any, t: SettingsTab, dataset: Any) -> None:
    """The Settings tab's events from the rest of the page (app.py): a dataset converted on the Data tab
    (``dataset``) becomes the training data and the settings are derived for it; the settings saved for this
    login come back on every page load, then the panels are checked."""
    derived, derive_in = t.derived()
    fn, inputs = named(derive_for_data, {**t.short(), "form": t.form, "gpu_mem": t.gpu_mem})
    dataset.change(for_each_browser(ctx, pick_dataset), dataset, [t.data, t.task], api_visibility="private").then(
        for_each_browser(ctx, fn), inputs, [*t.form.values(), t.why], api_visibility="private")
    fn, inputs = named(estimate_handler, t.planned())
    app.load(for_each_browser(ctx, on_load), None, t.load_outputs(), api_visibility="private").then(
        for_each_browser(ctx, fn), inputs, [t.fit, t.check], api_visibility="private")


__all__ = ["SettingsTab", "apply_suggestion", "build_settings_tab", "check_markdown", "command_line",
           "draw_settings_tab", "estimate_markdown", "load_settings", "on_change", "save_settings",
           "suggestion_choices", "suggestion_label", "wire_settings_page", "wire_settings_tab"]
