"""Read what non-programmers actually have: CSV/TSV exports, Excel sheets, JSON, JSONL, Parquet, TXT.

Everything comes back as one ``Table`` (column names + row dicts) so conversion never cares
where the data came from. Shop back-offices in China export GBK/GB18030 and Excel adds a
UTF-8 BOM, so the encoding is detected, not assumed. Every way a file can be wrong raises a
``StudioError`` naming the file, the problem and the fix.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StudioError

DEFAULT_MAX_MB = 50.0
# Caps checked before (or while) parsing, so a small file cannot take minutes and gigabytes:
# Excel itself stops at 1,048,576 rows; nobody labels more than 1000 columns by hand.
MAX_ROWS = 1_000_000
MAX_COLUMNS = 1000
XLSX_UNPACK_FACTOR = 4  # an .xlsx (a zip) may unpack to at most this many times the file size limit
TEXT_SUFFIXES = (".csv", ".tsv", ".txt")
SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".jsonl", ".parquet", ".xlsx")
_DELIMITERS = (",", "\t", ";", "|")
_SNIFF_LINES = 50
_LATIN_GUESSES = {"cp1250", "cp1252", "latin_1", "iso8859_1", "iso8859_2", "iso8859_15", "mac_roman",
                  "mac_latin2"}


@dataclass
class Table:
    """A file's rows as dicts keyed by column name; values are str for text formats, native otherwise."""

    columns: list[str]
    rows: list[dict[str, Any]]
    source: str = ""
    format: str = ""
    encoding: str | None = None
    delimiter: str | None = None
    warnings: list[str] = field(default_factory=list)

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


def check_size(path: Path, max_mb: float = DEFAULT_MAX_MB) -> int:
    """The file's size in bytes, after checking it exists and is under the limit.

    Raises:
        StudioError: missing file, a folder, or a file over ``max_mb``.
    """
    if not path.exists():
        raise StudioError(f"File '{path}' does not exist", "check the path and the file name", code="data_missing")
    if not path.is_file():
        raise StudioError(f"'{path}' is a folder, not a file", "give the path of one data file", code="data_missing")
    size = path.stat().st_size
    if max_mb and size > max_mb * 1024 * 1024:
        raise StudioError(
            f"'{path.name}' is {size / 1024 / 1024:.1f} MB, over the {max_mb:g} MB limit",
            f"split the file into smaller parts, or raise the limit (CLI: --max-mb {int(size / 1024 / 1024) + 1})",
            code="data_too_large")
    return size


def _looks_like_chinese(text: str) -> bool:
    """True when the non-ASCII characters are mostly CJK: a GB18030 decode that makes sense."""
    non_ascii = [c for c in text if ord(c) > 127]
    if not non_ascii:
        return True
    cjk = sum(1 for c in non_ascii if "\u4e00" <= c <= "\u9fff" or "\u3000" <= c <= "\u303f"
              or "\uff00" <= c <= "\uffef" or "\u2000" <= c <= "\u206f")
    return cjk / len(non_ascii) >= 0.8


