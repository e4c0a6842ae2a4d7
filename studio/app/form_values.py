"""The Settings form's values, one per RunConfig field in ``FIELD_NAMES`` order, to and from a RunConfig.

Values flow back through ``RunConfig.from_dict`` so the page gets the same coercion and checks as YAML and the CLI.
The widgets themselves are drawn by studio/ui/forms.py from the same field metadata.
"""
from __future__ import annotations

from typing import Any, Callable

from ..config.run_config import DEEPSPEED_SHORTCUTS, RunConfig, field_meta
from ..data.templates import TEMPLATE_NAMES
from ..models import zoo
from ..workspace import PRESETS_DIR

def _model_choices() -> list[str]:
    # built-in models first (tiny-demo, then the real ones shipped in packages), then the architecture cards
    names = zoo.builtin_names()
    return names + sorted(p.stem for p in (PRESETS_DIR / "models").glob("*.yaml") if p.stem not in names)


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

