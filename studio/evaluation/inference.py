"""Model-touching services for the Evaluate tab (and the eval CLI): load, cache, run.

The UI module never imports torch; it calls these functions, which take and return plain
Python data (paths, strings, dicts, a matplotlib figure). Loaded models are cached by path so
the playground, the chat and the checks share one copy; a small lock per model keeps two
browser tabs from interleaving generation on the same weights (and from toggling a LoRA
adapter off while another request uses it).

Loading is guarded three ways (20 requests on a fresh server each loaded a copy, most
failed with ``cannot import name 'CONFIG_MAPPING'`` and some with inf/nan probabilities):
- the transformers/peft modules are imported once, under a lock, before the first load: their lazy
  ``__getattr__`` imports are not safe when many threads trigger them at once;
- a lock per model key: the first request loads, the others for that key wait and get the same copy;
- the load itself runs under one process-wide lock: ``from_pretrained`` swaps module-global functions
  (``transformers.initialization.no_init_weights`` / ``no_tie_weights`` replace torch's init functions and
  ``PreTrainedModel`` methods and restore what they saw on entry), so two loads that overlap can restore each
  other's stand-ins and leave weights uninitialised or untied for the whole process. Cached models are served
  without touching either load lock, so a load never blocks requests for a model that is already loaded.
A model enters the cache only once it is fully loaded; a load that raises leaves nothing behind.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..autoconfig import guess_task
from ..data.columns import guess_columns
from ..data.labels import labels_by_meaning
from ..data.readers import cell_str, read_table
from ..data.templates import get_template
from ..errors import StudioError
from ..workspace import confine, safe_name
from ..models.loading import LOAD_LOCK, load_base, load_for_inference, place_on_card
from ..runs.cpu_threads import FreeCores
from ..runs.run_dir import RunDir, list_runs
from ..runs.run_time import others_load
from . import limits, streaming
from .evaluate import (
    answer_rows, base_model_context, batch_predict, chat, compare_loaded, confusion_figure, generate, load_rows,
    sentiment_eval, validation_rows)
from .evaluate import _score_labels  # the scoring sentiment_eval and batch_predict use, not a copy of it
from .export import export_model
from .footprint import with_memory
from .gen_defaults import BUILTIN, GENERIC_PLAY, _base_name
from .gguf_export import gguf_export
from .leakage import training_keys
from .limits import MAX_HISTORY_CHARS, MAX_NEW_TOKENS, MAX_PROMPT_CHARS  # noqa: F401  (callers import them here)
from .metrics import label_set

MAX_CACHED = 2  # models kept loaded at once; a 7B model is ~15 GB, so keep this small
# What one request may cost lives in limits.py (one table for every service below); generation time itself is
# capped by evaluate.MAX_GENERATE_S (generate's max_time).
GENERATION_WAIT_S = 30.0       # how long a request waits for the model another request is using
LOAD_WAIT_S = 600.0            # how long a request waits for another request's load of its model


@dataclass
class Loaded:
    path: str
    model: Any
    tokenizer: Any
    cfg: Any
    template: Any
    # a plain Lock, not RLock: gradio may resume a streaming generator on another worker thread
    lock: threading.Lock = field(default_factory=threading.Lock)
    base: tuple[Any, Any] | None = None  # a separately loaded base (full/freeze runs only)

    @property
    def is_peft(self) -> bool:
        return hasattr(self.model, "disable_adapter")


_cache: "OrderedDict[tuple[str, float], Loaded]" = OrderedDict()
_cache_lock = threading.Lock()
_key_locks: dict[tuple[str, float], threading.Lock] = {}  # one per model key, made under _cache_lock
_load_lock = LOAD_LOCK  # one from_pretrained at a time in this process, shared with every other loader
_imports_lock = threading.Lock()
_imported = False


def _import_once() -> None:
    """Import what loading and generation use, once and from one thread (lazy imports race otherwise)."""
    global _imported
    with _imports_lock:
        if _imported:
            return
        # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
        import transformers
        for name in _EAGER_MODULES:
            importlib.import_module(name)
        for name in _EAGER_NAMES:  # transformers' lazy module resolves each name on first access
            getattr(transformers, name)
        if importlib.util.find_spec("peft") is not None:  # only adapter folders need it; its own error says so
            importlib.import_module("peft")
        _imported = True


_EAGER_MODULES = ("torch", "transformers.models.auto.configuration_auto", "transformers.modeling_utils",
                  "transformers.generation.utils", "studio.models.loading", "studio.evaluation.evaluate")
_EAGER_NAMES = ("CONFIG_MAPPING", "AutoConfig", "AutoModelForCausalLM", "AutoTokenizer", "GenerationConfig",
                "PreTrainedModel", "TextIteratorStreamer")


def load_model(path: str | Path) -> Loaded:
    """Load a run/model/adapter folder for inference, on the GPU when there is one (uncached)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, tok, cfg = load_for_inference(path, device=device)
    return Loaded(str(path), _place(model), tok, cfg, get_template(cfg.template if cfg else "auto", tok))


