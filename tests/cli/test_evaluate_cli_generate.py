"""python -m studio eval --task generate --data FILE: the generation check's numbers, as JSON and as a table."""
from __future__ import annotations

import argparse
import json

import pytest

from studio.cli import evaluate as evaluate_cli

try:
    from genkit import build_generation_run
except ImportError:  # tests/ as a package
    from tests.genkit import build_generation_run

pytestmark = pytest.mark.integration  # each builds and trains a tiny run (~7 s)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_generation_run(tmp_path_factory.getbasetemp() / "genkit")


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    evaluate_cli.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_json_has_the_scores_of_both_models_and_the_rows(gen: dict, capsys: pytest.CaptureFixture) -> None:
    from studio.evaluation.generation_check import generation_check
    assert evaluate_cli.main(_args("--model", str(gen["run"]), "--data", str(gen["heldout_file"]), "--task",
                                   "generate", "--compare-base", "--json")) == 0
    result = json.loads(capsys.readouterr().out)
    service = generation_check(gen["run"], gen["heldout"], compare_base=True)
    assert result["task"] == "generate" and result["n"] == len(gen["heldout"])
    for side, score in (("tuned", service.tuned), ("base", service.base)):
        for key in ("exact_match", "chrf", "bleu", "rouge_l", "answer_loss", "perplexity", "length_ratio"):
            assert result[side][key] == pytest.approx(getattr(score, key)), (side, key)
    assert result["tuned"]["chrf"] > result["base"]["chrf"]
    assert result["tuned"]["structure"]["kind"] == "json"
    assert result["delta"]["chrf"] == pytest.approx(result["tuned"]["chrf"] - result["base"]["chrf"])
    assert result["changed"] and result["worst"] and len(result["outputs"]) == result["n"]


def test_the_table_names_every_score(gen: dict, capsys: pytest.CaptureFixture) -> None:
    assert evaluate_cli.main(_args("--model", str(gen["run"]), "--task", "generate", "--compare-base")) == 0
    out = capsys.readouterr().out
    for name in ("exact match", "chrF", "BLEU", "ROUGE-L", "answer loss", "perplexity", "length", "parses as JSON",
                 "fields match"):
        assert name in out, name
    assert "base" in out and "fine-tuned" in out
    assert "worst rows" in out
