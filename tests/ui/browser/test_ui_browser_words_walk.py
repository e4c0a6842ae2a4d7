"""Every visible text in the page's language, in a real browser (Debian's chromium).

One walk, in Chinese and in English, over every tab and every panel (each accordion opened) of:
- a bare studio (no data, no run), as its owner;
- a studio with logins and a finished labels run with teammates' feedback, as its owner (after converting the
  sample: with data) and as a viewer;
- the run's demo page.
The Chinese walk fails on any visible English word outside an allow-list of names (models, file types, units, code
names); the English walk fails on any Chinese character (the language switch's own "中文" aside). A .docx picked in
the Data tab is refused in the page's words, beside the upload, and the toasts' titles follow the page too.
Servers start with no --lang: each browser gets its own language (its locale), so one server serves both walks.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from studio.stages import REWARD_NAMES, STAGE_NAMES
from tests.ui.browser.conftest import chromium
from tests.ui.browser.test_browser import pytestmark  # noqa: F401  (same browser, same skip rules)
from tests.ui.browser.test_ui_browser_zh import WHITELIST

try:
    from conftest import add_corrections, make_review_rows, train_tiny_labels_run
except ImportError:  # tests/ as a package
    from tests.conftest import add_corrections, make_review_rows, train_tiny_labels_run

OWNER, VIEWER = ("alice", "owner-pw"), ("bob", "viewer-pw")
LOCALE = {"zh": "zh-CN", "en": "en-US"}
TABS = {"zh": ("1. 数据", "2. 设置", "3. 训练", "4. 评估", "5. 历次运行", "反馈"),
        "en": ("1. Data", "2. Settings", "3. Train", "4. Evaluate", "5. Runs", "Feedback")}
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
# the user's own data, which may be in any language: the preview and statistics of a file, wrong answers, a run's
# own examples, the rows worth checking, the columns picked; code blocks (the prompt the model sees, a command
# line); the language switch's names. The teammates' texts in the Feedback table are taken out by their words
# (DATA_TEXT), so its other columns (status, verdict, source) are read
USER_DATA = ("#data-preview, #data-stats, #ev-wrong, #lang-switch, pre, .table-wrap tbody, [id$=ls-table] tbody,"
             " [id^=col-] .token")
# the names a Chinese page may show: models, methods, libraries, file types, units, a setting's own values (the old
# test's list without its plain English words: text, label, data, with, none, model, settings, ...)
PLAIN = {"with", "none", "all", "top", "text", "label", "data", "true", "false", "latest", "reviews", "sample", "info",
         "settings", "runs", "default", "messages", "prompt", "model", "models", "dataset", "step", "steps", "epochs",
         "template", "checkpoint", "checkpoints", "dynamic", "batching", "workspace", "root", "logout", "api",
         "temperature", "loss", "id", "ids", "mini", "pro", "bit", "fine", "tune", "studio", "demo", "tiny"}
NAMES = (WHITELIST - PLAIN) | {
    "hub", "peft", "bitsandbytes", "ollama", "modelfile", "libaio", "nvme", "bfloat", "float", "infinity", "dpo", "ipo",
    "kto", *STAGE_NAMES, *REWARD_NAMES, "slic", "sigmoid", "hinge", "polynomial", "greedy", "beta", "adapter", "last", "smollm",
    # the run, the logins and the run's labels and instruction (the user's words: the sample reviews are English)
    "old", "alice", "bob", "positive", "negative", "train",
    "default", "none", "studio", "api", "docx"}  # setting values, the studio's prompt format, Gradio's API page
DATA_TEXT = ["Classify the sentiment of this text as positive or negative."]  # + the feedback's texts (fixture)
PATH = re.compile(r"\S*[/\\]\S*|https?://\S+")
CODE = re.compile(r"'[^'\s]{1,40}'|[A-Za-z0-9]+(?:[_.\-][A-Za-z0-9]+)+")  # 'auto', cosine_with_restarts, tiny-demo
WORD = re.compile(r"[A-Za-z]{3,}")
# Gradio's status line while an event runs (a timer's tick may start one as the page is read): not the page's words
# (and "queue: 2/3 |" while it waits in Gradio's queue, as it does on a busy machine)
GRADIO_STATUS = re.compile(r"processing\s*\|\s*[\d.]+(?:/[\d.]+)?s|queue:\s*\d+/\d*\s*\||\b[\d.]+s\b")


def foreign(text: str, lang: str) -> list[str]:
    """What in ``text`` is not in ``lang``: English words on a Chinese page, Chinese characters on an English one."""
    for phrase in DATA_TEXT:
        text = text.replace(phrase, " ")
    text = GRADIO_STATUS.sub(" ", text)
    if lang == "zh":
        text = CODE.sub(" ", PATH.sub(" ", text))
        return sorted({w for w in WORD.findall(text) if w.lower() not in NAMES})
    return sorted(set(CJK.findall(text)))


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Iterator[dict[str, Any]]:
    from ui_server import DemoServer, Server
    import shutil
    root = tmp_path_factory.mktemp("walk")
    ws = root / "ws"
    model = shutil.copytree(tiny_model_dir, root / "tiny-llama")  # a model's name, not the English word "model"
    run = train_tiny_labels_run(ws, model)
    add_corrections(ws, 4, accepted=2)  # the Feedback tab lists new and accepted rows, 👎 with corrections
    DATA_TEXT.extend(r["input"] for r in make_review_rows(4, seed=9))  # their texts (add_corrections' rows)
    logins = root / "logins.txt"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    started = [Server(root / "bare", "--no-auth"),
               Server(ws, "--auth-file", str(logins), "--data-root", str(model)),
               DemoServer(ws, run.name, "--no-auth")]
    try:
        yield dict(zip(("bare", "team", "demo"), (s.wait_ready() for s in started)))
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the whole walk (its servers are the module's too)."""
    yield from chromium()


