"""The short Settings form: model, task, data and a time budget; the studio derives the rest.

The derivation itself is ``studio.autoconfig.suggest_settings`` (so the CLI can use it too); this
module turns its choices into form values, its reasons into plain sentences in the page's language,
lists the converted datasets, and keeps the settings per workspace so a reload restores them.
"""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from ..autoconfig import BUDGETS, Hardware, Reason, detect_hardware, learning_problems, suggest_settings
from ..config.run_config import DEMO_MODEL, Draft
from ..data.convert import TASKS
from ..errors import StudioError
from ..state_files import read_state
from ..workspace import atomic_write_text
from . import form_values
from .context import AppContext
from .datasets import dataset_info, datasets
from .state_problems import problem_lines
from ..words.catalog import field_label as _label, msg
from ..words.error_words import page_message
from ..words.render import render

SETTINGS_FILE = "settings.yaml"      # workspace/settings.yaml: the form as RunConfig YAML (the CLI takes it)
CHOICES_FILE = "settings_ui.json"    # the short form's own choices (task, budget)


def hardware(ctx: AppContext) -> Hardware:
    """This machine's card / RAM / disk, detected once per server."""
    if "hardware" not in ctx.extra:
        ctx.extra["hardware"] = detect_hardware(ctx.workspace)
    return ctx.extra["hardware"]


def hardware_line(hw: Hardware, lang: str) -> str:
    if hw.device == "cpu":
        return msg("hw.cpu", lang, ram=hw.ram_gb or 0)
    return msg("hw.gpu", lang, gpu=hw.gpu_gb, ram=hw.ram_gb or 0)


# ---------------------------------------------------------------- derivation
def reason_text(r: Reason, lang: str) -> str:
    """Why the studio chose a setting, in the page's words and ``lang``."""
    return r.words(lang, "page")


def field_label(name: str, lang: str) -> str:
    return _label(name, lang)


def why_markdown(reasons: list[Reason], lang: str) -> str:
    lines = [msg("why.head", lang)]
    lines += [f"- **{field_label(r.field, lang)}** — {reason_text(r, lang)}" for r in reasons]
    return "\n".join(lines)


def derive(ctx: AppContext, model: str | None, task: str | None, budget: str | None, dataset: str | None,
           values: list[Any], gpu_mem: float | None = None) -> tuple[list[Any], str]:
    """The form with the derived settings for (model, task, budget, dataset) -> (new values, why markdown).

    Fields the derivation does not decide (output folder, seed, ...) keep what the form has. ``gpu_mem`` is the
    card memory typed on the page (0: no card): the plan is derived for the machine the panel judges, so the
    reasons and the "will it fit" verdict speak of the same card.

    Raises:
        StudioError: a form value of the wrong type, or an unknown budget.
    """
    try:
        cfg = form_values.values_to_draft(values)
    except StudioError:
        cfg = Draft()
    info = dataset_info(ctx, dataset)
    hw = hardware(ctx)
    if isinstance(gpu_mem, (int, float)) and not isinstance(gpu_mem, bool) and 0 <= gpu_mem < 1e5:
        hw = dataclasses.replace(hw, gpu_gb=float(gpu_mem) or None)
    changes, reasons = suggest_settings(model or DEMO_MODEL, info["rows"] if info else None, task or "sentiment",
                                        hw, budget or "balanced")
    if dataset:
        changes.update(dataset=dataset, dataset_dir=str(ctx.data_root))
    return form_values.config_to_values(cfg.replace(**changes)), why_markdown(reasons, ctx.lang)


def learning_lines(cfg: Draft, ctx: AppContext) -> list[str]:
    """Choices that will not learn or cannot be evaluated, in the page's words."""
    info = dataset_info(ctx, cfg.dataset)
    return [reason_text(r, ctx.lang) for r in learning_problems(cfg, info["rows"] if info else None)]


def problem_line(problem: str, lang: str) -> str:
    """A config check's problem (studio/config/checks.py: each has a code) in the page's words and ``lang``."""
    return render(problem.code, problem.params, lang, "page")  # type: ignore[attr-defined]


