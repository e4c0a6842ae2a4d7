"""The Settings form, generated from ``studio.config.field_meta()`` in this one place.

Each RunConfig field becomes one component (kind -> widget); values flow back through
``RunConfig.from_dict`` so the UI gets the same coercion and checks as YAML and the CLI. The only
per-field knowledge here is which fields offer suggestions in a dropdown (WIDGET_CHOICES).
"""
from __future__ import annotations

from typing import Any, Callable

import gradio as gr

from ..models import zoo
from ..config.run_config import DEEPSPEED_SHORTCUTS, RunConfig, field_meta
from ..data.templates import TEMPLATE_NAMES
from ..workspace import PRESETS_DIR

GROUPS = ("model", "method", "data", "train", "memory")
OPEN_GROUPS = ("model", "method", "data", "train", "memory")
PRESETS = PRESETS_DIR


def _model_choices() -> list[str]:
    # built-in models first (tiny-demo, then the real ones shipped in packages), then the architecture cards
    names = zoo.builtin_names()
    return names + sorted(p.stem for p in (PRESETS / "models").glob("*.yaml") if p.stem not in names)


# Free-text fields that still deserve a list of common values (custom values stay allowed).
WIDGET_CHOICES: dict[str, Callable[[], list[str]]] = {
    "model_name_or_path": _model_choices,
    "deepspeed": lambda: list(DEEPSPEED_SHORTCUTS),
    "template": lambda: list(TEMPLATE_NAMES),  # the one registry the engine looks templates up in
}

FIELD_NAMES: list[str] = [m["name"] for m in field_meta()]
_KINDS: dict[str, str] = {m["name"]: m["kind"] for m in field_meta()}
# Optional numbers (default None, e.g. max_samples): the browser shows an empty number box as 0
_UNSET_IS_ZERO = {m["name"] for m in field_meta() if m["default"] is None and m["kind"] in ("int", "float")}


def _choice_value(value: Any) -> str:
    return "none" if value is None else str(value)


def _widget(meta: dict[str, Any], T: Any) -> gr.components.Component:
    name, kind, default = meta["name"], meta["kind"], meta["default"]
    common = {"label": T(f"f.{name}"), "info": T(f"h.{name}"), "elem_id": f"field-{name}"}
    if name in WIDGET_CHOICES:
        choices = WIDGET_CHOICES[name]()
        return gr.Dropdown(choices=choices, value=_choice_value(default) if default is not None else choices[0],
                           allow_custom_value=True, **common)
    if kind == "choice":
        choices = [_choice_value(c) for c in meta["choices"]]
        return gr.Dropdown(choices=choices, value=_choice_value(default), **common)
    if kind == "bool":
        return gr.Checkbox(value=bool(default), **common)
    if kind in ("int", "float"):
        return gr.Number(value=default, precision=0 if kind == "int" else None, **common)
    return gr.Textbox(value="" if default is None else str(default), max_lines=1, **common)


def build_form(T: Any) -> dict[str, gr.components.Component]:
    """One component per RunConfig field, grouped in accordions; returns them by field name."""
    metas = field_meta()
    comps: dict[str, gr.components.Component] = {}
    for group in GROUPS:
        members = [m for m in metas if m["group"] == group]
        with gr.Accordion(T(f"group.{group}"), open=group in OPEN_GROUPS, elem_id=f"group-{group}"):
            # switches get their own rows, three at a time: squeezed in, their help text wraps badly
            switches = [m for m in members if m["kind"] == "bool"]
            rows = [[m for m in members if m["kind"] != "bool"]]
            rows += [switches[i:i + 3] for i in range(0, len(switches), 3)]
            for row in rows:
                if row:
                    with gr.Row(equal_height=False):
                        for meta in row:
                            comps[meta["name"]] = _widget(meta, T)
    return {name: comps[name] for name in FIELD_NAMES}


def values_to_config(values: list[Any] | tuple[Any, ...]) -> RunConfig:
    """Form values (in FIELD_NAMES order) -> RunConfig.

    Raises:
        ConfigError: a value of the wrong type (named, with what was expected).
    """
    data = {}
    for name, value in zip(FIELD_NAMES, values):
        if isinstance(value, float) and value.is_integer() and _KINDS[name] == "int":
            value = int(value)
        if name in _UNSET_IS_ZERO and value == 0:
            value = None
        data[name] = value
    return RunConfig.from_dict(data, source="the Settings form")


def config_to_values(cfg: RunConfig) -> list[Any]:
    """RunConfig -> form values in FIELD_NAMES order (what the widgets expect)."""
    out = []
    for name in FIELD_NAMES:
        value = getattr(cfg, name)
        if _KINDS[name] == "choice" or name in WIDGET_CHOICES:
            value = _choice_value(value)
        out.append(value)
    return out

