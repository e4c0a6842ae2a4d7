"""The words of every coded error: each code's what / why / fix in every page language, for both surfaces.

A ``StudioError.of(code, **values)`` carries a code and its runtime values (a file, a column, a number), never a
sentence; this catalog holds the words, and the error is worded when it is shown, in the language the caller asks
for. An entry is ``{"what": (en, zh), "why": (en, zh), "fix": (en, zh), "page_fix": (en, zh)}`` (why optional):
``fix`` is the command line's (it may name flags), ``page_fix`` the page's (the field names of the Settings / Data
tab), present only where the two differ. ``{name}`` is a value, formatted with str.format (``{mb:.1f}``).
A setting is ``{f_<key>}`` (``{q_<key>}`` where the command line quotes it), named as the surface names it: the
config key on the command line, the Settings tab's label on the page (studio/words/config_problems.py
``setting_names``), so one sentence serves both surfaces and the page never shows a config key.

Two kinds of value are worded by the catalog too, so that no English reaches a Chinese sentence:
- a list (the columns of a file, the allowed roots) is joined item by item with ``LISTS[name]`` (an item format and
  a separator per language), else with ", ";
- a value of a closed set (a column's role, a JSON type) is a word in each language (``TERMS``); a role
  (``role="label"``) also yields ``{role_flag}`` (``--label-column``) and ``{role_label}`` (the Data tab's label
  for it: the page's own when the renderer passes its labels);
- the value ``problems`` (every problem of a request at once) lists problems, each a code of its own with its values
  (``{"problem": code, **values}``, JSON as a run's status.json keeps it), worded in the error's language and
  for its surface: a run configuration's (``check.*``, studio/words/config_problems.py: a setting named as the
  surface names it) or another's (``PROBLEMS``); a plain string (a problem an older studio recorded before every
  problem had a code) is shown as written.

This module imports nothing of the studio: studio/errors.py reads it to word an error, and it sits below all.
The sections: data_errors.py (reading and converting a file, the workspace's paths), dataset_errors.py
(loading a dataset to train on). tests/words/test_words_catalog.py holds every entry to the rule (both languages, the
same values, no English in the Chinese) and every code raised in studio/ to having an entry.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from string import Formatter
from typing import Any

from . import config_problems
from .app_errors import APP_ERRORS
from .data_errors import DATA_ERRORS
from .dataset_errors import DATASET_ERRORS
from .evaluation_errors import EVALUATION_ERRORS
from .feedback_errors import FEEDBACK_ERRORS
from .model_errors import MODEL_ERRORS
from .run_errors import CLUSTER_PROBLEMS, RUN_ERRORS

Pair = tuple[str, str]  # (English, Chinese)
LANGS = ("en", "zh")
PARTS = ("what", "why", "fix", "page_fix")
SURFACES = ("cli", "page")

ERRORS: dict[str, dict[str, Pair]] = {
    **DATA_ERRORS,
    **DATASET_ERRORS,
    **EVALUATION_ERRORS,
    **APP_ERRORS,
    **RUN_ERRORS,
    **MODEL_ERRORS,
    **FEEDBACK_ERRORS,
}



def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


# a list value's item format and separator, per language (else items joined with ", "); an item is a value or a
# tuple of values (a format string's {0}, {1}) or worded by a function
LISTS: dict[str, tuple[tuple[Any, str], tuple[Any, str]]] = {
    "roots": (("'{}'", " or "), ("“{}”", " 或 ")),
    "values": ((lambda v, n: f"'{v}' ({_rows(n)})", ", "), ("“{0}”（{1} 行）", "，")),
    "spellings": ((lambda *g: " / ".join(f"'{v}' ({_rows(n)})" for v, n in g), "; "),
                  (lambda *g: " / ".join(f"“{v}”（{n} 行）" for v, n in g), "；")),
    "lengths": (("'{0}' {1}", ", "), ("“{0}” {1} 个", "，")),
    "skipped": (("{0} with {1}", ", "), (lambda n, why: f"{n} 行{SKIPS.get(why, why)}", "，")),
    "hosts": (("{}", ", "), ("“{}”", "，")),
}
# why a row was skipped (studio/data/convert.py), in Chinese
SKIPS = {"empty text": "文本为空", "missing label": "缺少标签", "empty instruction and input": "指令和输入都为空",
         "empty output": "输出为空", "no assistant reply": "没有助手的回复"}
# the problems a ``problems`` value may list, other than a run configuration's: {code: (English, Chinese)}
PROBLEMS: dict[str, Pair] = {**CLUSTER_PROBLEMS}
PROBLEM_SEPARATORS = ("; ", "；")
# values that are words of a closed set, per placeholder: {name: {value: (English, Chinese)}}
TERMS: dict[str, dict[str, Pair]] = {
    # a column's role (the convert command's --<role>-column; the Data tab's "<Role> column")
    "role": {"text": ("text", "文本"), "label": ("label", "标签"), "instruction": ("instruction", "指令"),
             "input": ("input", "输入"), "output": ("output", "输出"), "system": ("system", "系统提示"),
             "messages": ("messages", "对话消息")},
    # a JSON value's type, as Python names it
    "kind": {"list": ("list", "列表"), "str": ("str", "字符串"), "int": ("int", "整数"), "float": ("float", "小数"),
             "bool": ("bool", "布尔值"), "NoneType": ("NoneType", "null 值")},
}


class UnknownCode(RuntimeError):
    """A code with no entry in the catalog, or values that do not fit its words: a bug of whoever raised it, never
    shown as a user's error (not a LookupError/ValueError, which the file readers turn into a user's error)."""


def entry(code: str) -> dict[str, Pair]:
    """The words of ``code``; ``UnknownCode`` when the catalog has none."""
    try:
        return ERRORS[code]
    except KeyError:
        raise UnknownCode(f"no words for the error code {code!r} in studio/words/ (add them to its catalog)") from None


def placeholders(text: str) -> set[str]:
    """The value names ``text`` formats (``{mb:.1f}`` -> mb)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in Formatter().parse(text) if name}


