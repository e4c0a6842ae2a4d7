"""How close a written answer is to its reference: exact match, chrF, BLEU, ROUGE-L, length, structure (no torch).

chrF and BLEU are sacrebleu's, so a number here is the number a paper or another tool reports for the same texts.
BLEU needs words: for Chinese text (any reference with a CJK character) it uses sacrebleu's own ``zh`` tokenizer
(each Chinese character a token, other text as 13a splits it), else ``13a``, its default. chrF counts character
n-grams and needs no tokenizer.

ROUGE-L: ``rouge-score`` (Google's) drops every non-ASCII character in its tokenizer, so a Chinese answer scores 0
whatever it says; the ``rouge-chinese`` fork splits on spaces only. Here ROUGE-L is the F-measure of the longest
common subsequence over the same tokens BLEU counts (sacrebleu's tokenizer), the definition of Lin (2004) with
beta 1 as rouge-score computes it, so English and Chinese are scored by one rule.

Structured answers: when most references are JSON objects, an answer "parses" when it is a JSON object and its
fields "match" when every field of the reference has the same value (compared as ``metrics.normalize`` does);
when most references are "label: reason" (a few distinct first parts before a colon, a dash or a new line), an
answer parses when it starts with one of those labels and matches when it starts with the reference's.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal, Sequence

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from .metrics import normalize

Structure = Literal["json", "label_reason"]
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LABEL_SPLIT = re.compile(r"\s*(?:[:：\n]|\s[-—–]\s)\s*")
MAX_LABELS = 20


def tokenizer_name(references: Sequence[str]) -> str:
    """sacrebleu's tokenizer for these references: ``zh`` when any holds Chinese text, else ``13a``."""
    return "zh" if any(_CJK.search(r or "") for r in references) else "13a"


def _tokenize(name: str) -> Callable[[str], str]:
    return TokenizerZh() if name == "zh" else Tokenizer13a()


def exact(answer: str, reference: str) -> bool:
    """The same text once case, full-width forms, punctuation and spacing are set aside (``metrics.normalize``)."""
    return normalize(answer) == normalize(reference)


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(answer: str, reference: str, tokenize: str = "13a") -> float:
    """ROUGE-L F-measure (0-1) over sacrebleu's tokens of both texts (lowercased, as rouge-score does)."""
    tok = _tokenize(tokenize)
    a, r = tok(answer.lower()).split(), tok(reference.lower()).split()
    common = _lcs(a, r)
    if not common:
        return 0.0
    p, rec = common / len(a), common / len(r)
    return 2 * p * rec / (p + rec)


_SENTENCE_CHRF = CHRF()


def sentence_chrf(answer: str, reference: str) -> float:
    """One answer's chrF against its reference, 0-100 (sacrebleu's sentence score; chrF needs no tokenizer): the
    generation check's per-row number, and the gate's row score (evaluation/check_scorers.py)."""
    return _SENTENCE_CHRF.sentence_score(str(answer or ""), [str(reference or "")]).score


@dataclass(frozen=True)
class TextScores:
    """Corpus scores of answers against references (0-100 for chrF and BLEU, as sacrebleu reports them; 0-1 for
    the shares and ROUGE-L) and each row's own scores, in row order."""

    n: int
    exact_match: float
    chrf: float
    bleu: float
    rouge_l: float
    answer_chars: float
    reference_chars: float
    tokenize: str
    row_exact: tuple[bool, ...]
    row_chrf: tuple[float, ...]
    row_rouge_l: tuple[float, ...]

    @property
    def length_ratio(self) -> float:
        """Mean answer length over mean reference length, in characters (1.0: as long as the references)."""
        return self.answer_chars / self.reference_chars if self.reference_chars else 0.0


