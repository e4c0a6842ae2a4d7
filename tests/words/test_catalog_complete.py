"""The catalog is complete, held on the catalog itself (not on the source that uses it): every code has its words
in every language on every surface, with the same values in each language, renders with its values, names no
config key or flag in what the page shows, and leaves no English in the Chinese. Every RunConfig field has its
label and help.

A code the studio says but the catalog lacks fails where it is said (``UnknownCode`` from ``StudioError.of``,
``Notice.of``, ``Reason.of``, ``render``: the first test of that path), so no test reads studio/ for codes.
"""
from __future__ import annotations

import dataclasses
import re
from string import Formatter

import pytest

from studio.config.run_config import RunConfig, help_values
from studio.words.catalog import CATALOG
from studio.words.entry import LANGS, SURFACES
from studio.words.render import render
from tests.ui.test_page_messages import FLAG
from tests.ui.test_ui_zh_page import latin_words

_NAMED = ("f_", "q_", "l_", "b_")  # a setting or a button, named as each surface names it
DERIVED = {"role_flag", "role_label"}  # made by the renderer from the value ``role``
# the Chinese keeps as typed what a person types or reads as a name: the names of formats, stages, methods,
# libraries and their losses, values of settings, the command line's verbs and arguments, JSON's literals
LITERAL = {"feedback", "verdict", "anyway", "conversations", "formatting", "history", "human", "tools", "null", "nul", "openai", "sharegpt", "dpo",
           "kto", "pt", "convert", "dir", "sentiment", "export", "run", "from", "lora", "qlora", "full", "deepspeed",
           "zero", "trl", "nvme", "bf16", "fp32", "transformers", "llama", "factory", "auto", "python", "studio",
           "jsonl", "tiny", "demo", "sft", "id", "kl", "true", "false", "key", "value", "eval", "orpo", "simpo", "cpo",
           "galore", "apollo", "badam", "muon", "asft", "dft", "eaft", "oft", "fsdp", "bco", "ktransformers",
           "megatron", "ppo", "adam", "mantissa", "oom", "rsLoRA".lower(), "rank", "pip", "install", "kernel",
           "softcap", "mixture", "of", "depths", "pro", "ld", "gptq", "stage", "polynomial", "constant",
           "bnb", "quant", "storage", "hinge", "ipo", "slic", "sigmoid", "freeze", "gemma", "terms", "apache",
           "ai", "google", "dev", "https", "modelfile", "ollama", "gguf", "create", "my", "model", "utf", "csv",
           "excel", "xlsx", "jsonl", "parquet", "txt", "xls", "zip", "json", "yaml", "sig", "gbk", "content", "role",
           "user", "text", "label", "messages", "instruction", "input", "output", "system", "hf", "offline",
           "pypi", "hub", "cuda", "liger", "triton", "rmsnorm", "rope", "swiglu", "gb", "mb", "cpu", "gpu", "nf4", "fp4"}
# codes whose page words name a flag on purpose: the problems of a cluster request (the `cluster` verb's own
# flags: no page makes one)
CLI_ONLY = re.compile(r"^cluster\.")
LEFT = re.compile(r"\{\w*(?:[:!][^{}]*)?\}")  # a placeholder left unformatted (not a JSON example's '{"text": ...}')


