"""What did the model learn? Sentiment accuracy, free generation, chat, batch prediction.

Two ways to read a label out of the model (``sentiment_eval(mode=...)``):

* ``score`` (default): for each candidate label, the log-likelihood of the full answer
  ``label + end-of-answer`` given the prompt, built exactly as in training; the most likely label
  wins. It is one forward pass per row, always yields a label (no unparseable answers) and
  measures what training optimised. Summing (not averaging) token log-probs is the probability
  of producing exactly that answer, so a long label is not favoured and "pos" vs "positive" is
  decided by the end-of-answer token.
* ``generate``: greedy decoding of a few tokens, then ``parse_label`` with synonyms. Slower and
  can fail to parse (counted as wrong), but it is what a user of the chat would see.

Prompts always come from ``studio.data.tokenize.prompt_ids`` so they match training to the token.
torch/transformers are imported inside functions so ``studio.evaluate`` imports cheaply.
"""
from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from ..config.run_config import trained_config
from ..data.dataset import load_rows as load_dataset, read_file_rows, split_rows
from ..data.preference import as_sft_rows
from ..data.templates import Template, get_template
from ..data.tokenize import prompt_ids
from ..errors import StudioError
from ..models.loading import describe_weights, load_base, load_for_inference
from ..runs.run_dir import RunDir
from ..safe_files import refuse_links_out
from ..stages import stage_of
from ..workspace import atomic_write_text
from .generation import generate_batch
from .label_scoring import label_logprobs, shared_prefix_len
from .leakage import leakage
from .limits import bound_history, context_of, cut, fit_ids
from .lora_merge import merged_lora
from .metrics import (classification_metrics, confusion_figure, label_aliases, label_set, normalize,
                           parse_label)
from .prompts import prompt_token_ids
from .streaming import Control, stopping_criteria, stream_text

__all__ = ["sentiment_eval", "classification_metrics", "parse_label", "generate", "chat", "batch_predict",
           "compare_base_vs_tuned", "compare_loaded", "confusion_figure", "validation_rows", "load_rows",
           "base_model_context"]

Mode = Literal["score", "generate"]


# ------------------------------------------------------------------ rows
def load_rows(path: str | Path, max_rows: int | None = None) -> list[dict[str, str]]:
    """Labelled rows (instruction, input, output) from an alpaca .jsonl/.json file, or any file the
    converter reads (.csv/.tsv/.xlsx/.xls/.parquet/.json: instruction/input/output or text + label columns).
    The data package's one row loader reads it (``studio.data.dataset.read_file_rows``).

    Raises:
        StudioError: missing or unreadable file, or columns the converter cannot map.
    """
    p = Path(path)
    if not p.is_file():
        raise StudioError.of("eval.data_missing", file=p)
    rows = read_file_rows(p, any_table=True)
    out = [{k: "" if r.get(k) is None else str(r.get(k)) for k in ("instruction", "input", "output")} for r in rows]
    return out[:max_rows] if max_rows else out


# ------------------------------------------------------------------ model helpers
def _device(model: Any) -> Any:
    return next(model.parameters()).device


def _stop_strings(tokenizer: Any, template: Template) -> list[str]:
    """Where an answer ends: the template's end-of-answer and turn markers (``Template.stop_strings``), a blank
    line where the end-of-answer marker is only that, or the tokenizer's EOS."""
    blank = [template.assistant_suffix] if template.assistant_suffix and not template.assistant_suffix.strip() else []
    return list(dict.fromkeys(s for s in (*template.stop_strings(), *blank, tokenizer.eos_token) if s))


def _cut(text: str, stops: Sequence[str]) -> str:
    """End the answer where the template's end-of-answer marker starts (the model learned to emit it)."""
    cut = len(text)
    for s in stops:
        i = text.find(s)
        if i >= 0:
            cut = min(cut, i)
    return text[:cut].strip()


MAX_GENERATE_S = 120.0  # generate's max_time: no request keeps a core or the card busy longer
# rows per greedy batch: 64 short answers share each step's read of the output head (Gemma-3-270M, 64 held-out rows:
# 35 CPU-s at 64 or 32 rows a batch against 45 at 16), bounded by tokens (rows x (prompt + answer)) for long ones
GENERATE_BATCH_ROWS = 64
GENERATE_BATCH_TOKENS = 8192


