"""Export a model quantized to 4-bit (bitsandbytes NF4) or 8-bit, reloadable with plain transformers.

Why bitsandbytes through ``from_pretrained(quantization_config=...)`` + ``save_pretrained``: the saved folder
carries its ``quantization_config``, so ``AutoModelForCausalLM.from_pretrained(folder)`` gives the quantized model
back with no studio code (bitsandbytes installed). A LoRA run is merged into its base first (``export_model``),
since the deployed thing is one model.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from ..errors import StudioError
from ..runs import RunDir
from .export import MARKER, _check_target, _size_mb, export_model

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
                   "tokenizer.model", "vocab.json", "merges.txt")


def _standalone(source: Path, work: Path) -> Path:
    """A folder with config.json + weights: ``source`` itself, or a run/adapter merged into ``work``."""
    if (source / "config.json").exists() and not RunDir(source).config.exists():
        return source
    export_model(source, work / "merged", merge=True)
    return work / "merged"


def quantize_export(source: str | Path, out_dir: str | Path, bits: Literal[4, 8] = 4,
                    overwrite: bool = False) -> dict[str, Any]:
    """Write ``source`` (run folder, adapter, or model folder) to ``out_dir`` quantized to ``bits``.

    Returns what was written, with the model's memory footprint before and after (bytes in RAM).

    Raises:
        StudioError: bits not 4 or 8, no finished model, or the target is non-empty without ``overwrite``.
    """
    if bits not in (4, 8):
        raise StudioError(f"Quantized export supports 4 or 8 bits, not {bits}", "use 4 (NF4) or 8",
                          code="export")
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    src = Path(source).expanduser().resolve()
    out = Path(out_dir).expanduser().resolve()
    _check_target(out, overwrite)
    qcfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_compute_dtype=torch.float32) if bits == 4 else \
        BitsAndBytesConfig(load_in_8bit=True)
    device = {"": 0} if torch.cuda.is_available() else {"": "cpu"}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".merge-") as work:
        try:
            folder = _standalone(src, Path(work))
            full_mb = _size_mb(folder)
            model = AutoModelForCausalLM.from_pretrained(folder, quantization_config=qcfg, device_map=device)
            footprint = model.get_memory_footprint()
            model.save_pretrained(tmp)
            for name in TOKENIZER_FILES:
                if (folder / name).is_file():
                    shutil.copy2(folder / name, tmp / name)
            info = {"kind": f"quantized-{bits}bit", "what": f"A standalone {bits}-bit model (bitsandbytes "
                    f"{'NF4, double quantization' if bits == 4 else 'LLM.int8'}); load it with "
                    "AutoModelForCausalLM.from_pretrained(folder) with bitsandbytes installed.",
                    "bits": bits, "source": str(src), "source_size_mb": full_mb, "memory_footprint_bytes": footprint,
                    "created": time.strftime("%Y-%m-%d %H:%M:%S")}
            (tmp / MARKER).write_text(json.dumps(info, indent=1), encoding="utf-8")
            if out.exists():
                shutil.rmtree(out) if (out / MARKER).is_file() else out.rmdir()
            os.replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return {**info, "path": str(out), "size_mb": _size_mb(out)}