def _slots(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def _values(text: str) -> set[str]:
    """The runtime values ``text`` formats (not the settings and buttons the renderer names)."""
    return {n.split(".")[0].split("[")[0] for n in _slots(text)
            if not n.startswith(_NAMED) and n not in DERIVED and not n.isdigit()}


def _sample(code: str) -> dict[str, object]:
    """A value for each placeholder of ``code`` on every surface: a whole number where a text formats one as a count
    or a plural, a float where it formats a number, else a word; ``role`` where a text names the role's flag."""
    specs: dict[str, set[str]] = {}
    for surface in SURFACES:
        for lang in LANGS:
            for _, name, spec, _ in Formatter().parse(CATALOG[code].text(lang, surface)):
                if name in ("f_name", "q_name", "l_name"):  # a setting held in the value ``name``
                    specs.setdefault("name", set())
                elif name and not name.startswith(_NAMED) and not name.isdigit():
                    specs.setdefault(name, set()).add(spec or "")
    out: dict[str, object] = dict(help_values()) if code.startswith("h.") else {}
    for name, used in specs.items():
        if name in DERIVED:
            out.setdefault("role", "text")
        elif name == "name" and not used:
            out[name] = "seed"
        elif name not in out:
            whole = any("|" in s or "," in s or s.endswith("d") for s in used)
            out[name] = 3 if whole else 1.5 if any(used) else ("text" if name == "role" else "v")
    return out


def test_every_code_has_every_language_on_every_surface() -> None:
    assert len(CATALOG) > 1500
    for code, entry in CATALOG.items():
        for pair in (entry.cli, entry.page):
            assert isinstance(pair, tuple) and len(pair) == len(LANGS), code
            assert all(isinstance(t, str) and t for t in pair), (code, pair)
            assert code.endswith(".sep") or all(t.strip() for t in pair), (code, pair)


def test_the_same_values_in_every_language() -> None:
    for code, entry in CATALOG.items():
        if code.startswith("list."):  # a list item's positional parts ({0}, {1})
            continue
        for surface in SURFACES:
            en, zh = entry.cli if surface == "cli" else entry.page
            assert _values(en) == _values(zh), (code, surface, en, zh)


@pytest.mark.parametrize("lang", LANGS)
def test_every_code_renders_with_its_values_on_every_surface(lang: str) -> None:
    """A stray brace, a format its value cannot take, a setting named that has no label: found here, not in front
    of a user."""
    for code, entry in CATALOG.items():
        if code.startswith("list.") or (entry.browser and not code.startswith("h.") and "{" in entry.page[0]):
            continue  # a list's item form; Gradio's own words ({position}: Gradio fills them)
        for surface in SURFACES:
            shown = render(code, _sample(code), lang, surface)
            assert not LEFT.search(shown), (code, surface, shown)


def test_a_setting_named_in_words_is_a_field() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    for code, entry in CATALOG.items():
        for text in (*entry.cli, *entry.page):
            named = {s[2:] for s in _slots(text) if s.startswith(("f_", "q_", "l_")) and s[2:] != "name"}
            assert named <= fields, (code, named - fields)


def test_every_field_has_its_label_and_help_and_nothing_else_is_one() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    labels = {c[2:] for c in CATALOG if c.startswith("f.")}
    helps = {c[2:] for c in CATALOG if c.startswith("h.")}
    assert labels == fields and helps == fields, (fields ^ labels, fields ^ helps)


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_words_name_a_config_key_or_a_flag(lang: str) -> None:
    """What the page shows of every code names each setting as the Settings tab labels it ({f_<key>}), never by its
    config key or a command-line flag: driven by the catalog and RunConfig's fields, so a new entry or a new
    setting is held to it the day it is written."""
    from tests.words.test_words_catalog import named_settings
    found = {}
    for code in CATALOG:
        if CLI_ONLY.match(code) or code.startswith("list."):
            continue
        shown = render(code, _sample(code), lang, "page")
        if named_settings(shown):
            found[code] = named_settings(shown)
    assert found == {}


@pytest.mark.parametrize("surface", SURFACES)
def test_no_english_left_in_the_chinese(surface: str) -> None:
    """Every Chinese word of the catalog, its values taken out: no English word but names (a format, a library, a
    method) and, on the command line, the flags and config keys it names."""
    keys = {f.name for f in dataclasses.fields(RunConfig)}
    english = {}
    for code, entry in CATALOG.items():
        zh = re.sub(r"\{[^{}]*\}", " ", (entry.cli if surface == "cli" else entry.page)[1])
        zh = FLAG.sub(" ", zh) if surface == "cli" or CLI_ONLY.match(code) else zh
        left = latin_words(" ".join(w for w in zh.split() if w not in keys)) - LITERAL
        if left:
            english[code] = sorted(left)
    assert english == {}
