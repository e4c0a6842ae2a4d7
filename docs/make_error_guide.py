"""Write the guide's "When something goes wrong" tables from the studio's own error catalog.

    .venv/bin/python docs/make_error_guide.py           # rewrite the section in docs/GUIDE.md and docs/GUIDE.zh.md
    .venv/bin/python docs/make_error_guide.py --check   # exit 1 when a guide is out of step (tests/test_guide_errors.py)

The words are not written here: each row names an error's what and its fix exactly as the studio raises them
(an error code of the catalog, studio/words/errors.py, or for a run's end reason, not yet by code, the English
keys of studio/words/reason_words.py, whose values are the Chinese the page shows), and the tables are made from
those. A changed message therefore changes the guide when this script runs again, and a
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

# (where it shows, an error code of studio/words/errors.py): its what and the fix the page shows, in each language;
# or (where it shows, a text as the studio writes it, its fix) for the words not yet by code (why a run ended),
# "" = no separate fix (the text says it)
DATA, SETTINGS, TRAIN = "data", "settings", "train"
PICKED: list[tuple[str, str] | tuple[str, str, str]] = [
    (DATA, "data.binary_zip"), (DATA, "data.binary"), (DATA, "data.bad_encoding"), (DATA, "data.mixed_encodings"),
    (DATA, "data.too_large"), (DATA, "data.header_only"), (DATA, "data.label_empty"), (DATA, "data.labels_many"),
    (DATA, "data.label_spellings"), (DATA, "data.no_usable_rows"),
    (SETTINGS, "dataset.none"), (SETTINGS, "data.val_rows"),
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
    """English text as the studio writes it -> the Chinese the page shows (a run's end reasons; an error's words
    are its code's, from the catalog)."""
    from studio.words.reason_words import REASON_PHRASES
    return dict(REASON_PHRASES)


def _cell(text: str) -> str:
    out = re.sub(r"\{[^{}]*\}", "…", text).replace("{{", "{").replace("}}", "}")
    return out.replace("|", "\\|") if out else "–"


def _shown(text: str, lang: str, table: dict[str, str]) -> str:
    if not text:
        return "–"
    if text not in table:
        raise SystemExit(f"not in the studio's error table any more (update PICKED): {text!r}")
    return _cell(text if lang == "en" else table[text])


def _row(row: tuple[str, ...], lang: str, table: dict[str, str]) -> str:
    if len(row) == 2:  # a code: its words from the catalog (an unknown code fails here)
        from studio.words.errors import LANGS, entry
        words = entry(row[1])
        i = LANGS.index(lang)
        return f"| {_cell(words['what'][i])} | {_cell(words.get('page_fix', words.get('fix', ('', '')))[i])} |"
    return f"| {_shown(row[1], lang, table)} | {_shown(row[2], lang, table)} |"


def section(lang: str) -> str:
    """The generated part of one guide, markers included."""
    table, words = catalog(), HEAD[lang]
    lines = [BEGIN, words["intro"], ""]
    for where in (DATA, SETTINGS, TRAIN):
        lines += [f"**{words[where]}**", "", f"| {words['cols'][0]} | {words['cols'][1]} |", "|---|---|"]
        lines += [_row(row, lang, table) for row in PICKED if row[0] == where]
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
