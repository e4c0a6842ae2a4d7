"""The deploy report: a finished run's model in every form it can be deployed in, measured on the same rows.

Forms: the run as trained (base + adapter, or the full model, as the evaluator loads it), bitsandbytes 8-bit and NF4
(the merged model quantized by ``quantize_export``, what ``python -m studio export RUN --quantize 8|4`` writes), and
each GGUF type (``gguf_export``, what ``export RUN --gguf TYPE`` writes), read back by transformers' GGUF reader as
``gguf_agreement`` does. For each: file size on disk (the weight files that load reads), load time (wall, tokenizer
included), model memory (``footprint.model_bytes``), latency per answer (the evaluator's batched label scoring: wall
time of the pass / rows), accuracy on the rows, agreement with the full model (same predicted label, row by row),
and the CPU-seconds of load + scoring (the figure a busy machine moves least).

Every number comes from the evaluator's own ``sentiment_eval``; nothing here scores. Models are loaded one at a time
and freed before the next, so the peak is one model (plus the merged copy on disk while the bitsandbytes forms are
made). A form this machine cannot make or load (bitsandbytes missing, its CPU 4-bit kernels refusing narrow layers,
an architecture the GGUF writer does not know, q4_k_m, which the export refuses) gets a row that says why.
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..config.run_config import trained_config
from ..data.templates import get_template
from ..errors import StudioError
from ..models.loading import load_tokenizer
from ..runs.run_dir import RunDir
from ..safe_files import refuse_links_out
from .compare import _device, _free, _load_full, _load_quantized
from .evaluate import sentiment_eval
from .generation_check import answer_budget, score_generation, task_of
from .metrics import normalize
from .export import _base_of, export_model
from .footprint import model_bytes
from .gguf_agreement import load_gguf
from .gguf_export import GGUF_NAME, gguf_export
from .quantize import quantize_export

log = logging.getLogger("studio.evaluation.deploy_report")

FORMS = ("full", "bnb-8bit", "bnb-nf4", "gguf-f16", "gguf-q8_0", "gguf-q4_k_m")
FORM_NAMES = {"full": "full (the run as trained)", "bnb-8bit": "bitsandbytes 8-bit", "bnb-nf4": "bitsandbytes NF4",
              "gguf-f16": "GGUF f16", "gguf-q8_0": "GGUF q8_0", "gguf-q4_k_m": "GGUF q4_k_m"}
NUMBERS = ("size_bytes", "load_s", "memory_bytes", "latency_ms_per_row", "accuracy", "agreement", "cpu_s")
WEIGHT_SUFFIXES = (".safetensors", ".gguf")
BIN_WEIGHTS = ("pytorch_model", "adapter_model")  # .bin files that are weights (training_args.bin is not)
GENERATION = "generate-check"   # mode: a generation run's forms, scored by the generation check
GENERATION_NUMBERS = ("chrf", "bleu", "rouge_l", "exact_match", "answer_loss")
GGUF_READER = ("GGUF rows are read back by transformers' GGUF reader (from_pretrained(gguf_file=...)), which "
               "dequantizes every tensor to float32: their memory and latency are transformers', not llama.cpp's "
               "(llama.cpp keeps q8_0 quantized and was not run)")


def _finished(run: Path) -> tuple[Path, Any]:
    """(final adapter/model folder, run config) of a finished run.

    Raises:
        StudioError: ``run`` is no run folder, or its training has not finished.
    """
    folder = RunDir(run)
    refuse_links_out(run, "run folder")  # before any form of the model is read or written
    final = folder.final_model() if folder.config.is_file() else None
    if final is None:
        raise StudioError.of("eval.not_finished", run=str(run))
    return final, trained_config(folder.config)


def weight_files(folder: Path) -> list[Path]:
    """The weight files directly in ``folder`` (what a loader reads; tokenizer and config files left out)."""
    return sorted(f for f in folder.iterdir() if f.is_file() and (
        f.suffix in WEIGHT_SUFFIXES or (f.suffix == ".bin" and f.name.startswith(BIN_WEIGHTS)))) \
        if folder.is_dir() else []


def _as_trained_files(final: Path, cfg: Any) -> list[Path]:
    """The run's own weights, and for an adapter the base model's it is loaded on."""
    files = weight_files(final)
    if (final / "adapter_config.json").is_file():
        files += weight_files(Path(_base_of(final, cfg)))
    return files


def _empty_row(form: str, why: str | None = None) -> dict[str, Any]:
    return {"form": form, "name": FORM_NAMES[form], "weights": None, "files": [], "made_s": None,
            "unavailable": why, **{k: None for k in NUMBERS}}


def _why(exc: Exception) -> str:
    if isinstance(exc, StudioError):
        return exc.message
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:400]


def _measure(form: str, load: Callable[[], tuple[Any, Any, Any]], rows: Sequence[dict[str, str]],
             labels: Sequence[str] | None, mode: str, reference: list | None) -> tuple[dict[str, Any], list]:
    """Load one form, score the rows with the evaluator, free it: (row, its predictions). ``mode`` "generate-check":
    the generation check's scores (score_generation) instead of the labels check's; agreement is then the share of
    rows where the form writes the full model's answer (case and punctuation aside)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    model, tok, template = load()
    load_s = time.perf_counter() - wall0
    try:
        if mode == GENERATION:
            gen = score_generation(model, tok, template, rows, answer_budget(tok, rows), one_pass=False)
            res = {"weights": gen.weights, "latency_ms_per_row": gen.latency_ms_per_row, "n": gen.n,
                   "accuracy": None, "macro_f1": None, "labels": None, "predictions": [normalize(a) for a in gen.answers],
                   **{k: getattr(gen, k) for k in GENERATION_NUMBERS}}
        else:
            res = sentiment_eval(model, tok, template, rows, labels, mode, max_misclassified=0,  # type: ignore[arg-type]
                                 keep_predictions=True)
        memory = model_bytes(model)
    finally:
        del model
        _free()
    preds = res["predictions"]
    reference = preds if reference is None else reference
    row = _empty_row(form)
    row.update(weights=res["weights"], load_s=round(load_s, 3), memory_bytes=memory,
               latency_ms_per_row=res["latency_ms_per_row"], accuracy=res["accuracy"], macro_f1=res["macro_f1"],
               agreement=sum(a == b for a, b in zip(preds, reference)) / len(reference),
               cpu_s=round(time.process_time() - cpu0, 2), n=res["n"], labels=res["labels"],
               **{k: res[k] for k in GENERATION_NUMBERS if k in res})
    return row, preds


