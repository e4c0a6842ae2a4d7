"""Limits on what a data file may cost to read: checked before or while parsing.

A 1.8 MB .xlsx once unpacked to 5M rows (208 s, 2.8 GB); a UTF-8 export with one cp1252 row was
silently decoded as latin-1. These checks are separate from the readers so every reader uses the
same caps and the same messages.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StudioError

# Caps checked before (or while) parsing, so a small file cannot take minutes and gigabytes:
# Excel itself stops at 1,048,576 rows; nobody labels more than 1000 columns by hand.
MAX_ROWS = 1_000_000
MAX_COLUMNS = 1000
XLSX_UNPACK_FACTOR = 4  # an .xlsx (a zip) may unpack to at most this many times the file size limit
# One cell of 4 MB sent to batch prediction once made the server try to allocate 17.6 TB: no cell a person typed
# or pasted is this long (a long review is ~5,000 characters; a book chapter ~50,000), so a longer one is refused
# by every reader, whichever page or command the file came through.
MAX_CELL_CHARS = 200_000
# A chat template is code that came with a model: its render gets a budget (studio/data/template_budget.py).
# Real templates take a few hundred steps per message and write what the conversation holds.
TEMPLATE_MAX_STEPS = 1_000_000
TEMPLATE_MAX_CHARS = 2_000_000
TEMPLATE_MAX_SECONDS = 3.0


def refuse_mixed_encodings(path: Path, raw: bytes) -> None:
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
        raise StudioError.of("data.mixed_encodings", file=path.name, n=utf8_lines, lines=shown)


def too_many_rows(path: Path) -> StudioError:
    return StudioError.of("data.too_many_rows", file=path.name, rows=MAX_ROWS, columns=MAX_COLUMNS)


def check_shape(path: Path, rows: int, columns: int) -> None:
    """Raises StudioError when a table is over MAX_ROWS rows or MAX_COLUMNS columns."""
    if rows > MAX_ROWS:
        raise too_many_rows(path)
    if columns > MAX_COLUMNS:
        raise StudioError.of("data.too_many_columns", file=path.name, n=columns, rows=MAX_ROWS, columns=MAX_COLUMNS)


def _longest(value: Any, depth: int = 0) -> int:
    """The longest text in a cell; a JSON cell (a conversation) is searched two levels deep."""
    if isinstance(value, str):
        return len(value)
    if depth < 3 and isinstance(value, dict):
        return max((_longest(v, depth + 1) for v in value.values()), default=0)
    if depth < 3 and isinstance(value, (list, tuple)):
        return max((_longest(v, depth + 1) for v in value), default=0)
    return 0


def check_cells(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Raises StudioError naming the first cell over MAX_CELL_CHARS (its row, counting the header as 1, and column)."""
    for n, row in enumerate(rows, 2):
        for column in columns:
            size = _longest(row.get(column))
            if size > MAX_CELL_CHARS:
                raise StudioError.of("data.cell_too_long", file=path.name, n=size, row=n, column=column,
                                     limit=MAX_CELL_CHARS)


def check_unpacked(path: Path, max_mb: float) -> None:
    """An .xlsx is a zip: the limit that matters is what it unpacks to (a 2 MB file can hold 5M rows).
    The sizes come from the zip's directory, so nothing is decompressed to check them."""
    import zipfile  # start-up: zipfile, 0.006 s at import; `studio webui --help` loads this module
    if not max_mb:
        return
    try:
        with zipfile.ZipFile(path) as z:
            total = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: openpyxl's own error below says so
    limit = max_mb * XLSX_UNPACK_FACTOR
    if total > limit * 1024 * 1024:
        raise StudioError.of("data.sheet_unpacks", file=path.name, mb=total / 1024 / 1024, limit=limit,
                             x=XLSX_UNPACK_FACTOR, file_mb=max_mb)
