"""The Settings form's values, one per RunConfig field in ``FIELD_NAMES`` order, to and from a RunConfig.

Values flow back through ``from_dict`` so the page gets the same coercion and checks as YAML and the CLI: the form
being edited is a ``Draft`` (its problems listed beside it), and Start builds the ``RunConfig``, which checks itself.
The widgets themselves are drawn by studio/ui/forms.py from the same field metadata. Also here: a preset or YAML
loaded onto the form, the form saved as the YAML the CLI takes, and the command line that runs it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..config.run_config import DEEPSPEED_SHORTCUTS, Draft, RunConfig, field_meta, load_yaml_dict
from ..data.templates import TEMPLATE_NAMES
from ..engine.launch import torchrun_command
from ..models import zoo
from ..workspace import PRESETS_DIR, studio_command
from .context import AppContext

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


def values_to_draft(values: list[Any] | tuple[Any, ...]) -> Draft:
    """Form values (in FIELD_NAMES order) -> the Draft the form holds (its problems: ``validate()``).

    Raises:
        ConfigError: a value of the wrong type (named, with what was expected).
    """
    return Draft.from_dict(_form_data(values), source="the Settings form")


def values_to_config(values: list[Any] | tuple[Any, ...]) -> RunConfig:
    """Form values (in FIELD_NAMES order) -> the RunConfig a run is started with.

    Raises:
        ConfigError: a value of the wrong type, else every problem of the settings (named, with the fix).
    """
    return RunConfig.from_dict(_form_data(values), source="the Settings form")


def _form_data(values: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    data = {}
    for name, value in zip(FIELD_NAMES, values):
        if isinstance(value, float) and value.is_integer() and _KINDS[name] == "int":
            value = int(value)
        if name in _UNSET_IS_ZERO and value == 0:
            value = None
        data[name] = value
    return data


def config_to_values(cfg: Draft) -> list[Any]:
    """A config (a Draft or a RunConfig) -> form values in FIELD_NAMES order (what the widgets expect)."""
    out = []
    for name in FIELD_NAMES:
        value = getattr(cfg, name)
        if _KINDS[name] == "choice" or name in WIDGET_CHOICES:
            value = _choice_value(value)
        out.append(value)
    return out


def load_settings(path: str | Path, current: list[Any]) -> list[Any]:
    """A preset/YAML onto the form: keys the file does not set keep their defaults, except the
    dataset, which stays what the user converted (a recipe has no data of its own).

    Raises:
        StudioError: unreadable YAML, unknown keys or wrong types.
    """
    data = load_yaml_dict(path)
    cfg = Draft.from_dict(data, source=Path(path).name)  # a recipe has no data: its problems are the form's to show
    if "dataset" not in data:
        keep = dict(zip(FIELD_NAMES, current))
        cfg = cfg.replace(dataset=keep.get("dataset") or "", dataset_dir=keep.get("dataset_dir") or "data")
    return config_to_values(cfg)

def save_settings(ctx: AppContext, values: list[Any], name: str = "settings") -> Path:
    """Write the form as RunConfig YAML into the login's own configs folder (workspace/configs without logins,
    workspace/users/<user>/configs with them): the file the CLI takes (which checks it when it trains)."""
    cfg = values_to_draft(values)
    path = ctx.own_folder() / "configs" / f"{name}.yaml"
    cfg.save(path)
    return path

def command_line(ctx: AppContext, values: list[Any]) -> str:
    """The `python -m studio train` line (torchrun line when nproc > 1) for the saved settings."""
    cfg = values_to_draft(values)
    path = save_settings(ctx, values)
    single = studio_command(["-m", "studio", "train", str(path)])
    if cfg.nproc > 1:
        multi = studio_command(torchrun_command(str(path), [], cfg.nproc, None)[1:])
        return f"# {cfg.nproc} processes (what `{single}` launches):\n{multi}"
    return single