def _place(model: Any) -> Any:
    """Serving placement: models/loading.py ``place_on_card`` owns the rule."""
    return place_on_card(model)


def _key(path: str | Path) -> tuple[str, float]:
    p = Path(path).resolve()
    final = RunDir(p).final_model() if RunDir(p).config.exists() else p
    stamp = final.stat().st_mtime if final is not None and final.exists() else 0.0
    return str(p), stamp  # a retrained run gets a new stamp, so a stale model is never served


def get_model(path: str | Path) -> Loaded:
    """The cached model for ``path`` (loaded on first use; the least recently used one is dropped)."""
    if not path:
        raise StudioError.of("eval.no_run")
    key = _key(path)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        key_lock = _key_locks.setdefault(key, threading.Lock())
    if not key_lock.acquire(timeout=LOAD_WAIT_S):
        raise StudioError.of("eval.busy_loading")
    try:
        with _cache_lock:  # loaded by the request this one waited for
            if key in _cache:
                _cache.move_to_end(key)
                return _cache[key]
        _import_once()
        with _load_lock:
            loaded = load_model(path)  # raises: nothing cached, the next request loads again
        with _cache_lock:
            _cache[key] = loaded
            while len(_cache) > MAX_CACHED:
                _cache.popitem(last=False)
        return loaded
    finally:
        key_lock.release()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def base_of(loaded: Loaded) -> tuple[Any, Any] | None:
    """The base model to compare with; None means "the same PEFT model with adapters off"."""
    if loaded.is_peft:
        return None
    if loaded.base is None:
        if loaded.cfg is None:
            raise StudioError.of("eval.no_base")
        _import_once()
        with _load_lock:
            base_model, base_tok = load_base(loaded.cfg.replace(quantization_bit=None))
        loaded.base = (_place(base_model.eval()), base_tok)
    return loaded.base


# ------------------------------------------------------------------ runs
def finished_runs(runs_root: str | Path, kinds: tuple[str, str] = ("LoRA adapter", "full model")
                  ) -> list[tuple[str, str]]:
    """(label, path) of runs with a final model, most recently finished first, for a dropdown; ``kinds``: the
    words for (an adapter run, a full-model run) in the page's language."""
    out = []
    for run in list_runs(runs_root):
        status = run.read_status()
        if status.get("state") == "finished" and run.final_model() is not None:
            ended = status.get("ended") or run.config.stat().st_mtime
            when = time.strftime("%m-%d %H:%M", time.localtime(ended))
            kind = kinds[0] if run.adapter.is_dir() else kinds[1]
            out.append((ended, f"{run.path.name} · {kind} · {when}", str(run.path)))
    return [(label, path) for _, label, path in sorted(out, key=lambda t: t[0], reverse=True)]


def check_rows(run_path: str, data_file: str | None, max_rows: int | None) -> list[dict[str, str]]:
    """The rows a check uses: the uploaded file's (a labels run's asked as it was trained: ``as_trained``), else the
    run's held-out rows; at most ``max_rows``."""
    return _rows(run_path, data_file, max_rows)[0]


