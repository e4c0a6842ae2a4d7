"""python -m studio convert INPUT --out OUT.jsonl: a spreadsheet export -> training data, with a report.

Prints which columns and labels were chosen (so a wrong guess is visible at once) and the
validation report, then writes the alpaca JSONL atomically and registers it in dataset_info.json.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..data.convert import TASKS, convert_file, format_label_map
from ..data.readers import DEFAULT_MAX_MB
from ..data.report import format_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="data file: .csv .tsv .txt .json .jsonl .parquet .xlsx .xls")
    parser.add_argument("--out", required=True, help="output alpaca JSONL file")
    parser.add_argument("--task", choices=TASKS, default=None,
                        help="sentiment (text + label), instruction (instruction/input/output) or chat "
                             "(messages/conversations); guessed from the columns when omitted")
    parser.add_argument("--text-column", action="append",
                        help="column with the text to classify (guessed: text, review, 评论, ...); give it again to "
                             "read several columns as one text, one per line (a headline and its lead)")
    parser.add_argument("--label-column", help="column with the label (guessed: label, sentiment, rating, 标签, ...)")
    parser.add_argument("--label-map", help="raw label -> answer, e.g. 1=positive,0=negative (default: suggested "
                                            "from the values, in the text's language)")
    parser.add_argument("--instruction", help="instruction put in every row (default: one naming the labels)")
    parser.add_argument("--instruction-column", help="instruction task: column with the instruction")
    parser.add_argument("--input-column", help="instruction task: column with the input")
    parser.add_argument("--output-column", help="instruction task: column with the answer")
    parser.add_argument("--messages-column", help="chat task: column with the conversation")
    parser.add_argument("--language", choices=("en", "zh"), help="language of the default labels/instruction "
                                                                  "(default: detected from the text)")
    parser.add_argument("--encoding", default="auto", help="text encoding: auto, utf-8, utf-8-sig, gbk, gb18030, ...")
    parser.add_argument("--sheet", help="Excel sheet name (default: the first)")
    parser.add_argument("--max-mb", type=float, default=DEFAULT_MAX_MB, help="refuse larger files (default: 50)")
    parser.add_argument("--dataset-name", help="name registered in dataset_info.json (default: the output's name)")
    parser.add_argument("--dataset-dir", help="folder of dataset_info.json (default: the output's folder)")
    parser.add_argument("--replace", action="store_true", help="replace a dataset of the same name (or the --out "
                                                                "file) if it exists; without it, convert refuses")
    parser.add_argument("--cutoff-len", type=int, default=256, help="for the report: rows longer than this many "
                                                                    "tokens get truncated (default: 256)")
    parser.add_argument("--val-size", type=float, default=0.0, help="for the report: validation fraction or count")


def main(args: argparse.Namespace) -> int:
    """Convert, report, write. Returns 0; StudioError propagates to cli.py (message + exit code 2).

    Raises:
        StudioError: unreadable input, wrong columns, label problems, or an output path that is the input.
    """
    table, result, report, info = convert_file(
        args.input, args.out, args.task, encoding=args.encoding, max_mb=args.max_mb, sheet=args.sheet,
        dataset_name=args.dataset_name, dataset_dir=args.dataset_dir, cutoff_len=args.cutoff_len,
        val_size=args.val_size, replace=args.replace, text_column=args.text_column, label_column=args.label_column,
        label_map=args.label_map, instruction=args.instruction, language=args.language,
        instruction_column=args.instruction_column, input_column=args.input_column,
        output_column=args.output_column, messages_column=args.messages_column)
    detail = f" (encoding {table.encoding}" + (f", delimiter {table.delimiter!r})" if table.delimiter else ")") \
        if table.encoding else ""
    print(f"Read {len(table)} rows, {len(table.columns)} columns from {Path(args.input).name}{detail}")
    for w in table.warnings:
        print(f"Warning: {w}")
    print(f"Task: {result.task}; columns: " + ", ".join(f"{k}={v!r}" for k, v in result.columns.items()))
    if result.label_map:
        print(f"Label map (edit with --label-map): {format_label_map(result.label_map)}")
    if result.instruction:
        print(f"Instruction: {result.instruction}")
    for note in result.notes:
        print(f"Note: {note}")
    for reason, lines in result.skipped.items():
        shown = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
        print(f"Skipped {len(lines)} row(s) with {reason} (data rows {shown})")
    print(format_report(report))
    print(f"Wrote {len(result.rows)} rows to {args.out}; registered as "
          f"'{args.dataset_name or Path(args.out).stem}' in {info}")
    return 0
