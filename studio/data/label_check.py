"""Does a column look like sentiment labels? Warnings before converting, not after training.

A label column holds a few short values repeated many times (positive / negative / neutral, 1 / 0).
Columns that convert "fine" but make a useless classifier: free text (every value different and
long), row ids (every value different), a language column (en / zh), or simply too many classes
for the rows at hand. Each warning says what was seen and what to do.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

MAX_CLASSES = 20              # more than this is rarely a sentiment/label task
MIN_ROWS_PER_CLASS = 5        # fewer examples per class than this cannot be learned
FREE_TEXT_CHARS = 25          # mean value length above this reads as text, not a label
FREE_TEXT_WORDS = 3           # ... and so do values of three words or more on average
LANG_CODES = {"en", "zh", "zh-cn", "zh-tw", "fr", "de", "es", "it", "ja", "ko", "ru", "pt", "ar", "hi", "nl", "sv",
              "pl", "tr", "vi", "th", "id", "english", "chinese", "中文", "英文", "en-us", "en-gb"}
_ID = re.compile(r"^[A-Za-z]{0,4}[-_#]?\d+$")


def label_warnings(values: Iterable[Any], column: str) -> list[tuple[str, dict[str, Any]]]:
    """(code, facts) for each reason ``column`` does not look like labels; [] when it does.

    Codes: 'lang' (language codes), 'ids' (row ids), 'free_text', 'too_many' (too many classes),
    'few_rows' (classes with too few rows). The UI words them; facts carry the numbers.
    """
    vals = [str(v).strip() for v in values if v is not None and str(v).strip()]
    if not vals:
        return []
    counts = Counter(vals)
    distinct, n = len(counts), len(vals)
    out: list[tuple[str, dict[str, Any]]] = []
    sample = ", ".join(v for v, _ in counts.most_common(4))
    facts = {"column": column, "distinct": distinct, "rows": n, "sample": sample}
    if all(v.casefold() in LANG_CODES for v in counts):
        return [("lang", facts)]
    if distinct > 0.9 * n and n >= 10 and all(_ID.match(v) for v in list(counts)[:200]):
        return [("ids", facts)]
    mean_len = sum(len(v) for v in vals) / n
    mean_words = sum(len(v.split()) for v in vals) / n
    if mean_len > FREE_TEXT_CHARS or mean_words >= FREE_TEXT_WORDS or (distinct > 0.5 * n and n >= 10):
        out.append(("free_text", {**facts, "mean_len": round(mean_len)}))
    elif distinct > MAX_CLASSES:
        out.append(("too_many", {**facts, "max": MAX_CLASSES}))
    rare = [v for v, c in counts.items() if c < MIN_ROWS_PER_CLASS]
    if not out and rare and distinct > 1:
        out.append(("few_rows", {**facts, "rare": ", ".join(rare[:4]), "min": MIN_ROWS_PER_CLASS}))
    return out
