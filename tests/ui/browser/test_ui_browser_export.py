"""A real browser (Debian's chromium) downloads an export of a finished SmolLM2 run.

A LoRA run of the built-in SmolLM2-135M-Instruct (2 steps on 6 rows) is trained into the workspace; a logged-in
owner exports its adapter on the Evaluate tab and clicks the download link: the file the browser saves is a zip
holding the adapter's weights, byte for byte. The same link without the login is refused.
"""
from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark as _browser

pytestmark = [*_browser, pytest.mark.integration]
SMOL = "smollm2-135m-instruct"
PASSWORD = "export-pw"


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A studio with a login whose workspace holds one finished SmolLM2 LoRA run."""
    from tests.conftest import INSTRUCTION, write_jsonl
    from studio.config.run_config import RunConfig
    from studio.engine.run import run_training
    from studio.models import zoo
    from ui_server import Server
    zoo.ensure_prepared(SMOL)  # once per user (~/.cache/fine-tune-studio/models); at once when prepared
    base = tmp_path_factory.mktemp("export")
    ws = base / "ws"
    rows = [{"instruction": INSTRUCTION, "input": text, "output": label} for text, label in
            (("The kettle is great.", "positive"), ("Broke in a day.", "negative"), ("Excellent book.", "positive"),
             ("Terrible headset.", "negative"), ("Works well, very happy.", "positive"), ("Awful.", "negative"))]
    cfg = RunConfig(model_name_or_path=SMOL, dataset=str(write_jsonl(base / "rows.jsonl", rows)),
                    output_dir=str(ws / "runs" / "smol-lora"), finetuning_type="lora", lora_rank=4, lora_alpha=8,
                    template="auto", cutoff_len=32, per_device_train_batch_size=2, max_steps=2, learning_rate=5e-3,
                    logging_steps=1, save_steps=1000, plot_loss=False, seed=0)
    assert run_training(cfg)["state"] == "finished"
    logins = base / "logins.txt"
    logins.write_text(f"alice:{PASSWORD}:owner\n", encoding="utf-8")
    srv = Server(ws, "--lang", "en", "--auth-file", str(logins)).wait_ready()
    yield srv
    srv.stop()


def test_a_browser_downloads_the_adapter_export_of_a_finished_smollm2_run(studio: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US", accept_downloads=True)
        pg = ctx.new_page()
        pg.set_default_timeout(60_000)
        pg.goto(studio.url)
        pg.locator("input").nth(0).fill("alice")
        pg.locator("input[type=password]").fill(PASSWORD)
        pg.locator("button").filter(has_text=re.compile("log ?in", re.I)).first.click()
        pg.get_by_role("tab", name="Evaluate").click()
        pg.locator("#tab-evaluate").get_by_text("Export", exact=True).first.click()  # the accordion
        merge = pg.get_by_label("Merge the LoRA adapter into a standalone model")
        expect(merge).to_be_visible()
        merge.uncheck()  # the adapter itself: the cheapest real export
        pg.locator("#export-btn").click()
        expect(pg.locator("#tab-evaluate")).to_contain_text("Exported adapter model")
        link = pg.locator("#export-download a")
        expect(link).to_have_count(1)
        expect(link).to_contain_text("smol-lora-adapter.zip")
        href = link.get_attribute("href")
        assert href and str(studio.workspace) not in href and "exports" not in href  # a token, not a path
        with pg.expect_download() as info:
            link.click()
        download = info.value
        assert download.failure() is None and download.suggested_filename == "smol-lora-adapter.zip"
        saved = tmp_path / "download.zip"
        download.save_as(saved)
        anonymous = browser.new_context().request.get(studio.url + href)
        refused = anonymous.status
        browser.close()
    exported = studio.workspace / "exports" / "smol-lora-adapter"
    with zipfile.ZipFile(saved) as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
        assert "smol-lora-adapter/adapter_model.safetensors" in names, names
        assert zf.read("smol-lora-adapter/adapter_model.safetensors") == \
            (exported / "adapter_model.safetensors").read_bytes()
    assert refused == 401, "the link without the login"
    assert not list(studio.workspace.rglob("*.zip")), "no zip was written beside the export"
