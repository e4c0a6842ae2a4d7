"""python -m studio convert: what it prints, what it writes, and how it fails."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from studio.cli import convert as cli_convert
from studio.data.dataset import load_rows
from studio.errors import StudioError
from tests.helpers import run_cli


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_convert.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_convert_gbk_csv_end_to_end(tmp_path: Path) -> None:
    src = tmp_path / "导出.csv"
    src.write_bytes("编号,评论,标签\n1,这个手机很好用,1\n2,质量太差了,0\n3,物流很快,1\n".encode("gbk"))
    out = tmp_path / "data" / "reviews.jsonl"
    res = run_cli("convert", str(src), "--out", str(out), timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Read 3 rows, 3 columns from 导出.csv (encoding gb18030, delimiter ',')" in res.stdout
    assert "Task: sentiment; columns: text='评论', label='标签'" in res.stdout
    assert "Label map (edit with --label-map): 0=消极,1=积极" in res.stdout
    assert f"Wrote 3 rows to {out}; registered as 'reviews' in {out.parent / 'dataset_info.json'}" in res.stdout
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["input"], r["output"]) for r in rows] == [("这个手机很好用", "积极"), ("质量太差了", "消极"),
                                                         ("物流很快", "积极")]
    assert load_rows("reviews", str(out.parent)) == rows


def test_convert_xlsx_with_options_in_process(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import pandas as pd
    src = tmp_path / "sheet.xlsx"
    pd.DataFrame({"Comment": ["great", "bad", "ok"], "Stars": [5, 1, 3]}).to_excel(src, index=False)
    info_dir = tmp_path / "registry"
    out = info_dir / "out.jsonl"  # dataset_info.json names files inside its folder only
    assert cli_convert.main(_args(str(src), "--out", str(out), "--text-column", "comment", "--label-column",
                                  "Stars", "--label-map", "5=good,1=bad,3=meh", "--dataset-name", "stars",
                                  "--dataset-dir", str(info_dir), "--cutoff-len", "8")) == 0
    printed = capsys.readouterr().out
    assert "Label map (edit with --label-map): 5=good,1=bad,3=meh" in printed
    assert "Instruction: Classify this text into one of these categories: good, bad or meh." in printed
    assert "[warning] 3 rows are longer than cutoff_len=8 estimated tokens and will be truncated" in printed
    assert [json.loads(x)["output"] for x in out.read_text().splitlines()] == ["good", "bad", "meh"]
    info = json.loads((info_dir / "dataset_info.json").read_text())
    assert info["stars"]["file_name"] == "out.jsonl"


def test_failed_conversion_leaves_existing_output_alone(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("text,label\na,1\nb,2\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text('{"instruction": "old"}\n', encoding="utf-8")
    with pytest.raises(StudioError) as exc:
        cli_convert.main(_args(str(src), "--out", str(out), "--label-map", "1=positive", "--replace"))
    assert exc.value.message == ("Label values not in the label map: '2' (1 row). "
                                 "Fix: add them to the label map (e.g. 2=...) or remove those rows.")
    assert out.read_text(encoding="utf-8") == '{"instruction": "old"}\n'
    assert not (tmp_path / "dataset_info.json").exists()


def test_output_path_checks(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "a", "label": "pos"}\n', encoding="utf-8")
    with pytest.raises(StudioError) as exc:
        cli_convert.main(_args(str(src), "--out", str(src)))
    assert exc.value.message == "The output file is the input file. Fix: choose another --out path."
    with pytest.raises(StudioError) as exc:
        cli_convert.main(_args(str(src), "--out", str(tmp_path / "x.csv")))
    assert exc.value.message == f"Output 'x.csv' must end in .jsonl. Fix: use --out {tmp_path / 'x.jsonl'}."


def test_bad_file_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    src = tmp_path / "report.csv"
    src.write_bytes(b"\x00\x01\x02binary\x00" * 100)
    res = run_cli("convert", str(src), "--out", str(tmp_path / "o.jsonl"), timeout=120)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip() == ("Error: 'report.csv' is not a text file: it looks like a binary file. "
                                  "Fix: export the data as CSV (UTF-8), Excel (.xlsx) or JSONL.")
    assert not (tmp_path / "o.jsonl").exists()


def test_convert_reads_two_text_columns_as_one_and_keeps_the_teams_words() -> None:
    """--text-column given twice: a headline and its lead, one per line; 正面/负面 stay as written."""
    args = _args("news.csv", "--out", "news.jsonl", "--text-column", "标题", "--text-column", "导语")
    assert args.text_column == ["标题", "导语"]
    assert _args("news.csv", "--out", "n.jsonl").text_column is None
