"""Names a person chose (run, dataset, label, column, file, login) are shown as text on every page, never as HTML.

The class: every component of the studio's pages that renders Markdown or HTML, and every toast message, gets a
name planted as ``<img src=x onerror=alert(1)>``; none may send an ``<img`` tag back. The components come from
the built app itself (the main page and the shared demo page), so a panel added tomorrow is covered.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.robustness.harness import expect, record

GROUP = "names as text"
NAME = "<img src=x onerror=alert(1)>"
PLANTED = [f"Run **{NAME}** finished", f"| {NAME} | 90% |\n|---|---|\n| {NAME} | x |", f"`{NAME}` and {NAME}",
           f"``{NAME}` {NAME}", f"label {NAME}\n\n- {NAME}"]


def _tag(text: Any) -> bool:
    """Whether ``text``, rendered as the browser renders Markdown (CommonMark with HTML and tables), has an <img>."""
    from markdown_it import MarkdownIt
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(str(text))
    return "<img" in rendered.lower()


def _markup_components(app: Any) -> Iterator[Any]:
    import gradio as gr
    for block in app.blocks.values():
        if isinstance(block, (gr.Markdown, gr.HTML)):
            yield block


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    ws = tmp_path_factory.mktemp("names") / "ws"
    return {"main page": build_app(AppContext.create(ws))}


def test_every_markdown_and_html_component_renders_a_planted_name_as_text(pages: dict[str, Any]) -> None:
    problems = []
    n = 0
    for page, app in pages.items():
        for comp in _markup_components(app):
            n += 1
            for text in PLANTED:
                out = comp.postprocess(text)
                if _tag(out):
                    problems.append(f"{page}: {type(comp).__name__} {comp.elem_id or comp._id}: {str(out)[:80]}")
                    break
    assert n > 10, "the pages' Markdown/HTML components come from the built app"
    outcome = "clear" if not problems else "escaped"
    detail = f"{n} components" if not problems else "; ".join(problems[:5])
    record(GROUP, "python", "a planted name in every Markdown/HTML component", outcome, detail)
    expect(outcome, detail, "clear")


def test_names_stay_readable_as_text() -> None:
    """Escaped, a name still reads as itself: Markdown turns &lt; back into '<' for the reader, and code spans are
    left alone (Markdown shows them literally, so they were never HTML)."""
    from studio.ui.text import markdown_text
    assert markdown_text(f"`{NAME}`") == f"`{NAME}`"
    assert markdown_text(f"a {NAME} b") == "a &lt;img src=x onerror=alert(1)> b"
    assert markdown_text("``a` <b>") == "``a` &lt;b>"  # an unmatched run of backticks is literal text


@pytest.mark.parametrize("key,values", [("started", {"name": NAME}), ("queued", {"n": 1}),
                                        ("model.get_have", {"name": NAME})])
def test_toast_messages_carry_names_as_text(key: str, values: dict) -> None:
    """gr.Info / gr.Warning / gr.Error show their message as HTML: a name in one is escaped by ``msg``."""
    from studio.ui.i18n import msg
    for lang in ("en", "zh"):
        text = msg(key, lang, **values)
        outcome = "escaped" if _tag(text) else "clear"
        record(GROUP, "python", f"toast '{key}' ({lang}) with a planted name", outcome, text[:120])
        expect(outcome, text, "clear")


def test_the_runs_tab_scorecards_of_a_renamed_run(tmp_path: Path, pages: dict[str, Any]) -> None:
    """End to end below the browser: a run renamed to the planted name, its scorecards through the Runs tab's
    Markdown component."""
    import gradio as gr
    from studio.ui.runs_tab import scorecards
    run = {"name": NAME, "path": "p", "accuracy": 0.9, "held_out": 10, "model": NAME, "method": "lora",
           "dataset": f"/x/{NAME}.jsonl", "learning_rate": 1e-4, "step": 3, "final_loss": 0.1, "eval_loss": None,
           "seconds": 5}
    text = scorecards([run], ["p"], "en")
    cards = next(c for c in _markup_components(pages["main page"]) if c.elem_id == "runs-cards")
    out = cards.postprocess(text)
    outcome = "escaped" if _tag(out) else "clear"
    record(GROUP, "python", "Runs tab scorecards of a run renamed to <img …>", outcome, str(out)[:120])
    expect(outcome, str(out), "clear")
    assert isinstance(cards, gr.Markdown) and NAME.replace("<", "&lt;") in str(out)


def test_every_coded_error_toast_carries_its_values_as_text() -> None:
    """Every error of the catalog, raised with a planted name in each of its values, reaches a toast as text (the
    values of a coded error are worded when shown, so the toast itself makes its message text: ui/common.py)."""
    from string import Formatter
    from studio.errors import StudioError
    from studio.ui.common import user_error
    from studio.words.catalog import CATALOG
    from studio.words.errors import CODES
    shown = 0
    for code in CODES:
        parts = [CATALOG[c] for c in (code, f"{code}.why", f"{code}.fix") if c in CATALOG]
        names = {n for e in parts for t in (*e.cli, *e.page) for _, n, spec, _ in Formatter().parse(t)
                 if n and not spec and not n.endswith(("_flag", "_label")) and not n.startswith(("f_", "q_", "l_"))}
        try:
            exc = StudioError.of(code, **{n: NAME for n in names})
        except Exception:  # a value the words format as a number or a closed set: no name can be planted there
            continue
        for lang in ("en", "zh"):
            text = str(user_error(exc, "test", lang).message)
            assert not _tag(text), (code, lang, text[:200])
        shown += 1
    assert shown >= 200, shown
