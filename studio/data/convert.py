"""Turn a Table into alpaca rows (instruction, input, output[, system, history]) and save them.

Three tasks: ``sentiment`` (a text column + a label column, mapped through a label map the
user can edit), ``instruction`` (instruction/input/output columns) and ``chat`` (OpenAI
``messages`` or ShareGPT ``conversations``; one row per assistant reply, earlier turns kept
as LLaMA-Factory's ``history`` so the answer is trained with its context).
Output is alpaca JSONL written atomically and registered in a LLaMA-Factory ``dataset_info.json``.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import StudioError
from ..workspace import atomic_write_text
from .columns import CHAT_NAMES, _norm, guess_columns, guess_task, require_column
from .labels import (check_spellings, clean_label, default_instruction, detect_language, format_label_map, label_order,
                     parse_label_map, suggest_label_map)
from .readers import Table, cell_str

Task = Literal["sentiment", "instruction", "chat"]
TASKS: tuple[str, ...] = ("sentiment", "instruction", "chat")

_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "gpt": "assistant", "model": "assistant",
          "bot": "assistant", "system": "system"}


@dataclass
class ConversionResult:
    """The converted rows plus everything the user should see about how they were made."""

    rows: list[dict[str, Any]]
    task: str
    columns: dict[str, str]
    label_map: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    instruction: str = ""
    skipped: dict[str, list[int]] = field(default_factory=dict)  # reason -> 1-based data row numbers
    notes: list[str] = field(default_factory=list)


MAX_LABELS = 50  # more distinct answers than this is free text, and the instruction listing them outgrows cutoff_len


def _check_label_count(table: Table, label_col: str, counts: Counter) -> None:
    """Raises StudioError for an all-empty label column or one with too many distinct values."""
    if not counts:
        raise StudioError(f"Label column '{label_col}' is empty in every row",
                          "fill in the labels, or choose the column that holds them (CLI: --label-column NAME)",
                          code="data_label_empty", page_fix="fill in the labels, or pick the column that holds them "
                          "under Label column on the Data tab")
    if len(counts) > MAX_LABELS:
        raise StudioError(f"Label column '{label_col}' has {len(counts)} different values (at most {MAX_LABELS} "
                          "for a classification task)", "check that it is the label column; for free-text answers "
                          "use the instruction task (CLI: --task instruction)", code="data_labels_many",
                          page_fix="check that it is the label column (Label column on the Data tab); for free-text "
                          "answers set Task to instruction")


def _check_not_a_copy(texts: list[str], labels: list[str], text_col: str, label_col: str) -> None:
    """Raises StudioError when the label column repeats the text in every row (a wrong column choice that would
    otherwise train the model to echo its input)."""
    pairs = [(t.strip(), v.strip()) for t, v in zip(texts, labels) if v.strip()]
    if len(pairs) >= 2 and all(t == v for t, v in pairs):
        raise StudioError(f"Label column '{label_col}' holds the same values as the text column '{text_col}' in "
                          "every row", "choose the column that holds the labels (CLI: --label-column NAME)",
                          code="data_label_is_text",
                          page_fix="pick the column that holds the labels under Label column on the Data tab")


def _normalisation_notes(raw: list[str], cleaned: list[str]) -> list[str]:
    """One note per label that several raw spellings became (zero-width characters removed, NFKC)."""
    spellings: dict[str, set[str]] = {}
    for r, c in zip(raw, cleaned):
        if c.strip():
            spellings.setdefault(c, set()).add(r)
    return [f"labels {' / '.join(ascii(s) for s in sorted(group))} were merged into '{c}' (Unicode NFKC "
            "normalisation, zero-width characters removed): they look the same"
            for c, group in sorted(spellings.items()) if len(group) > 1]


def label_column_problem(table: Table, text_col: str | None, label_col: str | None) -> StudioError | None:
    """Why a text + label conversion cannot use these columns (None when it can); the Data tab shows it before
    Convert, and the conversion raises it.

    A file of texts alone gets a fix that adds the labels: "pick the label column" cannot be followed when there is
    no second column to pick.
    """
    if text_col and label_col and text_col != label_col:
        return None
    file = Path(table.source).name
    if text_col and not [c for c in table.columns if c != text_col]:
        return StudioError(f"'{file}' has only one column, '{text_col}', and no column of labels",
                           "add a column with each row's label (for example positive or negative) to the file, "
                           "save it and convert it again", code="data_no_labels",
                           page_fix="add a column with each row's label (for example positive or negative) to the "
                           "spreadsheet, save it and upload it again")
    missing = "text" if not text_col else "label"
    return StudioError(f"Could not tell which column holds the {missing} in '{file}'. "
                       f"Available columns: {', '.join(table.columns)}",
                       f"name it (CLI: --{missing}-column NAME)", code="data_column",
                       page_fix=f"pick it under {missing.capitalize()} column on the Data tab")


def convert_sentiment(table: Table, text_column: str | None = None, label_column: str | None = None,
                      label_map: dict[str, str] | str | None = None, instruction: str | None = None,
                      language: str | None = None) -> ConversionResult:
    """text + label columns -> rows with a fixed instruction, the text as input, the mapped label as output.

    Raises:
        StudioError: missing columns, unmapped label values, case-only label variants, no usable rows.
    """
    guessed = guess_columns(table)
    text_col = require_column(table, text_column, "text", "--text-column") if text_column else guessed.get("text")
    label_col = require_column(table, label_column, "label", "--label-column") if label_column \
        else guessed.get("label")
    problem = label_column_problem(table, text_col, label_col)
    if problem is not None:
        raise problem
    texts = [cell_str(r.get(text_col)) for r in table.rows]
    raw_labels = [cell_str(r.get(label_col)) for r in table.rows]
    _check_not_a_copy(texts, raw_labels, text_col, label_col)
    labels = [clean_label(v) for v in raw_labels]
    lang = language or detect_language(texts)
    counts = Counter(v for v in labels if v.strip())
    _check_label_count(table, label_col, counts)
    notes = _normalisation_notes(raw_labels, labels)
    user_map = {clean_label(k): v for k, v in parse_label_map(label_map).items()}
    if user_map:
        by_fold = {k.casefold(): v for k, v in user_map.items()}
        mapping, unmapped = {}, Counter()
        for v, n in counts.items():
            target = user_map.get(v, user_map.get(v.strip(), by_fold.get(v.strip().casefold())))
            if target is None:
                unmapped[v] = n
            else:
                mapping[v] = target
        if unmapped:
            shown = ", ".join(f"'{v}' ({n} row{'s' if n != 1 else ''})" for v, n in unmapped.most_common(10))
            raise StudioError(f"Label values not in the label map: {shown}",
                              f"add them to the label map (e.g. {format_label_map({v: '...' for v in unmapped})}) "
                              "or remove those rows", code="data_label_unmapped")
    else:
        mapping = suggest_label_map(list(counts), lang)
        merged = {t: sorted(k for k in mapping if mapping[k] == t) for t in set(mapping.values())}
        for target, sources in sorted(merged.items()):
            if len(sources) > 1:  # one-to-one renames show in the printed label map already
                notes.append(f"label {' / '.join(repr(s) for s in sources)} -> '{target}'")
        check_spellings(mapping, counts, label_col)
    targets = label_order(mapping, counts, user_map)
    instr = instruction or default_instruction(targets, lang)
    rows, skipped = [], {"empty text": [], "missing label": []}
    for n, (text, label) in enumerate(zip(texts, labels), 1):
        if not text.strip():
            skipped["empty text"].append(n)
        elif not label.strip():
            skipped["missing label"].append(n)
        else:
            rows.append({"instruction": instr, "input": text.strip(), "output": mapping[label]})
    _require_rows(rows, table, skipped)
    return ConversionResult(rows, "sentiment", {"text": text_col, "label": label_col}, mapping, lang, instr,
                            {k: v for k, v in skipped.items() if v}, notes)


def convert_instruction(table: Table, instruction_column: str | None = None, input_column: str | None = None,
                        output_column: str | None = None, instruction: str | None = None,
                        system_column: str | None = None) -> ConversionResult:
    """instruction/input/output columns -> rows; a fixed ``instruction`` may replace the column.

    Raises:
        StudioError: no output column, neither instruction nor input, or no usable rows.
    """
    g = guess_columns(table)
    ins = require_column(table, instruction_column, "instruction", "--instruction-column") if instruction_column \
        else g.get("instruction")
    inp = require_column(table, input_column, "input", "--input-column") if input_column else g.get("input")
    out = require_column(table, output_column, "output", "--output-column") if output_column else g.get("output")
    sys_col = require_column(table, system_column, "system", "--system-column") if system_column else \
        next((c for c in table.columns if _norm(c) == "system"), None)
    if not out or not (ins or inp or instruction):
        raise StudioError(f"'{Path(table.source).name}' needs an output column and an instruction or input column. "
                          f"Available columns: {', '.join(table.columns)}",
                          "name them (CLI: --instruction-column/--input-column/--output-column), or use "
                          "--task sentiment for a text + label file", code="data_column",
                          page_fix="pick them under Instruction column, Input column and Output column on the Data "
                          "tab, or set Task to sentiment for a text + label file")
    rows, skipped = [], {"empty instruction and input": [], "empty output": []}
    for n, r in enumerate(table.rows, 1):
        row = {"instruction": instruction or (cell_str(r.get(ins)).strip() if ins else ""),
               "input": cell_str(r.get(inp)).strip() if inp else "",
               "output": cell_str(r.get(out)).strip()}
        if sys_col and cell_str(r.get(sys_col)).strip():
            row["system"] = cell_str(r.get(sys_col)).strip()
        if not (row["instruction"] or row["input"]):
            skipped["empty instruction and input"].append(n)
        elif not row["output"]:
            skipped["empty output"].append(n)
        else:
            rows.append(row)
    _require_rows(rows, table, skipped)
    used = {k: v for k, v in (("instruction", ins), ("input", inp), ("output", out), ("system", sys_col)) if v}
    return ConversionResult(rows, "instruction", used, {}, detect_language([r["input"] or r["instruction"]
                                                                            for r in rows]), instruction or "",
                            {k: v for k, v in skipped.items() if v})


def _messages(value: Any, n: int) -> list[dict[str, str]]:
    """One row's conversation as [{'role', 'content'}] from OpenAI or ShareGPT shape (or their JSON text)."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            raise StudioError(f"Row {n}: the conversation is not valid JSON",
                              'write it as [{"role": "user", "content": "..."}, ...]', code="data_chat") from None
    if not isinstance(value, list):
        raise StudioError(f"Row {n}: the conversation must be a list of messages",
                          'write it as [{"role": "user", "content": "..."}, ...]', code="data_chat")
    out = []
    for m in value:
        role = m.get("role", m.get("from")) if isinstance(m, dict) else None
        content = m.get("content", m.get("value")) if isinstance(m, dict) else None
        if role is None or content is None:
            raise StudioError(f"Row {n}: a message lacks role/content (OpenAI) or from/value (ShareGPT)",
                              'write messages like {"role": "user", "content": "..."}', code="data_chat")
        if str(role).lower() in _ROLES:  # tool/function turns are not trained on
            out.append({"role": _ROLES[str(role).lower()], "content": cell_str(content)})
    return out