@contextlib.contextmanager
def _where(out_dir: str | Path | None, work_dir: str | Path | None) -> Iterator[tuple[Path, bool]]:
    """(folder the forms are written in, keep them): ``out_dir`` kept, else a temporary folder removed after."""
    if out_dir is not None:
        out = Path(out_dir).expanduser().resolve()
        out.mkdir(parents=True, exist_ok=True)
        yield out, True
        return
    with tempfile.TemporaryDirectory(dir=work_dir, prefix=".deploy-report-") as tmp:
        yield Path(tmp), False


def deploy_report(run: str | Path, rows: Sequence[dict[str, str]], labels: Sequence[str] | None = None,
                  mode: str = "score", out_dir: str | Path | None = None, work_dir: str | Path | None = None,
                  forms: Sequence[str] = FORMS) -> dict[str, Any]:
    """Measure the finished ``run``'s model in each of ``forms`` on ``rows`` (see the module docstring).

    Args:
        out_dir: keep the files made (``<out_dir>/<form>/``); default: a temporary folder under ``work_dir``
            (the system's when None), removed afterwards.

    Returns:
        ``{"run", "n", "labels", "mode", "device", "rows": [one dict per form, in ``forms`` order], "gguf_reader"}``;
        a row has ``form``, ``name``, the ``NUMBERS`` (None where ``unavailable`` says why), ``weights``,
        ``files`` (the weight files measured; kept only with ``out_dir``) and ``made_s`` (wall time of the export).

    Raises:
        StudioError: not a finished run, no rows, an unknown form, or rows the evaluator refuses (no label set).
    """
    run = Path(run).expanduser()
    final, cfg = _finished(run)
    if not rows:
        raise StudioError.of("eval.no_rows_report")
    unknown = [f for f in forms if f not in FORMS]
    if unknown or "full" not in forms:
        if unknown:
            raise StudioError.of("eval.report_forms", forms=str(unknown), others=list(FORMS[1:]))
        raise StudioError.of("eval.report_full", others=list(FORMS[1:]))
    if task_of(rows) != "sentiment":  # written answers (no label set): the generation check scores every form
        mode = GENERATION
    device = _device()
    full_row, reference = _measure("full", lambda: _load_full(str(run), device), rows, labels, mode, None)
    files = _as_trained_files(final, cfg)
    full_row.update(size_bytes=sum(f.stat().st_size for f in files), files=[str(f) for f in files])
    labels = full_row["labels"]
    out = {"run": str(run), "n": full_row["n"], "labels": labels, "mode": mode, "device": device,
           "rows": [full_row], "gguf_reader": GGUF_READER}
    with _where(out_dir, work_dir) as (where, keep):
        merged: Path | Exception | None = None
        try:
            for form in forms[1:]:
                if form.startswith("bnb-"):
                    if merged is None:  # one merge for both bit widths (quantize_export would merge each time)
                        merged = _merged(run, where)
                    row = _bnb(form, merged, where, cfg.template, rows, labels, mode, reference, device)
                else:
                    row = _gguf(form, run, cfg, where, rows, labels, mode, reference)
                if not keep:
                    shutil.rmtree(where / form, ignore_errors=True)
                    row["files"] = [Path(f).name for f in row["files"]]
                out["rows"].append(row)
        finally:
            if isinstance(merged, Path):
                shutil.rmtree(merged, ignore_errors=True)  # not a form of the table, only the source of two
    return out


