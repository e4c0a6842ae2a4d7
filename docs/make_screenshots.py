"""Make the guide's screenshots from a real browser, in English and Chinese: one command.

    .venv/bin/python docs/make_screenshots.py            # both languages -> docs/img/en/*.png, docs/img/zh/*.png
    .venv/bin/python docs/make_screenshots.py --lang zh  # one language

For each language it starts the studio (launch.py) on a fresh temporary workspace, opens it in headless Chromium
(Debian's `chromium`, driven by Playwright's Python package), walks the first project of docs/GUIDE.md with the
sample reviews and the built-in `tiny-demo` model (Data -> Convert -> Settings -> Train -> Start -> Evaluate -> Runs),
starts the demo page of the finished run, and saves one PNG per step. The PNGs are reduced to a 256-colour palette
so that the whole set stays a few hundred KB in git. Re-run it whenever the page changes.

Needs: `apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji` (the CJK font draws the Chinese page, the
emoji font the status marks). Takes a few minutes on a CPU: the run trains for real.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the studio's own words (i18n) for the accordion titles
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
# What the Train tab shows when a run is scored, in each language (the page's own words; see studio's i18n table).
DONE_WORDS = {"en": "Accuracy", "zh": "准确率"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A studio process on a free loopback port; stopped with its whole process group."""

    def __init__(self, argv: list[str], log: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "*"}
        self.proc = subprocess.Popen([sys.executable, *argv, "--port", str(self.port)], cwd=str(ROOT), env=env,
                                     stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
        self.log = log

    def wait_ready(self, timeout: float = 300) -> "Child":
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.log} ended with {self.proc.returncode}:\n{self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url, timeout=2).status_code in (200, 401):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.log} did not serve in {timeout} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _shrink(png: Path) -> None:
    """A 256-colour palette: screenshots of a page have few colours, so this keeps them sharp and small."""
    with Image.open(png) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(png, optimize=True)


def _shot(page: Any, out: Path, name: str) -> None:
    page.wait_for_timeout(1500)  # let the last event's redraw finish
    path = out / f"{name}.png"
    page.screenshot(path=str(path))
    _shrink(path)
    print(f"  {path.relative_to(ROOT)}  {path.stat().st_size // 1024} KB", flush=True)


def _tab(page: Any, index: int) -> None:
    """Tabs by position (1. Data ... 5. Runs): the same in every language."""
    page.get_by_role("tab").nth(index).click()
    page.wait_for_timeout(800)


def _page_word(key: str, lang: str) -> str:
    """One of the page's own words (the accordion titles), from the studio's i18n table."""
    from studio.words.catalog import msg
    return msg(key, lang)


def _open_accordion(page: Any, key: str, lang: str) -> None:
    page.locator("[role=tabpanel]:visible").get_by_text(_page_word(key, lang), exact=True).first.click()
    page.wait_for_timeout(800)


def walk(lang: str, out: Path, work: Path) -> None:
    """One language: the first project, a screenshot per step."""
    from playwright.sync_api import expect, sync_playwright
    out.mkdir(parents=True, exist_ok=True)
    ws = work / f"ws-{lang}"
    studio = Child(["launch.py", "--workspace", str(ws), "--lang", lang], work / f"studio-{lang}.log").wait_ready()
    demo = None
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport=VIEWPORT, locale="zh-CN" if lang == "zh" else "en-US")
            page.set_default_timeout(120_000)
            expect.set_options(timeout=120_000)
            page.goto(studio.url)
            page.locator("#sample-btn").click()
            expect(page.locator("#data-info")).to_contain_text("427")
            _shot(page, out, "1-data")
            page.locator("#convert-btn").click()
            expect(page.locator("#data-report")).to_contain_text("427")
            page.locator("#data-report").scroll_into_view_if_needed()
            _shot(page, out, "1-data-converted")
            _tab(page, 1)
            expect(page.locator("#simple-model")).to_be_visible()
            _shot(page, out, "2-settings")
            _tab(page, 2)
            page.locator("#start-btn").click()
            expect(page.locator("#train-status")).to_contain_text(DONE_WORDS[lang], timeout=1_200_000)
            page.locator("#loss-plot").scroll_into_view_if_needed()
            _shot(page, out, "3-train")
            _tab(page, 3)
            panel = page.locator("[role=tabpanel]:visible")
            panel.locator("button.primary").first.click()  # the sentiment check: scores and confusion matrix
            expect(panel.locator("img").first).to_be_visible(timeout=600_000)
            panel.locator("img").first.scroll_into_view_if_needed()
            _shot(page, out, "4-evaluate")
            _open_accordion(page, "demo.share", lang)
            page.locator("#share-demo-command").scroll_into_view_if_needed()
            _shot(page, out, "4-evaluate-share")
            _tab(page, 4)
            expect(page.locator("#runs-table")).to_be_visible()
            _shot(page, out, "5-runs")
            runs = sorted(p for p in (ws / "runs").iterdir() if (p / "config.yaml").exists())
            demo = Child(["-m", "studio", "demo", str(runs[-1]), "--workspace", str(ws), "--lang", lang],
                         work / f"demo-{lang}.log").wait_ready()
            page.goto(demo.url)
            expect(page.locator("#demo-text")).to_be_visible()
            page.locator("#demo-text textarea").fill("质量很好，物流也快，非常满意。" if lang == "zh"
                                                     else "Great quality and fast delivery, very happy with it.")
            page.locator("#demo-classify").click()
            expect(page.locator("#demo-scores")).to_contain_text("%")
            _shot(page, out, "6-demo")
            browser.close()
    finally:
        if demo:
            demo.stop()
        studio.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", choices=["en", "zh"], nargs="+", default=["en", "zh"], help="languages to shoot")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder for <lang>/<step>.png")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"needs Debian's Chromium at {CHROMIUM}: apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="studio-shots-") as tmp:
        for lang in args.lang:
            print(f"{lang}:", flush=True)
            walk(lang, Path(args.out) / lang, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
