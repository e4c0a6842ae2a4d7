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
from ..workspace import atomic_write_text, is_disk_full
from .columns import CHAT_NAMES, _norm, guess_columns, guess_task, require_column
from .labels import (check_spellings, clean_label, default_instruction, detect_language, format_label_map, label_order,
                     parse_label_map, suggest_label_map)
from .readers import DEFAULT_MAX_MB, Table, cell_str, read_table

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
        raise StudioError.of("data.label_empty", column=label_col)
    if len(counts) > MAX_LABELS:
        raise StudioError.of("data.labels_many", column=label_col, n=len(counts), most=MAX_LABELS)


def _check_not_a_copy(texts: list[str], labels: list[str], text_col: str, label_col: str) -> None:
    """Raises StudioError when the label column repeats the text in every row (a wrong column choice that would
    otherwise train the model to echo its input)."""
    pairs = [(t.strip(), v.strip()) for t, v in zip(texts, labels) if v.strip()]
    if len(pairs) >= 2 and all(t == v for t, v in pairs):
        raise StudioError.of("data.label_is_text", label=label_col, text=text_col)


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
        return StudioError.of("data.no_label_column", file=file, column=text_col)
    missing = "text" if not text_col else "label"
    return StudioError.of("data.column_unknown", role=missing, file=file, columns=table.columns)


def convert_sentiment(table: Table, text_column: str | None = None, label_column: str | None = None,
                      label_map: dict[str, str] | str | None = None, instruction: str | None = None,
                      language: str | None = None) -> ConversionResult:
    """text + label columns -> rows with a fixed instruction, the text as input, the mapped label as output.

    Raises:
        StudioError: missing columns, unmapped label values, case-only label variants, no usable rows.
    """
    guessed = guess_columns(table)
    text_col = require_column(table, text_column, "text") if text_column else guessed.get("text")
    label_col = require_column(table, label_column, "label") if label_column \
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
            raise StudioError.of("data.label_unmapped", values=unmapped.most_common(10),
                                 example=format_label_map({v: "..." for v in unmapped}))
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
    ins = require_column(table, instruction_column, "instruction") if instruction_column \
        else g.get("instruction")
    inp = require_column(table, input_column, "input") if input_column else g.get("input")
    out = require_column(table, output_column, "output") if output_column else g.get("output")
    sys_col = require_column(table, system_column, "system") if system_column else \
        next((c for c in table.columns if _norm(c) == "system"), None)
    if not out or not (ins or inp or instruction):
        raise StudioError.of("data.instruction_columns", file=Path(table.source).name, columns=table.columns)
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
            raise StudioError.of("data.chat_not_json", row=n) from None
    if not isinstance(value, list):
        raise StudioError.of("data.chat_not_list", row=n)
    out = []
    for m in value:
        role = m.get("role", m.get("from")) if isinstance(m, dict) else None
        content = m.get("content", m.get("value")) if isinstance(m, dict) else None
        if role is None or content is None:
            raise StudioError.of("data.chat_message", row=n)
        if str(role).lower() in _ROLES:  # tool/function turns are not trained on
            out.append({"role": _ROLES[str(role).lower()], "content": cell_str(content)})
    return out


def convert_chat(table: Table, messages_column: str | None = None) -> ConversionResult:
    """Conversations -> one row per assistant reply: its user turn as instruction, the earlier
    (user, assistant) pairs as ``history``, the system message as ``system``.

    Raises:
        StudioError: no conversation column, malformed messages (with the row number), no usable rows.
    """
    col = require_column(table, messages_column, "messages") if messages_column \
        else guess_columns(table).get("messages")
    if not col:
        raise StudioError.of("data.no_chat_column", file=Path(table.source).name, columns=table.columns)
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
        why = [(len(v), k) for k, v in skipped.items() if v]
        if not why:
            raise StudioError.of("data.no_rows_at_all", file=Path(table.source).name)
        raise StudioError.of("data.no_usable_rows", file=Path(table.source).name, skipped=why)


def convert_table(table: Table, task: str | None = None, **options: Any) -> ConversionResult:
    """Dispatch on ``task`` (guessed when None); ``options`` go to convert_sentiment/_instruction/_chat.

    Raises:
        StudioError: unknown task, or whatever the task's converter raises.
    """
    task = task or guess_task(table)
    if task not in TASKS:
        raise StudioError.of("data.unknown_task", task=task, choices=TASKS)
    fn = {"sentiment": convert_sentiment, "instruction": convert_instruction, "chat": convert_chat}[task]
    allowed = fn.__code__.co_varnames[1:fn.__code__.co_argcount]
    return fn(table, **{k: v for k, v in options.items() if k in allowed and v is not None})


