"""Reading YAML run configs with the caps a web page needs: size, alias count, clear errors; ``--set`` pairs.

Why the caps: a 400-byte YAML alias tree expands to hundreds of MB when anything walks it, and a run
config is a few KB.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, StudioError
from .checks import problem

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


def safe_yaml(text: str, where: str = "config.text_aliases", **values: Any) -> Any:
    """yaml.safe_load with the alias cap; ``where`` is the error's code that names the text (config.text_aliases,
    config.file_aliases with its ``path``, config.set_aliases with its ``option``), ``values`` its values.

    Raises:
        StudioError: too many aliases.
        yaml.YAMLError: invalid YAML.
    """
    loader = _CappedLoader(text)
    try:
        return loader.get_single_data()
    except _AliasBomb:
        raise StudioError.of(where, limit=MAX_YAML_ALIASES, **values) from None
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
            bad.append(problem("check.set_not_pair", pair=pair))
            continue
        key, raw = pair.split("=", 1)
        try:
            out[key.strip()] = safe_yaml(raw, "config.set_aliases", option=f"--set {key.strip()}") if raw.strip() else ""
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
        raise StudioError.of("config.file_missing", path=str(p))
    size = p.stat().st_size
    if size > MAX_YAML_BYTES:
        raise StudioError.of("config.file_too_large", path=str(p), size=f"{size / 1024:.0f} KB",
                             limit=f"{MAX_YAML_BYTES // 1024} KB")
    try:
        data = safe_yaml(p.read_text(encoding="utf-8"), "config.file_aliases", path=str(p))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark:
            raise StudioError.of("config.yaml_invalid_at", path=str(p), line=mark.line + 1,
                                 column=mark.column + 1) from None
        raise StudioError.of("config.yaml_invalid", path=str(p)) from None
    except UnicodeDecodeError:
        raise StudioError.of("config.not_text", path=str(p)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StudioError.of("config.not_mapping", path=str(p), kind=type(data).__name__)
    return data
