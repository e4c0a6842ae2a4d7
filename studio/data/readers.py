"""Read what non-programmers actually have: CSV/TSV exports, Excel sheets (.xlsx and old .xls), JSON, JSONL,
Parquet, TXT.

Everything comes back as one ``Table`` (column names + row dicts) so conversion never cares where the data came
from. Our own checks stand in front of the libraries: the size and shape limits (``limits``), the encoding
detection, binary sniff and mixed-encoding refusal (``decode``). Then the libraries parse: pandas for CSV/TSV
and Excel (openpyxl for .xlsx, calamine for .xls), pyarrow for Parquet, the json module for JSON (why not
pandas there: see ``_read_jsonl``). Every way a file can be wrong raises a ``StudioError`` naming the file, the
problem and the fix.
"""
from __future__ import annotations

import csv
import io
import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..words.said import Said
from . import limits
from .decode import DEFAULT_MAX_MB, OLE_MAGIC, check_size, is_binary, read_text
from .limits import check_shape, check_unpacked, too_many_rows

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".jsonl", ".parquet", ".xlsx", ".xls")
_DELIMITERS = (",", "\t", ";", "|")
_SNIFF_LINES = 50

__all__ = ["DEFAULT_MAX_MB", "SUPPORTED_SUFFIXES", "Table", "cell_str", "preview", "read_table", "sniff_delimiter"]


@dataclass
class Table:
    """A file's rows as dicts keyed by column name; values are str for text formats, native otherwise."""

    columns: list[str]
    rows: list[dict[str, Any]]
    source: str = ""
    format: str = ""
    encoding: str | None = None
    delimiter: str | None = None
    warnings: list[Said] = field(default_factory=list)  # said by code: the CLI's English, the page's words

    def __len__(self) -> int:
        return len(self.rows)

    def values(self, column: str) -> list[Any]:
        return [r.get(column) for r in self.rows]


def cell_str(value: Any) -> str:
    """A cell as text: None -> '', 1.0 -> '1' (Excel stores whole numbers as floats), else str()."""
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:  # NaN from pandas/parquet = an empty cell
            return ""
        if value.is_integer():
            return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def sniff_delimiter(text: str, default: str = ",") -> str:
    """The delimiter that splits the first lines into the same number (>1) of fields most often.

    Our own because csv.Sniffer (what pandas' sep=None uses) guesses wrong on short files and on text full
    of commas, so count instead: quoted fields are respected because each candidate is parsed by csv.
    """
    sample = "\n".join(text.splitlines()[:_SNIFF_LINES])
    best, best_score = default, 0.0
    for delim in _DELIMITERS:
        try:
            widths = [len(r) for r in csv.reader(io.StringIO(sample), delimiter=delim) if r]
        except csv.Error:
            continue
        if not widths or widths[0] < 2:
            continue
        consistent = sum(1 for w in widths if w == widths[0]) / len(widths)
        score = consistent * 100 + min(widths[0], 50) / 100  # consistency first, then more columns
        if score > best_score:
            best, best_score = delim, score
    return best


def _unique_columns(header: list[Any], notes: list[dict[str, Any]] | None = None) -> list[str]:
    """Trim names, name blanks 'column_N', and make repeats unique ('a', 'a_2') so no data is lost; each
    repeat is reported in ``notes`` (which of two 'text' columns is the text is the user's call, not ours)."""
    seen: Counter[str] = Counter()
    out = []
    for i, name in enumerate(header, 1):
        name = cell_str(name).strip() or f"column_{i}"
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    if notes is not None:
        for name, n in seen.items():
            if n > 1:
                notes.append({"code": "note.column_twice" if n == 2 else "note.column_repeated", "name": name, "n": n,
                              "again": [f"{name}_{k}" for k in range(2, n + 1)]})
    return out


def _frame_table(path: Path, frame: Any, fmt: str, header_only: str, **meta: Any) -> Table:
    """A header-less frame (a CSV's records or a sheet's rows, read with at most MAX_ROWS + 2 rows) -> Table:
    the caps, blank rows dropped, the first row the header, empty cells None (sheets) or '' (text)."""
    if len(frame) > limits.MAX_ROWS + 1:  # rows holding only delimiters count here too
        raise too_many_rows(path)
    check_shape(path, 0, frame.shape[1])
    text = frame.map(cell_str) if fmt != "csv" else frame
    frame = frame[text.apply(lambda col: col.str.strip().ne("")).any(axis=1)] if len(frame) else frame
    if fmt != "csv":
        frame = frame.astype(object).where(frame.notna(), None)
    records = frame.values.tolist()
    if not records:
        return Table([], [], str(path), fmt, **meta)
    notes: list[dict[str, Any]] = []
    columns = _unique_columns(records[0], notes)
    if len(records) == 1:
        raise StudioError.of(header_only, file=path.name, columns=columns)
    return Table(columns, [dict(zip(columns, r)) for r in records[1:]], str(path), fmt, **meta,
                 warnings=[_noted(note, path) for note in notes])