def _rows(run_path: str, data_file: str | None, max_rows: int | None
          ) -> tuple[list[dict[str, str]], list[str] | None, dict[str, str]]:
    """(the rows to check, the labels to score them among, the file's labels read as the run's): a check file of a
    labels run is asked as the run was trained (``as_trained``); the run's own held-out rows are as they are."""
    if not data_file:
        rows = validation_rows(run_path)
        return (rows[:int(max_rows)] if max_rows else rows), None, {}
    limits.check_batch_file(data_file)
    rows = load_rows(data_file, None)
    limits.check_batch_rows(len(rows))
    rows, labels, mapped = as_trained(run_path, rows)
    return (rows[:int(max_rows)] if max_rows else rows), labels, mapped


def as_trained(run_path: str, rows: list[dict[str, str]]
               ) -> tuple[list[dict[str, str]], list[str] | None, dict[str, str]]:
    """A labels run's rows from a file, asked the way the run was trained: each row's text with the run's own
    instruction, where the run's rows keep their text, and the file's labels read as the run's label words by
    meaning (``labels_by_meaning``: a file labelled 正面/负面 checks a run trained on positive/negative). Returns
    (rows, the run's labels, {file label: run label} for each label that was renamed); any other run's rows as
    they are, None, {}. A file label no run label means stays as it is (the row counts as wrong)."""
    task = label_task(run_path)
    if task is None:
        return rows, None, {}
    labels, like = task
    into_input = bool(like.get("input")) or not like.get("instruction")
    meaning = labels_by_meaning([r.get("output", "") for r in rows if r.get("output")], labels)
    out = []
    for r in rows:
        text = r.get("input") or r.get("instruction", "")
        out.append({"instruction": like.get("instruction", "") if into_input else text,
                    "input": text if into_input else "", "output": meaning.get(r.get("output", ""), r.get("output", ""))})
    return out, labels, {k: v for k, v in meaning.items() if k != v}


# ------------------------------------------------------------------ checks
def sentiment_check(run_path: str, data_file: str | None = None, mode: str = "score",
                    max_rows: int | None = None) -> dict:
    """Sentiment check of a run's model; adds ``figure`` (confusion-matrix plot)."""
    rows, labels, mapped = _rows(run_path, data_file, max_rows)
    loaded = get_model(run_path)
    with hold_model(loaded, wait=False):
        result = sentiment_eval(loaded.model, loaded.tokenizer, loaded.template, rows, labels,
                                mode=mode,  # type: ignore[arg-type]
                                trained_keys=training_keys(run_path))
    result["figure"] = confusion_figure(result["confusion"])
    result["label_map"] = mapped
    return result


def scorecard(run_path: str, data_file: str | None = None, mode: str = "score", max_rows: int | None = None) -> dict:
    """Before/after: the same sentiment check on the base model and on the fine-tuned one, with each side's
    latency per answer (wall time of its scoring/generation pass / rows) and model memory (``memory_bytes``:
    parameter + buffer bytes, see footprint.py)."""
    rows, labels, mapped = _rows(run_path, data_file, max_rows)
    loaded = get_model(run_path)
    with hold_model(loaded, wait=False):
        base = base_of(loaded)
        card = compare_loaded(loaded.model, loaded.tokenizer, loaded.template, rows, base,
                              mode, labels)  # type: ignore[arg-type]
        card["label_map"] = mapped
        return with_memory(card, loaded.model, base)


# ------------------------------------------------------------------ generation
def _answer(loaded: Loaded, use_base: bool, instruction: str, input_text: str, max_new_tokens: int,
            temperature: float, top_p: float, control: streaming.Control | None = None) -> Iterator[str]:
    model, tok = loaded.model, loaded.tokenizer
    ctx: Any = base_model_context(model) if use_base and loaded.is_peft else _null()
    if use_base and not loaded.is_peft:
        model, tok = base_of(loaded)  # type: ignore[misc]
    with ctx:
        yield from generate(model, tok, loaded.template, instruction, input_text, int(max_new_tokens),
                            float(temperature), float(top_p), stream=True, control=control)  # type: ignore[misc]


def stop_generation(key: str | None) -> bool:
    """The Stop button: end the generation running under ``key`` at its next token (False: none running)."""
    return streaming.request_stop(key)


