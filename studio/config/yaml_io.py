"""Reading YAML run configs with the caps a web page needs: size, alias count, clear errors; ``--set`` pairs.

Why the caps: a 400-byte YAML alias tree expands to hundreds of MB when anything walks it, and a run
config is a few KB.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, StudioError

MAX_YAML_BYTES = 256 * 1024  # a run config is a few KB; presets are under 2 KB
MAX_YAML_ALIASES = 16        # real configs use none; a few '*ref's are fine, a billion-laughs tree is not


class _CappedLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses more than MAX_YAML_ALIASES alias references.

    Why: safe_load shares aliased nodes, so a 400-byte file loads instantly, but anything that walks
    the result (str(), the form, the estimate) expands it to hundreds of MB.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases = getattr(self, "_aliases", 0) + 1
            if self._aliases > MAX_YAML_ALIASES:
                raise _AliasBomb()
        return super().compose_node(parent, index)


class _AliasBomb(yaml.YAMLError):
    pass


def _alias_error(where: str) -> StudioError:
    return StudioError(f"{where} uses more than {MAX_YAML_ALIASES} YAML aliases ('*name' references)",
                       "write the values out instead of referring to anchors ('&name')", code="yaml")


def safe_yaml(text: str, where: str = "The YAML text") -> Any:
    """yaml.safe_load with the alias cap.

    Raises:
        StudioError: too many aliases.
        yaml.YAMLError: invalid YAML.
    """
    loader = _CappedLoader(text)
    try:
        return loader.get_single_data()
    except _AliasBomb:
        raise _alias_error(where) from None
    finally:
        loader.dispose()


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["lr=1e-4", "bf16=true"]`` -> dict, values parsed as YAML scalars.

    Raises:
        ConfigError: an item has no '='.
    """
    out: dict[str, Any] = {}
    bad = []
    for pair in pairs:
        if "=" not in pair:
            bad.append(f"--set '{pair}' is not key=value")
            continue
        key, raw = pair.split("=", 1)
        try:
            out[key.strip()] = safe_yaml(raw, f"--set {key.strip()}") if raw.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = raw
    if bad:
        raise ConfigError(bad)
    return out


def load_yaml_dict(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping with clear errors.

    Raises:
        StudioError: missing file, invalid YAML, or not a mapping.
    """
    p = Path(path)
    if not p.is_file():
        raise StudioError(f"Config file '{p}' does not exist", "check the path, or start from presets/recipes/")
    size = p.stat().st_size
    if size > MAX_YAML_BYTES:
        raise StudioError(f"Config file '{p}' is {size / 1024:.0f} KB, over the {MAX_YAML_BYTES // 1024} KB limit "
                          "for a run config", "keep only 'key: value' settings in it (data goes in the dataset file)",
                          code="yaml")
    try:
        data = safe_yaml(p.read_text(encoding="utf-8"), f"Config file '{p}'")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise StudioError(f"Config file '{p}' is not valid YAML{where}",
                          "fix the indentation or quoting there (each line is 'key: value')",
                          code="yaml") from None
    except UnicodeDecodeError:
        raise StudioError(f"Config file '{p}' is not UTF-8 text", "save it as UTF-8", code="yaml") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StudioError(f"Config file '{p}' must be a mapping of 'key: value' lines, not a {type(data).__name__}",
                          "write one 'key: value' per line", code="yaml")
    return data
