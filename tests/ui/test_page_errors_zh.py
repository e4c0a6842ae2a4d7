"""A Chinese page shows the errors the Data tab meets in Chinese, and the command line keeps its English.

Every error raised under studio/data and by the workspace's path checks is coded (``StudioError.of``), and the
catalog's completeness (every code in both languages, on both surfaces) is tests/words/test_catalog_complete.py's; this
drives the real readers and the real Data tab handlers, so the words a user sees are the catalog's, end to end.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.errors import StudioError
from tests.ui.test_page_messages import FLAG, _page_error, ctx, zh_page  # noqa: F401  (fixtures)


def test_a_chinese_page_shows_the_readers_errors_in_chinese(ctx, tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    """The file readers' errors, driven through the Data tab (a JSON decoder's own words, such as 'Extra data',
    stay as the decoder writes them: a runtime value, like the file's name)."""
    from tests.ui.test_ui_zh_page import latin_words
    from studio.ui.data_tab import inspect
    ctx.max_upload_mb = 50.0
    files = {"empty.csv": b"", "sheet.csv": b"PK\x03\x04" + b"\x00" * 64, "text.xlsx": b"text,label\nok,1\n",
             "nul.csv": b"text,label\nok,1\nb\x00d,2\n", "list.jsonl": b'{"text": "a"}\n[1, 2]\n',
             "head.csv": b"text,label\n"}
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
        shown = _page_error(inspect, str(tmp_path / name), ctx)
        assert "解决办法：" in shown and not latin_words(shown), (name, shown)


def test_a_missing_column_on_a_chinese_page_and_on_the_command_line(ctx, tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    """The same error from the real conversion: the page names the Data tab's field in Chinese, the command line
    names the flag in English."""
    from studio.data.convert import convert_file
    from studio.ui.data_tab import convert
    src = tmp_path / "typo.csv"
    src.write_text("review,stars\nnice,5\nbad,1\n", encoding="utf-8")
    shown = _page_error(convert, ctx, str(src), "sentiment", {"text": "review", "label": "star"}, "", "", "typo")
    assert shown == ("文件“typo.csv”中没有列“star”（是不是“stars”？）。现有的列：review, stars。"
                     "解决办法：在“数据”页的“标签列”中选择其中一列。"), shown
    with pytest.raises(StudioError) as err:
        convert_file(src, tmp_path / "out.jsonl", task="sentiment", text_column="review", label_column="star")
    assert err.value.message == ("Column 'star' not found in 'typo.csv' (did you mean 'stars'?). Available columns: "
                                 "review, stars. Fix: choose the label column from that list (CLI: --label-column "
                                 "stars).")
    assert not FLAG.search(shown)


def test_a_run_ended_by_a_data_error_is_worded_by_its_code(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The engine keeps the error's code and values in status.json; the Train tab words it in the reader's
    language (here a Chinese browser), not by matching the English it wrote for the command line."""
    from tests.ui.test_page_messages import _ended_by
    from tests.ui.test_ui_zh_page import latin_words
    from studio.data.dataset import load_rows
    from studio.ui.train_tab import run_reason
    with pytest.raises(StudioError) as err:
        load_rows("no_such_data", str(tmp_path))
    status = _ended_by(err.value, tmp_path, monkeypatch)
    assert status["page_error"]["error"] == "dataset.not_found" and "python -m studio convert" in status["reason"]
    shown = run_reason(status, "zh")  # the page's language, as the handler passes it down
    assert shown.startswith("找不到数据集“no_such_data”") and "“训练数据”" in shown, shown
    assert not latin_words(shown.split("解决办法：")[1]), shown