def convert_chat(table: Table, messages_column: str | None = None) -> ConversionResult:
    """Conversations -> one row per assistant reply: its user turn as instruction, the earlier
    (user, assistant) pairs as ``history``, the system message as ``system``.

    Raises:
        StudioError: no conversation column, malformed messages (with the row number), no usable rows.
    """
    col = require_column(table, messages_column, "messages", "--messages-column") if messages_column \
        else guess_columns(table).get("messages")
    if not col:
        raise StudioError(f"No conversation column in '{Path(table.source).name}'. Available columns: "
                          f"{', '.join(table.columns)}", "use a 'messages' (OpenAI) or 'conversations' (ShareGPT) "
                          "column, or name it (CLI: --messages-column)", code="data_column",
                          page_fix="pick the column that holds the conversations under Messages column on the Data "
                          "tab")
    # files that mix OpenAI and ShareGPT rows have both columns, each filled in some rows
    others = [c for c in table.columns if c != col and _norm(c) in CHAT_NAMES]
    rows, skipped = [], {"no assistant reply": []}
    for n, r in enumerate(table.rows, 1):
        value = next((r.get(c) for c in [col, *others] if r.get(c) not in (None, "")), None)
        msgs = _messages(value, n)
        system = next((m["content"] for m in msgs if m["role"] == "system"), "")
        history: list[list[str]] = []
        pending: str | None = None
        made = 0
        for m in msgs:
            if m["role"] == "user":
                pending = m["content"] if pending is None else pending + "\n" + m["content"]
            elif m["role"] == "assistant" and pending is not None:
                row: dict[str, Any] = {"instruction": pending, "input": "", "output": m["content"]}
                if system:
                    row["system"] = system
                if history:
                    row["history"] = [list(h) for h in history]
                rows.append(row)
                history.append([pending, m["content"]])
                pending, made = None, made + 1
        if not made:
            skipped["no assistant reply"].append(n)
    _require_rows(rows, table, skipped)
    return ConversionResult(rows, "chat", {"messages": col}, {}, detect_language([r["instruction"] for r in rows]),
                            "", {k: v for k, v in skipped.items() if v})


