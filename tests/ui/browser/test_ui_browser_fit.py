"""In a real browser (Debian's chromium), "will it fit" gives one verdict.

llama2-7b on a 24 GB card (it read "Fits — 13.87 GB / 24 GB" beside "even batch 1 does not fit this machine's
memory") and llama3-70b on 80 GB with 512 GB of host RAM (the ZeRO-3 offload suggestion was "fits" in the list and
"still too big" in the text; after Apply the list was empty beside "No problems found"). On the page: the panel's
verdict, the derived plan's words, the suggestion list and the Settings check agree, and each suggestion is a plain
sentence with the page's field names and what it needs, never YAML keys.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.ui.browser.test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401  (same browser, same skip rules)

# a config key as YAML or the old suggestion text wrote it: "finetuning_type: lora", "quantization_bit=4"
YAML_KEY = re.compile(r"\b[a-z]+(_[a-z]+)+\s*[:=]")


@pytest.fixture()
def page(tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import expect, sync_playwright
    from ui_server import Server
    expect.set_options(timeout=45_000)
    srv = Server(tmp_path / "ws", "--lang", "en").wait_ready()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pg = browser.new_page(viewport={"width": 1400, "height": 1400}, locale="en-US")
            joins: list[float] = []  # when the page asked the server to run an event (test_ui_events.py)
            pg.on("request", lambda r: joins.append(time.time()) if r.method == "POST" and "queue/join" in r.url
                  else None)
            pg.joins = joins  # type: ignore[attr-defined]
            pg.set_default_timeout(60_000)
            pg.goto(srv.url)
            pg.get_by_role("tab", name="2. Settings").click()
            expect(pg.locator("#check")).not_to_be_empty()
            pg.locator("#advanced").get_by_text("Advanced: every setting").click()  # the full form
            pg.wait_for_timeout(1000)
            yield pg
            browser.close()
    finally:
        srv.stop()


def type_number(pg: Any, elem: str, value: float) -> None:
    box = pg.locator(f"#{elem} input")
    box.fill(f"{value:g}")
    box.press("Tab")


def steady(pg: Any) -> dict[str, Any]:
    """The panels once they stop changing: fit, why, check, and the suggestion list's options."""
    before, same_since = None, time.time()
    deadline = time.time() + 45
    while time.time() < deadline:
        now = tuple(pg.locator(f"#{e}").inner_text() for e in ("fit", "why", "check"))
        if now != before:
            before, same_since = now, time.time()
        elif time.time() - same_since > 1.5 and now[0].strip():
            break
        pg.wait_for_timeout(250)
    fit, why, check = before or ("", "", "")
    pg.locator("#fit-suggestion input").click()
    pg.wait_for_timeout(500)
    options = [o.strip().lstrip("✓").strip() for o in pg.get_by_role("option").all_inner_texts() if o.strip()]
    pg.keyboard.press("Escape")
    pg.locator("#check").click()  # focus elsewhere: a click on the still-focused list would not open it again
    return {"fit": fit, "why": why, "check": check, "options": options}


def changed(pg: Any, before: str, timeout_s: float = 45) -> None:
    """Waits until the fit panel no longer shows `before`: Apply has reached the server and come back."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if pg.locator("#fit").inner_text() != before:
            return
        pg.wait_for_timeout(250)
    raise AssertionError(f"the fit panel did not change within {timeout_s:g} s after Apply: {before!r}")


def one_verdict(shown: dict[str, Any]) -> str:
    """Asserts the panel, the plan's reasons, the list and the check agree; returns the verdict."""
    fit, why, check, options = shown["fit"], shown["why"], shown["check"], shown["options"]
    m = re.search(r"(Fits|fits, but tight|Does not fit) — ", fit)
    assert m and len(re.findall(r"(Fits|fits, but tight|Does not fit) — ", fit)) == 1, fit
    verdict = "fits" if m.group(1) != "Does not fit" else "no"
    tips = [t.split("\n")[0].strip() for t in fit.split("💡")[1:]]
    assert tips == options[:len(tips)], (tips, options)  # the panel's tips are the list's first entries
    for label in options:  # plain sentences with the page's field names and a number each
        assert not YAML_KEY.search(label), label
        assert re.search(r"needs [\d.]+ GB of (card memory|host RAM)", label), label
        assert label.lower().endswith((", fits", ", still too big")), label
    if verdict == "fits":
        assert options == [], options
        assert "does not fit" not in why.lower() and "does not fit" not in check.lower(), (why, check)
    else:
        assert "Does not fit the machine planned for" in check, check  # the check says so too
        if not any(o.lower().endswith(", fits") for o in options):
            assert "Nothing on this page makes it fit" in fit, fit  # what would: a bigger card, more RAM
    return verdict


def test_llama2_7b_on_a_24_gb_card(page: Any) -> None:
    from playwright.sync_api import expect
    type_number(page, "gpu-mem", 24)
    type_number(page, "host-ram", 64)
    before = steady(page)["fit"]
    pick = page.locator("#simple-model input")
    pick.click()
    pick.fill("llama2-7b")
    page.get_by_role("option", name=re.compile(r"^llama2-7b")).first.click()
    expect(page.locator("#field-model_name_or_path input")).to_have_value("llama2-7b")
    changed(page, before)
    shown = steady(page)
    verdict = one_verdict(shown)
    assert "/ 24 GB" in shown["fit"]
    assert "even batch 1 does not fit" not in shown["why"] or verdict == "no", shown["why"]


def test_llama3_70b_on_80_gb_with_512_gb_of_host_ram(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect
    type_number(page, "gpu-mem", 80)
    type_number(page, "host-ram", 512)
    before = steady(page)["fit"]
    plan = tmp_path / "llama3-70b-full.yaml"
    plan.write_text("model_name_or_path: llama3-70b\nfinetuning_type: full\ngradient_checkpointing: false\n",
                    encoding="utf-8")
    page.locator("#yaml-in input[type=file]").set_input_files(str(plan))
    expect(page.locator("#field-model_name_or_path input")).to_have_value("llama3-70b")
    changed(page, before)
    shown = steady(page)
    assert one_verdict(shown) == "no" and "/ 80 GB" in shown["fit"] and "/ 512.0 GB" in shown["fit"], shown
    # full training: ZeRO-3 offload moves the states to host RAM, and says how much it needs (more than 512 GB)
    offload = [o for o in shown["options"] if "ZeRO-3" in o]
    assert offload and all("GB of host RAM" in o and o.endswith("still too big") for o in offload), shown["options"]
    fitting = [o for o in shown["options"] if o.lower().endswith(", fits")]
    assert fitting, shown["options"]
    page.locator("#fit-suggestion input").click()
    page.get_by_role("option", name=fitting[0]).click()
    page.locator("#fit-apply").click()
    changed(page, shown["fit"])  # a slow machine can take longer than steady()'s 1.5 s to start redrawing
    after = steady(page)
    assert one_verdict(after) == "fits", after
    quiet_since = time.time()
    page.wait_for_timeout(4000)  # settled: no event keeps re-triggering another (it did, twice a second, for ever)
    assert [t for t in page.joins if t >= quiet_since] == [], "the page kept sending events after Apply"
