"""In a real browser: with --lang zh, or in a Chinese browser, every tab reads Chinese.

Walks every tab of a Chinese studio (after converting the sample, so reports and lists are
filled) and fails on any visible English word outside a whitelist of names and units.
"""
from __future__ import annotations

import re
from typing import Any

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)

# names of things (models, methods, file types, libraries) and units; no plain English
# words (and, others, english, chinese, chat, score, generate, learns, the, own, words, logits) that would let English
# model descriptions and choice names pass
WHITELIST = {
    "tiny", "demo", "lora", "qlora", "full", "freeze", "dora", "pissa", "rslora", "neftune", "loraplus", "deepspeed",
    "gb", "mb", "token", "tokens", "json", "jsonl", "yaml", "csv", "tsv", "xlsx", "xls", "parquet", "txt", "excel",
    "cpu", "gpu", "bf16", "fp16", "fp32", "adamw", "sgd", "adafactor", "torch", "bit", "nf4", "fp4", "auto", "cosine",
    "linear", "constant", "warmup", "with", "none", "alpaca", "llama", "qwen", "chatml", "default", "hub", "sft",
    "tensorboard", "wandb", "mlflow", "proj", "all", "top", "macro", "loss", "png", "smollm", "instruct", "gemma",
    "mistral", "phi", "mini", "zh", "en", "instruction", "studio", "fine", "tune", "workspace", "data",
    "root", "runs", "settings", "gradio", "api", "logout", "zero", "offload", "input", "output", "messages", "text",
    "label", "true", "false", "latest", "reviews", "sample", "dataset", "info", "temperature", "dropout", "alpha",
    "rank", "checkpoint", "checkpoints", "tokenizer", "template", "model", "models", "dynamic", "batching", "prompt",
    "python", "pip", "gguf", "cpp", "transformers", "id", "ids", "epochs", "step", "steps", "hf", "trainer", "apache",
    "license", "google",
    "liger", "triton", "nvidia", "amd", "rocm", "rmsnorm", "rope", "swiglu", "pcie",  # kernels, card makers, buses
    "instinct", "radeon", "pro", "geforce", "rtx", "xtx", "tesla", "quadro",  # card names
}
WORD = re.compile(r"[A-Za-z][A-Za-z]{2,}")


# the sample's own content: its labels and the converter's instruction (the user's data, editable)
DATA_WORDS = {"positive", "negative", "neutral", "classify", "sentiment", "review", "reviews", "answer", "one", "word",
              "this", "the"}
PATH = re.compile(r"\S*[/\\]\S*")  # file paths (the workspace lives under a temp folder named after the test)


def english_words(text: str) -> set[str]:
    text = PATH.sub(" ", text)
    words = set()
    for w in WORD.findall(text):
        parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", w)  # split camelCase and glued names
        words |= {p.lower() for p in parts if len(p) > 2 and p.lower() not in WHITELIST | DATA_WORDS}
    return words


@pytest.mark.parametrize("flags", [("--lang", "zh"), ()], ids=["lang-zh", "browser-zh"])
def test_every_tab_reads_chinese(tmp_path: Any, flags: tuple[str, ...]) -> None:
    """With --lang zh, and with no --lang in a Chinese browser (its Accept-Language): the same page."""
    from playwright.sync_api import expect, sync_playwright
    from ui_server import Server
    expect.set_options(timeout=60_000)
    srv = Server(tmp_path / "ws", *flags).wait_ready()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pg = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
            pg.set_default_timeout(60_000)
            pg.goto(srv.url)
            pg.locator("#sample-btn").click()
            expect(pg.locator("#data-info")).to_contain_text("427")
            pg.locator("#convert-btn").click()
            expect(pg.locator("#data-report")).to_contain_text("427")
            found: dict[str, set[str]] = {}
            for tab in ("1. 数据", "2. 设置", "3. 训练", "4. 评估", "5. 历次运行"):
                pg.get_by_role("tab", name=tab).click()
                pg.wait_for_timeout(1500)
                # Gradio's own status line ("processing | 2.1s", not translatable) shows while an event of the tab
                # runs; on a loaded machine the tab's first events outlast the pause: read the settled page
                pg.wait_for_function("() => ![...document.querySelectorAll('[role=tabpanel]')].some("
                                     "p => p.offsetParent && /processing \\|/.test(p.innerText))", timeout=60_000)
                panel = pg.locator("[role=tabpanel]:visible").first
                # the user's own data (preview and statistics tables) may be English; the page may not
                text = panel.evaluate(
                    "el => { const q = '#data-preview, #data-stats, #ev-wrong';"
                    " el.querySelectorAll(q).forEach(t => t.style.display = 'none'); const s = el.innerText;"
                    " el.querySelectorAll(q).forEach(t => t.style.display = ''); return s; }")
                words = english_words(text)
                if words:
                    found[tab] = words
            browser.close()
    finally:
        srv.stop()
    assert found == {}, {tab: sorted(w) for tab, w in found.items()}


def test_login_page_reads_chinese(tmp_path: Any) -> None:
    """The login page reads Chinese, not 'Fine-Tune Studio: please log in.' nor 'Incorrect Credentials'."""
    import os
    from playwright.sync_api import expect, sync_playwright
    from ui_server import Server
    expect.set_options(timeout=60_000)
    os.environ["STUDIO_AUTH"] = "alice:right-password"
    try:
        srv = Server(tmp_path / "ws", "--lang", "zh").wait_ready()
    finally:
        del os.environ["STUDIO_AUTH"]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pg = browser.new_page(locale="en-US")  # an English browser: --lang zh decides
            pg.goto(srv.url)
            expect(pg.locator("body")).to_contain_text("Fine-Tune Studio：请登录。")
            pg.locator("input").nth(0).fill("alice")
            pg.locator("input[type=password]").fill("wrong")
            pg.locator("button").filter(has_text="登录").click()
            expect(pg.locator("body")).to_contain_text("凭据不正确")
            text = pg.locator("body").inner_text()
            browser.close()
    finally:
        srv.stop()
    assert english_words(text) == set(), text