def _merged(run: Path, where: Path) -> Path | Exception:
    try:
        export_model(run, where / ".merged", merge=True)
        return where / ".merged"
    except Exception as exc:  # noqa: BLE001 - both bitsandbytes rows then say why
        log.warning("merging %s for the bitsandbytes forms failed", run, exc_info=True)
        return exc


def _bnb(form: str, merged: Path | Exception, where: Path, template: str, rows: Sequence[dict[str, str]],
         labels: Sequence[str], mode: str, reference: list, device: str) -> dict[str, Any]:
    if isinstance(merged, Exception):
        return _empty_row(form, "the merged model they are made from could not be written: " + _why(merged))
    folder = where / form
    try:
        started = time.perf_counter()
        quantize_export(merged, folder, bits=8 if form == "bnb-8bit" else 4)
        made = time.perf_counter() - started
        row, _ = _measure(form, lambda: _load_bnb(folder, device, template), rows, labels, mode, reference)
    except Exception as exc:  # noqa: BLE001 - a form this machine cannot make is a row, not a failed report
        log.warning("deploy report: %s could not be made or loaded", form, exc_info=True)
        return _empty_row(form, _why(exc))
    files = weight_files(folder)
    row.update(size_bytes=sum(f.stat().st_size for f in files), files=[str(f) for f in files], made_s=round(made, 2))
    return row


def _load_bnb(folder: Path, device: str, template: str) -> tuple[Any, Any, Any]:
    """The quantized model and the tokenizer copied beside it (so its load time counts a tokenizer, as the other
    rows' do), prompted with the run's template, as compare.py prompts a quantized model."""
    tok = load_tokenizer(str(folder))
    return _load_quantized(folder, device), tok, get_template(template, tok)


def _gguf(form: str, run: Path, cfg: Any, where: Path, rows: Sequence[dict[str, str]], labels: Sequence[str],
          mode: str, reference: list) -> dict[str, Any]:
    folder = where / form

    def load() -> tuple[Any, Any, Any]:
        model, tok = load_gguf(folder)
        return model, tok, get_template(cfg.template if cfg else "auto", tok)  # the GGUF's own tokenizer

    try:
        started = time.perf_counter()
        gguf_export(run, folder, form.split("-", 1)[1], modelfile=False)  # type: ignore[arg-type]
        made = time.perf_counter() - started
        row, _ = _measure(form, load, rows, labels, mode, reference)
    except Exception as exc:  # noqa: BLE001 - see _bnb
        log.warning("deploy report: %s could not be made or loaded", form, exc_info=not isinstance(exc, StudioError))
        return _empty_row(form, _why(exc))
    path = folder / GGUF_NAME
    row.update(size_bytes=path.stat().st_size, files=[str(path)], made_s=round(made, 2))
    return row
