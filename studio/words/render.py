"""The one renderer: a code and its values -> the words of one surface in one language.

Every kind of message (an error's parts, a notice, an end reason, a report problem, a page message, a field's help)
is worded here, by the same rules:

- ``{name}`` is a value, formatted with str.format (``{mb:.1f}``, ``{rows:,}``); a literal brace is doubled. A
  whole number also takes an English plural: ``{n:row|rows}`` is "row" for 1, else "rows" (``{n} {n:row has|rows
  have}``); Chinese needs none.
- A setting is named as the surface names it: ``{f_<key>}`` its config key on the command line, the Settings tab's
  label in quotes on the page; ``{q_<key>}`` the same, quoted on the command line too; ``{l_<key>}`` the label
  inline (unquoted in English: "Turn on Gradient checkpointing"). ``{f_name}`` / ``{q_name}`` name the field
  held in the value ``name``. ``{b_<button>}`` is a Train tab button's label (``BUTTONS``).
- A list value is joined per language: each item by the entry ``list.<name>`` (a tuple item gives {0}, {1}; an item
  of groups is itself a list, ``list.<name>.inner``) and ``list.<name>.sep``; else ", ". The value ``problems``
  lists coded problems (``{"problem": code, **values}``), each worded in the same language and surface.
- A value of a closed set (``TERMS``: a column's role, a JSON type, a unit) is the word of its entry
  (``term.role.label``); a ``role`` also gives ``{role_flag}`` (``--label-column``) and ``{role_label}`` (the Data
  tab's label for that column).
- A coded value is worded in place: a Notice, a preparation step (anything with ``catalog_code`` and ``params``,
  studio/words/said.py), or a phrase kept as JSON, ``{"code": code, **values}`` (a run's status.json keeps it so).

A code without an entry, or values that do not fit its words, raise ``UnknownCode``: a bug of whoever made the
message, found by the first test of that path, never shown to a user as a KeyError.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from string import Formatter
from typing import Any

from .entry import LANGS
from .registry import CATALOG

# value name -> the prefix of its words in the catalog (a value of a closed set, worded in the language)
TERMS = {"role": "term.role", "kind": "term.kind", "os_error": "term.os_error", "severity": "term.severity",
         "unit": "unit", "budget": "budget", "skipped": "skip", "metric": "term.metric"}
BUTTONS = {"resume": "train.resume", "start": "train.start"}  # {b_<name>}: the Train tab's button labels
_SETTING = re.compile(r"\{([fqlb])_(\w+)")


class UnknownCode(RuntimeError):
    """A code with no entry in the catalog, or values that do not fit its words: a bug of whoever made the
    message, never shown as a user's error (not a LookupError/ValueError, which the file readers turn into one)."""


class Count(int):
    """A whole number in a message: ``{n:row|rows}`` picks the English word for it; any other format as int's."""

    def __format__(self, spec: str) -> str:
        if "|" in spec:
            one, many = spec.split("|", 1)
            return one if self == 1 else many
        return int.__format__(self, spec)


def has(code: str) -> bool:
    return code in CATALOG


def words_of(code: str, lang: str = "en", surface: str = "page") -> str:
    """The raw words of ``code`` (placeholders left in); ``UnknownCode`` when the catalog has none."""
    try:
        return CATALOG[code].text(lang, surface)
    except KeyError:
        raise UnknownCode(f"no words for the code {code!r} in studio/words/ (add an entry to its catalog)") from None