def write_jsonl(rows: list[dict[str, Any]], out: str | Path) -> Path:
    """Write alpaca JSONL atomically: an existing file is replaced whole or not at all."""
    path = Path(out)
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


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
            raise StudioError.of("data.info_invalid", file=info, detail=str(exc)) from None
        if not isinstance(data, dict):
            raise StudioError.of("data.info_not_object", file=info)
    return data


def refuse_replacing(dataset_dir: str | Path, name: str, out: str | Path) -> None:
    """Before anything is written: a dataset name already registered, or an output file that exists, is not
    replaced without asking; the caller passes replace=True once the user said so.

    Raises:
        StudioError (data.name_taken, data.out_exists): names the dataset and the file that would be replaced.
    """
    info = Path(dataset_dir) / "dataset_info.json"
    entry = _read_info(info).get(name)
    if entry is not None:
        old = entry.get("file_name") if isinstance(entry, dict) else None
        if old:
            raise StudioError.of("data.name_taken_file", name=name, info=info, old=old)
        raise StudioError.of("data.name_taken", name=name, info=info)
    if Path(out).exists():
        raise StudioError.of("data.out_exists", file=out, name=name)


def _file_name(dataset_dir: str | Path, file_path: str | Path) -> str:
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
    info = Path(dataset_dir) / "dataset_info.json"
    data = _read_info(info)
    for name in names:
        entry = data.pop(name, None)
        file_name = entry.get("file_name") if isinstance(entry, dict) else None
        if isinstance(file_name, str) and file_name:
            target = Path(dataset_dir) / file_name
            if target.parent.resolve() == Path(dataset_dir).resolve() and not target.is_symlink():
                target.unlink(missing_ok=True)
    atomic_write_text(info, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def register_dataset(dataset_dir: str | Path, name: str, file_path: str | Path,
                     rows: list[dict[str, Any]] | None = None, kind: str = "sft") -> Path:
    """Add/replace ``name`` in dataset_dir/dataset_info.json (LLaMA-Factory's format), keeping other entries.
    Callers ask first (``refuse_replacing``) before they write the data file. ``kind``: sft (alpaca rows), ranking
    (``"ranking": true`` with chosen/rejected, for stage dpo) or kto (a kto_tag column, for stage kto).

    Raises:
        StudioError: the existing dataset_info.json is not valid JSON (it is left untouched), or ``file_path`` is
            outside ``dataset_dir`` (the loader reads file_name inside dataset_dir only).
    """
    info = Path(dataset_dir) / "dataset_info.json"
    data = _read_info(info)
    file_name = _file_name(dataset_dir, file_path)
    columns = {"prompt": "instruction", "query": "input", "response": "output"}
    if kind == "ranking":
        columns = {"prompt": "instruction", "query": "input", "chosen": "chosen", "rejected": "rejected"}
    elif kind == "kto":
        columns["kto_tag"] = "kto_tag"
    if rows and any("system" in r for r in rows):
        columns["system"] = "system"
    if rows and any("history" in r for r in rows):
        columns["history"] = "history"
    data[name] = {"file_name": file_name, "formatting": "alpaca", **({"ranking": True} if kind == "ranking" else {}),
                  "columns": columns}
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
    # start-up: the data report, 0.005 s at import; `studio feedback --help` loads this module and reports nothing
    from .report import validation_report
    src, out = Path(src), Path(out)
    if out.suffix.lower() != ".jsonl":
        raise StudioError.of("data.out_suffix", file=out.name, suggestion=out.with_suffix(".jsonl"))
    if out.resolve() == src.resolve():
        raise StudioError.of("data.out_is_input")
    folder, name = Path(dataset_dir) if dataset_dir else out.parent, dataset_name or out.stem
    _file_name(folder, out)
    if not replace:
        refuse_replacing(folder, name, out)
    table = read_table(src, encoding=encoding, max_mb=DEFAULT_MAX_MB if max_mb is None else max_mb, sheet=sheet)
    result = convert_table(table, task, **options)
    report = validation_report(result.rows, tokenizer, cutoff_len, val_size=val_size)
    try:
        write_jsonl(result.rows, out)
        info = register_dataset(folder, name, out, result.rows)
    except OSError as exc:  # a full disk, a read-only folder, a path under a file: say which, not a traceback
        if is_disk_full(exc):
            raise StudioError.of("data.disk_full") from None
        raise StudioError.of("data.cannot_write", file=out, detail=str(exc.strerror or exc)) from None
    return table, result, report, info
