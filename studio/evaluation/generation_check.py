"""The generation check: how well a run writes the answers of rows with reference answers, before and after.

For an instruction or chat run the labels check has nothing to count. Here the model answers every row (greedy,
batched, from the same prompt cache as the answer loss: ``answer_pass.answers_and_loss``, the answers batch prediction
writes), and the answers are scored against the
references (``text_metrics``: exact match, chrF, BLEU, ROUGE-L, length, and for JSON or "label: reason" answers the
share that parses and the share whose fields match), beside the held-out answer loss and its perplexity
(``answer_loss``: no generation, the training loss on unseen rows). ``compare_generation`` scores the base model on
the same rows (a LoRA run's own weights with the adapter off, or the base loaded beside a full run) and lists the
rows that changed most and the worst rows, with both answers and the reference.

``generation_check(run, rows)`` is the service: the page, the CLI and a gate (Improve) call it and compare its
typed result, so they report one set of numbers.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..autoconfig import guess_task
from ..data.templates import Template
from ..errors import StudioError
from ..models.loading import describe_weights
from .answer_loss import MAX_ANSWER_TOKENS, AnswerLoss, answer_loss
from .answer_pass import answers_and_loss
from .evaluate import (GENERATE_BATCH_ROWS, GENERATE_BATCH_TOKENS, MAX_GENERATE_S, _cut, _generate_rows,
                       _stop_strings, base_model_context)
from .inference import base_of, get_model, hold_model
from .limits import MAX_NEW_TOKENS, context_of
from .lora_merge import merged_lora
from .prompts import prompt_token_ids
from .metrics import label_set
from .text_metrics import StructureScores, structure_of, structure_scores, text_scores

ROWS_SHOWN = 10     # the changed-most and worst rows a check lists
HEADLINE = "chrf"   # the one number a gate compares (character n-grams: meaningful for short and long answers alike)


def task_of(rows: Sequence[dict[str, str]]) -> str:
    """``sentiment`` when the rows' answers are a few labels (the Settings page's rule, ``guess_task``, and a label
    set the labels check accepts), else ``generate``: which check a set of rows gets by default."""
    if guess_task(list(rows)) == "sentiment":
        try:
            label_set([str(r.get("output", "")) for r in rows])
            return "sentiment"
        except StudioError:
            pass
    return "generate"


def answer_budget(tokenizer: Any, rows: Sequence[dict[str, str]]) -> int:
    """New tokens per answer: the longest reference's tokens and a margin (an answer a little longer than any
    reference is still scored as longer), at most ``limits.MAX_NEW_TOKENS``."""
    longest = max((len(tokenizer.encode(str(r.get("output", "")), add_special_tokens=False)) for r in rows),
                  default=16)
    return max(8, min(MAX_NEW_TOKENS, longest + longest // 4 + 8))


@dataclass(frozen=True)
class GenerationScore:
    """One model's answers to the rows, scored. chrF and BLEU 0-100 (sacrebleu's scale); the rest 0-1, losses in
    nats per answer token."""

    n: int
    exact_match: float
    chrf: float
    bleu: float
    rouge_l: float
    answer_loss: float | None
    perplexity: float | None
    answer_chars: float
    reference_chars: float
    length_ratio: float
    tokenize: str
    latency_ms_per_row: float
    weights: str
    structure: StructureScores | None
    answers: tuple[str, ...] = field(repr=False)
    row_chrf: tuple[float, ...] = field(repr=False)
    row_loss: tuple[float | None, ...] = field(repr=False)

    def numbers(self) -> dict[str, Any]:
        """The scores without the per-row lists (what a scorecard or a JSON summary shows)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("answers", "row_chrf", "row_loss", "structure")}
        s = self.structure
        out["structure"] = None if s is None else {"kind": s.kind, "parses": s.parses,
                                                   "fields_match": s.fields_match, "per_field": s.per_field}
        return out


def score_generation(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                     max_new_tokens: int | None = None, one_pass: bool = True) -> GenerationScore:
    """Let ``model`` answer every row and score the answers against the rows' ``output``.

    ``one_pass`` (the check): the answers and the answer loss from one prompt cache a batch (answer_pass.py: the
    same answers and loss, a reference-matching greedy answer without decoding steps), ``latency_ms_per_row`` that
    pass's time a row; otherwise (the deploy report, comparing forms by their generation speed) batched greedy
    generation then the loss pass, ``latency_ms_per_row`` the generation's time a row.

    Raises:
        StudioError: no rows, or no row with a reference answer.
    """
    rows = [r for r in rows if str(r.get("output", "")).strip()]
    if not rows:
        raise StudioError.of("eval.no_references")
    refs = [str(r["output"]) for r in rows]
    budget = max_new_tokens or answer_budget(tokenizer, rows)
    was_training = model.training
    model.eval()
    start = time.perf_counter()
    both = _one_pass(model, tokenizer, template, rows, budget) if one_pass else None
    if both is not None:
        answers, loss = both
        elapsed = time.perf_counter() - start
    else:
        answers = _generate_rows(model, tokenizer, template, rows, budget)
        elapsed = time.perf_counter() - start
        loss = answer_loss(model, tokenizer, template, rows)
    if was_training:
        model.train()
    t = text_scores(answers, refs)
    return GenerationScore(
        n=t.n, exact_match=t.exact_match, chrf=t.chrf, bleu=t.bleu, rouge_l=t.rouge_l, answer_loss=loss.loss,
        perplexity=loss.perplexity, answer_chars=t.answer_chars, reference_chars=t.reference_chars,
        length_ratio=t.length_ratio, tokenize=t.tokenize, latency_ms_per_row=1000.0 * elapsed / t.n,
        weights=describe_weights(model), structure=structure_scores(answers, refs, structure_of(refs)),
        answers=tuple(answers), row_chrf=t.row_chrf, row_loss=loss.rows)


