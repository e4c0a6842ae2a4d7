"""Full vs quantized: the same sentiment check on a full-precision model and its 4-bit / 8-bit version.

The reference experiment this studio was designed around reported "4-bit model: memory 13 GB -> 5 GB, latency
420 -> 380 ms, accuracy 89.2% -> 88.7%". This module measures the same three numbers for any run or export:

* the full side is a run folder (LoRA adapters on their unquantized base) or a full / merged export folder;
* the quantized side is a quantized export folder (``python -m studio export RUN --quantize 4|8``) or a bit width,
  in which case the full side is quantized now with ``quantize_export`` into a temporary folder: the very file the
  export would write, so what is compared is what would be deployed.

Both sides get the same rows, labels, tokenizer and prompt template (the full side's), and are loaded one after
the other (the full one is freed first), so the peak is one model plus one. Memory is ``footprint.model_bytes``
(parameter + buffer + quantization-state bytes of the loaded model), latency the wall time of the scoring (or
generation) pass divided by the rows answered.
"""
from __future__ import annotations

import gc
import json
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..data.templates import get_template
from ..errors import StudioError
from ..models.loading import LOAD_LOCK, describe_weights, load_for_inference, place_on_card
from .evaluate import sentiment_eval
from .footprint import model_bytes
from .quantize import quantize_export

EXPORT_MARKER = "studio_export.json"  # written by export.py / quantize.py into every export folder


def exports(exports_root: str | Path, quantized: bool) -> list[tuple[str, str]]:
    """(label, path) of the export folders under ``exports_root``: the quantized ones, or the full/merged ones."""
    out = []
    root = Path(exports_root)
    for marker in sorted(root.glob(f"*/{EXPORT_MARKER}")) if root.is_dir() else []:
        try:
            kind = str(json.loads(marker.read_text(encoding="utf-8")).get("kind", ""))
        except (OSError, ValueError):
            continue
        if kind.startswith("quantized") == quantized and kind != "adapter":
            out.append((f"{marker.parent.name} · {kind}", str(marker.parent)))
    return out


def _device() -> str:
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def _free() -> None:
    gc.collect()
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _load_full(source: str, device: str) -> tuple[Any, Any, Any]:
    model, tok, cfg = load_for_inference(source, device=device, quantized=False)
    if device == "cuda":
        place_on_card(model)
    if "bit" in _weights(model):
        raise StudioError.of("eval.already_quantized", name=Path(source).name)
    return model.eval(), tok, get_template(cfg.template if cfg else "auto", tok)


def _load_quantized(folder: Path, device: str) -> Any:
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AutoModelForCausalLM
    if not (folder / "config.json").is_file() or \
            "quantization_config" not in json.loads((folder / "config.json").read_text(encoding="utf-8")):
        raise StudioError.of("eval.not_quantized", name=folder.name)
    try:
        with LOAD_LOCK:  # see models/loading.py
            model = AutoModelForCausalLM.from_pretrained(folder, device_map={"": 0 if device == "cuda" else "cpu"})
    except (OSError, ValueError, ImportError) as exc:
        raise StudioError.of("eval.quantized_unloadable", name=folder.name,
                             detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return model.eval()


def _weights(model: Any) -> str:
    return describe_weights(model)


def _bits(quantized: str | int) -> int | None:
    text = str(quantized).strip().lower().replace("-bit", "").replace("bit", "")
    return int(text) if text in ("4", "8") else None


def compare_full_quantized(full: str | Path, quantized: str | int | Path, rows: Sequence[dict[str, str]],
                           mode: str = "score", labels: Sequence[str] | None = None,
                           work_dir: str | Path | None = None) -> dict[str, Any]:
    """Sentiment check of ``full`` and of its quantized version on the same ``rows``.

    Args:
        full: run folder, or full / merged export folder.
        quantized: 4 or 8 (quantize ``full`` now, into a temporary folder under ``work_dir``), or the path of a
            quantized export folder.

    Returns:
        ``{"full": result, "quantized": result, "n", "labels", "delta"}``; each result is ``sentiment_eval``'s plus
        ``memory_bytes``, ``source`` (and ``bits`` on the quantized side).

    Raises:
        StudioError: no rows, a full side that is already quantized, a quantized side that is not quantized.
    """
    device = _device()
    bits = _bits(quantized)
    qfolder = None if bits is not None else Path(quantized)
    if qfolder is not None and not qfolder.is_dir():
        raise StudioError.of("eval.quantized_missing", folder=str(quantized))
    model, tok, template = _load_full(str(full), device)
    first = sentiment_eval(model, tok, template, rows, labels, mode, max_misclassified=20)  # type: ignore[arg-type]
    first.update(memory_bytes=model_bytes(model), source=str(full))
    del model
    _free()
    with tempfile.TemporaryDirectory(dir=work_dir, prefix=".quantize-") as tmp:
        if bits is not None:
            qfolder = Path(tmp) / f"q{bits}"
            quantize_export(full, qfolder, bits=bits)  # type: ignore[arg-type]
        qmodel = _load_quantized(qfolder, device)  # type: ignore[arg-type]
        second = sentiment_eval(qmodel, tok, template, rows, first["labels"], mode,  # type: ignore[arg-type]
                                max_misclassified=20)
        second.update(memory_bytes=model_bytes(qmodel), bits=bits or _export_bits(qfolder),  # type: ignore[arg-type]
                      source=f"{bits}-bit, quantized now from {full}" if bits else str(qfolder))
        del qmodel
        _free()
    return {"full": first, "quantized": second, "n": first["n"], "labels": first["labels"],
            "delta": {k: second[k] - first[k] for k in ("accuracy", "macro_f1", "latency_ms_per_row",
                                                         "memory_bytes")}}


def _export_bits(folder: Path) -> int | None:
    try:
        return int(json.loads((folder / EXPORT_MARKER).read_text(encoding="utf-8"))["bits"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