def detect_encoding(raw: bytes) -> str:
    """Pick the encoding of a text export: BOMs, then UTF-8, then GB18030 (a superset of GBK), then a guess.

    GB18030 is tried before the statistical guess because short Chinese exports are often
    mis-guessed (as Big5 or a Latin code page) by detectors.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        raw.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        if _looks_like_chinese(raw.decode("gb18030")):
            return "gb18030"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes
    best = from_bytes(raw).best()
    guess = best.encoding if best is not None else None
    # short Western exports are often guessed as a neighbouring Latin code page; Excel writes cp1252
    if guess is None or guess in _LATIN_GUESSES:
        try:
            raw.decode("cp1252")
            return "cp1252"
        except UnicodeDecodeError:
            pass
    return guess or "latin-1"


def _is_binary(raw: bytes) -> bool:
    """NUL bytes never appear in UTF-8/GBK text (UTF-16 is caught by its BOM first)."""
    sample = raw[:8192]
    return b"\x00" in sample and not sample.startswith((b"\xff\xfe", b"\xfe\xff"))


def _binary_error(path: Path, raw: bytes) -> StudioError:
    if raw.startswith(b"PK\x03\x04"):
        kind, fix = "an Excel/zip file", f"rename it to '{path.stem}.xlsx', or save the sheet as 'CSV UTF-8' in Excel"
    elif raw.startswith(b"\xd0\xcf\x11\xe0"):
        kind, fix = "an old Excel (.xls) file", "save it as .xlsx or as 'CSV UTF-8' in Excel"
    elif raw.startswith(b"PAR1"):
        kind, fix = "a Parquet file", f"rename it to '{path.stem}.parquet'"
    else:
        kind, fix = "a binary file", "export the data as CSV (UTF-8), Excel (.xlsx) or JSONL"
    return StudioError(f"'{path.name}' is not a text file: it looks like {kind}", fix, code="data_binary")


def read_text(path: Path, encoding: str = "auto", max_mb: float = DEFAULT_MAX_MB) -> tuple[str, str]:
    """Decode a text file -> (text, encoding used).

    Raises:
        StudioError: missing, too large, empty, binary, or not decodable with the given encoding.
    """
    path = Path(path)
    check_size(path, max_mb)
    raw = path.read_bytes()
    if not raw.strip():
        raise StudioError(f"'{path.name}' is empty", "export the data again; the file has no content",
                          code="data_empty")
    if _is_binary(raw):
        raise _binary_error(path, raw)
    auto = encoding in ("", "auto", None)
    if auto:
        _refuse_mixed_encodings(path, raw)
    enc = detect_encoding(raw) if auto else encoding
    try:
        text = raw.decode(enc)
    except LookupError:
        raise StudioError(f"Unknown encoding '{encoding}'", "use auto, utf-8, utf-8-sig, gbk or gb18030",
                          code="data_encoding") from None
    except UnicodeDecodeError as exc:
        raise StudioError(f"'{path.name}' cannot be read as {enc} (bad byte at position {exc.start})",
                          "use encoding 'auto', or save the file as UTF-8", code="data_encoding") from None
    nul = text.find("\x00")
    if nul >= 0:  # past the first 8 KB the binary sniff cannot see it; NUL is never part of text data
        raise StudioError(f"'{path.name}' contains a NUL byte (line {text.count(chr(10), 0, nul) + 1})",
                          "remove the NUL characters or export the data again as CSV (UTF-8)", code="data_binary")
    return text.lstrip("\ufeff"), enc


def _refuse_mixed_encodings(path: Path, raw: bytes) -> None:
    """Refuse a file whose lines are partly UTF-8 and partly another code page (e.g. one cp1252 row
    pasted into a UTF-8 export): any single decoding would silently garble one of the two parts.
    Why our own check: charset detectors answer one encoding per file, which is exactly the bug."""
    if raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return
    try:
        raw.decode("utf-8")
        return
    except UnicodeDecodeError:
        pass
    utf8_lines, bad_lines = 0, []
    for n, line in enumerate(raw.split(b"\n"), 1):
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
            utf8_lines += 1
        except UnicodeDecodeError:
            bad_lines.append(n)
    # in a GBK/cp1252 file a line is valid UTF-8 only by chance: require UTF-8 to be a real share
    if utf8_lines and bad_lines and utf8_lines * 4 >= len(bad_lines):
        shown = ", ".join(map(str, bad_lines[:10])) + (" …" if len(bad_lines) > 10 else "")
        raise StudioError(f"'{path.name}' mixes encodings: {utf8_lines} line(s) are UTF-8 but line {shown} "
                          "(counting the header as line 1) are not, so any one decoding would garble part of it",
                          "save the file again as 'CSV UTF-8' (or fix those lines); or choose the encoding "
                          "explicitly if you know it", code="data_encoding")


def _too_many(path: Path, what: str, count: int | str, limit: int) -> StudioError:
    return StudioError(f"'{path.name}' has {what} {count}", f"split the file into parts of at most {limit:,} rows and "
                       f"{MAX_COLUMNS:,} columns (keep only the columns you need)", code="data_too_large")


def _check_shape(path: Path, rows: int, columns: int) -> None:
    """Raises StudioError when a table is over MAX_ROWS rows or MAX_COLUMNS columns."""
    if rows > MAX_ROWS:
        raise _too_many(path, "more than", f"{MAX_ROWS:,} rows", MAX_ROWS)
    if columns > MAX_COLUMNS:
        raise _too_many(path, f"{columns:,} columns, over the limit of", f"{MAX_COLUMNS:,}", MAX_ROWS)


def sniff_delimiter(text: str, default: str = ",") -> str:
    """The delimiter that splits the first lines into the same number (>1) of fields most often.

    csv.Sniffer guesses wrong on short files and on text full of commas, so count instead:
    quoted fields are respected because each candidate is parsed by the csv module.
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


