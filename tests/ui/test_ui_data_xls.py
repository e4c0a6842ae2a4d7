"""The Data tab takes an old Excel .xls file to a dataset (.xls is not refused)."""
from __future__ import annotations

import json
from pathlib import Path

from studio.data.readers import SUPPORTED_SUFFIXES
from studio.app.context import AppContext
from studio.ui.data_tab import convert, inspect


def test_the_data_tab_converts_an_old_excel_file(tmp_path: Path) -> None:
    import xlwt  # pinned in requirements.txt for tests: pandas no longer writes .xls
    book = xlwt.Workbook(encoding="utf-8")
    sheet = book.add_sheet("reviews")
    rows = [("review", "label")] + [(f"great product {i}", "good") for i in range(10)] + \
        [(f"broke in a day {i}", "bad") for i in range(10)]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            sheet.write(r, c, value)
    src = tmp_path / "old.xls"
    book.save(str(src))
    assert ".xls" in SUPPORTED_SUFFIXES  # the upload box offers it (file_types=SUPPORTED_SUFFIXES)

    ctx = AppContext.create(tmp_path / "ws")
    shown = inspect(str(src), ctx)
    assert "20" in shown[0] and shown[3] == "sentiment"  # rows counted, the task guessed
    report, path = convert(ctx, str(src), "sentiment", {"text": "review", "label": "label"}, "", "", "old")
    written = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    assert len(written) == 20 and {r["output"] for r in written} == {"good", "bad"}, report  # the file's own label words


def test_converting_the_same_file_again_replaces_only_its_own_dataset(tmp_path: Path) -> None:
    """On the page: fixing a mapping and converting the same file again works; another file
    under a name already taken is refused with the fix in the page's words."""
    import pytest
    from studio.errors import StudioError
    from studio.app.context import AppContext
    from studio.ui.data_tab import convert
    ctx = AppContext.create(tmp_path / "ws")
    first, other = tmp_path / "a" / "reviews.csv", tmp_path / "b" / "other.csv"
    for f in (first, other):
        f.parent.mkdir()
        f.write_text("text,label\ngreat,positive\nawful,negative\nfine,positive\nbad,negative\n", encoding="utf-8")
    cols = {"text": "text", "label": "label"}
    convert(ctx, str(first), "sentiment", cols, "", "", "mine")
    convert(ctx, str(first), "sentiment", cols, "positive=good, negative=bad", "", "mine")  # the same file again: replaced
    with pytest.raises(StudioError) as err:
        convert(ctx, str(other), "sentiment", cols, "", "", "mine")
    assert "type another name under Dataset name on the Data tab" in err.value.page_message  # what the page shows
