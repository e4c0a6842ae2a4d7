"""The workspace's one dataset registry: LLaMA-Factory's ``dataset_info.json`` in a data folder.

Each entry is LLaMA-Factory's own (``file_name``, ``formatting``, ``columns``, ``ranking``), so its trainer reads the
file as it is; what the studio knows of an entry beyond that (the task it was converted for, its row count, the
file it came from) lives under one extra key of the entry, ``studio``, which LLaMA-Factory's parser does not read.
One file, one writer (``register_dataset``): the Data tab, ``python -m studio convert``, the feedback datasets and Improve all
register here. (An older studio kept those facts in a second file, ``studio_datasets.json``; it is read as a
fallback for entries that have no ``studio`` key, and never written.)
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..workspace import atomic_write_text

INFO = "dataset_info.json"
FACTS = "studio"  # the entry's key for the studio's own facts: task, rows, source
OLD_FACTS_FILE = "studio_datasets.json"  # an older studio's second registry, read only


def clean_name(text: str) -> str:
    """A dataset name made of a typed name or a file's stem: letters, digits, '_', '.', '-' (the rest becomes '_')."""
    return re.sub(r"[^\w.-]+", "_", text).strip("_.") or "dataset"


def read(dataset_dir: str | Path) -> dict[str, Any]:
    """dataset_info.json as a dict ({} when absent or empty).

    Raises:
        StudioError: it is not valid JSON or not an object (it is left untouched).
    """
    info = Path(dataset_dir) / INFO
    data: dict[str, Any] = {}
    if info.is_file() and info.read_text(encoding="utf-8").strip():
        try:
            data = json.loads(info.read_text(encoding="utf-8-sig"))
        except ValueError as exc:
            raise StudioError.of("data.info_invalid", file=info, detail=str(exc)) from None
        if not isinstance(data, dict):
            raise StudioError.of("data.info_not_object", file=info)
    return data


def facts(dataset_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The studio's facts of every registered dataset, by its file name in the folder: {task, rows, source}.
    An unreadable registry has none (the page reports it; the CLI refuses it where it writes)."""
    folder = Path(dataset_dir)
    try:
        entries = read(folder)
    except StudioError:
        entries = {}
    out: dict[str, dict[str, Any]] = {}
    try:
        old = json.loads((folder / OLD_FACTS_FILE).read_text(encoding="utf-8"))
        out.update({k: v for k, v in old.items() if isinstance(v, dict)} if isinstance(old, dict) else {})
    except (OSError, ValueError):
        pass
    for entry in entries.values():
        if isinstance(entry, dict) and isinstance(entry.get(FACTS), dict) and isinstance(entry.get("file_name"), str):
            out[entry["file_name"]] = entry[FACTS]
    return out


def refuse_replacing(dataset_dir: str | Path, name: str, out: str | Path) -> None:
    """Before anything is written: a dataset name already registered, or an output file that exists, is not
    replaced without asking; the caller passes replace=True once the user said so.

    Raises:
        StudioError (data.name_taken, data.out_exists): names the dataset and the file that would be replaced.
    """
    info = Path(dataset_dir) / INFO
    entry = read(dataset_dir).get(name)
    if entry is not None:
        old = entry.get("file_name") if isinstance(entry, dict) else None
        if old:
            raise StudioError.of("data.name_taken_file", name=name, info=info, old=old)
        raise StudioError.of("data.name_taken", name=name, info=info)
    if Path(out).exists():
        raise StudioError.of("data.out_exists", file=out, name=name)


def file_name(dataset_dir: str | Path, file_path: str | Path) -> str:
    """``file_path`` relative to ``dataset_dir``, as dataset_info.json names it.

    Raises:
        StudioError: the file is outside the folder (the loader confines file_name to dataset_dir).
    """
    fp = Path(file_path).resolve()
    try:
        return str(fp.relative_to(Path(dataset_dir).resolve()))
    except ValueError:
        raise StudioError.of("data.out_outside", file=fp, folder=dataset_dir) from None


def forget_datasets(dataset_dir: str | Path, names: list[str]) -> None:
    """Remove ``names`` from dataset_dir/dataset_info.json and delete their files (inside ``dataset_dir`` only): the
    undo of ``register_dataset`` for a caller whose later step was refused (nothing it made stays registered)."""
    info = Path(dataset_dir) / INFO
    data = read(dataset_dir)
    for name in names:
        entry = data.pop(name, None)
        named = entry.get("file_name") if isinstance(entry, dict) else None
        if isinstance(named, str) and named:
            target = Path(dataset_dir) / named
            if target.parent.resolve() == Path(dataset_dir).resolve() and not target.is_symlink():
                target.unlink(missing_ok=True)
    atomic_write_text(info, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def register_dataset(dataset_dir: str | Path, name: str, file_path: str | Path, rows: list[dict[str, Any]] | None = None,
             kind: str = "sft", *, task: str | None = None, source: str | None = None) -> Path:
    """Add/replace ``name`` in dataset_dir/dataset_info.json (LLaMA-Factory's format), keeping other entries.
    Callers ask first (``refuse_replacing``) before they write the data file. ``kind``: sft (alpaca rows), ranking
    (``"ranking": true`` with chosen/rejected, for stage dpo) or kto (a kto_tag column, for stage kto). ``task``
    and ``source`` (the file it was converted from) are the studio's facts, kept with the row count under
    ``studio``.

    Raises:
        StudioError: the existing dataset_info.json is not valid JSON (it is left untouched), or ``file_path`` is
            outside ``dataset_dir`` (the loader reads file_name inside dataset_dir only).
    """
    info = Path(dataset_dir) / INFO
    data = read(dataset_dir)
    columns = {"prompt": "instruction", "query": "input", "response": "output"}
    if kind == "ranking":
        columns = {"prompt": "instruction", "query": "input", "chosen": "chosen", "rejected": "rejected"}
    elif kind == "kto":
        columns["kto_tag"] = "kto_tag"
    if rows and any("system" in r for r in rows):
        columns["system"] = "system"
    if rows and any("history" in r for r in rows):
        columns["history"] = "history"
    known = {"kind": kind, **({"rows": len(rows)} if rows is not None else {}),
             **({"task": task} if task else {}), **({"source": source} if source else {})}
    data[name] = {"file_name": file_name(dataset_dir, file_path), "formatting": "alpaca",
                  **({"ranking": True} if kind == "ranking" else {}), "columns": columns, FACTS: known}
    atomic_write_text(info, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return info