def _unique_columns(header: list[str]) -> list[str]:
    """Trim names, name blanks 'column_N', and make repeats unique ('a', 'a_2') so no data is lost."""
    seen: Counter[str] = Counter()
    out = []
    for i, name in enumerate(header, 1):
        name = (name or "").strip() or f"column_{i}"
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def _read_delimited(path: Path, encoding: str, max_mb: float, delimiter: str | None) -> Table:
    text, enc = read_text(path, encoding, max_mb)
    delim = delimiter or sniff_delimiter(text, "\t" if path.suffix.lower() == ".tsv" else ",")
    try:
        records = []
        for r in csv.reader(io.StringIO(text, newline=""), delimiter=delim):
            if any(c.strip() for c in r):
                records.append(r)
                if len(records) > MAX_ROWS + 1:
                    raise _too_many(path, "more than", f"{MAX_ROWS:,} rows", MAX_ROWS)
    except csv.Error as exc:
        raise StudioError(f"'{path.name}' is not a readable CSV file ({exc})",
                          "export it again as CSV (UTF-8) from the spreadsheet", code="data_csv") from None
    if not records:
        raise StudioError(f"'{path.name}' is empty", "export the data again; the file has no rows", code="data_empty")
    _check_shape(path, 0, len(records[0]))
    columns = _unique_columns(records[0])
    if len(records) == 1:
        raise StudioError(f"'{path.name}' has a header row ({', '.join(columns)}) but no data rows",
                          "export the sheet again including its rows", code="data_header_only")
    rows, long_lines = [], []
    for n, rec in enumerate(records[1:], 2):
        if len(rec) > len(columns) and any(c.strip() for c in rec[len(columns):]):
            long_lines.append(n)
        rows.append({c: (rec[i] if i < len(rec) else "") for i, c in enumerate(columns)})
    table = Table(columns, rows, str(path), "csv", enc, delim)
    if long_lines:
        table.warnings.append(
            f"{len(long_lines)} row(s) have more fields than the header (data rows near line "
            f"{', '.join(map(str, long_lines[:5]))}); the extra fields were dropped. Quote text that contains "
            f"the delimiter '{delim}'")
    return table


def _read_txt(path: Path, encoding: str, max_mb: float) -> Table:
    """One example per non-empty line in a 'text' column; a .txt where every line has the same
    number of tabs is a tab-separated table (commas are not trusted: sentences contain them)."""
    text, enc = read_text(path, encoding, max_mb)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    tabs = {ln.count("\t") for ln in lines}
    if len(lines) >= 2 and len(tabs) == 1 and tabs != {0}:
        return _read_delimited(path, encoding, max_mb, "\t")
    return Table(["text"], [{"text": ln.strip()} for ln in lines], str(path), "txt", enc)


def _records_table(path: Path, records: list[Any], fmt: str, enc: str | None) -> Table:
    columns: dict[str, None] = {}
    for r in records:
        columns.update(dict.fromkeys(r))
    if not records:
        raise StudioError(f"'{path.name}' has no rows", "the file holds an empty list; export the data again",
                          code="data_empty")
    _check_shape(path, len(records), len(columns))
    return Table([str(c) for c in columns], [{str(k): v for k, v in r.items()} for r in records], str(path), fmt, enc)


def _too_deep(path: Path, where: str) -> StudioError:
    return StudioError(f"'{path.name}' is nested too deeply to read ({where} has lists/objects inside each other "
                       "hundreds of levels deep)", "export flat rows: one object per row with text fields",
                       code="data_json")


def _read_jsonl(path: Path, encoding: str, max_mb: float) -> Table:
    text, enc = read_text(path, encoding, max_mb)
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except RecursionError:
            raise _too_deep(path, f"line {n}") from None
        except ValueError as exc:
            raise StudioError(f"Line {n} of '{path.name}' is not valid JSON ({exc.msg}, column {exc.colno})",
                              f"fix or delete line {n}; each line must be one JSON object", code="data_json") from None
        if not isinstance(rec, dict):
            raise StudioError(f"Line {n} of '{path.name}' is a JSON {type(rec).__name__}, not an object",
                              'each line must look like {"text": "...", "label": "..."}', code="data_json")
        records.append(rec)
    return _records_table(path, records, "jsonl", enc)