def _noted(note: dict[str, Any], path: Path) -> Said:
    """A note of the reading (its code and values) about the file at ``path``, said by code."""
    values = {k: v for k, v in note.items() if k != "code"}
    return Said.of(note["code"], **values, file=path.name)


def _parse_delimited(text: str, delim: str, quoting: int = csv.QUOTE_MINIMAL
                     ) -> tuple[Any, list[int], list[dict[str, Any]]]:
    """(frame, lines cut short, notes) by pandas' C parser; when it stops on a row longer than the first,
    pandas' python parser reads on and names each line it cut (the C one can only fail); a quote that never
    closes is read as an ordinary character, with a note."""
    import pandas as pd  # start-up: pandas, 0.5 s at import; only reading a table needs it
    skip = 0
    for line in text.splitlines():  # whitespace-only lines before the header would set a width of 1
        if line.strip():
            break
        skip += 1
    kw: dict[str, Any] = dict(sep=delim, header=None, dtype=str, keep_default_na=False, quoting=quoting,
                              skiprows=skip, nrows=limits.MAX_ROWS + 2)
    try:
        return pd.read_csv(io.StringIO(text), engine="c", **kw), [], []
    except pd.errors.ParserError as exc:
        if "EOF inside string" in str(exc) and quoting != csv.QUOTE_NONE:
            return _unclosed_quote(text, delim, str(exc), skip)
    width = pd.read_csv(io.StringIO(text), engine="c", **{**kw, "nrows": 1}).shape[1]

    def cut(fields: list[str]) -> list[str]:  # returned longer, pandas cuts it and warns naming the line
        return fields if any(f.strip() for f in fields[width:]) else fields[:width]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        try:
            frame = pd.read_csv(io.StringIO(text), engine="python", on_bad_lines=cut, **kw)
        except pd.errors.ParserError as exc:
            if "unexpected end of data" not in str(exc) or quoting == csv.QUOTE_NONE:
                raise
            return _unclosed_quote(text, delim, "", skip)
    lines = [int(m.group(1)) for w in caught if (m := re.search(r"in line (\d+)", str(w.message)))]
    return frame.fillna(""), lines, []


def _unclosed_quote(text: str, delim: str, error: str, skip: int) -> tuple[Any, list[int], list[dict[str, Any]]]:
    """A quote that never closes would swallow the rest of the file into one cell: read quotes as text."""
    frame, lines, notes = _parse_delimited(text, delim, csv.QUOTE_NONE)
    m = re.search(r"starting at row (\d+)", error)
    note = {"code": "note.unclosed_quote_near", "line": int(m.group(1)) + 1 + skip} if m else \
        {"code": "note.unclosed_quote"}
    return frame, lines, notes + [note]


def _delimited_table(path: Path, text: str, enc: str, delim: str) -> Table:
    import pandas as pd  # start-up: pandas, 0.5 s at import; only reading a table needs it
    try:
        frame, long_lines, notes = _parse_delimited(text, delim)
    except pd.errors.ParserError as exc:
        raise StudioError.of("data.bad_csv", file=path.name, detail=str(exc)) from None
    table = _frame_table(path, frame, "csv", "data.header_only", encoding=enc,
                         delimiter=delim)
    if not table.columns:
        raise StudioError.of("data.no_rows", file=path.name)
    if long_lines:
        table.warnings.append(Said.of("note.long_rows", n=len(long_lines), lines=long_lines[:5], delim=delim))
    table.warnings += [_noted(note, path) for note in notes]
    return table


def _read_delimited(path: Path, encoding: str, max_mb: float, delimiter: str | None) -> Table:
    text, enc = read_text(path, encoding, max_mb)
    delim = delimiter or sniff_delimiter(text, "\t" if path.suffix.lower() == ".tsv" else ",")
    return _delimited_table(path, text, enc, delim)


def _read_txt(path: Path, encoding: str, max_mb: float) -> Table:
    """One example per non-empty line in a 'text' column; a .txt where every line has the same
    number of tabs is a tab-separated table (commas are not trusted: sentences contain them)."""
    text, enc = read_text(path, encoding, max_mb)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    tabs = {ln.count("\t") for ln in lines}
    if len(lines) >= 2 and len(tabs) == 1 and tabs != {0}:
        return _delimited_table(path, text, enc, "\t")
    return Table(["text"], [{"text": ln.strip()} for ln in lines], str(path), "txt", enc)


