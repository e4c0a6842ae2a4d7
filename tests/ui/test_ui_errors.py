"""Errors on the page: next to the control they are about until that control changes, and no toast outlives its tab.

A toast that never faded still floated over the Evaluate tab 20 minutes after the Data tab raised it; a toast
that faded left a bare red "Error" pill where the .docx explanation had been; a spreadsheet of texts alone was
not flagged before Convert, and Convert's fix ("pick it under Label column") named a column that did not exist.
"""
from __future__ import annotations

import ast
import zipfile
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from studio.errors import StudioError
from studio.ui import app, common
from studio.app.context import AppContext

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, AppContext]:
    ctx = AppContext.create(tmp_path_factory.mktemp("errors") / "ws")
    return app.build_app(ctx), ctx


def _fns(blocks: Any) -> dict[str, Any]:
    return {fn.api_name: fn.fn for fn in blocks.fns.values() if fn.api_name}


def test_every_toast_fades_and_is_titled_in_the_pages_language() -> None:
    for lang, title in (("en", "Error"), ("zh", "错误")):
        for exc in (StudioError.from_dict({"error": "x", "what": "what", "fix": "fix"}), RuntimeError("bug")):
            toast = common.user_error(exc, "h", lang)
            assert toast.duration is not None and 0 < toast.duration <= 30, toast.duration
            assert toast.title == title


def test_no_toast_in_the_page_code_stays_for_ever() -> None:
    """Every gr.Error / gr.Warning / gr.Info written under studio/ui has a finite duration (the default is one)."""
    forever = []
    for path in (ROOT / "studio" / "ui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("Error", "Warning", "Info"):
                for kw in node.keywords:
                    if kw.arg == "duration" and isinstance(kw.value, ast.Constant) and kw.value.value is None:
                        forever.append(f"{path.name}:{node.lineno}")
    assert not forever, forever


def test_picking_another_tab_closes_the_toasts(built: tuple[Any, AppContext]) -> None:
    blocks, _ = built
    cfg = blocks.get_config_file()
    tabs = {c["id"] for c in cfg["components"] if c["type"] == "tabs"}
    closing = [d for d in cfg["dependencies"] if any(t in tabs and e == "select" for t, e in d["targets"])
               and 'toast-close' in (d.get("js") or "")]
    assert tabs and closing, "the page's gr.Tabs needs a select listener running common.CLOSE_TOASTS_JS"


def test_an_unreadable_upload_is_explained_beside_the_upload_and_stays(built: tuple[Any, AppContext],
                                                                      tmp_path: Path) -> None:
    blocks, ctx = built
    docx = tmp_path / "notes.docx"
    with zipfile.ZipFile(docx, "w") as z:
        z.writestr("word/document.xml", "<w:document/>")
    out = _fns(blocks)["upload_data"](str(docx))  # no exception: no toast and no "Error" pill
    info, rest = out[0], out[1:]
    assert info.startswith("❌ ") and "docx" in info.lower() and len(info) > 40, info
    assert all(isinstance(v, dict) and v.get("__type__") == "update" and len(v) == 1 for v in rest), rest


def test_a_text_only_spreadsheet_is_flagged_before_convert_with_a_fix_that_can_be_followed(
        built: tuple[Any, AppContext], tmp_path: Path) -> None:
    blocks, ctx = built
    sheet = tmp_path / "tweets.csv"
    sheet.write_text("text\nthe flight was late again\ngreat crew, thanks!\nlost my bag\n", encoding="utf-8")
    fns = _fns(blocks)
    loaded = fns["upload_data"](str(sheet))
    check = loaded[-1]
    assert check.startswith("⚠️") and "add a column with each row's label" in check, check
    assert "Label column" not in check
    report, dataset = fns["convert"](str(sheet), "sentiment", *([None] * 6), "", "", "tweets")
    assert report.startswith("❌") and "add a column with each row's label" in report, report
    assert "pick it under" not in report and isinstance(dataset, dict)  # the dataset box is left as it was


def test_every_new_file_clears_the_previous_convert_report(built: tuple[Any, AppContext]) -> None:
    """After a new upload (or the sample, or a path), the Data tab's report must not describe the previous file."""
    blocks, _ = built
    cfg = blocks.get_config_file()
    report = next(c["id"] for c in cfg["components"] if c.get("props", {}).get("elem_id") == "data-report")
    fns = blocks.fns
    for name in ("upload_data", "sample_data", "open_data"):
        fn = next(f for f in fns.values() if f.api_name == name)
        chain = []
        while fn.trigger_after is not None:
            fn = fns[fn.trigger_after]
            chain.append(fn)
        cleared = [f for f in chain if report in [o._id for o in f.outputs]]
        assert cleared, f"{name}: the previous report stays on screen"
        said = dict(zip([o._id for o in cleared[0].outputs], cleared[0].fn()))
        assert said[report] == ""