def _generate_ids(model: Any, tokenizer: Any, ids: list[int], max_new_tokens: int, temperature: float,
                  top_p: float, streamer: Any = None, control: Any = None, stops: Sequence[str] = ()) -> Any:
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    input_ids = torch.tensor([ids], device=_device(model))
    kwargs: dict[str, Any] = dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                  max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                                  eos_token_id=tokenizer.eos_token_id, streamer=streamer,
                                  max_time=MAX_GENERATE_S)
    if stops:  # generation itself ends at a marker (transformers' StopStringCriteria), not only the text shown
        kwargs.update(stop_strings=list(stops), tokenizer=tokenizer)
    if control is not None:  # the Stop button (streaming.Control): checked after every token
        kwargs["stopping_criteria"] = stopping_criteria(control)
    if temperature and temperature > 0:
        kwargs.update(do_sample=True, temperature=float(temperature), top_p=float(top_p))
    else:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    with torch.no_grad():
        return model.generate(**kwargs)[0, len(ids):]


def _generate_from_ids(model: Any, tokenizer: Any, template: Template, ids: list[int], max_new_tokens: int,
                       temperature: float, top_p: float, stream: bool, control: Any = None) -> str | Iterator[str]:
    stops = _stop_strings(tokenizer, template)
    if not stream:
        out = _generate_ids(model, tokenizer, ids, max_new_tokens, temperature, top_p, control=control, stops=stops)
        return _cut(tokenizer.decode(out, skip_special_tokens=False), stops)
    control = control or Control()
    return stream_text(lambda streamer: _generate_ids(model, tokenizer, ids, max_new_tokens, temperature, top_p,
                                                      streamer, control, stops),
                       tokenizer, lambda text: _cut(text, stops), control)


def generate(model: Any, tokenizer: Any, template: Template, instruction: str, input: str = "",
             max_new_tokens: int = 128, temperature: float = 0.0, top_p: float = 1.0,
             stream: bool = False, control: Any = None) -> str | Iterator[str]:
    """The model's answer to one prompt (greedy when temperature is 0).

    With ``stream=True`` returns an iterator of the answer so far (for the playground); ``control`` (a
    ``streaming.Control``) lets another request stop it.
    """
    ids = fit_ids(prompt_ids(tokenizer, template, cut(instruction), cut(input)),
                  context_of(model) - max_new_tokens)
    return _generate_from_ids(model, tokenizer, template, ids, max_new_tokens, temperature, top_p, stream, control)