def _read_json(path: Path, encoding: str, max_mb: float) -> Table:
    text, enc = read_text(path, encoding, max_mb)
    try:
        data = json.loads(text)
    except RecursionError:
        raise _too_deep(path, "the file") from None
    except ValueError as exc:
        if getattr(exc, "msg", "") == "Extra data":  # one object per line: JSONL saved as .json
            return _read_jsonl(path, encoding, max_mb)
        raise StudioError(f"'{path.name}' is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                          f"fix the file near line {exc.lineno}", code="data_json") from None
    if isinstance(data, dict):  # {"data": [...]} wrappers are common in exports
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data = lists[0]
        else:
            data = [data]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise StudioError(f"'{path.name}' must hold a list of JSON objects (one per row)",
                          'shape it like [{"text": "...", "label": "..."}, ...]', code="data_json")
    return _records_table(path, data, "json", enc)


def _read_parquet(path: Path, max_mb: float) -> Table:
    check_size(path, max_mb)
    import pyarrow.parquet as pq
    try:
        meta = pq.ParquetFile(path).metadata  # the footer: row/column counts without reading the data
        _check_shape(path, meta.num_rows, meta.num_columns)
        records = pq.read_table(path).to_pylist()
    except StudioError:
        raise
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise StudioError(f"'{path.name}' is not a readable Parquet file ({type(exc).__name__})",
                          "export it again, or use CSV/JSONL", code="data_parquet") from None
    if not records:
        raise StudioError(f"'{path.name}' has columns but no data rows", "export it again including its rows",
                          code="data_header_only")
    return _records_table(path, records, "parquet", None)


def _check_unpacked(path: Path, max_mb: float) -> None:
    """An .xlsx is a zip: the limit that matters is what it unpacks to (a 2 MB file can hold 5M rows).
    The sizes come from the zip's directory, so nothing is decompressed to check them."""
    import zipfile
    if not max_mb:
        return
    try:
        with zipfile.ZipFile(path) as z:
            total = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: openpyxl's own error below says so
    limit = max_mb * XLSX_UNPACK_FACTOR
    if total > limit * 1024 * 1024:
        raise StudioError(f"'{path.name}' unpacks to {total / 1024 / 1024:.1f} MB of sheet data, over the "
                          f"{limit:g} MB limit ({XLSX_UNPACK_FACTOR}x the {max_mb:g} MB file limit)",
                          "save the sheet as 'CSV UTF-8' and split it into smaller files (or remove unused "
                          "rows and columns)", code="data_too_large")


def _read_xlsx(path: Path, max_mb: float, sheet: str | None) -> Table:
    check_size(path, max_mb)
    _check_unpacked(path, max_mb)
    import zipfile

    import openpyxl
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        head = path.read_bytes()[:8192]
        if not head.strip():
            raise StudioError(f"'{path.name}' is empty", "export the data again; the file has no content",
                              code="data_empty") from None
        if not head.startswith(b"PK") and not _is_binary(head):
            raise StudioError(f"'{path.name}' is not an Excel file: it looks like text (CSV?)",
                              f"rename it to '{path.stem}.csv'", code="data_xlsx") from None
        raise StudioError(f"'{path.name}' is not a readable Excel file ({type(exc).__name__})",
                          "open it in Excel and save it again as .xlsx", code="data_xlsx") from None
    try:
        if sheet and sheet not in wb.sheetnames:
            raise StudioError(f"Sheet '{sheet}' not found in '{path.name}'",
                              f"use one of: {', '.join(wb.sheetnames)}", code="data_xlsx")
        ws = wb[sheet] if sheet else wb.worksheets[0]
        values = []
        for r in ws.iter_rows(values_only=True):
            if len(r) > MAX_COLUMNS:
                _check_shape(path, 0, len(r))
            if any(cell_str(c).strip() for c in r):
                values.append(list(r))
                if len(values) > MAX_ROWS + 1:
                    raise _too_many(path, "more than", f"{MAX_ROWS:,} rows", MAX_ROWS)
    finally:
        wb.close()
    if not values:
        raise StudioError(f"Sheet '{ws.title}' of '{path.name}' is empty",
                          "put the data on the first sheet, or choose the sheet that holds it", code="data_empty")
    columns = _unique_columns([cell_str(c) for c in values[0]])
    if len(values) == 1:
        raise StudioError(f"'{path.name}' has a header row ({', '.join(columns)}) but no data rows",
                          "add the data rows under the header", code="data_header_only")
    rows = [{c: (r[i] if i < len(r) else None) for i, c in enumerate(columns)} for r in values[1:]]
    return Table(columns, rows, str(path), "xlsx", None)


def read_table(path: str | Path, *, encoding: str = "auto", max_mb: float = DEFAULT_MAX_MB,
               sheet: str | None = None, delimiter: str | None = None) -> Table:
    """Read a data file of any supported kind into a Table.

    Raises:
        StudioError: unsupported type, missing/empty/binary/oversized file, malformed content.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        check_size(p, 0)
        if suffix == ".xls":
            raise StudioError(f"'{p.name}' is an old Excel (.xls) file", "save it as .xlsx or as 'CSV UTF-8' in Excel",
                              code="data_type")
        raise StudioError(f"Cannot read '{p.name}': unsupported file type '{suffix or '(none)'}'",
                          f"use one of: {', '.join(SUPPORTED_SUFFIXES)}", code="data_type")
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
    return _read_xlsx(p, max_mb, sheet)


def preview(table: Table, n: int = 20, max_chars: int = 200) -> tuple[list[str], list[list[str]]]:
    """(headers, first n rows as strings) for a preview grid; long cells are shortened with '…'."""
    def short(v: Any) -> str:
        s = cell_str(v)
        return s if len(s) <= max_chars else s[:max_chars - 1] + "…"
    return list(table.columns), [[short(r.get(c)) for c in table.columns] for r in table.rows[:n]]
