"""The workspace's datasets as the page lists and makes them: the converted files of the data folder with what the
one registry knows of each (studio/data/registry.py), and an upload converted and registered in one call.

The Data tab only calls ``convert_upload`` and words its answer; the Settings tab lists ``dataset_choices``.
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..autoconfig import guess_task
from ..data.convert import ConversionResult, convert_table, joined_text, text_columns, write_jsonl
from ..data.labels import detect_language, format_label_map, standard_label_map, suggest_label_map
from ..data.readers import Table, read_table
from ..data.registry import INFO, clean_name, facts, refuse_replacing, register_dataset
from ..data.report import validation_report
from ..errors import StudioError
from ..safe_files import leaves
from ..state_files import read_state
from ..words.catalog import msg
from .context import AppContext


def datasets(ctx: AppContext) -> list[dict[str, Any]]:
    """Every converted dataset in the workspace's data folder, newest first: name, path, rows, task, date, and the
    file it was converted from (``source``, None for the studio's own: feedback and Improve datasets)."""
    known = facts(ctx.data_root)
    out = []
    for p in ctx.data_root.glob("*.jsonl"):
        if leaves(p, ctx.allowed_roots):  # a link out of the studio's folders is no dataset of it
            continue
        meta = known.get(p.name) or {}
        rows = meta.get("rows")
        if not isinstance(rows, int):
            with p.open("rb") as fh:
                rows = sum(1 for line in fh if line.strip())
        out.append({"name": p.stem, "path": str(p.resolve()), "rows": int(rows), "task": meta.get("task") or
                    _guess_task(p), "mtime": p.stat().st_mtime, "source": meta.get("source")})
    return sorted(out, key=lambda d: -d["mtime"])


def _guess_task(path: Path) -> str:
    """For datasets converted by the CLI: the rule is autoconfig's (``guess_task``), over the first 200 rows."""
    rows = []
    try:
        with path.open(encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if i >= 200:
                    break
                row = json.loads(line)
                rows.append(row if isinstance(row, dict) else {})
    except (OSError, ValueError):
        return "instruction"
    return guess_task(rows)


def dataset_choices(ctx: AppContext, lang: str) -> list[tuple[str, str]]:
    return [(msg("data.choice", lang, name=d["name"], rows=d["rows"], task=msg(f"task.{d['task']}", lang),
                 date=time.strftime("%Y-%m-%d %H:%M", time.localtime(d["mtime"]))), d["path"]) for d in datasets(ctx)]


def dataset_info(ctx: AppContext, path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    target = str(Path(path).resolve()) if Path(path).is_absolute() else str((ctx.data_root / path).resolve())
    return next((d for d in datasets(ctx) if d["path"] == target), None)


def open_table(path: str | Path, ctx: AppContext) -> Table:
    """The uploaded (or sample) file as a table, within the studio's upload limit.

    Raises:
        StudioError: unreadable, or over the limit (its fix names launch.py's --max-upload-mb, not convert's)."""
    try:
        return read_table(path, max_mb=ctx.max_upload_mb)
    except StudioError as exc:
        if exc.code != "data.too_large":
            raise
        raise StudioError.of("data.upload_too_large", **(exc.values or {})) from None


def _texts(table: Table, text: str | list[str] | None, n: int = 500) -> list[str]:
    columns = [c for c in text_columns(text) if c in table.columns]
    return [joined_text(r, columns) for r in table.rows[:n]] if columns else []


def label_map_text(table: Table, label_col: str | None, text: str | list[str] | None,
                   standard: bool = False) -> str:
    """The label map the page proposes for the chosen label column, as editable 'value=label' text: the team's own
    words kept (numbers get words), or with ``standard`` the studio's standard words for them, in the texts'
    language."""
    if not label_col or label_col not in table.columns:
        return ""
    propose = standard_label_map if standard else suggest_label_map
    return format_label_map(propose(table.values(label_col), detect_language(_texts(table, text))))


def model_view(table: Table, task: str, columns: dict[str, Any], label_map: str, instruction: str) -> dict[str, str]:
    """The first row exactly as the model will read and answer it (instruction, input, output), converted from the
    first rows of the table with the choices made so far.

    Raises:
        StudioError: the conversion's own refusal of these choices (the same words Convert would give)."""
    head = dataclasses.replace(table, rows=table.rows[:50], warnings=[])
    result = convert_table(head, task, text_column=columns.get("text") or None,
                           label_column=columns.get("label") or None, label_map=label_map or None,
                           instruction=instruction or None, instruction_column=columns.get("instruction") or None,
                           input_column=columns.get("input") or None, output_column=columns.get("output") or None,
                           messages_column=columns.get("messages") or None)
    return result.rows[0]


@dataclass
class Converted:
    """What ``convert_upload`` made: the conversion, the dataset's name and file, its report, and when the registry
    was read (a damaged registry kept aside since then is reported beside the result)."""
    result: ConversionResult
    name: str
    path: Path
    report: dict[str, Any]
    registry: Path
    since: float


def convert_upload(ctx: AppContext, path: str | None, task: str, columns: dict[str, str | None], label_map: str,
                   instruction: str, name: str, replace: bool = False) -> Converted:
    """Convert the picked file into workspace/data/<name>.jsonl and register it. Converting the same file again (a
    fixed column or label map) replaces its own dataset; another file under a name already taken is replaced only
    with ``replace=True`` (the page asks first), so nobody's dataset disappears without asking.

    Raises:
        StudioError: no file, unreadable file, wrong columns, label problems, or a dataset of that name exists.
    """
    if not path:
        raise StudioError.of("page.no_file")
    table = open_table(path, ctx)
    registry, since = ctx.data_root / INFO, time.time()
    read_state(registry, kind="json", expect=dict, empty={})  # garbage is kept aside (the CLI refuses it instead)
    clean = clean_name(name or Path(path).stem)
    result = convert_table(table, task, text_column=columns.get("text") or None,
                           label_column=columns.get("label") or None, label_map=label_map or None,
                           instruction=instruction or None, instruction_column=columns.get("instruction") or None,
                           input_column=columns.get("input") or None, output_column=columns.get("output") or None,
                           messages_column=columns.get("messages") or None)
    source, out = Path(path).name, ctx.data_root / f"{clean}.jsonl"
    if not replace and facts(ctx.data_root).get(out.name, {}).get("source") != source:
        refuse_replacing(ctx.data_root, clean, out)
    write_jsonl(result.rows, out)
    register_dataset(ctx.data_root, clean, out, result.rows, task=task, source=source)
    return Converted(result, clean, out, validation_report(result.rows, cutoff_len=256), registry, since)