def _check_request(what: str, text: str, max_new_tokens: Any) -> None:
    """Refuse prompts and token budgets over the caps (limits.py), before the model is touched."""
    limits.check_prompt(what, text)
    limits.check_new_tokens(max_new_tokens)


class hold_model:
    """Every computation on a loaded model in this process goes through here: the model's lock (a clear 'busy'
    after GENERATION_WAIT_S instead of a request stuck forever; ``wait=False`` waits as long as it takes, for a
    check the person started), and while it is held torch's threads by the thread rule (runs/cpu_threads.py: one per
    core other processes leave free, from the page's shared load sample), given back when the last computation
    ends."""

    def __init__(self, loaded: Any, wait: bool = True):
        self.lock, self.wait = loaded.lock, wait
        self.free: FreeCores | None = None

    def __enter__(self) -> None:
        if not self.lock.acquire(timeout=GENERATION_WAIT_S if self.wait else -1):
            raise StudioError.of("eval.busy")
        try:
            self.free = FreeCores()
            if self.free.active:  # a card, or threads the user set: no load sample (it may wait 0.2 s)
                self.free.apply(others=others_load())
        except BaseException:
            self.lock.release()
            raise

    def __exit__(self, *exc: Any) -> None:
        try:
            if self.free is not None:
                self.free.restore()
        finally:
            self.lock.release()


class _null:
    def __enter__(self) -> None: return None
    def __exit__(self, *exc: Any) -> None: return None


def base_play_tokens(run_path: str) -> int:
    """The base model's free-text answer budget in the playground: its own playground default (a label run's
    16 new tokens fit its trained one-word answers, and cut the base model's sentences off)."""
    try:
        name = _base_name(Path(run_path))[0]
    except (OSError, ValueError):
        name = ""
    return int(BUILTIN.get(name, (None, GENERIC_PLAY))[1]["max_new_tokens"])


def playground(run_path: str, instruction: str, input_text: str = "", max_new_tokens: int = 128,
               temperature: float = 0.0, top_p: float = 1.0, compare_base: bool = False,
               stop_key: str | None = None) -> Iterator[tuple[str, str]]:
    """Yield (fine-tuned answer so far, base answer so far); the base runs after the fine-tuned one, with at
    least its own free-text budget (``base_play_tokens``).

    A labels run given a bare text (no instruction) answers as its demo page does: the run's own instruction goes
    with the text and the fine-tuned answer is the label the evaluator's scoring picks (``label_probabilities``);
    the base model, compared, writes its free answer to the same prompt.

    ``stop_generation(stop_key)`` ends the answer being written (and skips the base's)."""
    labels_like = label_task(run_path) if not (instruction or "").strip() and (input_text or "").strip() else None
    if labels_like is not None:  # the text goes where the run's rows keep theirs, after their instruction
        like = labels_like[1]
        if bool(like.get("input")) or not like.get("instruction"):
            instruction = like.get("instruction", "")
        else:
            instruction, input_text = input_text, ""
    if not (instruction or "").strip():
        raise StudioError.of("eval.empty_prompt")
    _check_request("prompt", instruction + (input_text or ""), max_new_tokens)
    tuned = base = ""
    if labels_like is not None:
        labels, like = labels_like
        text = input_text or instruction
        probs = label_probabilities(run_path, [text], labels, like)[0]
        tuned = max(probs, key=lambda lab: probs[lab])
        yield tuned, base
        if not compare_base:
            return
    loaded = get_model(run_path)
    control = streaming.start(stop_key)
    try:
        with hold_model(loaded):
            if labels_like is None:
                for tuned in _answer(loaded, False, instruction, input_text, max_new_tokens, temperature, top_p,
                                     control):
                    yield tuned, base
            if compare_base and not control.event.is_set():
                base_max = max(int(max_new_tokens), base_play_tokens(run_path))
                for base in _answer(loaded, True, instruction, input_text, base_max, temperature, top_p,
                                    control):
                    yield tuned, base
    finally:
        streaming.finish(stop_key, control)
    yield tuned, base


