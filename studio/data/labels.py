"""Labels for classification data: the user's language, label maps, and spellings of one label.

A label map turns raw values (1/0, stars, 'pos', '好评') into the answers the model learns; the suggestion is
shown to the user to edit, so it must be predictable, and the words are the team's own: a word label is kept as it
is written (正面 stays 正面, the demo and the corrections speak it), spellings of one sentiment in one column become
its most frequent spelling, and only numbers (1/0, star ratings), which name nothing, get words proposed
(``standard_label_map`` is the page's offer of the studio's standard words, taken only when the user picks it).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

from ..errors import StudioError
from .readers import cell_str

LABEL_WORDS = {"en": {"positive": "positive", "negative": "negative", "neutral": "neutral"},
               "zh": {"positive": "积极", "negative": "消极", "neutral": "中性"}}
# The one table of sentiment spellings, in two tiers (compared casefolded and stripped):
#   SENTIMENT_NAMES: words that *name* a class. Safe to look for inside a model's free-text answer, so
#     evaluation (studio.evaluation.metrics) widens each data label with these.
#   SENTIMENT_DATA_ONLY: words that mean a class only as a whole cell value in a data file ("good", "bad",
#     "like", 好, 差). Inside an answer they mislead ("not bad" is not negative, "I like the price but..."),
#     so they are used to suggest label maps, never to read answers.
# yes/no and true/false are left out on purpose: they usually answer another question (spam? relevant?).
SENTIMENT_NAMES: dict[str, tuple[str, ...]] = {
    "positive": ("positive", "pos", "积极", "正面", "好评", "正向", "褒义", "正"),
    "negative": ("negative", "neg", "消极", "负面", "差评", "负向", "贬义", "负"),
    "neutral": ("neutral", "neu", "中性", "中立", "一般", "中", "中评"),
}
SENTIMENT_DATA_ONLY: dict[str, tuple[str, ...]] = {
    "positive": ("good", "like", "好", "满意"),
    "negative": ("bad", "dislike", "差", "不满意"),
    "neutral": ("mixed",),
}
_SYNONYMS = {cls: set(SENTIMENT_NAMES[cls]) | set(SENTIMENT_DATA_ONLY[cls]) for cls in SENTIMENT_NAMES}
INSTRUCTIONS = {
    ("en", "sentiment"): "Classify the sentiment of this text as {labels}.",
    ("en", "classify"): "Classify this text into one of these categories: {labels}.",
    ("zh", "sentiment"): "判断这段文字的情感倾向，回答{labels}。",
    ("zh", "classify"): "将这段文字归入以下类别之一：{labels}。",
}


# invisible characters that copy-paste and spreadsheets leave inside cells: zero-width space/non-joiner/joiner,
# word joiner, byte-order mark
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def clean_label(value: str) -> str:
    """A label as the model should learn it: Unicode NFKC (NFC/NFD 'café', fullwidth 'ＰＯＳ' are one spelling)
    and no zero-width characters, so labels that look the same are one class."""
    return unicodedata.normalize("NFKC", value).translate(_ZERO_WIDTH)


def detect_language(texts: list[str]) -> str:
    """'zh' when at least 30% of the letters in a sample are Chinese characters, else 'en'."""
    sample = "".join(texts[:500])
    cjk = sum(1 for c in sample if "\u4e00" <= c <= "\u9fff")
    letters = sum(1 for c in sample if c.isalpha())
    return "zh" if letters and cjk / letters >= 0.3 else "en"


def parse_label_map(spec: str | dict[str, str] | None) -> dict[str, str]:
    """'1=positive,0=negative' (or a dict) -> {'1': 'positive', '0': 'negative'}.

    Raises:
        StudioError: an entry without '=' or with an empty side.
    """
    if not spec:
        return {}
    if isinstance(spec, dict):
        return {str(k).strip(): str(v).strip() for k, v in spec.items()}
    out = {}
    for part in re.split(r"[,，\n]", spec):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise StudioError.of("data.label_map_entry", entry=part.strip())
        out[key.strip()] = value.strip()
    return out


def format_label_map(label_map: dict[str, str]) -> str:
    """The inverse of parse_label_map, for printing and for the UI's editable box."""
    return ",".join(f"{k}={v}" for k, v in label_map.items())


def _sentiment_class(value: str, numeric_values: list[float]) -> str | None:
    v = value.strip().casefold()
    for cls, words in _SYNONYMS.items():
        if v in words:
            return cls
    try:
        x = float(v)
    except ValueError:
        return None
    lo, hi = min(numeric_values), max(numeric_values)
    if {lo, hi} <= {0.0, 1.0} or {lo, hi} <= {-1.0, 1.0}:  # binary 1/0 or 1/-1, with optional 0 = neutral
        return "positive" if x == 1 else "negative" if (x == -1 or (x == 0 and lo == 0 and hi == 1
                                                                     and -1 not in numeric_values)) else "neutral"
    if lo >= 1 and hi <= 10 and hi - lo >= 2:  # star ratings: below the middle negative, above positive
        mid = (lo + hi) / 2
        return "positive" if x > mid else "negative" if x < mid else "neutral"
    return None