def placeholders(text: str) -> set[str]:
    """The value names ``text`` formats (``{mb:.1f}`` -> mb)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in Formatter().parse(text) if name}


def render(code: str, values: Mapping[str, Any] | None = None, lang: str = "en", surface: str = "page") -> str:
    """The words of ``code`` with ``values`` in ``lang`` for ``surface`` ("cli" or "page").

    Raises:
        UnknownCode: no entry for ``code``, or values that do not fit its words.
    """
    text = words_of(code, lang, surface)
    values = dict(values or {})
    try:
        return text.format(**names(text, values, lang, surface), **worded(values, lang, surface))
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise UnknownCode(f"the values {sorted(values)} do not fit the words of {code!r} ({lang}, {surface}): "
                          f"{exc!r}") from None


def field_name(key: str, lang: str, surface: str, quoted: bool = True) -> str:
    """A setting as ``surface`` names it: its config key on the command line, its Settings tab label on the page
    (in quotes; ``quoted=False``: inline in English, as a sentence names a button)."""
    if surface == "cli" or f"f.{key}" not in CATALOG:
        return key
    shown = CATALOG[f"f.{key}"].text(lang, "page")
    return f"“{shown}”" if lang == "zh" else f"'{shown}'" if quoted else shown


def names(text: str, values: Mapping[str, Any], lang: str, surface: str) -> dict[str, str]:
    """The settings and buttons ``text`` names, each as ``surface`` names it in ``lang``."""
    out: dict[str, str] = {}
    for kind, key in _SETTING.findall(text):
        if key == "name" and "name" not in values:  # the field named by a value not given (a guide's template)
            continue
        field = str(values["name"]) if key == "name" else key
        if kind == "f":
            out[f"f_{key}"] = field_name(field, lang, surface)
        elif kind == "q":
            on_page = surface == "page" and f"f.{field}" in CATALOG
            out[f"q_{key}"] = field_name(field, lang, surface) if on_page else \
                f"“{field}”" if lang == "zh" else f"'{field}'"
        elif kind == "l":
            out[f"l_{key}"] = field_name(field, lang, surface, quoted=False)
        elif key in BUTTONS:
            shown = words_of(BUTTONS[key], lang)
            out[f"b_{key}"] = f"“{shown}”" if lang == "zh" else shown
    return out


def worded(values: Mapping[str, Any], lang: str, surface: str) -> dict[str, Any]:
    """Each value as it is written into a sentence in ``lang``: lists joined, terms translated, counts plural-able,
    coded values worded; a ``role`` adds its flag and its Data tab label."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name == "problems" and isinstance(value, (list, tuple)):
            value = words_of("list.problems.sep", lang).join(problem_text(p, lang, surface) for p in value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            value = _joined(name, list(value), lang, surface)
        else:
            value = _one(name, value, lang, surface)
        out[name] = value
    role = values.get("role")
    if isinstance(role, str):
        out["role_flag"] = f"--{role}-column"
        own = f"{out['role']}列" if lang == "zh" else f"{role.capitalize()} column"  # the Data tab's label's form
        out["role_label"] = words_of(f"data.col_{role}", lang) if f"data.col_{role}" in CATALOG else own
    return out


def _one(name: str, value: Any, lang: str, surface: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return Count(value)
    if isinstance(value, str) and name in TERMS and f"{TERMS[name]}.{value}" in CATALOG:
        return words_of(f"{TERMS[name]}.{value}", lang, surface)
    code = getattr(value, "catalog_code", None)
    if code is not None:
        return render(code, value.params, lang, surface)
    if isinstance(value, Mapping) and isinstance(value.get("code"), str):  # a coded phrase kept as JSON
        return render(value["code"], {k: v for k, v in value.items() if k != "code"}, lang, surface)
    return value


def _joined(name: str, items: list[Any], lang: str, surface: str) -> str:
    """A list value: each item by ``list.<name>`` (else as it is), joined by ``list.<name>.sep`` (else ", ")."""
    form = words_of(f"list.{name}", lang, surface) if f"list.{name}" in CATALOG else "{0}"
    sep = words_of(f"list.{name}.sep", lang, surface) if f"list.{name}.sep" in CATALOG else ", "
    said = []
    for item in items:
        parts = item if isinstance(item, (list, tuple)) else (item,)
        if parts and all(isinstance(p, (list, tuple)) for p in parts):  # a group of items: a list of its own
            parts = (_joined(f"{name}.inner", list(parts), lang, surface),)
        said.append(form.format(*(_one(name, p, lang, surface) for p in parts)))
    return sep.join(said)


def problem_text(item: Any, lang: str = "en", surface: str = "cli") -> str:
    """One item of a ``problems`` value: a coded one (``{"problem": code, **values}``) by its words; a plain
    string (a problem an older studio wrote to a run's status.json before every problem had a code) as written.

    Raises:
        UnknownCode: a problem code without words, or values that do not fit them.
    """
    if not isinstance(item, Mapping):
        return str(item)
    return render(str(item.get("problem")), {k: v for k, v in item.items() if k != "problem"}, lang, surface)


def template(code: str, lang: str = "en", surface: str = "page") -> str:
    """The words of ``code`` with its settings and buttons named and its values left as ``{name}`` (a guide
    that shows a message without a case's values)."""
    text = words_of(code, lang, surface)
    shown = names(text, {}, lang, surface)
    return re.sub(r"\{(\w+)\}", lambda m: shown.get(m.group(1), m.group(0)), text)


__all__ = ["BUTTONS", "Count", "LANGS", "TERMS", "UnknownCode", "field_name", "has", "names", "placeholders",
           "problem_text", "render", "template", "words_of", "worded"]