def problem_text(item: Any, lang: str = "en", surface: str = "cli") -> str:
    """One item of a ``problems`` value in ``lang`` for ``surface``: a coded one (``{"problem": code, **values}``)
    from its words; a plain string (a problem an older studio wrote to a run's status.json before every problem had
    a code) as written.

    Raises:
        UnknownCode: a problem code without words, or values that do not fit them.
    """
    if not isinstance(item, Mapping):
        return str(item)
    code = str(item.get("problem"))
    values = {k: v for k, v in item.items() if k != "problem"}
    try:
        if code in config_problems.PROBLEMS:
            return config_problems.problem_words(code, values, lang, surface)
        return PROBLEMS[code][LANGS.index(lang) if lang in LANGS else 0].format(**_values(values, lang, None))
    except (KeyError, IndexError, ValueError) as exc:
        raise UnknownCode(f"no words for the problem {code!r} with the values {sorted(values)}: {exc!r}") from None


def _values(values: Mapping[str, Any], lang: str, labels: Callable[[str, str], str | None] | None,
            surface: str = "cli") -> dict[str, Any]:
    i = LANGS.index(lang) if lang in LANGS else 0
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name == "problems" and isinstance(value, (list, tuple)):
            value = PROBLEM_SEPARATORS[i].join(problem_text(p, lang, surface) for p in value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            item, sep = LISTS[name][i] if name in LISTS else ("{}", ", ")
            word = item if callable(item) else item.format
            value = sep.join(word(*(v if isinstance(v, (list, tuple)) else (v,))) for v in value)
        elif name in TERMS and isinstance(value, str):
            value = TERMS[name].get(value, (value, value))[i]
        out[name] = value
    role = values.get("role")
    if isinstance(role, str):
        out["role_flag"] = f"--{role}-column"
        own = f"{out['role']}列" if lang == "zh" else f"{role.capitalize()} column"  # the Data tab's label's form
        out["role_label"] = (labels(f"data.col_{role}", lang) if labels else None) or own
    return out


def _worded(text: str, vals: dict[str, Any], values: Mapping[str, Any], lang: str, surface: str) -> str:
    """``text`` with its values, and the settings it names (``{f_<key>}``) as ``surface`` names them: the config
    key on the command line, the Settings tab's label on the page (as a run configuration's problems name them)."""
    return text.format(**config_problems.setting_names(text, dict(values), lang, surface), **vals)


def words(code: str, values: Mapping[str, Any], lang: str = "en", surface: str = "cli",
          labels: Callable[[str, str], str | None] | None = None) -> tuple[str, str, str]:
    """(what, why, fix) of ``code`` in ``lang`` for ``surface`` ("cli": the fix may name flags; "page": the page's
    fix). ``labels(key, lang)`` words a Data tab label, None when the tab has none (the page's renderer passes
    its catalog)."""
    e = entry(code)
    i = LANGS.index(lang) if lang in LANGS else 0
    vals = _values(values, lang, labels, surface)
    fix = e.get("page_fix") if surface == "page" and "page_fix" in e else e.get("fix")
    try:
        what, why, fix_text = (_worded(p[i], vals, values, lang, surface) if p else ""
                               for p in (e["what"], e.get("why"), fix))
        return what, why, fix_text
    except (KeyError, IndexError, ValueError) as exc:
        raise UnknownCode(f"the values {sorted(values)} do not fit the words of {code!r}: {exc!r}") from None


def sentence(what: str, why: str, fix: str, lang: str = "en") -> str:
    """The parts as one message: "What. Why. Fix: how." (Chinese: full stops and 解决办法：)."""
    if lang == "zh":
        head = "".join(p.rstrip("。.") + "。" for p in (what, why) if p)
        return head + (f"解决办法：{fix.rstrip('。.')}。" if fix else "")
    parts = [p.rstrip(".") + "." for p in (what, why) if p]
    if fix:
        parts.append("Fix: " + fix.rstrip(".") + ".")
    return " ".join(parts)