def _message_text(content: Any) -> str:
    """gr.Chatbot gives content as a list of {"type": "text", "text": ...}; plain strings pass through."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text", ""))
    if isinstance(content, (list, tuple)):
        return "".join(_message_text(c) for c in content)
    return str(content or "")


def chat(model: Any, tokenizer: Any, template: Template, history: list[dict[str, Any]], message: str,
         max_new_tokens: int = 256, temperature: float = 0.7, top_p: float = 0.9, stream: bool = False,
         max_context: int | None = None, control: Any = None) -> str | Iterator[str]:
    """Reply to ``message`` after ``history`` (a list of {"role", "content"} as gr.Chatbot keeps it).

    The oldest turns are dropped when the prompt would not fit the model's context.
    """
    turns = [{"role": m["role"], "content": _message_text(m.get("content"))} for m in history
             if m.get("role") in ("user", "assistant", "system")]
    turns = [{**m, "content": cut(m["content"])} for m in bound_history(turns)]
    message = cut(message)
    limit = (max_context or context_of(model)) - max_new_tokens
    bos: list[int] = []  # the template's own prefix carries BOS, as in training (studio/data/templates.py)
    while True:
        msgs = turns + [{"role": "user", "content": message}]
        ids = bos + tokenizer.encode(template.chat_prompt(msgs), add_special_tokens=False)
        if len(ids) <= limit or not turns:
            break
        turns = turns[2:] if len(turns) >= 2 else []
    ids = ids[-max(limit, 1):]
    return _generate_from_ids(model, tokenizer, template, ids, max_new_tokens, temperature, top_p, stream, control)


# ------------------------------------------------------------------ sentiment
def _score_labels(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                  labels: Sequence[str], batch_rows: int = 32) -> list[list[float]]:
    """Sum log p(label answer | prompt) for each row x label: each prompt runs once, labels from its KV cache.

    A LoRA adapter is merged into fp32 weights for the pass and unmerged after (lora_merge.py: same scores, fewer
    operations); with the adapter off (``base_model_context``) nothing is merged.
    """
    # the template's answer ends the turn itself (EOS / end-of-turn marker), exactly as training saw it
    answers = [tokenizer.encode(template.answer(lab), add_special_tokens=False) for lab in labels]
    prompts = prompt_token_ids(tokenizer, template, rows,
                               max_tokens=context_of(model) - max(map(len, answers), default=0))
    shared = shared_prefix_len(prompts)  # the instruction's tokens, the same in every row: run once a batch
    # similar lengths share a batch: less padding (token-budget batches, smaller ones for the long tail, measured no
    # faster on Gemma's 500 held-out reviews: 47.8/51.1 CPU-s against 47.5/46.8, so rows are batched 32 at a time)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    scores: list[list[float]] = [[] for _ in prompts]
    with merged_lora(model):
        for part in (order[start:start + batch_rows] for start in range(0, len(order), batch_rows)):
            for i, s in zip(part, label_logprobs(model, [prompts[i] for i in part], answers, tokenizer.pad_token_id,
                                                 shared=shared)):
                scores[i] = s
    return scores


def _generate_rows(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                   max_new_tokens: int, batch_rows: int = GENERATE_BATCH_ROWS) -> list[str]:
    """Greedy answers to many rows, batched (studio/evaluation/generation.py), a LoRA adapter merged for the pass
    (lora_merge.py: the same answers, fewer operations per token)."""
    stops = _stop_strings(tokenizer, template)
    prompts = prompt_token_ids(tokenizer, template, rows, max_tokens=context_of(model) - max_new_tokens)
    with merged_lora(model):
        return generate_batch(model, tokenizer, prompts, max_new_tokens, lambda text: _cut(text, stops),
                              batch_rows=batch_rows, max_time=MAX_GENERATE_S, batch_tokens=GENERATE_BATCH_TOKENS)


def sentiment_eval(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                   labels: Sequence[str] | None = None, mode: Mode = "score",
                   max_new_tokens: int | None = None, max_misclassified: int = 200,
                   trained_keys: set[str] | None = None, keep_predictions: bool = False) -> dict:
    """Accuracy, per-class P/R/F1, confusion matrix and the misclassified rows on labelled rows.

    ``keep_predictions``: also return ``predictions``, the label picked for each scored row in row order (None where
    a generated answer names no label), so two models' answers can be compared row by row (deploy_report.py).

    With ``trained_keys`` (the run's training fingerprints, leakage.py) the result also says how many scored
    rows were training rows and the accuracy on the rest (``leakage``).

    Rows whose gold output matches no label (even via synonyms) are not scored and are counted
    in ``skipped_rows``. Unparseable answers (generate mode) count as wrong.

    Raises:
        StudioError: no rows, or the outputs do not look like a small label set.
    """
    if not rows:
        raise StudioError.of("eval.no_rows")
    if mode not in ("score", "generate"):
        raise StudioError.of("eval.mode", mode=mode)
    labels = list(labels) if labels else label_set([r.get("output", "") for r in rows])
    aliases = label_aliases(labels)
    gold: list[tuple[dict[str, str], str]] = []
    for r in rows:
        t = parse_label(r.get("output", ""), labels, aliases)
        if t is not None:
            gold.append((r, t))
    skipped = len(rows) - len(gold)
    if not gold:
        raise StudioError.of("eval.no_gold", labels=str(labels))
    was_training = model.training
    model.eval()
    start = time.perf_counter()
    answers: list[str] = []
    preds: list[str | None] = []
    if mode == "score":
        for (row, _), sc in zip(gold, _score_labels(model, tokenizer, template, [g[0] for g in gold], labels)):
            best = labels[max(range(len(labels)), key=lambda i: sc[i])]
            answers.append(best)
            preds.append(best)
    else:
        longest = max(len(tokenizer.encode(lab, add_special_tokens=False)) for lab in labels)
        budget = max_new_tokens or longest + 4
        for text in _generate_rows(model, tokenizer, template, [g[0] for g in gold], budget):
            answers.append(text)
            preds.append(parse_label(text, labels, aliases))
    elapsed = time.perf_counter() - start
    if was_training:
        model.train()
    y_true = [t for _, t in gold]
    result = classification_metrics(y_true, preds, labels)
    result["misclassified"] = [
        {"instruction": r["instruction"], "input": r["input"], "expected": t, "answer": a,
         "parsed": p if p is not None else "(unparseable)"}
        for (r, t), a, p in zip(gold, answers, preds) if p != t][:max_misclassified]
    result["leakage"] = leakage([r for r, _ in gold], [p == t for (_, t), p in zip(gold, preds)], trained_keys)
    result.update(latency_ms_per_row=1000.0 * elapsed / len(gold), rows_per_s=len(gold) / max(elapsed, 1e-9),
                  mode=mode, skipped_rows=skipped,
                  labels=labels, template=template.name, weights=describe_weights(model))
    if keep_predictions:
        result["predictions"] = preds
    return result


# ------------------------------------------------------------------ before / after
class base_model_context:
    """Temporarily turn a PEFT model's adapters off, so the same weights act as the base model."""

    def __init__(self, model: Any):
        self._ctx = model.disable_adapter() if hasattr(model, "disable_adapter") else None

    def __enter__(self) -> None:
        if self._ctx is not None:
            self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def compare_base_vs_tuned(run_dir: str | Path, rows: Sequence[dict[str, str]], mode: Mode = "score",
                          labels: Sequence[str] | None = None) -> dict:
    """The before/after scorecard: the same sentiment check on the base model and the fine-tuned one.

    LoRA runs reuse the loaded model with adapters disabled (no second copy in memory); full and
    freeze runs load the base from ``resolve_base_path``.
    """
    model, tok, cfg = load_for_inference(run_dir)
    template = get_template(cfg.template if cfg else "auto", tok)
    base = None
    if not hasattr(model, "disable_adapter"):
        if cfg is None:
            raise StudioError.of("eval.no_base_model")
        base = load_base(cfg.replace(quantization_bit=None))
    return compare_loaded(model, tok, template, rows, base, mode, labels)


def compare_loaded(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                   base: tuple[Any, Any] | None = None, mode: Mode = "score",
                   labels: Sequence[str] | None = None) -> dict:
    """Scorecard for already-loaded models; ``base=None`` means "the same PEFT model, adapters off"."""
    tuned = sentiment_eval(model, tokenizer, template, rows, labels, mode)
    if base is None:
        with base_model_context(model):
            before = sentiment_eval(model, tokenizer, template, rows, tuned["labels"], mode)
    else:
        before = sentiment_eval(base[0], base[1], template, rows, tuned["labels"], mode)
    return before_after(before, tuned)


def before_after(base: dict, tuned: dict) -> dict:
    """Side-by-side numbers of two sentiment checks on the same rows."""
    return {"base": base, "tuned": tuned, "n": tuned["n"], "labels": tuned["labels"],
            "delta": {"accuracy": tuned["accuracy"] - base["accuracy"],
                      "macro_f1": tuned["macro_f1"] - base["macro_f1"]}}


# ------------------------------------------------------------------ batch prediction
from ..data.cells import csv_safe  # noqa: E402  (re-exported: the rule lives where every CSV writer can reach it)


def batch_predict(model: Any, tokenizer: Any, template: Template, rows: Sequence[dict[str, str]] | str | Path,
                  out_csv: str | Path, labels: Sequence[str] | None = None, mode: Mode | None = None,
                  max_new_tokens: int = 64) -> dict:
    """Predict every row and write a CSV: instruction, input, output (if given), prediction, correct.

    With ``labels`` (or mode "score") each row gets the most likely label; otherwise free generation.
    The CSV is written to a temp name and renamed, so a half-written file never appears.
    """
    data = load_rows(rows) if isinstance(rows, (str, Path)) else list(rows)
    if not data:
        raise StudioError.of("eval.no_rows_predict")
    use_score = mode == "score" or (mode is None and labels)
    if use_score and not labels:
        labels = label_set([r.get("output", "") for r in data])
    start = time.perf_counter()
    if use_score:
        scores = _score_labels(model, tokenizer, template, data, labels)  # type: ignore[arg-type]
        preds = [labels[max(range(len(labels)), key=lambda i: s[i])] for s in scores]  # type: ignore[index]
    else:
        preds = _generate_rows(model, tokenizer, template, data, max_new_tokens)
    elapsed = time.perf_counter() - start
    has_gold = any(r.get("output") for r in data)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["instruction", "input"] + (["output", "prediction", "correct"] if has_gold else ["prediction"]))
    n_correct = 0
    for r, p in zip(data, preds):
        line = [r.get("instruction", ""), r.get("input", "")]
        if has_gold:
            ok = normalize(r.get("output", "")) == normalize(p) or (
                labels is not None and parse_label(r.get("output", ""), labels) == parse_label(p, labels))
            n_correct += ok
            line += [r.get("output", ""), p, "yes" if ok else "no"]
        else:
            line.append(p)
        writer.writerow([csv_safe(c) for c in line])
    out = Path(out_csv)
    atomic_write_text(out, buf.getvalue())
    return {"path": str(out), "n": len(data), "accuracy": n_correct / len(data) if has_gold else None,
            "latency_ms_per_row": 1000.0 * elapsed / len(data), "rows_per_s": len(data) / max(elapsed, 1e-9),
            "mode": "score" if use_score else "generate"}


