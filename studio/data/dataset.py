"""Load training rows for a run: an alpaca file path or a name registered in dataset_info.json."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import StudioError
from .split import split_rows  # noqa: F401  (re-exported: callers load and split together)


# the page's fix for a dataset file that is broken: the Data tab converts it again (the CLI names its command)
AGAIN_ON_DATA_TAB = "convert the source file again on the Data tab"


def _too_deep(path: Path) -> StudioError:
    return StudioError(f"Dataset '{path.name}' is nested too deeply to read", "convert the source again with "
                       "'python -m studio convert' (rows are flat objects)", code="data_json",
                       page_fix=AGAIN_ON_DATA_TAB)


def _read_json_rows(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except RecursionError:
            raise _too_deep(path) from None
        except ValueError as exc:
            raise StudioError(f"Dataset '{path}' is not valid JSON ({exc})", "fix the file or convert it again "
                              "with 'python -m studio convert'", page_fix=AGAIN_ON_DATA_TAB) from None
        if not isinstance(data, list):
            raise StudioError(f"Dataset '{path}' must hold a JSON list of rows", "convert it with 'python -m studio convert'",
                              page_fix=AGAIN_ON_DATA_TAB)
        return data
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except RecursionError:
            raise _too_deep(path) from None
        except ValueError:
            raise StudioError(f"Line {n} of '{path}' is not valid JSON",
                              "fix or delete that line, or convert the source again") from None
    return rows


def _instruction_rows(rows: list[Any]) -> bool:
    return bool(rows) and all(isinstance(r, dict) and "output" in r and ("instruction" in r or "input" in r)
                              for r in rows)


def read_file_rows(path: Path, entry: dict[str, Any] | None = None, any_table: bool = False) -> list[dict[str, Any]]:
    """Rows with instruction/input/output from one file: alpaca or ShareGPT JSON/JSONL as LLaMA-Factory reads it
    (see studio/data/lf_dataset.py), or a spreadsheet with instruction/input/output columns.

    ``any_table``: a file that is not instruction data (a text + label sheet or JSONL) goes through the data
    converter's guess instead, as a labelled file for evaluation is read (the Evaluate tab and ``studio evaluate``).

    Raises:
        StudioError: unreadable file, a row that is not an object, columns the converter cannot map, or any
            library error about the file's content (the boundary of this reader).
    """
    try:
        return _file_rows(path, entry, any_table)
    except StudioError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
        raise StudioError(f"Dataset '{path.name}' could not be read ({type(exc).__name__}: {str(exc)[:160]})",
                          "fix the file, or convert the source again with 'python -m studio convert'",
                          page_fix=AGAIN_ON_DATA_TAB,
                          code="data_read") from None


def _file_rows(path: Path, entry: dict[str, Any] | None, any_table: bool) -> list[dict[str, Any]]:
    from .convert import convert_instruction, convert_table
    from .readers import read_table
    if path.suffix.lower() in (".json", ".jsonl"):
        rows = _read_json_rows(path)
        if not (any_table and not entry and not _instruction_rows(rows)):
            from .lf_dataset import convert_rows
            for r in rows:
                if not isinstance(r, dict):
                    raise StudioError(f"Dataset '{path}' has a row that is not an object",
                                      "each row needs instruction/input/output")
            return convert_rows(rows, entry or {}, str(path))
    table = read_table(path, max_mb=0)
    return (convert_table(table) if any_table else convert_instruction(table)).rows


def _in_dataset_dir(name: str, file_name: str, dataset_dir: str) -> Path:
    """dataset_info.json's file_name, confined to dataset_dir: an entry (perhaps copied from elsewhere) must not
    make training read any file on the machine.

    Raises:
        StudioError: the file lies outside dataset_dir (absolute, '..', or a symlink out).
    """
    from ..workspace import confine
    try:
        return confine(file_name, [Path(dataset_dir).resolve()])
    except StudioError:
        raise StudioError(f"Dataset '{name}': file_name '{file_name}' is outside the dataset folder '{dataset_dir}'",
                          "put the data file inside that folder and name it relative to it", code="data_info") from None


def load_rows(dataset: str, dataset_dir: str = "data") -> list[dict[str, Any]]:
    """Rows with instruction/input/output from a .jsonl/.json path or a dataset_info.json name.

    Raises:
        StudioError: the dataset cannot be found, is empty, or lacks the columns.
    """
    names = [d.strip() for d in dataset.split(",") if d.strip()]
    if not names:
        raise StudioError("No dataset given", "set 'dataset' to a .jsonl file made by 'python -m studio convert'",
                          page_fix="convert a file on the Data tab, then pick it under Training data on the "
                          "Settings tab")
    rows: list[dict[str, Any]] = []
    for name in names:
        p = Path(name)
        entry: dict[str, Any] | None = None
        if not p.is_file():
            info = Path(dataset_dir) / "dataset_info.json"
            if info.is_file():
                try:
                    registry = json.loads(info.read_text(encoding="utf-8"))
                except ValueError:
                    raise StudioError(f"'{info}' is not valid JSON", "fix or delete it") from None
                if not isinstance(registry, dict):
                    raise StudioError(f"'{info}' must hold a JSON object of datasets (name -> entry)",
                                      "fix or delete it", code="data_info")
                entry = registry.get(name)
            if entry is None:
                raise StudioError(f"Dataset '{name}' not found: no such file, and no entry of that name in {info}",
                                  "give the path of a .jsonl file (python -m studio convert makes one) or register it",
                                  page_fix="convert the file on the Data tab, then pick it under Training data on the "
                                  "Settings tab")
            from .lf_dataset import check_entry
            check_entry(name, entry)
            p = _in_dataset_dir(name, entry["file_name"], dataset_dir)
            if not p.is_file():
                raise StudioError(f"Dataset '{name}' points to '{p}', which does not exist", "convert the data again")
        rows.extend(read_file_rows(p, entry))
    if not rows:
        raise StudioError(f"Dataset '{dataset}' has no rows", "check the file; convert the source again")
    return rows
