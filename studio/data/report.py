"""Say what is wrong with the data before training, not after an hour of it.

``validation_report`` counts every problem (empty texts, missing labels, duplicates, rows the
cutoff will truncate, imbalance, mixed label spellings, split sizes) and pairs each count with
a fix. It never raises on bad rows: a report that crashes on the data it should describe is
useless. ``column_stats`` describes the raw columns for the preview table.

A problem is a code and its values (its words: studio/words/report_words.py, ``report.<code>`` and its ``.fix``);
the report keeps the command line's English beside them (``message``, ``fix``), and ``format_report`` words the
whole report for the command line or the Data tab in either language.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Iterable

from ..words.render import has, render
from .labels import label_key
from .readers import Table, cell_str
from .split import split_rows

_WIDE = re.compile("[\u2e80-\U0010ffff]")  # CJK and beyond: about one token per character
CHARS_PER_TOKEN = 4  # Latin text, for the estimate without a tokenizer; CJK counts 1 token per character
ESTIMATE_NOTE = render("report.estimate_note", {}, "en", "cli")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free length estimate (see ESTIMATE_NOTE): good enough to spot rows far over the cutoff."""
    wide = len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / CHARS_PER_TOKEN)


def _as_row(r: Any) -> dict[str, Any]:
    """Any row -> strings for the three fields (None, numbers, non-dicts must not crash the report)."""
    if not isinstance(r, dict):
        return {"instruction": "", "input": "", "output": ""}
    row: dict[str, Any] = {k: cell_str(r.get(k)) for k in ("instruction", "input", "output")}
    if r.get("system"):
        row["system"] = cell_str(r["system"])
    history = r.get("history")
    if isinstance(history, list) and all(isinstance(h, (list, tuple)) and len(h) == 2 for h in history):
        row["history"] = [[cell_str(q), cell_str(a)] for q, a in history]
    return row


