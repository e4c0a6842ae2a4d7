"""Write the guide's "When something goes wrong" tables from the studio's own error catalog.

    .venv/bin/python docs/make_error_guide.py           # rewrite the section in docs/GUIDE.md and docs/GUIDE.zh.md
    .venv/bin/python docs/make_error_guide.py --check   # exit 1 when a guide is out of step (tests/test_guide_errors.py)

The words are not written here: each row names an error's what and its fix exactly as the studio raises them
(the English keys of the page's error table, whose values are the Chinese the page shows), and the tables are
made from that table. A changed message therefore changes the guide when this script runs again, and a
removed one makes it fail instead of printing stale advice. Which errors are listed, and in which order, is the
choice below: the ones a newcomer meets first, tab by tab.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- errors: made by docs/make_error_guide.py -->", "<!-- /errors -->"
GUIDES = {"en": ROOT / "docs" / "GUIDE.md", "zh": ROOT / "docs" / "GUIDE.zh.md"}

# (where it shows, the error's what, its fix as the page shows it); "" = no separate fix (the text says it)
DATA, SETTINGS, TRAIN = "data", "settings", "train"
PICKED: list[tuple[str, str, str]] = [
    (DATA, "'{file}' is not a text file: it looks like an Excel/zip file",
     "rename it to '{name}.xlsx', or save the sheet as 'CSV UTF-8' in Excel"),
    (DATA, "'{file}' is not a text file: it looks like a binary file",
     "export the data as CSV (UTF-8), Excel (.xlsx) or JSONL"),
    (DATA, "'{file}' cannot be read as {encoding} (bad byte at position {pos})",
     "use encoding 'auto', or save the file as UTF-8"),
    (DATA, "'{file}' mixes encodings: {n} line(s) are UTF-8 but line {lines} (counting the header as line 1) are "
     "not, so any one decoding would garble part of it",
     "save the file again as 'CSV UTF-8' (or fix those lines); or choose the encoding explicitly if you know it"),
    (DATA, "'{file}' is {mb} MB, over the {limit} MB limit",
     "split the file into smaller parts, or ask whoever runs the studio to raise its upload limit to at least {mb} MB"),
    (DATA, "'{file}' has a header row ({columns}) but no data rows", "export the sheet again including its rows"),
    (DATA, "Label column '{column}' is empty in every row",
     "fill in the labels, or pick the column that holds them under Label column on the Data tab"),
    (DATA, "Label column '{column}' has {n} different values (at most {most} for a classification task)",
     "check that it is the label column (Label column on the Data tab); for free-text answers set Task to instruction"),
    (DATA, "Label column '{column}' spells the same label differently: {spellings}",
     "merge them in the Label map box on the Data tab, e.g. {example}"),
    (DATA, "No usable rows in '{file}' ({detail})", "check that the chosen columns are the right ones and are filled"),
    (SETTINGS, "No dataset given",
     "convert a file on the Data tab, then pick it under Training data on the Settings tab"),
    (SETTINGS, "val_size asks for {n} validation rows, but the data has only {rows} rows",
     "use a fraction such as 0.1, or a count well below the number of rows"),
    (TRAIN, "The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller Batch size / Max "
     "tokens per example (cutoff_len), or enable DeepSpeed offload (see the memory estimate)", ""),
    (TRAIN, "the training process was killed ({signal}, signal {n}).",
     "If nobody stopped it, the system probably ran out of memory (the kernel's OOM killer)."),
    (TRAIN, "The disk is full ({what}) while {doing}",
     "free some space (old runs, exports, checkpoints), then press Resume or Start again"),
    (TRAIN, "interrupted: the training process is gone (the studio or the machine restarted while it trained).",
     "Press Resume to continue from {ckpt}."),
]

HEAD = {
    "en": {"intro": "The page's own messages, with the fix it gives (… stands for your file, column or number). "
                    "Made from the studio's error table by `docs/make_error_guide.py`.",
           "cols": ("The page says", "What to do"),
           DATA: "Data tab", SETTINGS: "Settings tab", TRAIN: "Train tab (why a run ended)"},
    "zh": {"intro": "页面自己的提示，以及它给出的解决办法（… 代表你的文件、列或数字）。由 `docs/make_error_guide.py` "
                    "根据工作室的错误表生成。",
           "cols": ("页面显示", "怎么办"),
           DATA: "“数据”页", SETTINGS: "“设置”页", TRAIN: "“训练”页（运行为什么结束）"},
}


def catalog() -> dict[str, str]:
    """English text as the studio writes it -> the Chinese the page shows (errors and run-end reasons)."""
    from studio.words.error_words import PAGE_ERRORS
    from studio.words.reason_words import REASON_PHRASES
    return {**PAGE_ERRORS, **REASON_PHRASES}


def _shown(text: str, lang: str, table: dict[str, str]) -> str:
    if not text:
        return "–"
    if text not in table:
        raise SystemExit(f"not in the studio's error table any more (update PICKED): {text!r}")
    out = text if lang == "en" else table[text].replace("{{", "{").replace("}}", "}")
    out = re.sub(r"\{\w+\}", "…", out)
    return out.replace("|", "\\|")


def section(lang: str) -> str:
    """The generated part of one guide, markers included."""
    table, words = catalog(), HEAD[lang]
    lines = [BEGIN, words["intro"], ""]
    for where in (DATA, SETTINGS, TRAIN):
        rows = [(w, f) for tab, w, f in PICKED if tab == where]
        lines += [f"**{words[where]}**", "", f"| {words['cols'][0]} | {words['cols'][1]} |", "|---|---|"]
        lines += [f"| {_shown(w, lang, table)} | {_shown(f, lang, table)} |" for w, f in rows]
        lines.append("")
    return "\n".join(lines + [END])


def rewritten(text: str, lang: str) -> str:
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{GUIDES[lang]} has no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    return head + section(lang) + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether the guides are in step")
    args = ap.parse_args(argv)
    stale = []
    for lang, path in GUIDES.items():
        text = path.read_text(encoding="utf-8")
        new = rewritten(text, lang)
        if new != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"out of step with the error table: {', '.join(stale)} (run docs/make_error_guide.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
