"""A real browser runs the Evaluate tab's generation check on a finished generation run, in English and Chinese.

The workspace holds the tiny JSON-answer run of tests/genkit.py (a full fine-tune that answers reviews as
``{"sentiment": ...}``); the check scores its held-out rows base vs tuned, and the page's numbers are the ones
``python -m studio eval --task generate --compare-base`` gives for the same rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark as _browser

pytestmark = [*_browser, pytest.mark.integration]


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.genkit import build_generation_run
    from ui_server import Server
    ws = tmp_path_factory.mktemp("gen-browser")
    gen = build_generation_run(ws)   # its run is ws/runs/gen: the studio's runs folder
    srv = Server(ws).wait_ready()  # no --lang: each browser gets its own language
    srv.gen = gen
    yield srv
    srv.stop()


def _check(studio: Any, locale: str, accordion: str, button: str) -> str:
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000}, locale=locale)
        pg.set_default_timeout(120_000)
        pg.goto(studio.url)
        pg.get_by_role("tab").filter(has_text="4.").first.click()
        pg.locator("#tab-evaluate").get_by_text(accordion, exact=True).first.click()
        pg.get_by_role("button", name=button).click()
        out = pg.locator("#ev-gen")
        expect(out).to_contain_text("chrF")
        text = out.inner_text()
        browser.close()
    return text


def _chrf_cells(text: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("chrF"))
    return [c for c in line.replace("chrF (0-100)", "").replace("chrF（0-100）", "").split() if c]


def test_the_generation_check_in_a_browser_shows_the_clis_numbers(studio: Any) -> None:
    from studio.evaluation.evaluate import validation_rows
    from studio.evaluation.generation_check import generation_check
    run = studio.gen["run"]
    service = generation_check(run, validation_rows(run), compare_base=True)
    expected = [f"{service.base.chrf:.1f}", f"{service.tuned.chrf:.1f}"]
    en = _check(studio, "en-US", "Generation check: answers against reference answers", "Run generation check")
    assert "exact match" in en and "Worst rows of the fine-tuned model" in en
    assert _chrf_cells(en)[:2] == expected, en
    zh = _check(studio, "zh-CN", "生成检查：回答与参考答案对比", "运行生成检查")
    assert "完全一致" in zh and "微调后模型最差的行" in zh
    assert _chrf_cells(zh)[:2] == expected, zh


def test_the_run_is_in_the_workspace(studio: Any) -> None:
    assert Path(studio.gen["run"], "status.json").is_file()
