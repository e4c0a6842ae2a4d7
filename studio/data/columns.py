"""Which column is which: guesses from names shop exports and public datasets use, and a clear
error (available columns + the closest name) when a named column does not exist."""
from __future__ import annotations

import difflib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import StudioError
from .labels import default_instruction, detect_language, format_label_map, label_order, suggest_label_map
from .readers import Table, cell_str

# Column names seen in shop exports and public datasets, best first (compared without case/space/_/-).
TEXT_NAMES = ["text", "review", "content", "comment", "sentence", "评论", "内容", "文本", "评价", "评论内容",
              "reviewtext", "body", "message", "query", "句子", "留言"]
LABEL_NAMES = ["label", "sentiment", "rating", "标签", "情感", "类别", "class", "category", "polarity", "score",
               "stars", "star", "评分", "星级", "target", "y"]
INSTRUCTION_NAMES = ["instruction", "prompt", "question", "指令", "问题", "提示"]
INPUT_NAMES = ["input", "context", "query", "输入", "上下文"]
OUTPUT_NAMES = ["output", "response", "answer", "completion", "target", "回答", "输出", "答案"]
CHAT_NAMES = ["messages", "conversations", "conversation", "dialog", "对话"]

def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(name)).casefold()


def closest_column(name: str, columns: list[str]) -> str | None:
    """The available column most like ``name`` (case-insensitive), or None."""
    by_norm = {_norm(c): c for c in columns}
    hit = difflib.get_close_matches(_norm(name), list(by_norm), n=1, cutoff=0.5)
    return by_norm[hit[0]] if hit else None


def require_column(table: Table, name: str, role: str) -> str:
    """``name`` if the table has it (also matched ignoring case/spaces), else a StudioError (``role``: text, label,
    instruction, input, output, system or messages; the command's flag is --<role>-column).

    Raises:
        StudioError: lists the available columns and suggests the closest one.
    """
    if name in table.columns:
        return name
    for c in table.columns:
        if _norm(c) == _norm(name):
            return c
    guess = closest_column(name, table.columns)
    file = Path(table.source).name
    if guess:
        raise StudioError.of("data.column_missing_guess", name=name, file=file, guess=guess, columns=table.columns,
                             role=role)
    raise StudioError.of("data.column_missing", name=name, file=file, columns=table.columns, role=role)


def _find(columns: list[str], names: list[str], exclude: set[str]) -> str | None:
    cols = [c for c in columns if c not in exclude]
    normed = {c: _norm(c) for c in cols}
    for want in names:  # exact (normalised) names first, in priority order
        for c in cols:
            if normed[c] == want:
                return c
    for want in names:  # then names that contain a known word: 'review_body', '商品评论'
        if len(want) < 3 and not re.search(r"[\u4e00-\u9fff]", want):
            continue
        for c in cols:
            if want in normed[c]:
                return c
    return None


def guess_columns(table: Table) -> dict[str, str]:
    """Best guesses for each role: text, label, instruction, input, output, messages (absent = no guess).

    The text column falls back to the column with the longest average text, because reviews
    are the longest thing in a shop export.
    """
    cols = table.columns
    out: dict[str, str] = {}
    for role, names in (("messages", CHAT_NAMES), ("instruction", INSTRUCTION_NAMES), ("output", OUTPUT_NAMES)):
        hit = _find(cols, names, set(out.values()))
        if hit:
            out[role] = hit
    if "instruction" in out or "output" in out:
        hit = _find(cols, INPUT_NAMES, set(out.values()))
        if hit:
            out["input"] = hit
    used = {out.get("messages", "")}
    text = _find(cols, TEXT_NAMES, used)
    if text is None:
        lengths = {c: sum(len(cell_str(r.get(c))) for r in table.rows[:200]) for c in cols if c not in used}
        numeric = {c for c in lengths if all(re.fullmatch(r"-?\d+(\.\d+)?", cell_str(r.get(c)).strip() or "0")
                                              for r in table.rows[:200])}
        candidates = {c: n for c, n in lengths.items() if c not in numeric and n > 0}
        text = max(candidates, key=candidates.__getitem__) if candidates else None
    if text:
        out["text"] = text
    label = _find(cols, LABEL_NAMES, {text or ""} | used)
    if label:
        out["label"] = label
    return out


def guess_task(table: Table, columns: dict[str, str] | None = None) -> str:
    """chat if there is a messages column, instruction if there are output + instruction/input, else sentiment."""
    g = columns if columns is not None else guess_columns(table)
    if "messages" in g:
        return "chat"
    if "output" in g and ("instruction" in g or "input" in g) and "label" not in g:
        return "instruction"
    return "sentiment"


def suggest_options(table: Table) -> dict[str, Any]:
    """Everything the Data tab pre-fills after an upload: task, columns, language, label map, instruction.

    The label map is text ('1=positive,0=negative') so the user can edit it in one box.
    """
    cols = guess_columns(table)
    task = guess_task(table, cols)
    text_col = cols.get("text") or cols.get("input") or cols.get("instruction")
    lang = detect_language([cell_str(r.get(text_col)) for r in table.rows[:500]]) if text_col else "en"
    out: dict[str, Any] = {"task": task, "columns": cols, "language": lang, "label_map": "", "instruction": ""}
    if task == "sentiment" and "text" in cols and "label" in cols:
        counts = Counter(v for v in (cell_str(r.get(cols["label"])) for r in table.rows) if v.strip())
        mapping = suggest_label_map(list(counts), lang)
        out["label_map"] = format_label_map(mapping)
        out["instruction"] = default_instruction(label_order(mapping, counts), lang)
    return out
