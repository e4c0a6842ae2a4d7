"""Settings tab: model, method, preset, hyperparameters and memory plan, with a live "will it fit".

The form comes from studio/ui/forms.py (generated from RunConfig); the "will it fit" panel and the check are
studio/ui/fit_panel.py's (Draft.validate() and studio.memory's estimate, worded). Here: the tab's components by
name (``draw_settings_tab``), its events (``wire_settings_tab``) and its handlers, which take their inputs by name.
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from .text import Markdown
# the "will it fit" panel moved to fit_panel.py; its names stay importable from here (tests, older callers)
from .fit_panel import (apply_suggestion, check_markdown, estimate_markdown, kernel_line, on_change,
                        suggestion_choices, suggestion_label, target_ram)
from .fit_panel import apply, estimate_handler, refresh_suggestions

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
from ..app.form_values import command_line, load_settings, save_settings
from ..app.uploads import check_data_upload
from ..app.model_list import model_choices
from ..app.datasets import dataset_choices, dataset_info
from ..app.settings import derive, hardware, restore, save_state, settings_version
from ..autoconfig import BUDGETS
from ..config.run_config import DEMO_MODEL
from ..data.convert import TASKS
from ..memory.gpus import gpu_choices, gpu_memory

RECIPES = PRESETS_DIR / "recipes"


def preset_choices() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


# ------------------------------------------------------------------ handlers
# Each takes the browser's ``ctx`` and its inputs by name (``v``: studio/ui/inputs.py); ``wire_settings_tab`` below
# says which components they are. ``v.form`` is the Settings form, field name -> value.


def _number(value: Any) -> float | None:
    """A number typed in the card memory or Host RAM box, else None (a half-typed box, a script's string)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return value if ok else None


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
           "draw_settings_tab", "estimate_markdown", "kernel_line", "load_settings", "on_change", "save_settings",
           "suggestion_choices", "suggestion_label", "target_ram", "wire_settings_page", "wire_settings_tab"]