def suggest_label_map(values: list[Any], language: str = "en") -> dict[str, str]:
    """A label map for the raw values found (with repeats: the most frequent spelling wins): each word keeps its
    own spelling, trimmed; several known spellings of one sentiment in the column (pos / positive, 好评 / 正面)
    become the most frequent of them; numbers (1/0, star ratings) get the sentiment words of the user's language
    (positive/negative or 积极/消极), since a number names nothing."""
    counts = Counter(cell_str(v).strip() for v in values if cell_str(v).strip())
    standard = standard_label_map(values, language)
    if all(_is_number(v) for v in counts):
        return standard
    words = set(LABEL_WORDS.get(language, LABEL_WORDS["en"]).values())
    by_class: dict[str, list[str]] = {}
    for raw, word in standard.items():
        if word != raw.strip() or raw.strip() in words:  # a known spelling of a sentiment
            by_class.setdefault(word, []).append(raw)
    out = {raw: raw.strip() for raw in standard}
    for spellings in by_class.values():
        if len(spellings) > 1:
            # the commonest spelling; on a tie, the sentiment's own name (positive, 积极), then the shorter
            keep = max(spellings, key=lambda s: (counts[s.strip()], s.strip() in words, -len(s)))
            out.update({s: keep.strip() for s in spellings})
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def standard_label_map(values: list[Any], language: str = "en") -> dict[str, str]:
    """The studio's standard words for the raw values: known sentiment spellings, 1/0 and star ratings go to the
    words of ``language`` (positive/negative or 积极/消极); anything else maps to itself, trimmed. Offered on the
    page; a conversion takes it only when the user chose it."""
    raw = sorted({cell_str(v) for v in values if cell_str(v).strip()}, key=lambda s: (s.strip().casefold(), s))
    nums = []
    for v in raw:
        try:
            nums.append(float(v.strip()))
        except ValueError:
            pass
    numeric = nums if len(nums) == len(raw) and nums else [0.0, 1.0]
    words = LABEL_WORDS.get(language, LABEL_WORDS["en"])
    out = {}
    for v in raw:
        cls = _sentiment_class(v, numeric)
        out[v] = words[cls] if cls else v.strip()
    if len(set(out.values())) == 1 and len(raw) > 1:  # a mapping that merges everything is a wrong guess
        out = {v: v.strip() for v in raw}
    return out


def check_spellings(label_map: dict[str, str], counts: Counter[str], column: str) -> None:
    """Labels that differ only in case/spaces but are not known synonyms: the user must decide.

    Raises:
        StudioError: lists each group of spellings with row counts and a label map that merges them.
    """
    groups: dict[str, set[str]] = {}
    for v in label_map.values():
        groups.setdefault(v.casefold(), set()).add(v)
    mixed = {fold: sorted(g) for fold, g in groups.items() if len(g) > 1}
    if not mixed:
        return
    per_target = Counter()
    for raw, n in counts.items():
        per_target[label_map[raw]] += n
    shown = [[(s, per_target[s]) for s in g] for g in list(mixed.values())[:5]]
    fix_map = format_label_map({raw.strip(): label_map[raw].casefold() for raw in sorted(label_map)
                                if label_map[raw].casefold() in mixed})
    raise StudioError.of("data.label_spellings", column=column, spellings=shown, example=fix_map)


def _labels_text(labels: list[str], language: str) -> str:
    if language == "zh":
        return "、".join(labels[:-1]) + "或" + labels[-1] if len(labels) > 1 else labels[0]
    return ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else labels[0]


def label_order(mapping: dict[str, str], counts: Counter[str], user_map: dict[str, str] | None = None) -> list[str]:
    """The answers in a stable order for the instruction: positive/negative/neutral for sentiment,
    else the user's label-map order, else most frequent first (ties alphabetical)."""
    targets = set(mapping.values())
    for words in LABEL_WORDS.values():
        canonical = [w for w in words.values() if w in targets]
        if len(canonical) == len(targets):
            return canonical
    if user_map:
        return [t for t in dict.fromkeys(user_map.values()) if t in targets]
    total = Counter()
    for raw, n in counts.items():
        total[mapping[raw]] += n
    return sorted(targets, key=lambda t: (-total[t], t))


def default_instruction(labels: list[str], language: str) -> str:
    """The instruction for a classification row, naming the allowed answers in the user's language: a sentiment
    question when every label is a known spelling of a sentiment (the team's own words: 正面, good, 差评)."""
    kind = "sentiment" if labels and all(_sentiment_class(v, [0.0, 1.0]) for v in labels) else "classify"
    return INSTRUCTIONS[(language, kind)].format(labels=_labels_text(labels, language))


def label_key(value: str) -> str:
    """What a label means, ignoring spelling: 'Positive', 'positive ', 'pos' -> 'positive'."""
    v = re.sub(r"[\s\W_]+", "", str(value).casefold())
    for cls, words in _SYNONYMS.items():
        if v in words or any(v == re.sub(r"[\s\W_]+", "", w) for w in words):
            return cls
    return v


def labels_by_meaning(values: Any, labels: list[str]) -> dict[str, str]:
    """Each of ``values`` (a check file's labels) -> the one of ``labels`` (a run's) that means the same, by the
    studio's standard sentiment names (``label_key``: 正面, 好评 and positive are one sentiment); a value that is one
    of ``labels`` maps to itself, a value no label means (or several do) is left out."""
    by_key: dict[str, list[str]] = {}
    for lab in labels:
        by_key.setdefault(label_key(lab), []).append(lab)
    out: dict[str, str] = {}
    for value in dict.fromkeys(str(v) for v in values):
        if value in labels:
            out[value] = value
        elif len(same := by_key.get(label_key(value), [])) == 1:
            out[value] = same[0]
    return out
