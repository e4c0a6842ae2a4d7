"""The Evaluate tab's generation check: the page shows the numbers the CLI prints, in English and in Chinese."""
from __future__ import annotations

import argparse
import json
import re
from types import SimpleNamespace
from pathlib import Path

import gradio as gr
import pytest

from studio.cli import evaluate as evaluate_cli
from studio.ui import evaluate_tab as tab

try:
    from genkit import build_generation_run
except ImportError:  # tests/ as a package
    from tests.genkit import build_generation_run

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?%?|–")

pytestmark = pytest.mark.integration  # each builds and trains a tiny run (~7 s)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_generation_run(tmp_path_factory.getbasetemp() / "genkit")


def _page_numbers(markdown: str) -> list[list[str]]:
    """The scorecard's cells after the name, row by row (the table up to the first blank line after it)."""
    table = markdown.split("\n\n")[1].splitlines()[2:]
    return [[c.strip() for c in line.strip("|").split("|")[1:]] for line in table]


def _cli_numbers(text: str) -> list[list[str]]:
    lines = text.splitlines()[2:]
    out = []
    for line in lines:
        if not line.strip():
            break
        out.append(line[36:].split())
    return out


def test_the_page_and_the_cli_give_the_same_numbers(gen: dict, capsys: pytest.CaptureFixture) -> None:
    from studio.evaluation.inference import check_rows
    run = str(gen["run"])

    def rows() -> list:
        return check_rows(run, None, None)   # the run's held-out rows, as the tab's "validation" choice

    en = tab_handler(run, rows, "en")
    zh = tab_handler(run, rows, "zh")
    parser = argparse.ArgumentParser()
    evaluate_cli.add_arguments(parser)
    assert evaluate_cli.main(parser.parse_args(["--model", run, "--task", "generate", "--compare-base"])) == 0
    cli = _cli_numbers(capsys.readouterr().out)
    latency = 7   # the 8th line is the latency, measured anew by each call
    page_en, page_zh = _page_numbers(en), _page_numbers(zh)
    assert len(page_en) == len(page_zh) == len(cli) >= 9
    for i, (a, b, c) in enumerate(zip(page_en, page_zh, cli)):
        if i != latency:
            assert a == b == c, (i, a, b, c)
    assert "chrF" in en and "完全一致" in zh and "回答损失" in zh
    assert "Worst rows" in en and "微调后模型最差的行" in zh


def tab_handler(run: str, rows: object, lang: str) -> str:
    from studio.ui.eval_compare import on_generation_check
    return on_generation_check(run, rows, True, lang)


def test_the_panel_is_on_the_tab_and_wired(gen: dict, tmp_path: Path) -> None:
    ctx = SimpleNamespace(workspace=tmp_path, runs_root=gen["runs_root"], data_root=tmp_path, runner=None,
                          lang="en")
    with gr.Blocks() as demo:
        with gr.Tab("Evaluate"):
            parts = tab.build_evaluate_tab(ctx)
    assert "gen_out" in parts
    names = [d.api_name for d in demo.fns.values()]
    assert "generation_check" in names


def test_no_run_is_a_page_error() -> None:
    from studio.errors import StudioError
    with pytest.raises(StudioError):
        tab_handler("", lambda: [], "en")
