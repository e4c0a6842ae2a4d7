"""A Chinese page shows every error the Data tab can meet in Chinese (issue 28: "English left in the Chinese page":
a file reader's error came out in English on a Chinese page).

The rule, for the whole class: each ``StudioError`` raised under studio/data (the readers, the conversion, the
label checks, the dataset loader) and by the workspace's path checks, which the Data tab calls, has its what, its
why and the fix the page shows (``page_fix``, else ``fix``) in studio/words/error_words.PAGE_ERRORS, read from the
source (tests/source_texts.py), so a new error without its Chinese fails here the day it is written (and
test_page_messages.test_the_chinese_error_words_hold_no_english checks that Chinese).
"""
from __future__ import annotations

import ast
from pathlib import Path

from source_texts import Module, calls_named
from test_page_messages import FLAG, _page_error, ctx, zh_page

ROOT = Path(__file__).resolve().parents[1]
DATA_TAB_CALLS = ("studio/data", "studio/workspace.py")  # what the Data tab's handlers call below the UI
PASSED_ON = {"what", "why", "fix", "page_fix"}  # another error's part, checked where that error is raised


def _shown_parts(call: ast.Call) -> list[ast.AST]:
    """The expressions of what the page shows of one StudioError(...): what, why, and the page's fix."""
    kw = {k.arg: k.value for k in call.keywords}
    fix = kw.get("page_fix", call.args[1] if len(call.args) > 1 else kw.get("fix"))
    parts = [call.args[0] if call.args else kw.get("what"), kw.get("why"), fix]
    return [p for p in parts if p is not None and not (isinstance(p, ast.Attribute) and p.attr in PASSED_ON)]


def data_tab_error_texts() -> dict[str, list[str]]:
    """'path:line' -> the texts of each StudioError raised where the Data tab calls ('X' for a runtime value)."""
    out: dict[str, list[str]] = {}
    for root in DATA_TAB_CALLS:
        paths = [ROOT / root] if root.endswith(".py") else sorted((ROOT / root).rglob("*.py"))
        for path in paths:
            module = Module(ast.parse(path.read_text(encoding="utf-8")))
            for func, call in calls_named(module.tree, {"StudioError"}):
                texts = [t for part in _shown_parts(call) for t in module.texts(part, func)]
                out[f"{path.relative_to(ROOT).as_posix()}:{call.lineno}"] = texts
    return out


def test_every_error_the_data_tab_can_meet_has_its_chinese() -> None:
    from studio.words.error_words import zh_text
    found = data_tab_error_texts()
    assert len(found) >= 80, len(found)  # the scan sees the readers', the conversion's and the loader's errors
    missing: dict[str, list[str]] = {}
    for where, texts in found.items():
        for text in texts:
            if text.strip(" .") == "X":
                continue  # a runtime value as a whole (a message passed on): checked where it is written
            if FLAG.search(text):
                continue  # a command's own fix (the CLI's default): test_page_messages keeps flags off the page
            if zh_text(text) is None:
                missing.setdefault(where, []).append(text)
    assert not missing, ("errors a Chinese page would show in English (add them to "
                         "studio/words/error_words.PAGE_ERRORS):\n" + "\n".join(f"  {k}: {v}" for k, v in missing.items()))


def test_a_chinese_page_shows_the_readers_errors_in_chinese(ctx, tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    """The file readers' errors, driven through the Data tab (a JSON decoder's own words, such as 'Extra data',
    stay as the decoder writes them: a runtime value, like the file's name)."""
    from test_ui_zh_page import latin_words
    from studio.ui.data_tab import inspect
    ctx.max_upload_mb = 50.0
    files = {"empty.csv": b"", "sheet.csv": b"PK\x03\x04" + b"\x00" * 64, "text.xlsx": b"text,label\nok,1\n",
             "nul.csv": b"text,label\nok,1\nb\x00d,2\n", "list.jsonl": b'{"text": "a"}\n[1, 2]\n'}
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
        shown = _page_error(inspect, str(tmp_path / name), ctx)
        assert "解决办法：" in shown and not latin_words(shown), (name, shown)