def _one_pass(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]], budget: int
              ) -> tuple[list[str], AnswerLoss] | None:
    """The answers and the answer loss from one prompt cache a batch (answer_pass.py); None where it cannot run."""
    answers = [tokenizer.encode(template.answer(str(r["output"])), add_special_tokens=False)[:MAX_ANSWER_TOKENS]
               for r in rows]
    room = context_of(model) - max(budget, max(map(len, answers)))
    prompts = prompt_token_ids(tokenizer, template, rows, max_tokens=max(1, room))
    stops = _stop_strings(tokenizer, template)
    with merged_lora(model):
        return answers_and_loss(model, tokenizer, prompts, answers, budget, lambda text: _cut(text, stops),
                                GENERATE_BATCH_ROWS, GENERATE_BATCH_TOKENS, MAX_GENERATE_S)


DELTAS = ("exact_match", "chrf", "bleu", "rouge_l", "answer_loss", "perplexity", "length_ratio")


@dataclass(frozen=True)
class GenerationCheck:
    """The rows checked (``rows``: instruction, input, output), the run's scores (``tuned``) and, when asked for,
    the base model's on the same rows (``base``)."""

    rows: tuple[dict[str, str], ...]
    tuned: GenerationScore
    base: GenerationScore | None = None

    @property
    def headline(self) -> float:
        """The number to compare two checks by (higher is better): the tuned side's chrF."""
        return float(getattr(self.tuned, HEADLINE))

    def delta(self) -> dict[str, float]:
        """Tuned minus base for each score (empty without a base)."""
        if self.base is None:
            return {}
        out = {}
        for k in DELTAS:
            a, b = getattr(self.tuned, k), getattr(self.base, k)
            if a is not None and b is not None:
                out[k] = a - b
        if self.tuned.structure and self.base.structure:
            out["parses"] = self.tuned.structure.parses - self.base.structure.parses
            out["fields_match"] = self.tuned.structure.fields_match - self.base.structure.fields_match
        return out

    def _row(self, i: int) -> dict[str, Any]:
        r = self.rows[i]
        out = {"instruction": r.get("instruction", ""), "input": r.get("input", ""), "reference": r["output"],
               "tuned": self.tuned.answers[i], "tuned_chrf": self.tuned.row_chrf[i]}
        if self.base is not None:
            out.update(base=self.base.answers[i], base_chrf=self.base.row_chrf[i])
        return out

    def changed(self, k: int = ROWS_SHOWN) -> list[dict[str, Any]]:
        """The rows whose chrF moved most between base and tuned (either way), with both answers."""
        if self.base is None:
            return []
        base = self.base
        order = sorted(range(len(self.rows)), key=lambda i: -abs(self.tuned.row_chrf[i] - base.row_chrf[i]))
        return [self._row(i) for i in order[:k] if self.tuned.answers[i] != base.answers[i]]

    def worst(self, k: int = ROWS_SHOWN) -> list[dict[str, Any]]:
        """The tuned model's lowest-chrF rows (the highest answer loss first among equals)."""
        loss = self.tuned.row_loss
        order = sorted(range(len(self.rows)), key=lambda i: (self.tuned.row_chrf[i], -(loss[i] or 0.0)))
        return [self._row(i) for i in order[:k]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the CLI's ``--json`` and the page read the same dict."""
        return {"task": "generate", "n": self.tuned.n, "tuned": self.tuned.numbers(),
                "base": self.base.numbers() if self.base else None, "delta": self.delta(),
                "changed": self.changed(), "worst": self.worst(),
                "outputs": [{"instruction": r.get("instruction", ""), "input": r.get("input", ""),
                             "expected": r["output"], "answer": a} for r, a in zip(self.rows, self.tuned.answers)]}


def compare_generation(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                       base: tuple[Any, Any] | None = None, compare_base: bool = True,
                       max_new_tokens: int | None = None) -> GenerationCheck:
    """The check on loaded models; ``base=None`` with ``compare_base`` means "the same PEFT model, adapter off"."""
    kept = tuple({k: str(r.get(k, "")) for k in ("instruction", "input", "output")} for r in rows
                 if str(r.get("output", "")).strip())
    budget = max_new_tokens or (answer_budget(tokenizer, kept) if kept else None)
    tuned = score_generation(model, tokenizer, template, kept, budget)
    before = None
    if compare_base and base is None:
        with base_model_context(model):
            before = score_generation(model, tokenizer, template, kept, budget)
    elif compare_base and base is not None:
        before = score_generation(base[0], base[1], template, kept, budget)
    return GenerationCheck(rows=kept, tuned=tuned, base=before)


def generation_check(run: str | Path, rows: Sequence[dict[str, str]], compare_base: bool = False,
                     max_new_tokens: int | None = None) -> GenerationCheck:
    """The generation check of a run (or model folder) on ``rows``, the model from the Evaluate tab's cache.

    A gate compares two runs on the same frozen rows by ``generation_check(old, rows).headline`` against
    ``generation_check(new, rows).headline`` (or any score of ``.tuned``).

    Raises:
        StudioError: no rows with a reference answer, or a run the evaluator cannot load.
    """
    loaded = get_model(str(run))
    with hold_model(loaded, wait=False):
        base = base_of(loaded) if compare_base else None
        return compare_generation(loaded.model, loaded.tokenizer, loaded.template, rows, base, compare_base,
                                  max_new_tokens)
