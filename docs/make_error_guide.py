"""Write the guide's "When something goes wrong" tables from the studio's own error catalog.

    .venv/bin/python docs/make_error_guide.py           # rewrite the section in docs/GUIDE.md and docs/GUIDE.zh.md
    .venv/bin/python docs/make_error_guide.py --check   # exit 1 when a guide is out of step (tests/project/test_guide_errors.py)

The words are not written here: each row names an error's what and its fix by code (an error code of the catalog,
studio/words/errors.py; for why a run ended, the end reasons' codes, studio/words/reason_words.py), and the tables
are made from the page's words of those. A changed message therefore changes the guide when this script runs again,
and a removed one makes it fail instead of printing stale advice. Which errors are listed, and in which order, is the
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

# (where it shows, an error code of studio/words/errors.py): its what and the fix the page shows, in each language;
# or (TRAIN, an end reason's code of studio/words/reason_words.py, the code of the phrase that follows it with what to
# do, "" = the reason's own fix if it has one) for why a run ended
DATA, SETTINGS, TRAIN = "data", "settings", "train"
PICKED: list[tuple[str, str] | tuple[str, str, str]] = [
    (DATA, "data.binary_zip"), (DATA, "data.binary"), (DATA, "data.bad_encoding"), (DATA, "data.mixed_encodings"),
    (DATA, "data.too_large"), (DATA, "data.header_only"), (DATA, "data.label_empty"), (DATA, "data.labels_many"),
    (DATA, "data.label_spellings"), (DATA, "data.no_usable_rows"),
    (SETTINGS, "dataset.none"), (SETTINGS, "data.val_rows"),
    (TRAIN, "card_oom", ""), (TRAIN, "killed", "oom_killer"), (TRAIN, "disk_full_training", ""),
    (TRAIN, "process_gone", "resume_from"),
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


def _cell(text: str) -> str:
    out = re.sub(r"\{[^{}]*\}", "…", text).replace("{{", "{").replace("}}", "}")
    return out.replace("|", "\\|") if out else "–"


def _reason_cells(code: str, then: str, lang: str) -> tuple[str, str]:
    """An end reason's page words in ``lang`` and what to do (its own fix, else the words of the code ``then``),
    its runtime values as … and the names of fields and buttons filled in; a code the studio no longer writes
    fails here."""
    from studio.words.render import UnknownCode, has, template
    try:
        fix = f"reason.{then}" if then else f"reason.{code}.fix"
        return _cell(template(f"reason.{code}", lang)), _cell(template(fix, lang)) if has(fix) or then else "–"
    except UnknownCode:
        raise SystemExit(f"not in the studio's end reasons any more (update PICKED): {code!r} {then!r}") from None


def _row(row: tuple[str, ...], lang: str) -> str:
    if len(row) == 2:  # a code: its words from the catalog (an unknown code fails here)
        from studio.words.render import has, template
        fix = template(f"{row[1]}.fix", lang) if has(f"{row[1]}.fix") else ""
        return f"| {_cell(template(row[1], lang))} | {_cell(fix)} |"
    what, fix = _reason_cells(row[1], row[2], lang)
    return f"| {what} | {fix} |"


def section(lang: str) -> str:
    """The generated part of one guide, markers included."""
    words = HEAD[lang]
    lines = [BEGIN, words["intro"], ""]
    for where in (DATA, SETTINGS, TRAIN):
        lines += [f"**{words[where]}**", "", f"| {words['cols'][0]} | {words['cols'][1]} |", "|---|---|"]
        lines += [_row(row, lang) for row in PICKED if row[0] == where]
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