def validation_rows(run_dir: str | Path) -> list[dict[str, str]]:
    """The rows a run held out for validation, re-derived with the engine's own seeded split.

    Raises:
        StudioError: not a run folder, the dataset moved, or the run kept no validation split.
    """
    run = RunDir(run_dir)
    if not run.config.exists():
        raise StudioError.of("eval.not_run", folder=run_dir)
    refuse_links_out(run.path, "run folder")  # its held-out rows (val.jsonl) must be its own
    cfg = trained_config(run.config)
    if not cfg.val_size and not run.val_data.is_file():  # an improved run keeps its parent's (app/improve.py)
        raise StudioError.of("eval.no_val")
    if run.val_data.exists():  # saved by the engine at training time
        val = load_dataset(str(run.val_data))
    else:
        rows = load_dataset(cfg.dataset, cfg.dataset_dir, stage_of(cfg.stage).rows)
        _, val = split_rows(rows, cfg.val_size, cfg.seed)
        val = as_sft_rows(val)  # a preference stage's good answers (instruction rows pass unchanged)
    return [{k: str(r.get(k, "")) for k in ("instruction", "input", "output")} for r in val]


def answer_rows(run_dir: str | Path, limit: int = 200) -> tuple[list[dict[str, str]], bool]:
    """(rows, held out): the rows that show what a run was trained to answer: its held-out rows, else (a run that
    kept none, such as an improved run of an older studio) the first ``limit`` of its training rows. What the
    playground, the demo page and the label checks read a run's task, labels and instruction from.

    Raises:
        StudioError: not a run folder (a run whose data moved and kept no held-out rows has no rows: [])."""
    try:
        return validation_rows(run_dir), True
    except StudioError as exc:
        if exc.code == "eval.not_run":
            raise
    cfg = trained_config(RunDir(run_dir).config)
    try:
        rows = load_dataset(cfg.dataset, cfg.dataset_dir, stage_of(cfg.stage).rows)[:limit]
    except (StudioError, OSError):
        return [], False
    rows = as_sft_rows(rows)
    return [{k: str(r.get(k, "")) for k in ("instruction", "input", "output")} for r in rows], False