def chat_stream(run_path: str, history: list[dict[str, Any]], message: str, max_new_tokens: int = 256,
                temperature: float = 0.7, top_p: float = 0.9, stop_key: str | None = None,
                control: streaming.Control | None = None) -> Iterator[str]:
    """Yield the assistant's reply so far to ``message`` after ``history`` (gr.Chatbot messages).

    ``stop_generation(stop_key)`` (or ``control.stop()``) ends the reply at its next token."""
    _check_request("message", message or "", max_new_tokens)
    labels_like = label_task(run_path)
    if labels_like is not None:  # a labels run answers a message as it was trained: a label, with its scores
        labels, like = labels_like
        yield label_reply(label_probabilities(run_path, [message], labels, like)[0])
        return
    history = limits.bound_history(history)
    loaded = get_model(run_path)
    control = streaming.start(stop_key, control)
    try:
        with hold_model(loaded):
            yield from chat(loaded.model, loaded.tokenizer, loaded.template, history, message, int(max_new_tokens),
                            float(temperature), float(top_p), stream=True, control=control)  # type: ignore[misc]
    finally:
        streaming.finish(stop_key, control)


# ------------------------------------------------------------------ files
def predict_file(run_path: str, data_file: str, out_dir: str | Path, mode: str = "auto",
                 max_new_tokens: int = 64, max_rows: int | None = None) -> dict:
    """Predict every row of an uploaded file into ``out_dir/predictions-<run>-<time>.csv``.

    mode "auto": score labels when the file's outputs look like a small label set, else generate.
    ``max_rows``: a file with more rows is refused before the model is touched (a shared demo page).
    """
    if not data_file:
        raise StudioError.of("eval.no_file")
    limits.check_batch_file(data_file)
    try:
        rows = load_rows(data_file)
        rows, labels, _ = as_trained(run_path, rows)  # a labels run: its instruction, its label words
    except StudioError as exc:  # no label column: predicting unlabelled rows is the main use of this
        if exc.code == "data.too_large":
            raise
        rows, labels, _ = as_trained(run_path, unlabelled_rows(data_file, run_path))
    limits.check_batch_rows(len(rows), max_rows)
    if mode == "generate":
        labels = None
    elif labels is None:
        try:
            labels = label_set([r["output"] for r in rows])
        except StudioError:
            labels = run_labels(run_path)   # unlabelled rows: the labels the run was trained on
            if mode == "score" and not labels:
                raise
    loaded = get_model(run_path)
    out = Path(out_dir) / f"predictions-{Path(run_path).name}-{time.strftime('%Y%m%d-%H%M%S')}.csv"
    with hold_model(loaded, wait=False):
        return batch_predict(loaded.model, loaded.tokenizer, loaded.template, rows, out, labels=labels,
                             mode="score" if labels else "generate", max_new_tokens=max_new_tokens)


def label_reply(probs: dict[str, float]) -> str:
    """A labels run's chat answer: the label on the first line (what feedback on the answer judges), then every
    label's score, the likeliest first."""
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])
    return f"{ranked[0][0]}\n\n" + " · ".join(f"{lab} {p:.2f}" for lab, p in ranked)


def label_task(run_path: str) -> tuple[list[str], dict[str, str]] | None:
    """(labels, one of its rows' instruction and input) of a run trained to answer with a few labels (the rule
    the demo page and the Settings page use, ``guess_task``, over its held-out rows, else its training rows: an
    improved run without held-out rows is still a labels run); None for any other run."""
    try:
        rows, _ = answer_rows(run_path)
        if not rows or guess_task(rows) != "sentiment":
            return None
        labels = label_set([str(r.get("output", "")) for r in rows])
    except StudioError:
        return None
    if len(labels) < 2:
        return None
    return labels, {k: str(rows[0].get(k, "")) for k in ("instruction", "input")}


def run_labels(run_path: str) -> list[str] | None:
    """The label set of a run's held-out rows, else of its training rows (what it was trained to answer), None
    when it has none."""
    try:
        rows, _ = answer_rows(run_path)
        return label_set([r["output"] for r in rows]) if rows else None
    except StudioError:
        return None