def _records_table(path: Path, records: list[Any], fmt: str, enc: str | None) -> Table:
    columns: dict[str, None] = {}
    for r in records:
        columns.update(dict.fromkeys(r))
    if not records:
        raise StudioError.of("data.empty_list", file=path.name)
    check_shape(path, len(records), len(columns))
    return Table([str(c) for c in columns], [{str(k): v for k, v in r.items()} for r in records], str(path), fmt, enc)


def _too_deep(path: Path, line: int | None = None) -> StudioError:
    if line is None:
        return StudioError.of("data.too_deep", file=path.name)
    return StudioError.of("data.too_deep_line", file=path.name, line=line)


class _NonFinite(Exception):
    """JSON's non-standard NaN / Infinity: Python's json reads them as floats that would become label classes."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant)


def _non_finite(path: Path, name: str, line: int | None = None) -> StudioError:
    if line is None:
        return StudioError.of("data.non_finite", file=path.name, value=name)
    return StudioError.of("data.non_finite_line", file=path.name, value=name, line=line)


def _json_reason(exc: ValueError, line: bool = False) -> str:
    """A decode error's own words; Python's digit limit raises a plain ValueError with no .msg/.colno."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg}{f' at line {exc.lineno}' if line else ''}, column {exc.colno}"
    if "digits" in str(exc):
        return "a number has more digits than Python reads (over 4,300)"
    return str(exc)[:120]


def _read_jsonl(path: Path, encoding: str, max_mb: float) -> Table:
    """The json module, not pandas.read_json: pandas (ujson) names neither the line nor the column of a broken
    row ("Expected object or value at position 49"), raises a bare TypeError on a line that is a list, and
    gives every row every key (absent ones NaN, so a column of whole numbers turns into floats)."""
    text, enc = read_text(path, encoding, max_mb)
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = _loads(line)
        except RecursionError:
            raise _too_deep(path, n) from None
        except _NonFinite as exc:
            raise _non_finite(path, str(exc), n) from None
        except ValueError as exc:
            raise StudioError.of("data.json_line_invalid", file=path.name, line=n, detail=_json_reason(exc)) from None
        if not isinstance(rec, dict):
            raise StudioError.of("data.json_line_not_object", file=path.name, line=n, kind=type(rec).__name__)
        records.append(rec)
    return _records_table(path, records, "jsonl", enc)


def _read_json(path: Path, encoding: str, max_mb: float) -> Table:
    text, enc = read_text(path, encoding, max_mb)
    try:
        data = _loads(text)
    except RecursionError:
        raise _too_deep(path) from None
    except _NonFinite as exc:
        raise _non_finite(path, str(exc)) from None
    except ValueError as exc:
        if getattr(exc, "msg", "") == "Extra data":  # one object per line: JSONL saved as .json
            return _read_jsonl(path, encoding, max_mb)
        detail = _json_reason(exc, line=True)
        if isinstance(exc, json.JSONDecodeError):
            raise StudioError.of("data.json_invalid_near", file=path.name, detail=detail, line=exc.lineno) from None
        raise StudioError.of("data.json_invalid", file=path.name, detail=detail) from None
    if isinstance(data, dict):
        data = _unwrap(path, data)
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise StudioError.of("data.json_not_rows", file=path.name)
    return _records_table(path, data, "json", enc)


def _unwrap(path: Path, data: dict[str, Any]) -> Any:
    """A JSON object as rows: {"data": [...]} wrappers (common in exports) give their list; a column-oriented
    object ({"text": [...], "label": [...]}, what pandas' to_json(orient='list') and many scripts write) is
    zipped into rows; any other object is one row."""
    lists = {k: v for k, v in data.items() if isinstance(v, list)}
    if len(lists) == 1:
        return next(iter(lists.values()))
    if len(lists) > 1 and len(lists) == len(data) and not any(isinstance(x, dict) for v in lists.values() for x in v):
        lengths = {k: len(v) for k, v in lists.items()}
        if len(set(lengths.values())) > 1:
            raise StudioError.of("data.json_lists_differ", file=path.name, lengths=list(lengths.items()))
        keys = list(lists)
        return [dict(zip(keys, values)) for values in zip(*lists.values())]
    return [data]


def _decode_bytes(path: Path, records: list[dict[str, Any]]) -> None:
    """Parquet binary cells as text (UTF-8), in place; a cell that is not text is refused naming its column,
    never turned into "b'\\x00\\xff'" as a label."""
    for n, r in enumerate(records, 1):
        for k, v in r.items():
            if isinstance(v, (bytes, bytearray)):
                try:
                    r[k] = bytes(v).decode("utf-8")
                except UnicodeDecodeError:
                    raise StudioError.of("data.parquet_binary", column=k, file=path.name, row=n) from None