def _open(browser: Any, url: str, lang: str, who: tuple[str, str] | None = None) -> Any:
    pg = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=LOCALE[lang]).new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url)
    if who:
        pg.locator("input").nth(0).fill(who[0])
        pg.locator("input[type=password]").fill(who[1])
        pg.locator("button[type=submit], button").filter(has_text=re.compile("log ?in|登录", re.I)).first.click()
    pg.wait_for_selector(".gradio-container", state="visible")
    pg.wait_for_timeout(700)  # the page's load events start (they re-send build-time words in its language)
    _settled(pg)
    return pg


def _settled(pg: Any) -> None:
    """No event of the page is running: Gradio's status trackers are hidden (its "processing | 2.1s" is not the
    page's words, and a component being updated still shows its build-time text)."""
    pg.wait_for_timeout(300)
    pg.wait_for_function("() => ![...document.querySelectorAll('[data-testid=status-tracker]')].some("
                         "e => e.offsetParent && !e.classList.contains('hide'))"
                         " && !/processing \\||queue: \\d+\\//.test(document.body.innerText)", timeout=60_000)


def _read(pg: Any, where: str, panels: bool = True) -> str:
    """The visible text under ``where``, every closed accordion opened first (``panels``), the user's own data left
    out."""
    scope = pg.locator(where).first
    for _ in range(3 if panels else 0):  # an accordion inside an accordion shows once its parent is open
        closed = scope.locator("button.label-wrap:not(.open):visible")
        if not closed.count():
            break
        for i in range(closed.count() - 1, -1, -1):
            closed.nth(i).click()
        _settled(pg)
    return scope.evaluate(
        "(el, q) => { const hide = [...el.querySelectorAll(q)]; const was = hide.map(t => t.style.display);"
        " hide.forEach(t => { t.style.display = 'none'; }); const s = el.innerText;"
        " hide.forEach((t, i) => { t.style.display = was[i]; }); return s; }", USER_DATA)


def _walk(pg: Any, lang: str, found: dict[str, list[str]], case: str, settings_panels: bool = True,
          skip: tuple[str, ...] = ()) -> None:
    """Every tab but ``skip``, every panel opened; the Settings tab's panels (every setting's label and help: the
    same words whoever looks, with or without data) only where ``settings_panels``, which saves a third of the walk."""
    for tab in TABS[lang]:
        if tab in skip:
            continue
        button = pg.get_by_role("tab", name=tab)
        if not button.count():
            continue
        button.click()
        _settled(pg)
        words = foreign(_read(pg, "[role=tabpanel]:visible", settings_panels or tab != TABS[lang][1]), lang)
        if words:
            found[f"{case} {tab}"] = words
    words = foreign(_read(pg, "body"), lang)  # what sits outside the tabs: header, footer, toasts
    if words:
        found[f"{case} page"] = words


def _refused_docx(pg: Any, lang: str, tmp: Path, found: dict[str, list[str]]) -> None:
    """A .docx picked for upload: refused beside the upload in the page's words (no vanishing English toast)."""
    docx = tmp / "notes.docx"
    docx.write_bytes(b"PK\x03\x04 not a table")
    pg.get_by_role("tab", name=TABS[lang][0]).click()
    pg.locator("#data-upload input[type=file]").set_input_files(str(docx))
    try:
        pg.locator("#data-info").filter(has_text="docx").wait_for(timeout=30_000)
    except Exception:  # noqa: BLE001  (what the page shows instead, a toast and an error badge, is the finding)
        pass
    info = pg.locator("#data-info").inner_text()
    toasts = " ".join(pg.locator(".toast-body, .toast-wrap").all_inner_texts())
    if "docx" not in info or foreign(info + " " + toasts, lang) or "Invalid file" in toasts:
        found["docx refusal"] = [info, toasts]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_visible_text_is_in_the_pages_language(servers: dict[str, Any], browser: Any, lang: str,
                                                      tmp_path: Path) -> None:
    from playwright.sync_api import expect
    found: dict[str, list[str]] = {}
    # before a run, without data
    pg = _open(browser, servers["bare"].url, lang)
    _walk(pg, lang, found, "bare owner")
    _refused_docx(pg, lang, tmp_path, found)
    pg.context.close()
    # after a run, with data: the owner converts the sample first
    pg = _open(browser, servers["team"].url, lang, OWNER)
    pg.get_by_role("tab", name=TABS[lang][0]).click()
    pg.locator("#sample-btn").click()
    expect(pg.locator("#data-info")).to_contain_text("427")
    pg.locator("#convert-btn").click()
    expect(pg.locator("#data-report")).to_contain_text("427")
    _walk(pg, lang, found, "owner", settings_panels=False)
    pg.context.close()
    pg = _open(browser, servers["team"].url, lang, VIEWER)
    # a viewer's Settings tab is the owner's, its controls off (tests/ui/test_ui_page_role.py): the rest is read
    _walk(pg, lang, found, "viewer", settings_panels=False, skip=(TABS[lang][1],))
    pg.context.close()
    pg = _open(browser, servers["demo"].url, lang)
    _settled(pg)
    words = foreign(_read(pg, "body"), lang)
    if words:
        found["demo page"] = words
    assert pg.locator(".table-wrap tbody tr").count() >= 1  # the examples are still there under their new headers
    pg.context.close()
    assert not found, "\n".join(f"{where}: {words}" for where, words in found.items())
