"""Group 'bad data files': data that used to become silently wrong rows, and malformed
LLaMA-Factory entries and rows that used to raise a library's ValueError/TypeError/AttributeError. Each case
declares its verdict ('ok' with a check of the result, or 'clear' with a fragment the message must name)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from studio.data.convert import convert_file, convert_table
from studio.data.dataset import load_rows
from studio.data.readers import read_table
from tests.robustness.harness import api, cli, expect, record

GROUP = "bad data files"


def _csv(tmp: Path, labels: list[str], name: str = "l.csv") -> Path:
    p = tmp / name
    p.write_text("text,label\n" + "".join(f"review number {i},{lab}\n" for i, lab in enumerate(labels)),
                 encoding="utf-8")
    return p


def _labels(result: Any) -> set[str]:
    return {r["output"] for r in result.rows}


def _merged(expected: set[str]) -> Callable[[Any], bool]:
    def ok(result: Any) -> bool:
        return _labels(result) == expected and any("merged" in n for n in result.notes)
    return ok


def _parquet(tmp: Path, labels: list[bytes]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = tmp / "b.parquet"
    pq.write_table(pa.table({"text": [f"review {i}" for i in range(len(labels))],
                             "label": pa.array(labels, type=pa.binary())}), p)
    return p


ZW = "\u200b"
# (name, build -> callable to run, verdict, fragment or result check)
CONVERT: list[tuple[str, Callable[[Path], Callable[[], Any]], str, Any]] = [
    ("labels differing by a zero-width space", lambda t: lambda: convert_table(read_table(_csv(
        t, ["positive", f"posi{ZW}tive", "negative", f"negative\ufeff"] * 3))), "ok",
     _merged({"positive", "negative"})),
    ("labels differing by Unicode normalisation (NFC/NFD café)", lambda t: lambda: convert_table(read_table(_csv(
        t, ["caf\u00e9", "cafe\u0301", "tea"] * 3))), "ok", _merged({"caf\u00e9", "tea"})),
    ("fullwidth label spelling (NFKC)", lambda t: lambda: convert_table(read_table(_csv(
        t, ["ＰＯＳＩＴＩＶＥ", "POSITIVE", "negative"] * 3))), "ok", lambda r: len(_labels(r)) == 2),
    ("JSON NaN label", lambda t: lambda: convert_table(read_table(_w(t, "n.json", '[{"text": "a", "label": NaN}, '
                                                                     '{"text": "b", "label": "x"}]'))), "clear", "NaN"),
    ("JSONL Infinity label", lambda t: lambda: read_table(_w(t, "i.jsonl", '{"text": "a", "label": Infinity}\n')),
     "clear", "Infinity"),
    ("column-oriented JSON object", lambda t: lambda: read_table(_w(t, "c.json", json.dumps(
        {"text": ["good", "bad", "fine"], "label": ["pos", "neg", "pos"]}))), "ok",
     lambda tb: len(tb) == 3 and tb.rows[1] == {"text": "bad", "label": "neg"}),
    ("column-oriented JSON of unequal lengths", lambda t: lambda: read_table(_w(t, "u.json", json.dumps(
        {"text": ["good", "bad", "fine"], "label": ["pos", "neg"]}))), "clear", "u.json"),
    ("Parquet binary labels (UTF-8)", lambda t: lambda: read_table(_parquet(t, [b"pos", b"neg"])), "ok",
     lambda tb: [r["label"] for r in tb.rows] == ["pos", "neg"]),
    ("Parquet binary labels (not text)", lambda t: lambda: read_table(_parquet(t, [b"\x00\xff", b"neg"])), "clear",
     "label"),
    ("duplicate headers", lambda t: lambda: read_table(_w(t, "d.csv", "text,label,text\na,pos,b\nc,neg,d\n")), "ok",
     lambda tb: any("text" in w and "twice" in w for w in tb.warnings)),
    ("label column is the text column", lambda t: lambda: convert_table(
        read_table(_csv(t, ["positive", "negative"] * 3)), "sentiment", text_column="text", label_column="text"),
     "clear", "text"),
    ("label column is a copy of the text", lambda t: lambda: convert_table(read_table(_w(
        t, "copy.csv", "review,label\n" + "".join(f"r{i},r{i}\n" for i in range(8))))), "clear", "label"),
    ("JSONL number with 5,000 digits", lambda t: lambda: read_table(_w(t, "big.jsonl", '{"text": "a", "label": '
                                                                        + "9" * 5000 + "}\n")), "clear", "big.jsonl"),
    ("JSON number with 5,000 digits", lambda t: lambda: read_table(_w(t, "big.json", '[{"text": "a", "label": '
                                                                      + "9" * 5000 + "}]")), "clear", "big.json"),
    ("second file under an existing dataset name", lambda t: _second_convert(t, False), "clear", "replace"),
    ("second file under an existing name, replace=True", lambda t: _second_convert(t, True), "ok",
     lambda rows: rows[0]["input"] == "second file"),
]


def _w(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _second_convert(tmp: Path, replace: bool) -> Callable[[], Any]:
    a = _w(tmp, "a.csv", "text,label\n" + "first file,positive\nbad one,negative\n" * 3)
    b = _w(tmp, "b.csv", "text,label\n" + "second file,positive\nworse one,negative\n" * 3)
    convert_file(a, tmp / "data" / "reviews.jsonl")

    def second() -> Any:
        convert_file(b, tmp / "data" / "reviews.jsonl", replace=replace)
        return load_rows("reviews", str(tmp / "data"))
    return second


@pytest.mark.parametrize("name, build, verdict, check", CONVERT, ids=[c[0] for c in CONVERT])
def test_silently_wrong_data(tmp_path: Path, name: str, build: Callable[[Path], Callable[[], Any]], verdict: str,
                             check: Any) -> None:
    fn = build(tmp_path)
    outcome, detail = api(fn, verdict == "clear", check if verdict == "ok" else None)
    record(GROUP, "python", name, outcome, detail)
    expect(outcome, detail, verdict, check if verdict == "clear" else "")


def test_cli_second_file_needs_replace(tmp_path: Path) -> None:
    a = _w(tmp_path, "a.csv", "text,label\n" + "first,positive\nbad,negative\n" * 3)
    out = tmp_path / "data" / "r.jsonl"
    assert cli("convert", str(a), "--out", str(out), expect_error=False)[0] == "ok"
    outcome, detail = cli("convert", str(a), "--out", str(out))
    record(GROUP, "cli", "cli: convert under an existing dataset name", outcome, detail)
    expect(outcome, detail, "clear", "--replace")
    outcome, detail = cli("convert", str(a), "--out", str(out), "--replace", expect_error=False)
    record(GROUP, "cli", "cli: convert --replace", outcome, detail)
    expect(outcome, detail, "ok")


# ------------------------------------------------ LLaMA-Factory dataset_info.json entries and rows
ROW = {"instruction": "q", "input": "", "output": "a"}
SHARE = {"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}
# (name, entry, rows, fragment)
LF: list[tuple[str, Any, list[Any], str]] = [
    ("history not a list of pairs", {"columns": {"history": "history"}}, [{**ROW, "history": [["only one"]]}],
     "history"),
    ("history a string", {"columns": {"history": "history"}}, [{**ROW, "history": "q then a"}], "history"),
    ("history of numbers", {"columns": {"history": "history"}}, [{**ROW, "history": [1, 2]}], "history"),
    ("sharegpt conversations as strings", {"formatting": "sharegpt"}, [{"conversations": ["hi", "hello"]}],
     "conversations"),
    ("sharegpt conversations a string", {"formatting": "sharegpt"}, [{"conversations": "hi there"}],
     "conversations"),
    ("sharegpt conversations an object", {"formatting": "sharegpt"}, [{"conversations": {"from": "human"}}],
     "conversations"),
    ("file_name a list", {"file_name": ["a.json", "b.json"]}, [ROW], "file_name"),
    ("file_name null", {"file_name": None}, [ROW], "file_name"),
    ("columns a list", {"columns": ["instruction", "output"]}, [ROW], "columns"),
    ("tags a string", {"formatting": "sharegpt", "tags": "from,value"}, [SHARE], "tags"),
    ("formatting a list", {"formatting": ["alpaca"]}, [ROW], "formatting"),
    ("file_name outside dataset_dir", {"file_name": "../secret.json"}, [ROW], "file_name"),
    ("file_name absolute", {"file_name": "/etc/hostname"}, [ROW], "file_name"),
]


@pytest.mark.parametrize("name, entry, rows, fragment", LF, ids=[c[0] for c in LF])
def test_malformed_llamafactory_entries(tmp_path: Path, name: str, entry: dict, rows: list, fragment: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "d.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "secret.json").write_text(json.dumps([ROW]), encoding="utf-8")
    (data / "dataset_info.json").write_text(json.dumps({"d": {"file_name": "d.json", **entry}}), encoding="utf-8")
    outcome, detail = api(lambda: load_rows("d", str(data)))
    record(GROUP, "python", "dataset_info: " + name, outcome, detail)
    expect(outcome, detail, "clear", fragment)