def _read_parquet(path: Path, max_mb: float) -> Table:
    """pyarrow, which pandas.read_parquet calls underneath, directly: pandas would hand list cells (a
    'messages' column) back as numpy arrays and a whole-number column with a gap as floats."""
    check_size(path, max_mb)
    import pyarrow.parquet as pq  # start-up: pyarrow, 0.17 s at import; only a parquet file needs it
    try:
        meta = pq.ParquetFile(path).metadata  # the footer: row/column counts without reading the data
        check_shape(path, meta.num_rows, meta.num_columns)
        records = pq.read_table(path).to_pylist()
    except StudioError:
        raise
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise StudioError.of("data.bad_parquet", file=path.name, detail=type(exc).__name__) from None
    if not records:
        raise StudioError.of("data.parquet_no_rows", file=path.name)
    _decode_bytes(path, records)
    return _records_table(path, records, "parquet", None)


def _read_excel(path: Path, max_mb: float, sheet: str | None) -> Table:
    """.xlsx (a zip: openpyxl) or old .xls (an OLE2 file: calamine, the engine pandas 3.1 names in place of
    the deprecated xlrd), told apart by their first bytes, so a file with the other suffix reads too."""
    check_size(path, max_mb)
    with open(path, "rb") as fh:
        head = fh.read(8192)
    if head.startswith(b"PK"):
        check_unpacked(path, max_mb)  # before parsing: the zip directory says what it unpacks to
        engine, fmt = "openpyxl", "xlsx"
    elif head.startswith(OLE_MAGIC):  # not compressed: the file size limit bounds what it holds
        engine, fmt = "calamine", "xls"
    elif not head.strip():
        raise StudioError.of("data.empty_file", file=path.name)
    elif not is_binary(head):
        raise StudioError.of("data.xlsx_is_text", file=path.name, stem=path.stem)
    else:
        raise StudioError.of("data.xlsx_not_excel", file=path.name)
    import pandas as pd  # start-up: pandas, 0.5 s at import; only reading a table needs it
    try:
        with pd.ExcelFile(path, engine=engine) as book:
            names = [str(n) for n in book.sheet_names]
            if sheet and sheet not in names:
                raise StudioError.of("data.sheet_missing", sheet=sheet, file=path.name, choices=names)
            name = sheet or names[0]
            frame = pd.read_excel(book, sheet_name=name, header=None, dtype=object, nrows=limits.MAX_ROWS + 2)
    except StudioError:
        raise
    except Exception as exc:  # zipfile, openpyxl and calamine raise many types for a corrupt file
        raise StudioError.of("data.bad_xlsx", file=path.name, detail=type(exc).__name__) from None
    table = _frame_table(path, frame, fmt, "data.header_only_sheet")
    if not table.columns:
        raise StudioError.of("data.sheet_empty", sheet=name, file=path.name)
    return table


def read_table(path: str | Path, *, encoding: str = "auto", max_mb: float = DEFAULT_MAX_MB,
               sheet: str | None = None, delimiter: str | None = None) -> Table:
    """Read a data file of any supported kind into a Table.

    Raises:
        StudioError: unsupported type, missing/empty/binary/oversized file, malformed content.
    """
    p = Path(path)
    try:
        table = _read_any(p, encoding, max_mb, sheet, delimiter)
    except StudioError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, LookupError, RecursionError) as exc:
        # the boundary of every reader: a library's own error about a malformed file is the user's to fix
        # anything else (OSError is named by the callers, MemoryError) stays a bug
        raise StudioError.of("data.unreadable", file=p.name, error=type(exc).__name__,
                             detail=str(exc)[:160]) from None
    limits.check_cells(p, table.columns, table.rows)
    return table


def _read_any(p: Path, encoding: str, max_mb: float, sheet: str | None, delimiter: str | None) -> Table:
    suffix = p.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        check_size(p, 0)
        raise StudioError.of("data.unsupported_type", file=p.name, suffix=suffix or "(none)",
                             choices=SUPPORTED_SUFFIXES)
    if suffix in (".csv", ".tsv"):
        return _read_delimited(p, encoding, max_mb, delimiter)
    if suffix == ".txt":
        return _read_txt(p, encoding, max_mb)
    if suffix == ".jsonl":
        return _read_jsonl(p, encoding, max_mb)
    if suffix == ".json":
        return _read_json(p, encoding, max_mb)
    if suffix == ".parquet":
        return _read_parquet(p, max_mb)
    return _read_excel(p, max_mb, sheet)


def preview(table: Table, n: int = 20, max_chars: int = 200) -> tuple[list[str], list[list[str]]]:
    """(headers, first n rows as strings) for a preview grid; long cells are shortened with '…'."""
    def short(v: Any) -> str:
        s = cell_str(v)
        return s if len(s) <= max_chars else s[:max_chars - 1] + "…"
    return list(table.columns), [[short(r.get(c)) for c in table.columns] for r in table.rows[:n]]