def error_line(exc: StudioError, lang: str) -> str:
    """An error in the page's words and ``lang``: worded by its code, each setting named as the Settings tab labels
    it (a ConfigError by its problems' codes)."""
    return page_message(exc, lang)


# ---------------------------------------------------------------- persistence
def settings_folder(ctx: AppContext, user: str | None = None) -> Path:
    """Where this login's settings live (``AppContext.own_folder``): workspace/users/<user>/ with a login, else the
    workspace itself. ``user`` defaults to ``ctx.user``, the login the handler answers."""
    return ctx.own_folder(user)


def settings_version(ctx: AppContext, user: str | None = None) -> int:
    """How many times this login's settings were saved (a page compares it with the one it loaded)."""
    data = read_state(settings_folder(ctx, user) / CHOICES_FILE, kind="json", expect=dict) or {}
    version = data.get("version", 0)
    return version if isinstance(version, int) and not isinstance(version, bool) and version >= 0 else 0


def save_state(ctx: AppContext, values: list[Any], choices: dict[str, Any], loaded: int | None = None,
               user: str | None = None) -> int | None:
    """The form as <settings folder>/settings.yaml (usable by `python -m studio train`) and the short choices.

    ``loaded`` is the version the page showed: when the file was saved since (another page of the same login),
    nothing is written and None comes back, so a stale page never overwrites newer settings. Returns the
    new version.
    """
    try:
        cfg = form_values.values_to_draft(values)
    except StudioError:
        return loaded  # a half-typed value: keep the last good settings
    folder = settings_folder(ctx, user)
    current = settings_version(ctx, user)
    if loaded is not None and current > loaded:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    cfg.save(folder / SETTINGS_FILE)
    atomic_write_text(folder / CHOICES_FILE, json.dumps({**choices, "version": current + 1}))
    return current + 1


def restore(ctx: AppContext, user: str | None = None) -> tuple[list[Any], dict[str, Any], str]:
    """(form values, short-form choices, why markdown) saved for this login, else the settings the studio had
    before logins were turned on (the workspace's own: a studio restarted with logins keeps its owner's plan),
    else the derived defaults on the newest dataset a person converted."""
    folder, since = settings_folder(ctx, user), time.time()
    if folder != ctx.workspace and not (folder / SETTINGS_FILE).exists() and (ctx.workspace / SETTINGS_FILE).exists():
        folder = ctx.workspace  # read only: this login's first change is saved in its own folder
    path = folder / SETTINGS_FILE
    choices = read_state(folder / CHOICES_FILE, kind="json", expect=dict) or {}
    card, ram = choices.get("gpu_mem"), choices.get("host_ram")
    choices = {"task": choices.get("task") if choices.get("task") in TASKS else "sentiment",
               "budget": choices.get("budget") if choices.get("budget") in BUDGETS else "balanced",
               "gpu_mem": float(card) if isinstance(card, (int, float)) and not isinstance(card, bool)
               and 0 <= card < 1e5 else None,
               "host_ram": float(ram) if isinstance(ram, (int, float)) and not isinstance(ram, bool)
               and 0 <= ram < 1e6 else None}
    def loads(data: dict) -> None:
        try:
            Draft.from_dict(data, source=str(path))
        except StudioError as exc:
            raise ValueError(exc.what) from None
    saved = read_state(path, kind="yaml", expect=dict, check=loads)  # a broken file is kept aside, not lost
    if saved is not None:
        return form_values.config_to_values(Draft.from_dict(saved, source=str(path))), choices, \
            msg("why.restored", ctx.lang)
    # a dataset converted from a person's file comes first: the studio's own (an Improve's replay, feedback
    # datasets) are no plan to start from
    latest = sorted(datasets(ctx), key=lambda d: not d.get("source"))
    dataset = latest[0]["path"] if latest else None
    if latest:
        choices["task"] = latest[0]["task"]
    values, why = derive(ctx, DEMO_MODEL, choices["task"], choices["budget"], dataset,
                         form_values.config_to_values(Draft()))
    lost = problem_lines(ctx.lang, files=[path], since=since)
    return values, choices, (lost + "\n\n" + why) if lost else why
