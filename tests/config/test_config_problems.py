"""A run configuration's problems are coded (studio/config/checks.py), worded once per language in
studio/words/config_problems.py, and shown in the page's language with the page's field names.

The rule is held on the code that makes the problems (every check appends a ``problem``, never a sentence) and on
the catalog (both languages, the same values, no English left in the Chinese), and shown on configs that break
every check.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from studio.app.settings import plain
from studio.config.run_config import RunConfig, field_meta
from studio.words.catalog import FIELD_LABELS
from studio.words.config_problems import PAGE_PROBLEMS, PROBLEMS, problem_words
from studio.words.errors import placeholders
from tests.ui.test_ui_zh_page import latin_words

ROOT = Path(__file__).resolve().parents[2]
# what the Chinese keeps as typed: values of settings (lora, full, z3-nvme, adamw_torch), library names, units
LITERAL = {"lora", "qlora", "full", "deepspeed", "zero", "trl", "kto", "nvme", "nul", "bf16", "fp32", "adamw_torch",
           "transformers", "bnb_4bit_quant_storage", "llama", "factory", "auto", "python", "studio", "convert",
           "jsonl", "tiny", "demo", "dpo", "sft", "id", "kl", "z2", "z3", "llamafactory"}
CJK = re.compile(r"[\u4e00-\u9fff]")

# one config per group of checks; together they break every check that a config can break
BROKEN = [
    dict(model_name_or_path=" ", dataset=" ", nproc=2),
    dict(template="llam", lr_scheduler_type="cosin", optim="adamw_torh"),
    dict(template="zzzzzzzz", lr_scheduler_type="zzzzzzzz", optim="zzzzzzzz"),
    dict(finetuning_type="full", use_dora=True, quantization_bit=4, adapter_name_or_path="a"),
    dict(loraplus_lr_ratio=16.0, deepspeed="z2", pure_bf16=True, layerwise_offload=True, optim="adamw_8bit"),
    dict(max_steps=0, val_size=2.5, quantization_bit=3, bf16=True, fp16=True, precision="fp16", pure_bf16=True),
    dict(quantization_bit=4, deepspeed="z3-nvme", layerwise_offload=True),
    dict(offload_nvme_path="/x", nproc=2, deepspeed="zz"),
    dict(max_steps=-1, num_train_epochs=0.0, adapter_name_or_path="a", pissa_init=True),
    dict(stage="dpo", finetuning_type="full", packing=True, nproc=2, deepspeed="z2"),
    dict(stage="kto", pref_ftx=0.5, per_device_train_batch_size=1),
    dict(learning_rate=2.0, lora_dropout=1.0, seed=-1, per_device_train_batch_size=0, warmup_ratio=float("nan"),
         output_dir="a\nb"),
    dict(pref_beta=0.0, neftune_noise_alpha=0.0, cutoff_len=0),
]


def _problems() -> list[str]:
    out = []
    for kw in BROKEN:
        base = dict(model_name_or_path="tiny-demo", dataset="d.jsonl")
        out += RunConfig(**{**base, **kw}).validate()  # type: ignore[arg-type]
    return out


def test_every_check_makes_a_coded_problem_never_a_sentence() -> None:
    """No check in config/checks.py appends or returns a string it writes itself: each goes through ``problem``."""
    tree = ast.parse((ROOT / "studio" / "config" / "checks.py").read_text(encoding="utf-8"))
    written = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "append"
               and n.args and isinstance(n.args[0], (ast.Constant, ast.JoinedStr, ast.BinOp))]
    written += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Return) and isinstance(n.value, ast.List)
                and any(isinstance(e, (ast.Constant, ast.JoinedStr)) for e in n.value.elts)]
    assert written == [], f"config/checks.py writes problem sentences at lines {written}"


def test_broken_configs_meet_every_problem_and_each_has_its_code() -> None:
    found = _problems()
    codes = {getattr(p, "code", None) for p in found}
    assert None not in codes
    # every code but the alternatives a single config cannot show at once is met here
    alternatives = {"check.not_number", "check.above_or_empty", "check.at_least_or_empty", "check.below_or_empty",
                    "check.at_most_or_empty", "check.at_most"}
    assert set(PROBLEMS) - codes <= alternatives, sorted(set(PROBLEMS) - codes - alternatives)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_each_problem_in_its_language_with_its_field_labels(lang: str) -> None:
    keys = {m["name"] for m in field_meta() if "_" in m["name"]}   # the names that read as config keys
    for p in _problems():
        shown = plain(p, lang)
        named = [k for k in keys if re.search(rf"(?<![\w']){re.escape(k)}(?![\w'])", shown)]
        assert not named, (p, shown)  # the page names fields by their labels, never by config keys
        said = placeholders(PROBLEMS[p.code][0])  # type: ignore[attr-defined]
        fields = {n[2:] for n in said if n.startswith("f_") and n != "f_name"}
        fields |= {p.params["name"]} if "f_name" in said else set()  # type: ignore[attr-defined]
        for key in fields:
            assert FIELD_LABELS[key][lang == "zh"] in shown, (key, shown)
        if lang == "zh":
            assert CJK.search(shown), shown
            values = set().union(*(latin_words(str(v)) for v in p.params.values()))  # type: ignore[attr-defined]
            assert not latin_words(shown) - LITERAL - values, (p, shown)
        assert "--" not in shown and "python -m" not in shown, shown  # the page's act, never a command


def test_the_cli_keeps_the_config_keys() -> None:
    cfg = RunConfig(model_name_or_path="tiny-demo", dataset="d.jsonl", quantization_bit=4, finetuning_type="full")
    assert cfg.validate() == ["quantization_bit needs finetuning_type: lora (QLoRA); quantized weights cannot be "
                              "trained directly"]
    assert RunConfig(model_name_or_path="tiny-demo", dataset="d.jsonl", learning_rate=0.0).validate() == [
        "learning_rate must be above 0 (got 0.0)"]


def test_every_entry_has_both_languages_with_the_same_values() -> None:
    assert set(PAGE_PROBLEMS) <= set(PROBLEMS)
    for code, (page_en, _) in PAGE_PROBLEMS.items():  # the page's words say the same values
        assert placeholders(page_en) - {n for n in placeholders(page_en) if n.startswith("f_")} == \
            placeholders(PROBLEMS[code][0]) - {n for n in placeholders(PROBLEMS[code][0]) if n.startswith("f_")}
    for code, (en, zh) in [*PROBLEMS.items(), *PAGE_PROBLEMS.items()]:
        assert re.fullmatch(r"check\.[a-z0-9_]+", code), code
        assert placeholders(en) == placeholders(zh), (code, en, zh)
        left = latin_words(re.sub(r"\{[^{}]*\}", " ", zh)) - LITERAL
        assert not left, (code, sorted(left))
        values = {n: "v" for n in placeholders(en) if not n.startswith("f_")}
        values.setdefault("name", "seed")
        for lang in ("en", "zh"):
            for surface in ("cli", "page"):
                assert "{" not in problem_words(code, values, lang, surface), (code, lang, surface)
