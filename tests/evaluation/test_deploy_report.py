"""The deploy report: the run's model as trained, bitsandbytes 8-bit and NF4, and each GGUF type,
each measured on the same held-out rows (file size, load time, memory, latency, accuracy, agreement with the full
model), from one function used by ``python -m studio eval --deploy-report`` and the Evaluate tab.

Run: the shared tiny LoRA llama (32 wide). bitsandbytes' CPU 4-bit kernels need rows of >= 64 values, so on a CPU the
NF4 row of this run is one that says why it could not be made: the "a form this machine cannot produce" path.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from studio.errors import StudioError

FORMS = ["full", "bnb-8bit", "bnb-nf4", "gguf-f16", "gguf-q8_0", "gguf-q4_k_m"]
NUMBERS = ("size_bytes", "load_s", "memory_bytes", "latency_ms_per_row", "accuracy", "agreement", "cpu_s")


@pytest.fixture(scope="module")
def report(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    from studio.evaluation.deploy_report import deploy_report
    keep = tmp_path_factory.mktemp("deploy") / "forms"
    return deploy_report(runs["lora"], runs["heldout"], out_dir=keep), keep


def test_every_form_has_a_row_measured_or_saying_why(report: tuple[dict, Path], runs: dict) -> None:
    res, _ = report
    assert [r["form"] for r in res["rows"]] == FORMS
    assert res["n"] == len(runs["heldout"]) == 30
    for row in res["rows"]:
        if row["unavailable"]:
            assert all(row[k] is None for k in NUMBERS), row
            assert len(row["unavailable"]) > 10, row
        else:
            assert all(row[k] is not None and row[k] >= 0 for k in NUMBERS), row
            assert row["load_s"] > 0 and row["latency_ms_per_row"] > 0 and row["memory_bytes"] > 0, row
    by = {r["form"]: r for r in res["rows"]}
    for form in ("full", "bnb-8bit", "gguf-f16", "gguf-q8_0"):  # these are made on any machine the suite runs on
        assert by[form]["unavailable"] is None, by[form]
    assert "llama-quantize" in by["gguf-q4_k_m"]["unavailable"]  # the export refuses it and says what to do
    assert "transformers" in res["gguf_reader"] and "llama.cpp" in res["gguf_reader"]


def test_agreement_with_the_full_model(report: tuple[dict, Path]) -> None:
    res, _ = report
    by = {r["form"]: r for r in res["rows"]}
    assert by["full"]["agreement"] == 1.0
    assert by["full"]["accuracy"] >= 0.9  # the run learned the task: agreement below is not agreement on noise
    assert by["gguf-f16"]["agreement"] >= 0.98
    assert by["gguf-f16"]["accuracy"] == pytest.approx(by["full"]["accuracy"], abs=0.04)
    # bitsandbytes 8-bit keeps the tiny run's answers too (its int8 rounding is far below this run's label margins)
    assert by["bnb-8bit"]["agreement"] >= 0.9
    assert by["bnb-8bit"]["memory_bytes"] < by["full"]["memory_bytes"]


def test_sizes_are_the_files_on_disk(report: tuple[dict, Path], runs: dict) -> None:
    res, keep = report
    by = {r["form"]: r for r in res["rows"]}
    assert by["gguf-f16"]["size_bytes"] == (keep / "gguf-f16" / "model.gguf").stat().st_size
    assert by["gguf-q8_0"]["size_bytes"] == (keep / "gguf-q8_0" / "model.gguf").stat().st_size
    assert by["gguf-q8_0"]["size_bytes"] < by["gguf-f16"]["size_bytes"]
    assert by["bnb-8bit"]["size_bytes"] == sum(f.stat().st_size for f in (keep / "bnb-8bit").glob("*.safetensors"))
    # the run as trained: the base model's weights and the adapter's
    base = sum(f.stat().st_size for f in Path(runs["base"]).glob("*.safetensors"))
    adapter = sum(f.stat().st_size for f in (Path(runs["lora"]) / "adapter").glob("*.safetensors"))
    assert base > 0 and adapter > 0 and by["full"]["size_bytes"] == base + adapter
    for row in res["rows"]:
        for f in row["files"]:
            assert Path(f).is_file(), row


def test_markdown_table_names_every_form_in_both_languages(report: tuple[dict, Path]) -> None:
    from studio.ui.eval_compare import deploy_markdown
    res, _ = report
    en, zh = deploy_markdown(res, "en"), deploy_markdown(res, "zh")
    assert en.count("\n|") >= 2 + len(FORMS) and zh.count("\n|") >= 2 + len(FORMS)
    assert "GGUF f16" in en and "llama.cpp" in en and "agreement" in en.lower()
    assert en != zh and "一致" in zh


def _eval_args(*flags: str) -> argparse.Namespace:
    from studio.cli.evaluate import add_arguments
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(flags))


def test_cli_refuses_a_folder_that_is_not_a_run(runs: dict, tmp_path: Path) -> None:
    from studio.cli.evaluate import main
    with pytest.raises(StudioError, match="--model") as err:
        main(_eval_args("--model", str(tmp_path), "--deploy-report"))
    assert err.value.fix  # and says what to pass instead
    with pytest.raises(StudioError, match="--model"):
        main(_eval_args("--model", str(runs["base"]), "--deploy-report"))  # a model folder, not a run
    with pytest.raises(StudioError, match="--compare-quantized"):
        main(_eval_args("--model", str(runs["lora"]), "--deploy-report", "--compare-quantized", "8"))


def test_evaluation_layer_refuses_plainly_too(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation.deploy_report import deploy_report
    with pytest.raises(StudioError, match="not a finished run"):
        deploy_report(tmp_path, runs["heldout"])
    with pytest.raises(StudioError, match="no rows"):
        deploy_report(runs["lora"], [])


def test_evaluate_tab_handler_is_an_owner_action_that_takes_no_path(runs: dict) -> None:
    """The panel's event gets the run from the run picker (a choice Gradio checks against the listed runs) and the
    rows the check above would use; it writes (temporary exports), so viewers are refused it."""
    from studio.ui import app
    from studio.app.context import AppContext
    from studio.app.roles import is_owner_only
    blocks = app.build_app(AppContext.create(runs["root"] / "ws"))
    named = {f.api_name: f for f in blocks.fns.values() if f.api_name}
    assert "deploy_report" in named and is_owner_only(named["deploy_report"].fn)
    assert [type(c).__name__ for c in named["deploy_report"].inputs][0] == "Dropdown"
