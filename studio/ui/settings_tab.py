"""Settings tab: model, method, preset, hyperparameters and memory plan, with a live "will it fit".

The form comes from studio/ui/forms.py (generated from RunConfig); checks come from
RunConfig.validate() and the estimate from studio.memory, so this module only displays them.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from ..config import RunConfig, load_yaml_dict
from ..errors import StudioError
from . import forms
from .common import ui_errors
from .context import AppContext
from .i18n import msg
from .paths import resolve_run_paths

RECIPES = forms.PRESETS / "recipes"


def preset_choices() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


def estimate_markdown(cfg: RunConfig, gpu_mem_gb: float | None, lang: str = "en") -> str:
    """The "will it fit" panel; a clear message when the estimator is missing or cannot read the model."""
    try:
        from ..memory import estimate_for_config
    except ImportError:
        return msg("estimate_missing", lang)
    try:
        est = estimate_for_config(cfg, gpu_mem_gb or None)
    except StudioError as exc:
        return f"⚠️ {exc.message}"
    d = est.to_dict()
    verdict = ("" if d["fits"] is None else
               f"**{msg('tight', lang) if d['tight'] else msg('fits' if d['fits'] else 'no_fit', lang)}** — ")
    lines = [f"{verdict}{msg('gpu', lang)} **{d['gpu_gb']:.2f} GB**"
             + (f" / {gpu_mem_gb:g} GB" if gpu_mem_gb else "") + f", {msg('cpu', lang)} {d['cpu_gb']:.2f} GB", ""]
    lines += [f"- {k}: {v:.2f} GB" for k, v in d["breakdown"].items()]
    if d["suggestions"]:
        lines += [""] + [f"💡 {s}" for s in d["suggestions"][:3]]
    return "\n".join(lines)


def check_markdown(cfg: RunConfig, ctx: AppContext) -> str:
    problems = cfg.validate()
    try:
        resolve_run_paths(cfg, ctx)
    except StudioError as exc:
        problems.append(exc.message)
    if not problems:
        return "✅ " + msg("no_problems", ctx.lang)
    return "\n".join(f"- ❌ {p}" for p in problems)


def on_change(ctx: AppContext, values: list[Any], gpu_mem: float | None) -> tuple[str, str]:
    """Live panel update; a value of the wrong type shows up as a problem, not a popup."""
    try:
        cfg = forms.values_to_config(values)
    except StudioError as exc:
        return "", "- ❌ " + exc.message
    return estimate_markdown(cfg, gpu_mem, ctx.lang), check_markdown(cfg, ctx)


def load_settings(path: str | Path, current: list[Any]) -> list[Any]:
    """A preset/YAML onto the form: keys the file does not set keep their defaults, except the
    dataset, which stays what the user converted (a recipe has no data of its own).

    Raises:
        StudioError: unreadable YAML, unknown keys or wrong types.
    """
    data = load_yaml_dict(path)
    cfg = RunConfig.from_dict(data, source=Path(path).name)
    if "dataset" not in data:
        keep = dict(zip(forms.FIELD_NAMES, current))
        cfg = cfg.replace(dataset=keep.get("dataset") or "", dataset_dir=keep.get("dataset_dir") or "data")
    return forms.config_to_values(cfg)


def save_settings(ctx: AppContext, values: list[Any], name: str = "settings") -> Path:
    """Write the form as RunConfig YAML into workspace/configs (the file the CLI takes)."""
    cfg = forms.values_to_config(values)
    path = ctx.workspace / "configs" / f"{name}.yaml"
    cfg.save(path)
    return path


def command_line(ctx: AppContext, values: list[Any]) -> str:
    """The `python -m studio train` line (torchrun line when nproc > 1) for the saved settings."""
    from ..train_cli import torchrun_command
    cfg = forms.values_to_config(values)
    path = save_settings(ctx, values)
    single = f"python -m studio train {path}"
    if cfg.nproc > 1:
        multi = " ".join(torchrun_command(str(path), [], cfg.nproc, None)).replace(sys.executable, "python")
        return f"# {cfg.nproc} processes (what `{single}` launches):\n{multi}"
    return single


def build_settings_tab(ctx: AppContext, T: Any) -> dict[str, Any]:
    """Components of the Settings tab; ``form`` maps field name -> component."""
    lang = ctx.lang
    gr.Markdown(T("set.demo"))
    preset = gr.Dropdown(choices=preset_choices(), value=None, label=T("set.preset"), info=T("set.preset_info"),
                         elem_id="preset")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            form = forms.build_form(T)
        with gr.Column(scale=2):
            gpu_mem = gr.Number(value=24, minimum=0, label=T("set.gpu_mem"), elem_id="gpu-mem")
            gr.Markdown(T("set.fit_title"))
            fit = gr.Markdown(elem_id="fit")
            gr.Markdown(T("set.check_title"))
            check = gr.Markdown(elem_id="check")
            with gr.Row():
                save_btn = gr.Button(T("set.save"))
                show_btn = gr.Button(T("set.show_cmd"))
            yaml_in = gr.File(label=T("set.load"), file_types=[".yaml", ".yml"], type="filepath", elem_id="yaml-in")
            yaml_out = gr.File(label=T("set.yaml_file"), interactive=False)
            command = gr.Code(label=T("set.command"), language="shell", interactive=False)
    comps = list(form.values())

    def refresh(*args: Any) -> tuple[str, str]:
        return on_change(ctx, list(args[:-1]), args[-1])

    gr.on([c.change for c in comps] + [gpu_mem.change], refresh, comps + [gpu_mem], [fit, check],
          api_name="estimate", trigger_mode="always_last", show_progress="hidden", concurrency_limit=8)

    @ui_errors
    def pick_preset(name: str | None, *current: Any) -> list[Any]:
        if not name:
            return [gr.skip()] * len(comps)
        return load_settings(RECIPES / f"{name}.yaml", list(current))

    @ui_errors
    def upload_yaml(path: str | None, *current: Any) -> list[Any]:
        if not path:
            return [gr.skip()] * len(comps)
        return load_settings(path, list(current))

    @ui_errors
    def save(*values: Any) -> str:
        path = save_settings(ctx, list(values))
        tmp = Path(tempfile.mkdtemp(prefix="studio-settings-")) / path.name  # a copy for the download link
        shutil.copy(path, tmp)
        gr.Info(msg("saved", lang, path=path))
        return str(tmp)

    @ui_errors
    def show(*values: Any) -> str:
        return command_line(ctx, list(values))

    def warn_remote(on: bool) -> None:
        if on:
            gr.Warning(msg("trust_warning", lang))

    preset.change(pick_preset, [preset] + comps, comps, api_name="load_preset")
    yaml_in.upload(upload_yaml, [yaml_in] + comps, comps, api_name="load_yaml")
    save_btn.click(save, comps, yaml_out, api_name="save_settings")
    show_btn.click(show, comps, command, api_name="show_command")
    form["trust_remote_code"].input(warn_remote, form["trust_remote_code"], None)
    return {"form": form, "preset": preset, "gpu_mem": gpu_mem, "fit": fit, "check": check, "refresh": refresh,
            "command": command}


__all__ = ["build_settings_tab", "check_markdown", "command_line", "estimate_markdown", "load_settings",
           "on_change", "save_settings"]
