"""Group 'bad data files': what people's exports look like when they go wrong (Python API and CLI)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Callable

import pytest

from studio.data import limits
from studio.data.convert import convert_table
from studio.data.readers import read_table
from tests.robustness.harness import api, cli, expect, record

GOOD = "text,label\n" + "".join(f"review {i} is great,positive\nreview {i} is awful,negative\n" for i in range(10))


def _w(name: str, data: bytes | str) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        p = tmp / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return p
    return build


def _xlsx_rows(rows: int, cols: int = 2) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        from tests.robustness.test_limits import _xlsx
        return _xlsx(tmp / "sheet.xlsx", rows, cols)
    return build


def _folder(tmp: Path) -> Path:
    (tmp / "folder.csv").mkdir()
    return tmp / "folder.csv"


def _xlsx_good(tmp: Path) -> Path:
    import openpyxl
    wb = openpyxl.Workbook()
    for r in [("text", "label"), ("great phone", "positive"), ("awful phone", "negative")] * 3:
        wb.active.append(r)
    wb.save(tmp / "good.xlsx")
    return tmp / "good.xlsx"


def _parquet_bad(tmp: Path) -> Path:
    (tmp / "bad.parquet").write_bytes(b"PAR1" + b"\x00garbage" * 20)
    return tmp / "bad.parquet"


MIXED = (("text,label\n" + "".join(f"很好的手机 {i},positive\n" for i in range(10))).encode()
         + "d\u00e9j\u00e0 vu,negative\n".encode("cp1252"))
DEEP = '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"

# (name, builder, expect_error, convert too)
CASES: list[tuple[str, Callable[[Path], Path], bool, bool]] = [
    ("missing file", lambda t: t / "nope.csv", True, False),
    ("a folder", _folder, True, False),
    ("empty file", _w("empty.csv", ""), True, False),
    ("only whitespace", _w("ws.csv", "   \n\n  \n"), True, False),
    ("header only", _w("h.csv", "text,label\n"), True, False),
    ("PNG named .csv", _w("img.csv", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100), True, False),
    ("zip named .csv", _w("z.csv", b"PK\x03\x04" + b"\x00" * 100), True, False),
    ("old .xls", _w("old.xls", b"\xd0\xcf\x11\xe0" + b"\x00" * 100), True, False),
    ("unsupported .pdf", _w("doc.pdf", b"%PDF-1.4"), True, False),
    ("NUL after 8 KB", _w("nul.csv", GOOD.encode() * 40 + b"x\x00y,positive\n"), True, False),
    ("UTF-8 with one cp1252 row", _w("mixed.csv", MIXED), True, False),
    ("unknown encoding asked", _w("good.csv", GOOD), True, False),
    ("wrong encoding asked (utf-8 on GBK)", _w("gbk.csv", "文本,标签\n很好,好评\n很差,差评\n".encode("gbk")), True, False),
    ("GBK export (valid)", _w("gbk_ok.csv", "text,label\n很好,positive\n很差,negative\n".encode("gbk")), False, False),
    ("UTF-16 export (valid)", _w("u16.csv", "text,label\nnice,positive\nbad,negative\n".encode("utf-16")), False, False),
    ("UTF-8 BOM (valid)", _w("bom.csv", b"\xef\xbb\xbf" + GOOD.encode()), False, False),
    ("cp1252 export (valid)", _w("w.csv", "text,label\ncaf\u00e9 ok,positive\nna\u00efve bad,negative\n".encode("cp1252")),
     False, False),
    ("semicolon CSV (valid)", _w("semi.csv", GOOD.replace(",", ";")), False, False),
    ("unbalanced quote", _w("q.csv", 'text,label\n"never closed,positive\nok,negative\n'), False, False),
    ("invalid JSON", _w("bad.json", '[{"text": "a", "label": }]'), True, False),
    ("JSON scalar", _w("scalar.json", "42"), True, False),
    ("JSON list of numbers", _w("nums.json", "[1, 2, 3]"), True, False),
    ("JSON empty list", _w("empty.json", "[]"), True, False),
    ("JSON nested 50k deep", _w("deep.json", DEEP), True, False),
    ("JSONL nested 50k deep", _w("deep.jsonl", DEEP + "\n"), True, False),
    ("JSONL with an array line", _w("arr.jsonl", '{"text": "a", "label": "x"}\n[1, 2]\n'), True, False),
    ("JSONL broken line", _w("broken.jsonl", '{"text": "a"}\n{"text": \n'), True, False),
    ("xlsx zip bomb (6 MB XML in ~30 KB, 1 MB limit)", _xlsx_rows(120_000), True, False),
    ("xlsx that is text", _w("text.xlsx", GOOD), True, False),
    ("xlsx corrupt zip", _w("corrupt.xlsx", b"PK\x03\x04" + b"\x01" * 200), True, False),
    ("xlsx empty file", _w("empty.xlsx", b""), True, False),
    ("xlsx valid", _xlsx_good, False, True),
    ("parquet corrupt", _parquet_bad, True, False),
    ("all-empty label column", _w("nolabels.csv", "text,label\ngood,\nbad, \n"), True, True),
    ("500 distinct labels", _w("many.csv", "text,label\n" + "".join(f"t{i},l{i}\n" for i in range(500))), True, True),
    ("labels differing only in case", _w("case.csv", "text,label\na,Spam\nb,spam\nc,Ham\nd,ham\n"), True, True),
    ("all texts empty", _w("notext.csv", "text,label\n,positive\n ,negative\n"), True, True),
    ("only one column", _w("one.csv", "text\nhello\nworld\n"), True, True),
    ("formula cells in data (valid)", _w("f.csv", "text,label\n=1+1,positive\n@cmd,negative\n"), False, True),
]


# what a refusal must name when it is not the file's name (a column, the encoding asked for)
FRAGMENTS = {"all-empty label column": "label", "500 distinct labels": "label", "labels differing only in case": "label",
             "all texts empty": "text", "only one column": "label", "unknown encoding asked": "klingon-8",
             "missing file": "nope.csv"}


@pytest.mark.parametrize("name, build, expect_error, convert", CASES, ids=[c[0] for c in CASES])
def test_read_and_convert(tmp_path: Path, name: str, build: Callable[[Path], Path], expect_error: bool,
                          convert: bool) -> None:
    path = build(tmp_path)
    kw: dict = {"max_mb": 1} if "bomb" in name else {}
    if name == "unknown encoding asked":
        kw["encoding"] = "klingon-8"
    if "utf-8 on GBK" in name:
        kw["encoding"] = "utf-8"
    fn = (lambda: convert_table(read_table(path, **kw))) if convert else (lambda: read_table(path, **kw))
    outcome, detail = api(fn, expect_error)
    record("bad data files", "python", name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok", FRAGMENTS.get(name, path.name))


CLI_CASES = [
    ("cli: missing file", lambda t: t / "nope.csv", True),
    ("cli: binary file", _w("img.csv", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100), True),
    ("cli: mixed encodings", _w("mixed.csv", MIXED), True),
    ("cli: nested JSON", _w("deep.json", DEEP), True),
    ("cli: all-empty labels", _w("nolabels.csv", "text,label\ngood,\nbad, \n"), True),
    ("cli: 500 labels", _w("many.csv", "text,label\n" + "".join(f"t{i},l{i}\n" for i in range(500))), True),
    ("cli: xlsx bomb", _xlsx_rows(120_000), True),
    ("cli: good CSV", _w("good.csv", GOOD), False),
]


@pytest.mark.parametrize("name, build, expect_error", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_convert_cli(tmp_path: Path, name: str, build: Callable[[Path], Path], expect_error: bool) -> None:
    src = build(tmp_path)
    extra = ["--max-mb", "1"] if "bomb" in name else []
    outcome, detail = cli("convert", str(src), "--out", str(tmp_path / "out.jsonl"), *extra, expect_error=expect_error)
    if outcome == "ok" and not (tmp_path / "out.jsonl").read_text().count("\n") == 20:
        outcome, detail = "survived", "rows lost in conversion"
    record("bad data files", "cli", name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok")


def test_row_cap_applies_before_memory_runs_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_ROWS", 50)
    p = _w("long.jsonl", "".join(json.dumps({"text": f"t{i}", "label": "a"}) + "\n" for i in range(60)))(tmp_path)
    outcome, detail = api(lambda: read_table(p))
    record("bad data files", "python", "JSONL over the row cap", outcome, detail)
    assert outcome == "clear", detail


def test_zip_with_huge_declared_member(tmp_path: Path) -> None:
    p = tmp_path / "members.xlsx"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(30):
            z.writestr(f"xl/worksheets/sheet{i}.xml", b"<a/>" * 50_000)
    outcome, detail = api(lambda: read_table(p, max_mb=1))
    record("bad data files", "python", "xlsx with many inflating members", outcome, detail)
    assert outcome == "clear", detail
