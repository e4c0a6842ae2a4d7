"""The deploy report's generation half: a generation run's forms scored by the generation check, side by side."""
from __future__ import annotations

import argparse
import json

import pytest

try:
    from genkit import build_generation_run
except ImportError:  # tests/ as a package
    from tests.genkit import build_generation_run

pytestmark = pytest.mark.integration
# answers that name the thing reviewed: many distinct answers, so the rows are written answers, not labels
THINGS = ["bag", "chair", "watch", "phone", "book", "kettle", "lamp", "desk", "cup", "shoe", "coat", "pen"]


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_generation_run(tmp_path_factory.getbasetemp() / "genkit-things", things=THINGS)


@pytest.fixture(scope="module")
def report(gen: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from studio.evaluation.deploy_report import deploy_report
    from studio.evaluation.evaluate import validation_rows
    return deploy_report(gen["run"], validation_rows(gen["run"]), forms=("full", "gguf-f16"),
                         work_dir=tmp_path_factory.mktemp("deploy-gen"))


def test_written_answers_get_the_generation_checks_numbers_for_every_form(report: dict, gen: dict) -> None:
    from studio.evaluation.evaluate import validation_rows
    from studio.evaluation.generation_check import generation_check
    full, f16 = report["rows"]
    assert report["mode"] == "generate-check"
    assert f16["unavailable"] is None, f16["unavailable"]
    service = generation_check(gen["run"], validation_rows(gen["run"]))
    assert full["chrf"] == pytest.approx(service.tuned.chrf) and full["exact_match"] == service.tuned.exact_match
    assert full["answer_loss"] == pytest.approx(service.tuned.answer_loss, rel=1e-4)
    assert full["agreement"] == 1.0 and full["accuracy"] is None
    # f16 of a float32 model writes the same answers here: its agreement says so, and its chrF is the full model's
    assert f16["agreement"] == pytest.approx(1.0) and f16["chrf"] == pytest.approx(full["chrf"], abs=1.0)


def test_the_page_and_the_cli_show_the_generation_columns(report: dict, gen: dict,
                                                          capsys: pytest.CaptureFixture) -> None:
    from studio.app.eval_tables import deploy_markdown
    from studio.cli import evaluate as cli
    en, zh = deploy_markdown(report, "en"), deploy_markdown(report, "zh")
    assert "| chrF | exact match |" in en and "完全一致" in zh
    assert f"{report['rows'][0]['chrf']:.1f}" in en and f"{report['rows'][0]['chrf']:.1f}" in zh
    cli._print_deploy(report)
    out = capsys.readouterr().out
    assert "chrF" in out and "agreement" in out