def _require_rows(rows: list, table: Table, skipped: dict[str, list[int]]) -> None:
    if not rows:
        why = ", ".join(f"{len(v)} with {k}" for k, v in skipped.items() if v)
        raise StudioError(f"No usable rows in '{Path(table.source).name}' ({why or 'no rows'})",
                          "check that the chosen columns are the right ones and are filled", code="data_no_rows")


def convert_table(table: Table, task: str | None = None, **options: Any) -> ConversionResult:
    """Dispatch on ``task`` (guessed when None); ``options`` go to convert_sentiment/_instruction/_chat.

    Raises:
        StudioError: unknown task, or whatever the task's converter raises.
    """
    task = task or guess_task(table)
    if task not in TASKS:
        raise StudioError(f"Unknown task '{task}'", f"use one of: {', '.join(TASKS)}", code="data_task")
    fn = {"sentiment": convert_sentiment, "instruction": convert_instruction, "chat": convert_chat}[task]
    allowed = fn.__code__.co_varnames[1:fn.__code__.co_argcount]
    return fn(table, **{k: v for k, v in options.items() if k in allowed and v is not None})


def write_jsonl(rows: list[dict[str, Any]], out: str | Path) -> Path:
    """Write alpaca JSONL atomically: an existing file is replaced whole or not at all."""
    path = Path(out)
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


