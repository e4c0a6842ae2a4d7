"""The Settings form's widgets, generated from ``studio.config.field_meta()`` in this one place.

Each RunConfig field becomes one component (kind -> widget); its value order and the conversion to and from a
RunConfig are studio/app/form_values.py's. The only per-field knowledge is which fields offer suggestions in a
dropdown (``WIDGET_CHOICES``). A number's bounds and step are its field's ``range=`` and ``step=``
(tests/ui/test_widget_bounds.py): never written again here.
"""
from __future__ import annotations

from typing import Any, Mapping

import gradio as gr

from ..app.form_values import (FIELD_NAMES, WIDGET_CHOICES, _choice_value, config_to_values,  # noqa: F401
                               values_to_config, values_to_draft)
from ..config.run_config import field_meta

GROUPS = ("model", "method", "data", "train", "memory")
OPEN_GROUPS = ("model", "method", "data", "train", "memory")


class Number(gr.Number):
    """gr.Number whose bounds are the browser's (its spinner, the box's min and max) and the field's check's: Gradio's
    own check refuses a value outside them in English before any handler runs, so here the value goes on to the
    form's check (``Draft.validate``), which names the setting in the page's words. (Named ``Number``: Gradio draws
    a component by its class name.)"""

    def preprocess(self, payload: float | None) -> float | int | None:
        return None if payload is None else self.round_to_precision(payload, self.precision)


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
        lo, hi = meta["range"]  # the field's one declaration (studio/config/run_config.py)
        return Number(value=default, precision=0 if kind == "int" else None, minimum=lo, maximum=hi,
                      step=meta["step"], **common)
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


def form_list(form: Mapping[str, Any]) -> list[Any]:
    """The form's values by field name (an event's ``v.form``: studio/ui/inputs.py) in ``FIELD_NAMES`` order, as
    studio/app/form_values.py takes them."""
    return [form.get(name) for name in FIELD_NAMES]
