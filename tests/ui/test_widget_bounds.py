"""A number widget of a RunConfig field takes its bounds from the field's one declaration (``range=``, ``step=`` in
studio/config/run_config.py), never from numbers written again in the page. Every such widget of the built studio
page is held to it, so a field added tomorrow, or a range changed, cannot leave the widget behind."""
from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from studio.app.context import AppContext
from studio.config.run_config import field_meta

METAS = {m["name"]: m for m in field_meta()}
NUMBERS = sorted(n for n, m in METAS.items() if m["kind"] in ("int", "float"))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> gr.Blocks:
    from studio.ui.app import build_app
    return build_app(AppContext.create(tmp_path_factory.mktemp("bounds") / "ws", lang="en"))


def _field_widgets(page: gr.Blocks) -> dict[str, list[gr.components.Component]]:
    """Every number or slider of the page that stands for a RunConfig field, by field name (its elem_id)."""
    found: dict[str, list] = {}
    for block in page.blocks.values():
        eid = getattr(block, "elem_id", None) or ""
        if isinstance(block, (gr.Number, gr.Slider)) and eid.startswith("field-"):
            found.setdefault(eid[len("field-"):], []).append(block)
    return found


def test_every_number_field_has_its_widget(page: gr.Blocks) -> None:
    widgets = _field_widgets(page)
    assert sorted(widgets) == NUMBERS, set(NUMBERS) ^ set(widgets)


@pytest.mark.parametrize("name", NUMBERS)
def test_a_widgets_bounds_are_its_fields_range(page: gr.Blocks, name: str) -> None:
    meta = METAS[name]
    lo, hi = meta["range"]
    step = meta.get("step") or (1 if meta["kind"] == "int" else None)
    for widget in _field_widgets(page)[name]:
        assert (widget.minimum, widget.maximum) == (lo, hi), \
            f"{name}: the widget says {widget.minimum}..{widget.maximum}, the field's range= says {lo}..{hi}"
        if step is not None:
            assert widget.step == step, f"{name}: step {widget.step}, the field says {step}"
        if meta["kind"] == "int":
            assert widget.precision == 0, name


def test_an_out_of_range_value_reaches_the_check_that_words_it() -> None:
    """Gradio's own bound check refuses in English before any handler runs ("Value 0 is less than minimum value
    1."); the field's widget lets the value through to the form's check, which names the setting in the page's
    words (the Settings tab lists it as a problem, not a popup)."""
    from studio.ui.forms import build_form
    with gr.Blocks():
        form = build_form(lambda key: key)
    assert form["lora_rank"].preprocess(0) == 0 and form["learning_rate"].preprocess(5.0) == 5.0


def test_the_bounds_are_written_once() -> None:
    """No number in studio/ui/forms.py names a field's bound: they come from the metadata."""
    text = (Path(__file__).resolve().parents[2] / "studio" / "ui" / "forms.py").read_text(encoding="utf-8")
    assert "minimum=" in text and "range" in text
    for name in NUMBERS:
        assert f'"{name}"' not in text, f"forms.py names {name}: its bounds belong to its field's metadata"