REPLACE_FIX = "choose another dataset name, or replace it on purpose (CLI: --replace)"


def _read_info(info: Path) -> dict[str, Any]:
    """dataset_info.json as a dict ({} when absent or empty).

    Raises:
        StudioError: it is not valid JSON or not an object (it is left untouched).
    """
    data: dict[str, Any] = {}
    if info.is_file() and info.read_text(encoding="utf-8").strip():
        try:
            data = json.loads(info.read_text(encoding="utf-8-sig"))
        except ValueError as exc:
            raise StudioError(f"'{info}' is not valid JSON ({exc})", "fix or delete it, then convert again",
                              code="data_info") from None
        if not isinstance(data, dict):
            raise StudioError(f"'{info}' must hold a JSON object of datasets", "fix or delete it", code="data_info")
    return data


def refuse_replacing(dataset_dir: str | Path, name: str, out: str | Path, fix: str = REPLACE_FIX) -> None:
    """Before anything is written: a dataset name already registered, or an output file that exists, is not
    replaced without asking; the caller passes replace=True once the user said so.

    Raises:
        StudioError (code 'data_exists'): names the dataset and the file that would be replaced.
    """
    info = Path(dataset_dir) / "dataset_info.json"
    entry = _read_info(info).get(name)
    if entry is not None:
        old = entry.get("file_name") if isinstance(entry, dict) else None
        raise StudioError(f"A dataset named '{name}' is already registered in '{info}'"
                          + (f" (file '{old}')" if old else "") + "; converting would replace it", fix,
                          code="data_exists")
    if Path(out).exists():
        raise StudioError(f"'{out}' already exists; converting would replace it", fix, code="data_exists")


