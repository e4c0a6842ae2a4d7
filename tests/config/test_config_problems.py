"""A run configuration's problems are coded (studio/config/checks.py ``problem``), worded once per language in
studio/words/config_problems.py, and shown in the page's language with the page's field names.

The rule is held on the catalog (tests/words/test_catalog_complete.py: both languages, the same values, no English
left in the Chinese) and, at run time, on every ConfigError
the config package can raise: configs that break every check, every key no field has, a value of the wrong type for
every kind of field, every LLaMA-Factory key the studio refuses (from lf_keys' own tables) and a --set item that is no
pair. A ConfigError made from a sentence is a bug (UnknownCode), so nothing is left for the page to re-word.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from studio.config import lf_keys
from studio.config.checks import problem
from studio.config.run_config import Draft, RunConfig, field_meta
from studio.config.yaml_io import parse_overrides
from studio.errors import ConfigError, StudioError
from studio.stages import LF_REFUSED, STAGE_NAMES
from studio.words.catalog import CATALOG, FIELD_LABELS
from studio.words.errors import UnknownCode, placeholders
from studio.words.render import render
from tests.ui.test_ui_zh_page import latin_words

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = {code for code in CATALOG if code.startswith("check.")}  # a run configuration's problems
# what the Chinese keeps as typed: values of settings (lora, full, z3-nvme, adamw_torch), library names, units
LITERAL = {"lora", "qlora", "full", "deepspeed", "zero", "trl", "kto", "nvme", "nul", "bf16", "fp32", "adamw_torch",
           "transformers", "bnb_4bit_quant_storage", "llama", "factory", "auto", "python", "studio", "convert",
           "jsonl", "tiny", "demo", "dpo", "sft", "id", "kl", "z2", "z3", "llamafactory",
           # typed values and syntax (true / false, key=value, the eval verb) and the names of LLaMA-Factory's
           # methods, losses and libraries the studio refuses
           "true", "false", "key", "value", "eval", "orpo", "simpo", "cpo", "galore", "apollo", "badam", "muon",
           "asft", "dft", "eaft", "oft", "fsdp", "bco", "ktransformers", "megatron", "ppo", "grpo"}
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
    dict(learning_rate_search="1e-4,two", nproc=2),
    dict(stage="grpo", reward="regex"),
    dict(stage="grpo", reward="regex", reward_pattern="("),
]


def _problems() -> list[str]:
    out = []
    for kw in BROKEN:
        base = dict(model_name_or_path="tiny-demo", dataset="d.jsonl")
        out += RunConfig(**{**base, **kw}).validate()  # type: ignore[arg-type]
    return out


def _raised(make) -> list[str]:  # type: ignore[no-untyped-def]
    """The problems of the ConfigError ``make()`` raises."""
    with pytest.raises(ConfigError) as err:
        make()
    return err.value.problems


# a value of the wrong type for each kind of field (a field's kind: studio/config/run_config.py field_meta)
WRONG = {"bool": ["maybe"], "int": [12.5, "x", True, math.inf], "float": ["x", True, math.inf, math.nan],
         "choice": ["zzzzzzzz"]}


def _wrong_values() -> list[dict[str, object]]:
    """Configs giving every field each wrong value of its kind (the i-th value in the i-th config), a close typo for
    each choice among names, and no value to the fields that need one."""
    meta = field_meta()
    configs = [{m["name"]: WRONG[m["kind"]][i] for m in meta if i < len(WRONG.get(m["kind"], []))}
               for i in range(max(map(len, WRONG.values())))]
    configs += [{m["name"]: m["choices"][0] + "x"} for m in meta
                if m["kind"] == "choice" and all(isinstance(c, str) for c in m["choices"])]
    return [*configs, {"seed": None, "learning_rate": None, "bf16": None}]


def _lf_refused() -> list[dict[str, object]]:
    """Every key lf_keys refuses, with a value it refuses, from its own tables."""
    unsupported = {(k + "x" if k.endswith("_") else k): True for k in lf_keys.UNSUPPORTED}
    return [*({"stage": s} for s in (*LF_REFUSED, "zzz")),
            *({"pref_loss": loss} for loss in lf_keys.PREF_LOSS_REFUSED),
            {"do_train": False, "do_predict": True, "quantization_method": "gptq", "eval_dataset": "e"},
            dict.fromkeys(lf_keys.MULTIMODAL, 1), unsupported]


def _every_config_error() -> list[str]:
    """The problems of every ConfigError the config package raises for the inputs above."""
    found: list[str] = []
    for kw in BROKEN:
        found += _raised(lambda kw=kw: RunConfig(**{"model_name_or_path": "tiny-demo", "dataset": "d.jsonl",  # type: ignore[arg-type]
                                                   **kw}))
    for data in [{"learnig_rate": 1e-4, "zzzzzzzz": 1, 7: 1}, *_wrong_values(), *_lf_refused()]:
        found += _raised(lambda data=data: RunConfig.from_dict(data, source="typo.yaml"))
    found += _raised(lambda: parse_overrides(["no-pair"]))
    return found


def test_every_config_error_of_the_config_package_is_coded_and_meets_every_code() -> None:
    found = _every_config_error()
    uncoded = [p for p in found if getattr(p, "code", None) not in PROBLEMS]
    assert not uncoded, uncoded
    codes = {p.code for p in found}  # type: ignore[attr-defined]
    # every code but the alternatives a single config cannot show at once is met here
    alternatives = {"check.not_number", "check.above_or_empty", "check.at_least_or_empty", "check.below_or_empty",
                    "check.at_most_or_empty", "check.at_most"}
    assert set(PROBLEMS) - codes <= alternatives, sorted(set(PROBLEMS) - codes - alternatives)


def test_the_cli_keeps_the_english_of_the_keys_and_values_it_refuses() -> None:
    """The English of the problems made by from_dict, lf_keys and --set is the sentence the CLI always printed."""
    assert _raised(lambda: Draft.from_dict({"learnig_rate": 1, "zzzzzzzz": 1}, source="a.yaml")) == [
        "unknown key 'learnig_rate' in a.yaml (did you mean 'learning_rate'?)", "unknown key 'zzzzzzzz' in a.yaml"]
    assert _raised(lambda: Draft.from_dict({"cutoff_len": 12.5, "bf16": "maybe", "finetuning_type": "lorx",
                                                "seed": None,
                                                "val_size": math.inf, "learning_rate": "x"})) == [
        "cutoff_len: expected a whole number, got '12.5'", "bf16: expected true or false, got 'maybe'",
        "finetuning_type: 'lorx' is not one of full, freeze, lora (did you mean 'lora'?)", "seed: a value is required",
        "val_size: expected a finite number, got 'inf'", "learning_rate: expected a number, got 'x'"]
    assert _raised(lambda: Draft.from_dict({"stage": "pt", "pref_loss": "orpo", "do_predict": True,
                                                "eval_dataset": "e", "use_galore": True, "fsdp_config": "x"})) == [
        "stage: pt (pre-training) is not supported yet: the studio trains these stages: " + ", ".join(STAGE_NAMES),
        "pref_loss: orpo: ORPO is in TRL 1.16's experimental package only and is not wired into the studio yet: use "
        "pref_loss: sigmoid (DPO)",
        "do_predict: true is not supported here: use 'python -m studio eval' after training",
        "eval_dataset is not supported: hold out rows with val_size, or score any file later with 'python -m studio "
        "eval --data FILE'",
        "use_galore: GaLore is not supported yet",
        "fsdp_config: FSDP is not supported: use DeepSpeed ZeRO-3 (deepspeed: ds_z3 or ds_z3_offload)"]
    assert _raised(lambda: parse_overrides(["abc"])) == ["--set 'abc' is not key=value"]


def test_a_config_error_made_of_a_sentence_is_a_bug_and_an_old_runs_reads_back_as_written() -> None:
    """Every problem is coded, so a sentence handed to ConfigError is a bug of its maker; a ConfigError an older studio
    wrote to a run's status.json with a sentence still reads back, shown as written."""
    with pytest.raises(UnknownCode):
        ConfigError([problem("check.max_steps"), "learning_rate must be positive"])
    old = {"error": "config.problem", "what": "The run configuration has 1 problem: learning_rate must be positive",
           "fix": "correct it", "values": {"problems": ["learning_rate must be positive"], "n": 1}}
    for lang in ("en", "zh"):
        assert "learning_rate must be positive" in StudioError.from_dict(old).text(lang, "page")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_each_problem_in_its_language_with_its_field_labels(lang: str) -> None:
    keys = {m["name"] for m in field_meta() if "_" in m["name"]}   # the names that read as config keys
    for p in _every_config_error():
        shown = render(p.code, p.params, lang, "page")  # type: ignore[attr-defined]
        named = [k for k in keys if re.search(rf"(?<![\w']){re.escape(k)}(?![\w'])", shown)]
        assert not named, (p, shown)  # the page names fields by their labels, never by config keys
        said = placeholders(CATALOG[p.code].cli[0])  # type: ignore[attr-defined]
        fields = {n[2:] for n in said if n.startswith(("f_", "q_")) and n not in ("f_name", "q_name")}
        fields |= {p.params["name"]} if said & {"f_name", "q_name"} else set()  # type: ignore[attr-defined]
        for key in fields:
            assert FIELD_LABELS[key][lang == "zh"] in shown, (key, shown)
        if lang == "zh":
            assert CJK.search(shown), shown
            values = set().union(*(latin_words(str(v)) for v in p.params.values()))  # type: ignore[attr-defined]
            assert not latin_words(shown) - LITERAL - values, (p, shown)
        assert "--" not in shown and "python -m" not in shown, shown  # the page's act, never a command


def test_the_cli_keeps_the_config_keys() -> None:
    cfg = Draft(model_name_or_path="tiny-demo", dataset="d.jsonl", quantization_bit=4, finetuning_type="full")
    assert cfg.validate() == ["quantization_bit needs finetuning_type: lora (QLoRA); quantized weights cannot be "
                              "trained directly"]
    assert Draft(model_name_or_path="tiny-demo", dataset="d.jsonl", learning_rate=0.0).validate() == [
        "learning_rate must be above 0 (got 0.0)"]


