"""Readers: real files of every supported kind and every way a user's file can be wrong."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from studio.data.decode import detect_encoding
from studio.data.readers import cell_str, preview, read_table, sniff_delimiter
from studio.errors import StudioError


def _error(path: Path, **kw) -> str:
    with pytest.raises(StudioError) as exc:
        read_table(path, **kw)
    return exc.value.message


# ---------------------------------------------------------------- encodings and delimiters
def test_gbk_csv_with_chinese_text(tmp_path: Path) -> None:
    p = tmp_path / "shop.csv"
    p.write_bytes("评论,标签\n这个手机很好用，推荐,1\n质量太差了,0\n".encode("gbk"))
    t = read_table(p)
    assert t.encoding == "gb18030"
    assert t.columns == ["评论", "标签"]
    assert t.rows == [{"评论": "这个手机很好用，推荐", "标签": "1"}, {"评论": "质量太差了", "标签": "0"}]


def test_utf8_bom_csv_has_clean_first_column(tmp_path: Path) -> None:
    p = tmp_path / "excel.csv"
    p.write_bytes("text,label\nnice,pos\n".encode("utf-8-sig"))
    t = read_table(p)
    assert (t.encoding, t.columns, t.rows) == ("utf-8-sig", ["text", "label"], [{"text": "nice", "label": "pos"}])


def test_cp1252_export_is_not_misread(tmp_path: Path) -> None:
    p = tmp_path / "west.csv"
    p.write_bytes("text,label\ncafé crème,1\nnaïve,0\n".encode("cp1252"))
    assert [r["text"] for r in read_table(p).rows] == ["café crème", "naïve"]


def test_explicit_wrong_encoding_names_the_fix(tmp_path: Path) -> None:
    p = tmp_path / "shop.csv"
    p.write_bytes("评论,标签\n好,1\n".encode("gbk"))
    assert _error(p, encoding="utf-8") == ("'shop.csv' cannot be read as utf-8 (bad byte at position 0). "
                                           "Fix: use encoding 'auto', or save the file as UTF-8.")
    assert read_table(p, encoding="gbk").rows == [{"评论": "好", "标签": "1"}]


def test_detect_encoding_order() -> None:
    assert detect_encoding("abc".encode()) == "utf-8"
    assert detect_encoding("\ufeffabc".encode("utf-8")) == "utf-8-sig"
    assert detect_encoding("中文评论".encode("gb18030")) == "gb18030"


def test_semicolon_csv_with_quoted_delimiters(tmp_path: Path) -> None:
    p = tmp_path / "eu.csv"
    p.write_text('text;label\n"good; really good";1\n"bad, bad";0\n', encoding="utf-8")
    t = read_table(p)
    assert t.delimiter == ";"
    assert t.rows == [{"text": "good; really good", "label": "1"}, {"text": "bad, bad", "label": "0"}]


@pytest.mark.parametrize("name", ["data.tsv", "data.csv"])
def test_tab_delimited(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    p.write_text("text\tlabel\nI like it, a lot\t1\nmeh\t0\n", encoding="utf-8")
    t = read_table(p)
    assert t.delimiter == "\t"
    assert t.rows == [{"text": "I like it, a lot", "label": "1"}, {"text": "meh", "label": "0"}]


def test_sniff_prefers_consistent_field_counts() -> None:
    assert sniff_delimiter("a,b\nx, y;z,1\nq,2\n") == ","
    assert sniff_delimiter("a|b|c\n1|2|3\n") == "|"


def test_blank_and_repeated_headers_and_ragged_rows(tmp_path: Path) -> None:
    p = tmp_path / "messy.csv"
    p.write_text("text,,text\na,b,c\nshort\nx,y,z,extra\n", encoding="utf-8")
    t = read_table(p)
    assert t.columns == ["text", "column_2", "text_2"]
    assert t.rows[1] == {"text": "short", "column_2": "", "text_2": ""}
    assert t.warnings == ["'messy.csv': the header names column 'text' twice; the later one is read as 'text_2'. "
                          "Check which one holds the data, or rename the header",
                          "1 row(s) have more fields than the header (data rows near line 4); the extra fields "
                          "were dropped. Quote text that contains the delimiter ','"]


# ---------------------------------------------------------------- other formats
def test_xlsx_numbers_come_back_as_whole_numbers(tmp_path: Path) -> None:
    import pandas as pd
    p = tmp_path / "sheet.xlsx"
    pd.DataFrame({"评论": ["好用", "太差"], "rating": [5, 1], "price": [9.5, 3.0]}).to_excel(p, index=False)
    t = read_table(p)
    assert t.columns == ["评论", "rating", "price"]
    assert [[cell_str(r[c]) for c in t.columns] for r in t.rows] == [["好用", "5", "9.5"], ["太差", "1", "3"]]


def test_xlsx_named_sheet(tmp_path: Path) -> None:
    import pandas as pd
    p = tmp_path / "book.xlsx"
    with pd.ExcelWriter(p) as w:
        pd.DataFrame({"a": [1]}).to_excel(w, sheet_name="notes", index=False)
        pd.DataFrame({"text": ["ok"], "label": ["pos"]}).to_excel(w, sheet_name="data", index=False)
    assert read_table(p, sheet="data").rows == [{"text": "ok", "label": "pos"}]
    assert _error(p, sheet="Data") == "Sheet 'Data' not found in 'book.xlsx'. Fix: use one of: notes, data."


def test_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": ["a", "b"], "label": [1, 0]}), p)
    t = read_table(p)
    assert (t.format, t.columns, t.rows) == ("parquet", ["text", "label"], [{"text": "a", "label": 1},
                                                                             {"text": "b", "label": 0}])


def test_jsonl_json_and_wrapped_json(tmp_path: Path) -> None:
    rows = [{"text": "好", "label": "pos"}, {"text": "bad", "label": "neg", "extra": 1}]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n")
    (tmp_path / "b.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "data": rows}), encoding="utf-8")
    (tmp_path / "d.json").write_text((tmp_path / "a.jsonl").read_text())  # JSONL saved as .json
    for name in ("a.jsonl", "b.json", "c.json", "d.json"):
        t = read_table(tmp_path / name)
        assert t.columns == ["text", "label", "extra"], name
        assert t.rows == rows, name


def test_txt_one_example_per_line_and_tab_table(tmp_path: Path) -> None:
    p = tmp_path / "lines.txt"
    p.write_text("I love it, really\n\n  bad, bad  \n", encoding="utf-8")
    assert read_table(p).rows == [{"text": "I love it, really"}, {"text": "bad, bad"}]
    q = tmp_path / "table.txt"
    q.write_text("text\tlabel\ngood\t1\n", encoding="utf-8")
    assert read_table(q).rows == [{"text": "good", "label": "1"}]


def test_preview_shortens_long_cells(tmp_path: Path) -> None:
    p = tmp_path / "p.csv"
    p.write_text("text,label\n" + "x" * 50 + ",1\nshort,0\n", encoding="utf-8")
    headers, grid = preview(read_table(p), n=1, max_chars=10)
    assert headers == ["text", "label"]
    assert grid == [["x" * 9 + "…", "1"]]


# ---------------------------------------------------------------- the bad input matrix
def test_empty_file(tmp_path: Path) -> None:
    for name in ("e.csv", "e.jsonl", "e.xlsx"):
        (tmp_path / name).write_bytes(b"" if name != "e.jsonl" else b"\n  \n")
        assert _error(tmp_path / name) == f"'{name}' is empty. Fix: export the data again; the file has no content."


def test_header_only(tmp_path: Path) -> None:
    import pandas as pd
    (tmp_path / "h.csv").write_text("text,label\n", encoding="utf-8")
    assert _error(tmp_path / "h.csv") == ("'h.csv' has a header row (text, label) but no data rows. "
                                          "Fix: export the sheet again including its rows.")
    pd.DataFrame({"text": [], "label": []}).to_excel(tmp_path / "h.xlsx", index=False)
    assert _error(tmp_path / "h.xlsx") == ("'h.xlsx' has a header row (text, label) but no data rows. "
                                           "Fix: add the data rows under the header.")


def test_malformed_json_line_reports_its_number(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"text": "a", "label": 1}\n\n{"text": "b", "label": }\n', encoding="utf-8")
    assert _error(p) == ("Line 3 of 'bad.jsonl' is not valid JSON (Expecting value, column 24). "
                         "Fix: fix or delete line 3; each line must be one JSON object.")
    q = tmp_path / "list.jsonl"
    q.write_text('{"text": "a"}\n[1, 2]\n', encoding="utf-8")
    assert _error(q) == ("Line 2 of 'list.jsonl' is a JSON list, not an object. "
                         'Fix: each line must look like {"text": "...", "label": "..."}.')


def test_malformed_json_file_reports_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text('[\n  {"text": "a"},\n  {"text": "b",}\n]', encoding="utf-8")
    assert _error(p) == ("'bad.json' is not valid JSON (Expecting property name enclosed in double quotes at "
                         "line 3, column 16). Fix: fix the file near line 3.")
    (tmp_path / "num.json").write_text("[1, 2]", encoding="utf-8")
    assert _error(tmp_path / "num.json") == ("'num.json' must hold a list of JSON objects (one per row). "
                                             'Fix: shape it like [{"text": "...", "label": "..."}, ...].')


def test_binary_files_renamed_csv(tmp_path: Path) -> None:
    import pandas as pd
    pd.DataFrame({"text": ["a"]}).to_excel(tmp_path / "real.xlsx", index=False)
    (tmp_path / "sheet.csv").write_bytes((tmp_path / "real.xlsx").read_bytes())
    assert _error(tmp_path / "sheet.csv") == ("'sheet.csv' is not a text file: it looks like an Excel/zip file. "
                                              "Fix: rename it to 'sheet.xlsx', or save the sheet as 'CSV UTF-8' "
                                              "in Excel.")
    (tmp_path / "photo.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert _error(tmp_path / "photo.csv") == ("'photo.csv' is not a text file: it looks like a binary file. "
                                              "Fix: export the data as CSV (UTF-8), Excel (.xlsx) or JSONL.")
    (tmp_path / "text.xlsx").write_text("text,label\na,1\n", encoding="utf-8")
    assert _error(tmp_path / "text.xlsx") == ("'text.xlsx' is not an Excel file: it looks like text (CSV?). "
                                              "Fix: rename it to 'text.csv'.")


def test_size_limit_configurable(tmp_path: Path) -> None:
    p = tmp_path / "big.csv"
    p.write_text("text,label\n" + "word,1\n" * 30000, encoding="utf-8")  # ~0.2 MB
    assert _error(p, max_mb=0.1) == ("'big.csv' is 0.2 MB, over the 0.1 MB limit. Fix: split the file into "
                                     "smaller parts, or raise the limit (CLI: --max-mb 1).")
    assert len(read_table(p, max_mb=1)) == 30000


def test_size_limit_default_is_50_mb(tmp_path: Path) -> None:
    p = tmp_path / "huge.csv"
    with open(p, "wb") as fh:  # sparse: 51 MB on paper, nothing written, instant
        fh.truncate(51 * 1024 * 1024)
    assert os.path.getsize(p) == 51 * 1024 * 1024
    assert _error(p) == ("'huge.csv' is 51.0 MB, over the 50 MB limit. Fix: split the file into smaller parts, "
                         "or raise the limit (CLI: --max-mb 52).")


def test_missing_unsupported_and_old_excel(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope.csv") == (f"File '{tmp_path / 'nope.csv'}' does not exist. "
                                             "Fix: check the path and the file name.")
    (tmp_path / "d.docx").write_bytes(b"PK")
    assert _error(tmp_path / "d.docx") == ("Cannot read 'd.docx': unsupported file type '.docx'. Fix: use one of: "
                                           ".csv, .tsv, .txt, .json, .jsonl, .parquet, .xlsx, .xls.")
    (tmp_path / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0")  # an OLE header and nothing else
    assert _error(tmp_path / "old.xls") == ("'old.xls' is not a readable Excel file (CalamineError). "
                                            "Fix: open it in Excel and save it again as .xlsx.")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet at all")
    assert _error(tmp_path / "broken.parquet").startswith("'broken.parquet' is not a readable Parquet file (")


# ---------------------------------------------------------------- old Excel (.xls)
def _xls(path: Path, rows: list[tuple], sheet: str = "data", book=None) -> Path:  # type: ignore[no-untyped-def]
    """A real BIFF8 .xls written by xlwt (pinned in requirements.txt for this; pandas no longer writes .xls)."""
    import xlwt
    wb = book or xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet(sheet)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            ws.write(r, c, value)
    wb.save(str(path))
    return path


def test_xls_is_read_like_xlsx(tmp_path: Path) -> None:
    p = _xls(tmp_path / "old.xls", [("评论", "rating", "price"), ("好用", 5, 9.5), (), ("太差", 1, 3.0)])
    t = read_table(p)
    assert (t.format, t.columns) == ("xls", ["评论", "rating", "price"])
    assert [[cell_str(r[c]) for c in t.columns] for r in t.rows] == [["好用", "5", "9.5"], ["太差", "1", "3"]]


def test_xls_named_sheet_and_a_renamed_workbook(tmp_path: Path) -> None:
    import xlwt
    book = xlwt.Workbook(encoding="utf-8")
    _xls(tmp_path / "book.xls", [("a",), (1,)], sheet="notes", book=book)
    _xls(tmp_path / "book.xls", [("text", "label"), ("ok", "pos")], sheet="data", book=book)
    assert read_table(tmp_path / "book.xls", sheet="data").rows == [{"text": "ok", "label": "pos"}]
    assert _error(tmp_path / "book.xls", sheet="Data") == ("Sheet 'Data' not found in 'book.xls'. "
                                                           "Fix: use one of: notes, data.")
    # the suffix lies both ways: the first bytes choose the reader
    (tmp_path / "really_xls.xlsx").write_bytes((tmp_path / "book.xls").read_bytes())
    assert read_table(tmp_path / "really_xls.xlsx", sheet="data").format == "xls"
    import pandas as pd
    pd.DataFrame({"text": ["ok"], "label": ["pos"]}).to_excel(tmp_path / "new.xlsx", index=False)
    (tmp_path / "really_xlsx.xls").write_bytes((tmp_path / "new.xlsx").read_bytes())
    t = read_table(tmp_path / "really_xlsx.xls")
    assert (t.format, t.rows) == ("xlsx", [{"text": "ok", "label": "pos"}])


def test_xls_over_the_limits_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.data import limits
    big = _xls(tmp_path / "big.xls", [("text", "label")] + [(f"review number {i}", "pos") for i in range(3000)])
    assert big.stat().st_size > 0.05 * 1024 * 1024
    assert _error(big, max_mb=0.05).startswith("'big.xls' is 0.")
    assert "over the 0.05 MB limit" in _error(big, max_mb=0.05)
    monkeypatch.setattr(limits, "MAX_ROWS", 100)
    assert _error(big) == ("'big.xls' has more than 100 rows. Fix: split the file into parts of at most 100 rows "
                           "and 1,000 columns (keep only the columns you need).")
    monkeypatch.setattr(limits, "MAX_COLUMNS", 10)
    wide = _xls(tmp_path / "wide.xls", [tuple(f"c{i}" for i in range(11)), tuple("x" * 11)])
    assert _error(wide).startswith("'wide.xls' has 11 columns, over the limit of 10.")


def test_xls_bytes_named_csv_say_rename(tmp_path: Path) -> None:
    xls = _xls(tmp_path / "a.xls", [("text",), ("ok",)])
    (tmp_path / "a.csv").write_bytes(xls.read_bytes())
    assert _error(tmp_path / "a.csv") == ("'a.csv' is not a text file: it looks like an old Excel (.xls) file. "
                                          "Fix: rename it to 'a.xls'.")


# ---------------------------------------------------------------- CSV corners the pandas parser meets
def test_unclosed_quote_reads_quotes_as_text_and_says_so(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text('text,label\n"never closed,positive\nok,negative\n', encoding="utf-8")
    t = read_table(p)
    assert t.rows == [{"text": '"never closed', "label": "positive"}, {"text": "ok", "label": "negative"}]
    assert t.warnings == ["'q.csv': a quote (\") is never closed (the one near line 2), so quotes were read as "
                          "ordinary characters; check that row"]


def test_leading_blank_lines_and_delimiter_only_rows(tmp_path: Path) -> None:
    p = tmp_path / "gaps.csv"
    p.write_text("  \n\n,,\ntext,label,note\n\na,1,\n , ,\nb,0,x\n", encoding="utf-8")
    t = read_table(p)
    assert t.columns == ["text", "label", "note"]
    assert t.rows == [{"text": "a", "label": "1", "note": ""}, {"text": "b", "label": "0", "note": "x"}]


def test_extra_fields_that_are_blank_are_no_warning(tmp_path: Path) -> None:
    p = tmp_path / "trail.csv"
    p.write_text("text,label\na,1,\nb,0, \nc,1,extra\n", encoding="utf-8")
    t = read_table(p)
    assert [r["text"] for r in t.rows] == ["a", "b", "c"]
    assert t.warnings == ["1 row(s) have more fields than the header (data rows near line 4); the extra fields "
                          "were dropped. Quote text that contains the delimiter ','"]
