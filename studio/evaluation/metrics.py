"""Label parsing, classification metrics and the confusion plot for the sentiment check (no torch).

Why a synonym table: a model fine-tuned on "positive" may still answer "Positive." or, for
Chinese data, "正面" where the file says "积极". Those are right answers and must count as
such; an answer that names no label (or two) is *unparseable* and counts as wrong, never
dropped. The label set itself always comes from the data; synonyms only widen each label.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Sequence

from ..data.labels import SENTIMENT_NAMES
from ..errors import StudioError
from ..runs.plots import drawable, use_plot_fonts

# Each group is one meaning; a data label that matches any member gets all members as aliases. Only the
# words that *name* a class (see studio/data/labels.py for why "good"/"bad" are not among them).
SYNONYM_GROUPS: list[tuple[str, ...]] = list(SENTIMENT_NAMES.values())

_PUNCT_OR_SPACE = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """Lowercase, unify full-width forms (NFKC), turn punctuation/whitespace runs into one space."""
    text = unicodedata.normalize("NFKC", str(text)).lower()
    return _PUNCT_OR_SPACE.sub(" ", text).strip()


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def label_aliases(labels: Sequence[str]) -> dict[str, list[str]]:
    """For each label: its normalized spellings (itself + synonyms), longest first.

    A synonym shared by two data labels would make answers ambiguous, so it is kept only for
    the label whose own name is in that group.
    """
    norm = {lab: normalize(lab) for lab in labels}
    out: dict[str, list[str]] = {}
    for lab in labels:
        names = {norm[lab]}
        for group in SYNONYM_GROUPS:
            if norm[lab] in group:
                names.update(group)
        out[lab] = names  # type: ignore[assignment]
    # drop aliases claimed by more than one label, except a label's own name
    for lab in labels:
        others = set().union(*(out[o] for o in labels if o != lab)) if len(labels) > 1 else set()
        out[lab] = sorted({a for a in out[lab] if a == norm[lab] or a not in others}, key=len, reverse=True)
    return out


def _find(alias: str, text: str) -> int:
    """Position of ``alias`` in normalized ``text`` as a whole word (substring for Chinese), or -1."""
    if _is_cjk(alias):
        return text.find(alias)
    m = re.search(r"(?<![^\W_])" + re.escape(alias) + r"(?![^\W_])", text)
    return m.start() if m else -1


def parse_label(answer: str, labels: Sequence[str], aliases: dict[str, list[str]] | None = None) -> str | None:
    """The data label an answer names, or None when it names none or several (unparseable).

    Order: the whole answer is an alias; the answer starts with one ("Positive. The food..."); exactly one
    label is mentioned anywhere. Single-character Chinese synonyms (正/负/中) count only as the whole
    answer, since as substrings they appear in unrelated words.
    """
    aliases = aliases or label_aliases(labels)
    text = normalize(answer)
    if not text:
        return None
    for lab in labels:
        if text in aliases[lab]:
            return lab
    best: tuple[int, int, str] | None = None  # (position, -alias length, label)
    found: set[str] = set()
    for lab in labels:
        for alias in aliases[lab]:
            if _is_cjk(alias) and len(alias) == 1 and alias != normalize(lab):
                continue
            pos = _find(alias, text)
            if pos >= 0:
                found.add(lab)
                if best is None or (pos, -len(alias)) < best[:2]:
                    best = (pos, -len(alias), lab)
    if best is None:
        return None
    if best[0] == 0 or len(found) == 1:
        return best[2]
    return None


def label_set(outputs: Sequence[str], max_labels: int = 20) -> list[str]:
    """Distinct labels in the data (first spelling of each, case/punctuation-insensitive), sorted.

    Raises:
        StudioError: fewer than 2 or more than ``max_labels`` distinct answers: not classification data.
    """
    seen: dict[str, str] = {}
    for o in outputs:
        key = normalize(o)
        if key and key not in seen:
            seen[key] = str(o).strip()
    if len(seen) < 2:
        raise StudioError.of("eval.few_labels", n=len(seen))
    if len(seen) > max_labels:
        raise StudioError.of("eval.not_labels", n=len(seen))
    return sorted(seen.values(), key=lambda s: normalize(s))


def classification_metrics(y_true: Sequence[str], y_pred: Sequence[str | None],
                           labels: Sequence[str]) -> dict:
    """Accuracy, per-class precision/recall/F1/support and the confusion matrix.

    ``None`` in ``y_pred`` is an unparseable answer: it is wrong (lowers accuracy and the true
    class's recall) but is no prediction of any class (does not lower anyone's precision).
    Confusion rows are the true label, columns the predicted one; unparseable answers are
    counted per true label in ``confusion["unparseable"]``. A 0/0 ratio is reported as 0.0.
    """
    if len(y_true) != len(y_pred):
        raise ValueError("y_true and y_pred differ in length")
    labels = list(labels)
    idx = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    matrix = [[0] * k for _ in range(k)]
    unparseable = [0] * k
    for t, p in zip(y_true, y_pred):
        if p is None or p not in idx:
            unparseable[idx[t]] += 1
        else:
            matrix[idx[t]][idx[p]] += 1
    n = len(y_true)
    correct = sum(matrix[i][i] for i in range(k))
    per_class: dict[str, dict[str, float | int]] = {}
    for i, lab in enumerate(labels):
        tp = matrix[i][i]
        predicted = sum(matrix[r][i] for r in range(k))
        support = sum(matrix[i]) + unparseable[i]
        prec = tp / predicted if predicted else 0.0
        rec = tp / support if support else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_class[lab] = {"precision": prec, "recall": rec, "f1": f1, "support": support}
    present = [c for c in per_class.values() if c["support"]]
    return {
        "accuracy": correct / n if n else 0.0,
        "macro_f1": sum(c["f1"] for c in present) / len(present) if present else 0.0,
        "per_class": per_class,
        "confusion": {"labels": labels, "matrix": matrix, "unparseable": unparseable},
        "n": n,
        "unparseable": sum(unparseable),
    }


CONFUSION_WORDS = {"title": "Confusion matrix", "answer": "model's answer", "truth": "true label",
                   "unparseable": "(unparseable)"}


def confusion_figure(confusion: dict, title: str | None = None, words: dict[str, str] | None = None) -> Any:
    """A matplotlib Figure of the confusion matrix (rows: true label, columns: model's answer).

    ``words`` names the title, axes and the unparseable column (``CONFUSION_WORDS``: the CLI's English; a page
    passes its own language's).

    Uses ``matplotlib.figure.Figure`` directly, not pyplot, so UI threads share no global state.
    """
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    from matplotlib.figure import Figure

    words = {**CONFUSION_WORDS, **(words or {})}
    use_plot_fonts()
    # a label no installed font can draw would be a row of empty boxes: its number says more
    labels = [lab if drawable(lab) else f"label {i + 1}" for i, lab in enumerate(confusion["labels"])]
    matrix = [list(r) for r in confusion["matrix"]]
    unp = confusion.get("unparseable") or []
    cols = labels + ([words["unparseable"]] if any(unp) else [])
    if any(unp):
        matrix = [r + [u] for r, u in zip(matrix, unp)]
    fig = Figure(figsize=(1.2 + 0.9 * len(cols), 1.0 + 0.8 * len(labels)), layout="constrained")
    ax = fig.add_subplot()
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel(words["answer"])
    ax.set_ylabel(words["truth"])
    ax.set_title(title or words["title"])
    top = max((v for r in matrix for v in r), default=0) or 1
    for i, r in enumerate(matrix):
        for j, v in enumerate(r):
            ax.text(j, i, str(v), ha="center", va="center", color="white" if v > top / 2 else "black")
    return fig