def label_probabilities(run_path: str, texts: Sequence[str], labels: Sequence[str],
                        like: dict[str, str] | None = None) -> list[dict[str, float]]:
    """Each text's probability for every label, by the evaluator's own batched label scoring (one forward per
    batch of prompts, every label from its KV cache), normalised over the labels (a softmax of the summed
    log-probabilities), so the demo page answers exactly what the sentiment check would.

    ``like`` is one of the run's held-out rows: the text goes where that row keeps its text (``input``, or the
    instruction when the run has no input), after the same instruction.

    Raises:
        StudioError: a text over MAX_PROMPT_CHARS, fewer than two labels, or the model busy past GENERATION_WAIT_S.
    """
    if len(labels) < 2:
        raise StudioError.of("eval.run_labels")
    for text in texts:
        _check_request("text", text, 1)
    like = like or {}
    into_input = bool(like.get("input")) or not like.get("instruction")
    rows = [{"instruction": like.get("instruction", "") if into_input else text,
             "input": text if into_input else "", "output": ""} for text in texts]
    loaded = get_model(run_path)
    with hold_model(loaded):
        scores = _score_labels(loaded.model, loaded.tokenizer, loaded.template, rows, list(labels))
    out = []
    for row in scores:
        top = max(row)
        weights = [math.exp(s - top) for s in row]
        out.append({lab: w / sum(weights) for lab, w in zip(labels, weights)})
    return out


def unlabelled_rows(data_file: str, run_path: str) -> list[dict[str, str]]:
    """Rows of a file with texts only: the text column as input, the run's own instruction.

    Raises:
        StudioError: the file cannot be read or has no rows.
    """
    table = read_table(data_file)
    col = guess_columns(table).get("text") or table.columns[0]
    try:
        instruction = answer_rows(run_path)[0][0]["instruction"]
    except (StudioError, IndexError, KeyError):
        instruction = ""
    rows = [{"instruction": instruction, "input": cell_str(r.get(col)), "output": ""} for r in table.rows
            if cell_str(r.get(col)).strip()]
    if not rows:
        raise StudioError.of("eval.no_text", file=Path(data_file).name)
    return rows


EXPORT_FORMATS = ("folder", "f16", "q8_0")  # the Export panel's choices: a model folder, or GGUF of that type


def export_run(run_path: str, exports_root: str | Path, merge: bool = True, overwrite: bool = False,
               name: str | None = None, fmt: str = "folder") -> dict:
    """Export a run into ``exports_root/<name>`` (default: ``<run>-merged``, ``<run>-adapter`` or
    ``<run>-gguf-<type>``). ``fmt`` f16 / q8_0: a GGUF for llama.cpp and Ollama (LoRA always merged); when the
    run's prompt format has no Ollama equivalent the GGUF comes without a Modelfile, and ``no_modelfile`` says why."""
    if not run_path:
        raise StudioError.of("eval.no_run_export")
    if fmt not in EXPORT_FORMATS:
        raise StudioError.of("eval.export_format", format=fmt, formats=list(EXPORT_FORMATS))
    is_lora = RunDir(run_path).adapter.is_dir()
    suffix = f"gguf-{fmt}" if fmt != "folder" else ("merged" if merge else "adapter") if is_lora else "model"
    folder = safe_name(name, code="name.export") if name and name.strip() \
        else f"{Path(run_path).name}-{suffix}"
    root = Path(exports_root)
    root.mkdir(parents=True, exist_ok=True)
    target = confine(root / folder, [root])  # symlinked names cannot lead out either
    if target == Path(os.path.realpath(root)):
        raise StudioError.of("eval.export_name")
    if fmt == "folder":
        return export_model(run_path, target, merge=merge, overwrite=overwrite)
    try:
        return gguf_export(run_path, target, fmt, overwrite=overwrite)  # type: ignore[arg-type]
    except StudioError as exc:
        if exc.code != "export.no_modelfile":
            raise
        info = gguf_export(run_path, target, fmt, overwrite=overwrite, modelfile=False)  # type: ignore[arg-type]
        return {**info, "no_modelfile": exc.why or exc.what}