def text_scores(answers: Sequence[str], references: Sequence[str]) -> TextScores:
    """Score ``answers`` against ``references`` (the same length, row by row).

    Raises:
        ValueError: the two lists differ in length or are empty.
    """
    if len(answers) != len(references) or not answers:
        raise ValueError("answers and references must be two non-empty lists of the same length")
    answers, references = [str(a or "") for a in answers], [str(r or "") for r in references]
    name = tokenizer_name(references)
    chrf = CHRF()
    row_chrf = tuple(sentence_chrf(a, r) for a, r in zip(answers, references))
    row_rouge = tuple(rouge_l(a, r, name) for a, r in zip(answers, references))
    row_exact = tuple(exact(a, r) for a, r in zip(answers, references))
    n = len(answers)
    return TextScores(
        n=n, exact_match=sum(row_exact) / n, chrf=chrf.corpus_score(answers, [references]).score,
        bleu=BLEU(tokenize=name).corpus_score(answers, [references]).score, rouge_l=sum(row_rouge) / n,
        answer_chars=sum(map(len, answers)) / n, reference_chars=sum(map(len, references)) / n, tokenize=name,
        row_exact=row_exact, row_chrf=row_chrf, row_rouge_l=row_rouge)


# ------------------------------------------------------------------ structured answers
def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a text is (or holds in a ```json fence or between its first { and last }), else None."""
    text = (text or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _label(text: str) -> str | None:
    parts = _LABEL_SPLIT.split((text or "").strip(), maxsplit=1)
    return normalize(parts[0]) if len(parts) == 2 and parts[0] and parts[1] else None


def structure_of(references: Sequence[str]) -> Structure | None:
    """``json`` when most references are JSON objects, ``label_reason`` when most are a label from a small set and
    a reason, else None (free text)."""
    n = len(references)
    if n and sum(json_object(r) is not None for r in references) * 2 > n:
        return "json"
    labels = [_label(r) for r in references]
    known = {lab for lab in labels if lab}
    if n and sum(lab is not None for lab in labels) * 2 > n and 2 <= len(known) <= MAX_LABELS \
            and len(known) * 2 <= n:
        return "label_reason"
    return None


def _same(a: Any, b: Any) -> bool:
    return normalize(json.dumps(a, ensure_ascii=False, sort_keys=True) if isinstance(a, (dict, list)) else str(a)) \
        == normalize(json.dumps(b, ensure_ascii=False, sort_keys=True) if isinstance(b, (dict, list)) else str(b))


@dataclass(frozen=True)
class StructureScores:
    """How many answers have the references' structure (``parses``) and how many carry the same fields
    (``fields_match``), as shares of the rows; ``per_field``: each JSON field's share of rows that got it right."""

    kind: Structure
    parses: float
    fields_match: float
    per_field: dict[str, float]
    row_parses: tuple[bool, ...]
    row_match: tuple[bool, ...]


def structure_scores(answers: Sequence[str], references: Sequence[str],
                     kind: Structure | None = None) -> StructureScores | None:
    """Structure scores when the references are structured (``structure_of``), else None."""
    kind = kind or structure_of(references)
    if kind is None or not answers:
        return None
    n = len(answers)
    if kind == "json":
        got = [json_object(a) for a in answers]
        want = [json_object(r) or {} for r in references]
        fields = sorted({k for w in want for k in w})
        right = {f: [g is not None and f in w and f in g and _same(g[f], w[f]) for g, w in zip(got, want)]
                 for f in fields}
        row_parses = tuple(g is not None for g in got)
        row_match = tuple(g is not None and bool(w) and all(k in g and _same(g[k], v) for k, v in w.items())
                          for g, w in zip(got, want))
        per_field = {f: sum(v) / max(1, sum(f in w for w in want)) for f, v in right.items()}
    else:
        labels = {lab for lab in map(_label, references) if lab}
        said = [_label(a) or normalize(a) for a in answers]
        row_parses = tuple(any(s == lab or s.startswith(lab + " ") for lab in labels) for s in said)
        row_match = tuple(bool(_label(r)) and (s == _label(r) or s.startswith(f"{_label(r)} "))
                          for s, r in zip(said, references))
        per_field = {"label": sum(row_match) / n}
    return StructureScores(kind=kind, parses=sum(row_parses) / n, fields_match=sum(row_match) / n,
                           per_field=per_field, row_parses=row_parses, row_match=row_match)