def _file_name(dataset_dir: str | Path, file_path: str | Path) -> str:
    """``file_path`` relative to ``dataset_dir``, as dataset_info.json names it.

    Raises:
        StudioError: the file is outside the folder (the loader confines file_name to dataset_dir).
    """
    fp = Path(file_path).resolve()
    try:
        return str(fp.relative_to(Path(dataset_dir).resolve()))
    except ValueError:
        raise StudioError(f"'{fp}' is outside the dataset folder '{dataset_dir}', so dataset_info.json cannot "
                          "name it", "write the output inside the dataset folder (CLI: --out inside --dataset-dir, "
                          "or leave --dataset-dir out)", code="data_out",
                          page_fix="type a plain name (no folders) under Dataset name on the Data tab") from None


def register_dataset(dataset_dir: str | Path, name: str, file_path: str | Path,
                     rows: list[dict[str, Any]] | None = None) -> Path:
    """Add/replace ``name`` in dataset_dir/dataset_info.json (LLaMA-Factory's format), keeping other entries.
    Callers ask first (``refuse_replacing``) before they write the data file.

    Raises:
        StudioError: the existing dataset_info.json is not valid JSON (it is left untouched), or ``file_path`` is
            outside ``dataset_dir`` (the loader reads file_name inside dataset_dir only).
    """
    info = Path(dataset_dir) / "dataset_info.json"
    data = _read_info(info)
    file_name = _file_name(dataset_dir, file_path)
    columns = {"prompt": "instruction", "query": "input", "response": "output"}
    if rows and any("system" in r for r in rows):
        columns["system"] = "system"
    if rows and any("history" in r for r in rows):
        columns["history"] = "history"
    data[name] = {"file_name": file_name, "formatting": "alpaca", "columns": columns}
    atomic_write_text(info, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return info


def convert_file(src: str | Path, out: str | Path, task: str | None = None, *, encoding: str = "auto",
                 max_mb: float | None = None, sheet: str | None = None, dataset_name: str | None = None,
                 dataset_dir: str | Path | None = None, cutoff_len: int = 256, val_size: float = 0.0,
                 tokenizer: Any = None, replace: bool = False, **options: Any) -> tuple[Table, ConversionResult, dict[str, Any], Path]:
    """Read -> convert -> report -> write JSONL -> register: the whole 'Data' step for the CLI and the UI.

    Nothing is written unless reading and converting succeed, and an existing dataset name or output file is
    replaced only with ``replace=True`` (CLI: --replace). Returns (table, result, report,
    dataset_info path); ``options`` are the converter's (text_column, label_map, ...).

    Raises:
        StudioError: from reading or converting, an output path that is not a new .jsonl, or a dataset that
            exists (without ``replace``).
    """
    from .readers import DEFAULT_MAX_MB, read_table
    from .report import validation_report
    src, out = Path(src), Path(out)
    if out.suffix.lower() != ".jsonl":
        raise StudioError(f"Output '{out.name}' must end in .jsonl", f"use --out {out.with_suffix('.jsonl')}",
                          code="data_out", page_fix="type a plain name under Dataset name on the Data tab")
    if out.resolve() == src.resolve():
        raise StudioError("The output file is the input file", "choose another --out path", code="data_out",
                          page_fix="type another name under Dataset name on the Data tab")
    folder, name = Path(dataset_dir) if dataset_dir else out.parent, dataset_name or out.stem
    _file_name(folder, out)
    if not replace:
        refuse_replacing(folder, name, out, f"choose another --dataset-name / --out, or pass --replace to replace "
                                            f"'{name}'")
    table = read_table(src, encoding=encoding, max_mb=DEFAULT_MAX_MB if max_mb is None else max_mb, sheet=sheet)
    result = convert_table(table, task, **options)
    report = validation_report(result.rows, tokenizer, cutoff_len, val_size=val_size)
    try:
        write_jsonl(result.rows, out)
        info = register_dataset(folder, name, out, result.rows)
    except OSError as exc:  # a full disk, a read-only folder, a path under a file: say which, not a traceback
        from ..workspace import is_disk_full
        what = "The disk is full" if is_disk_full(exc) else f"Cannot write '{out}' ({exc.strerror or exc})"
        raise StudioError(f"{what} while saving the converted data", "free some space or choose another --out "
                          "folder you can write to", code="data_write",
                          page_fix="free some space, then press Convert again") from None
    return table, result, report, info
