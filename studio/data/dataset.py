"""Load training rows for a run: an alpaca file path or a name registered in dataset_info.json."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..workspace import confine
from .lf_dataset import check_entry, convert_rows, entry_kind, kind_mismatch
from .preference import preference_rows
from .split import split_rows  # noqa: F401  (re-exported: callers load and split together)


# the page's fix for a dataset file that is broken: the Data tab converts it again (the CLI names its command)


def _too_deep(path: Path) -> StudioError:
    return StudioError.of("dataset.too_deep", name=path.name)


def _read_json_rows(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except RecursionError:
            raise _too_deep(path) from None
        except ValueError as exc:
            raise StudioError.of("dataset.json_invalid", name=path, detail=str(exc)) from None
        if not isinstance(data, list):
            raise StudioError.of("dataset.not_list", name=path)
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
            raise StudioError.of("dataset.line_invalid", line=n, file=path) from None
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
        raise StudioError.of("dataset.unreadable", name=path.name, error=type(exc).__name__,
                             detail=str(exc)[:160]) from None


def _file_rows(path: Path, entry: dict[str, Any] | None, any_table: bool) -> list[dict[str, Any]]:
    # start-up: the table readers and converter, 0.004 s at import; `studio train --help` loads this module and
    # reads no table
    from .convert import convert_instruction, convert_table
    from .readers import read_table
    if path.suffix.lower() in (".json", ".jsonl"):
        rows = _read_json_rows(path)
        if not (any_table and not entry and not _instruction_rows(rows)):
            for r in rows:
                if not isinstance(r, dict):
                    raise StudioError.of("dataset.row_not_object", name=path)
            return convert_rows(rows, entry or {}, str(path))
    table = read_table(path, max_mb=0)
    return (convert_table(table) if any_table else convert_instruction(table)).rows


def _preference_file_rows(path: Path, entry: dict[str, Any] | None, kind: str) -> list[dict[str, Any]]:
    """Ranking / KTO rows from one JSON or JSONL file (LLaMA-Factory keeps them in JSON too).

    Raises:
        StudioError: not a JSON/JSONL file, a row that is not an object, rows of a kind the stage does not train.
    """
    if path.suffix.lower() not in (".json", ".jsonl"):
        raise StudioError.of("dataset.pref_not_json", name=path.name)
    rows = _read_json_rows(path)
    if not all(isinstance(r, dict) for r in rows):
        raise StudioError.of("dataset.row_not_object", name=path)
    have = entry_kind(entry, rows)
    if have != kind and not (kind == "kto" and have == "ranking"):
        raise kind_mismatch(path.name, have, kind)  # type: ignore[arg-type]
    return preference_rows(rows, entry, str(path), kind)  # type: ignore[arg-type]


def _in_dataset_dir(name: str, file_name: str, dataset_dir: str) -> Path:
    """dataset_info.json's file_name, confined to dataset_dir: an entry (perhaps copied from elsewhere) must not
    make training read any file on the machine.

    Raises:
        StudioError: the file lies outside dataset_dir (absolute, '..', or a symlink out).
    """
    try:
        return confine(file_name, [Path(dataset_dir).resolve()])
    except StudioError:
        raise StudioError.of("dataset.outside", name=name, file=file_name, folder=dataset_dir) from None


def load_rows(dataset: str, dataset_dir: str = "data", kind: str = "sft") -> list[dict[str, Any]]:
    """Rows with instruction/input/output from a .jsonl/.json path or a dataset_info.json name; for ``kind``
    ranking / kto (stage dpo / kto) the preference rows of studio/data/preference.py.

    Raises:
        StudioError: the dataset cannot be found, is empty, or lacks the columns.
    """
    names = [d.strip() for d in dataset.split(",") if d.strip()]
    if not names:
        raise StudioError.of("dataset.none")
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
                    raise StudioError.of("dataset.info_invalid", file=info) from None
                if not isinstance(registry, dict):
                    raise StudioError.of("dataset.info_not_object", file=info)
                entry = registry.get(name)
            if entry is None:
                raise StudioError.of("dataset.not_found", name=name, info=info)
            check_entry(name, entry, kind)
            p = _in_dataset_dir(name, entry["file_name"], dataset_dir)
            if not p.is_file():
                raise StudioError.of("dataset.file_missing", name=name, file=p)
        rows.extend(read_file_rows(p, entry) if kind == "sft" else _preference_file_rows(p, entry, kind))
    if not rows:
        raise StudioError.of("dataset.no_rows", name=dataset)
    return rows


def check_preference_data(kind: str, dataset: str, dataset_dir: str) -> None:
    """Before a run folder is made for a run of preference rows (``kind`` ranking / kto: the stage table's
    ``rows``, studio/stages.py): its rows load as that stage reads them (pairs whose two answers are the same
    refused, besides every check of ``load_rows``), so a run that cannot learn is refused at Start, not minutes
    later inside its folder. Instruction rows: nothing to do here.

    Raises:
        StudioError: the dataset's first problem.
    """
    if kind != "sft":
        load_rows(dataset, dataset_dir, kind)