def _looks_like_labels(outputs: list[str]) -> bool:
    """Few distinct, short answers: a classification dataset whose balance and spelling matter."""
    filled = [o.strip() for o in outputs if o.strip()]
    if not filled:
        return False
    k = len(set(filled))
    few = k <= 20 and k <= max(3, len(filled) // 2) and k < len(filled)  # some answers repeat
    return few and sum(map(len, filled)) / len(filled) <= 40


def _lengths(rows: list[dict[str, Any]], tokenizer: Any, cutoff_len: int, template: str) -> tuple[list[int], str]:
    """Full (untruncated) length of each training example, in tokens or estimated tokens."""
    # start-up: the chat templates, 0.003 s at import; `studio convert --help` loads this module
    from .templates import get_template
    from .tokenize import encode_example, example_prompt
    tpl = get_template(template, tokenizer)
    if tokenizer is not None:
        big = 1 << 30  # measure the whole row; the cutoff is compared afterwards
        return [len(encode_example(tokenizer, tpl, r, big)["input_ids"]) for r in rows], "tokens"
    return [estimate_tokens(example_prompt(tpl, r) + tpl.answer(r["output"])) for r in rows], "estimated tokens"


def _problem(code: str, severity: str, count: int, examples: Iterable[int] = (), **params: Any) -> dict[str, Any]:
    """The problem ``code`` (``report.<code>`` in the catalog) counted ``count`` times, with the values its words
    name; ``message`` and ``fix`` are its command line's English."""
    message, fix = _words({"code": code, "count": count, "params": params}, "en", "cli")
    return {"code": code, "severity": severity, "count": count, "message": message, "fix": fix,
            "examples": list(examples)[:10], "params": params}


def _words(problem: dict[str, Any], lang: str, surface: str) -> tuple[str, str]:
    """(what is wrong, what to do) of a report's ``problem`` in ``lang`` for ``surface``; a problem whose code this
    studio's words lack (a report kept by another version) as its English."""
    code = f"report.{problem.get('code')}"
    if not has(code):
        return str(problem.get("message", "")), str(problem.get("fix", ""))
    values = {**(problem.get("params") or {}), "count": problem["count"]}
    return render(code, values, lang, surface), render(f"{code}.fix", values, lang, surface)


def _text_problems(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with nothing to read and rows with no answer."""
    problems = []
    shared_instr, shared_n = Counter(r["instruction"] for r in data).most_common(1)[0]
    shared = shared_instr if shared_n >= 0.9 * len(data) else None  # one fixed instruction: the input is the text
    empty_text = [i for i, r in enumerate(data, 1)
                  if not (r["instruction"] + r["input"]).strip() or (shared is not None and not r["input"].strip()
                                                                      and r["instruction"] == shared)]
    if empty_text:
        problems.append(_problem("empty_text", "warning", len(empty_text), empty_text))
    missing = [i for i, r in enumerate(data, 1) if not r["output"].strip()]
    if missing:
        problems.append(_problem("missing_label", "warning", len(missing), missing))
    return problems


def _duplicate_problems(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exact repeats, and the same text given different answers."""
    problems = []
    seen: set[tuple[str, str, str]] = set()
    dups = []
    answers: dict[tuple[str, str], set[str]] = {}
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(data, 1):
        key = (r["instruction"].strip(), r["input"].strip(), r["output"].strip())
        if key in seen:
            dups.append(i)
        seen.add(key)
        if (key[0] or key[1]) and key[2]:
            answers.setdefault(key[:2], set()).add(key[2])
            first.setdefault(key[:2], i)
    if dups:
        problems.append(_problem("duplicates", "warning", len(dups), dups))
    conflicts = [k for k, v in answers.items() if len(v) > 1]
    if conflicts:
        problems.append(_problem("conflicting_labels", "warning", len(conflicts), sorted(first[k] for k in conflicts)))
    return problems


def _length_section(data: list[dict[str, Any]], tokenizer: Any, cutoff_len: int,
                    template: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Length statistics and the rows that the cutoff will truncate."""
    problems = []
    try:
        lengths, unit = _lengths(data, tokenizer, cutoff_len, template)
    except Exception as exc:  # a broken tokenizer or template must not hide the other findings
        lengths, unit = [estimate_tokens(r["instruction"] + r["input"] + r["output"]) for r in data], \
            "estimated tokens"
        problems.append(_problem("tokenizer_failed", "info", 0, error=type(exc).__name__))
    n = len(lengths)
    ordered = sorted(lengths)
    p95 = ordered[min(n - 1, int(math.ceil(0.95 * n)) - 1)]
    over = [i for i, length in enumerate(lengths, 1) if length > cutoff_len]
    section = {"unit": unit, "max": ordered[-1], "mean": round(sum(lengths) / n, 1), "p95": p95,
               "over_cutoff": len(over), **({"note": ESTIMATE_NOTE} if unit != "tokens" else {})}
    if over:
        problems.append(_problem("too_long", "warning", len(over), over, cutoff_len=cutoff_len, unit=unit,
                                 max=ordered[-1], p95=p95))
    return section, problems


def _label_section(data: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """For classification data: label counts, spellings of one label, a single label, imbalance."""
    outputs = [r["output"] for r in data]
    labels: dict[str, Any] = {"classification": _looks_like_labels(outputs)}
    problems: list[dict[str, Any]] = []
    if not labels["classification"]:
        return labels, problems
    counts = Counter(o for o in outputs if o.strip())
    labels["counts"] = dict(counts.most_common())
    spellings: dict[str, Counter[str]] = {}
    for value, c in counts.items():
        spellings.setdefault(label_key(value), Counter())[value] = c
    mixed = {k: v for k, v in spellings.items() if len(v) > 1}
    if mixed:
        rare = {s for v in mixed.values() for s, _ in v.most_common()[1:]}  # the odd spellings, to fix
        shown = "; ".join(" / ".join(f"'{s}' ({c})" for s, c in v.most_common()) for v in mixed.values())
        fix_map = ",".join(f"{s.strip()}={v.most_common(1)[0][0].strip()}" for v in mixed.values() for s in v)
        problems.append(_problem("mixed_spellings", "warning", sum(len(v) - 1 for v in mixed.values()),
                                 [i for i, o in enumerate(outputs, 1) if o in rare], shown=shown, fix_map=fix_map))
    # keyed by meaning, shown in the data's own spelling ('消极', not the synonym table's 'negative')
    merged = Counter({v.most_common(1)[0][0]: sum(v.values()) for v in spellings.values()})
    (big, n_big), (small, n_small) = merged.most_common()[0], merged.most_common()[-1]
    labels["imbalance_ratio"] = round(n_big / n_small, 2)
    if len(merged) == 1:
        problems.append(_problem("single_label", "error", sum(counts.values()), label=counts.most_common(1)[0][0]))
    elif n_big >= 3 * n_small:
        problems.append(_problem("imbalance", "warning", n_small, big=big, small=small, n_big=n_big, n_small=n_small,
                                 ratio=labels["imbalance_ratio"]))
    return labels, problems


def _split_section(data: list[dict[str, Any]], val_size: float,
                   seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train/validation sizes exactly as training will split (same function, same seed)."""
    problems = []
    train_n, val_n = len(data), 0
    if val_size and len(data) >= 2:
        train, val = split_rows(data, val_size, seed)
        train_n, val_n = len(train), len(val)
    if val_size and 0 < val_n < 10:
        problems.append(_problem("small_validation", "info", val_n))
    if train_n < 20:
        problems.append(_problem("few_rows", "info", train_n))
    return {"train": train_n, "val": val_n, "val_size": val_size}, problems


def validation_report(rows: list[dict[str, Any]], tokenizer: Any = None, cutoff_len: int = 256, *,
                      template: str = "default", val_size: float = 0.0, seed: int = 42) -> dict[str, Any]:
    """Counts of every data problem, each with a suggested fix, plus lengths, labels and split sizes.

    Returns {"rows", "ok" (no error-level problem), "problems": [{"code", "severity"
    (error|warning|info), "count", "message", "fix", "examples" (1-based row numbers, up to 10)}],
    "lengths", "labels", "split", "cutoff_len"}. Lengths use ``tokenizer`` (exactly as training
    encodes the row) when given, else ``estimate_tokens`` ("unit": "estimated tokens").
    """
    data = [_as_row(r) for r in rows]
    report: dict[str, Any] = {"rows": len(data), "cutoff_len": cutoff_len}
    if not data:
        report.update(ok=False, split={"train": 0, "val": 0, "val_size": val_size}, lengths={},
                      labels={"classification": False},
                      problems=[_problem("no_rows", "error", 0)])
        return report
    problems = _text_problems(data) + _duplicate_problems(data)
    report["lengths"], found = _length_section(data, tokenizer, cutoff_len, template)
    problems += found
    report["labels"], found = _label_section(data)
    problems += found
    report["split"], found = _split_section(data, val_size, seed)
    report["problems"] = problems + found
    report["ok"] = not any(p["severity"] == "error" for p in report["problems"])
    return report


def format_report(report: dict[str, Any], lang: str = "en", surface: str = "cli") -> str:
    """The report as plain lines in English or Chinese (lang="zh"), for the command line (``surface="cli"``: config
    keys and flags) or the Data tab (``surface="page"``: the page's fields); words: studio/words/report_words.py."""
    def say(code: str, **values: Any) -> str:
        return render(code, values, lang, surface)
    split = report.get("split", {})
    lines = [say("report.rows", rows=report["rows"], train=split.get("train", 0), val=split.get("val", 0))]
    if report.get("lengths"):
        ln = report["lengths"]
        lines.append(say("report.lengths", unit=ln["unit"], mean=ln["mean"], p95=ln["p95"], max=ln["max"],
                         over=ln["over_cutoff"], cutoff=report["cutoff_len"]))
    counts = report.get("labels", {}).get("counts")
    if counts:
        lines.append(say("report.labels", counts=list(counts.items())))
    problems = report.get("problems", [])
    if not problems:
        lines.append(say("no_problems"))
    for p in problems:
        message, fix = _words(p, lang, surface)
        rows = say("report.examples", rows=p["examples"], more=", …" if p["count"] > len(p["examples"]) else "") \
            if p["examples"] else ""
        lines.append(say("report.problem", severity=p["severity"], message=message, rows=rows, fix=fix))
    return "\n".join(lines)


def column_stats(table: Table | list[dict[str, Any]], tokenizer: Any = None) -> list[dict[str, Any]]:
    """Per column: empty cells, distinct values, length (tokens with a tokenizer, else characters),
    and for label-like columns (few distinct values) the count of each value."""
    if isinstance(table, Table):
        columns, rows = table.columns, table.rows
    else:
        rows = [r for r in table if isinstance(r, dict)]
        columns = list(dict.fromkeys(k for r in rows for k in r))
    out = []
    for col in columns:
        values = [cell_str(r.get(col)) for r in rows]
        filled = [v for v in values if v.strip()]
        if tokenizer is not None:
            sizes, unit = [len(tokenizer.encode(v, add_special_tokens=False)) for v in filled], "tokens"
        else:
            sizes, unit = [len(v) for v in filled], "chars"
        distinct = Counter(v.strip() for v in filled)
        stat: dict[str, Any] = {"column": col, "rows": len(values), "empty": len(values) - len(filled),
                                "distinct": len(distinct), "unit": unit,
                                "min_len": min(sizes, default=0), "max_len": max(sizes, default=0),
                                "mean_len": round(sum(sizes) / len(sizes), 1) if sizes else 0.0}
        if filled and len(distinct) <= 20 and len(distinct) <= max(3, len(filled) // 2) and \
                len(distinct) < len(filled):
            stat["counts"] = dict(distinct.most_common())
        out.append(stat)
    return out
