"""Export a model quantized to 4-bit (bitsandbytes NF4) or 8-bit, reloadable with plain transformers.

Why bitsandbytes through ``from_pretrained(quantization_config=...)`` + ``save_pretrained``: the saved folder
carries its ``quantization_config``, so ``AutoModelForCausalLM.from_pretrained(folder)`` gives the quantized model
back with no studio code (bitsandbytes installed). A LoRA run is merged into its base first (``export_model``),
since the deployed thing is one model.

Why ``keep_adapter`` exists (measured on SmolLM2-135M, docs/logs/benchmarks-history.md §6): a LoRA update is far
smaller than the gap between two NF4 levels, so quantizing the *merged* weights rounds most of the fine-tuning away
(held-out accuracy fell from the adapter's 0.93 towards the base's 0.56). With ``keep_adapter`` the base is
quantized alone and the adapter stays full precision in ``adapter/`` beside it -- the form QLoRA trains and serves
in. Plain transformers loads it with ``model = AutoModelForCausalLM.from_pretrained(folder)`` then
``model.load_adapter(folder + "/adapter")`` (peft installed). lm_head and tied embeddings are never quantized:
``llm_int8_skip_modules`` names them in the saved config, so a reload does not depend on transformers' guess.
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
from ..models.loading import LOAD_LOCK
from ..runs.run_dir import RunDir
from ..safe_files import copyfile
from .export import MARKER, _base_of, _check_target, _size_mb, _source, export_model

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
                   "tokenizer.model", "vocab.json", "merges.txt")


def _standalone(source: Path, work: Path) -> Path:
    """A folder with config.json + weights: ``source`` itself, or a run/adapter merged into ``work``."""
    if (source / "config.json").exists() and not RunDir(source).config.exists():
        return source
    export_model(source, work / "merged", merge=True)
    return work / "merged"


def _base_and_adapter(source: Path) -> tuple[Path, Path, Any]:
    """(base model folder, adapter folder, run config or None) of a LoRA run or adapter folder.

    Raises:
        StudioError: ``source`` holds a standalone model, not an adapter.
    """
    final, cfg = _source(source)
    if not (final / "adapter_config.json").is_file():
        raise StudioError.of("export.no_adapter", source=str(source))
    return Path(_base_of(final, cfg)), final, cfg


def skip_modules(model_folder: Path) -> list[str]:
    """Modules kept out of quantization: the output head and any module tied to the input embeddings.

    On small models the head/embedding matrix is a large share of the weights and the one every answer token
    goes through; transformers already skips it when it guesses right, this writes it down.
    """
    cfg = json.loads((model_folder / "config.json").read_text(encoding="utf-8"))
    text = cfg.get("text_config") or cfg
    skip = ["lm_head"]
    if text.get("tie_word_embeddings", cfg.get("tie_word_embeddings", True)):
        skip.append("embed_tokens")
    return skip


def quantize_export(source: str | Path, out_dir: str | Path, bits: Literal[4, 8] = 4,
                    overwrite: bool = False, keep_adapter: bool = False) -> dict[str, Any]:
    """Write ``source`` (run folder, adapter, or model folder) to ``out_dir`` quantized to ``bits``.

    ``keep_adapter``: quantize only the base of a LoRA run and store the adapter unmerged in ``adapter/``.
    Returns what was written, with the model's memory footprint (bytes in RAM, adapter included).

    Raises:
        StudioError: bits not 4 or 8, no finished model, no adapter to keep, or the target is non-empty without
        ``overwrite``.
    """
    if bits not in (4, 8):
        raise StudioError.of("export.bits", bits=bits)
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    src = Path(source).expanduser().resolve()
    out = Path(out_dir).expanduser().resolve()
    _check_target(out, overwrite)
    device = {"": 0} if torch.cuda.is_available() else {"": "cpu"}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".merge-") as work:
        try:
            adapter, template = None, "auto"
            if keep_adapter:
                folder, adapter, cfg = _base_and_adapter(src)
                template = cfg.template if cfg else template
            else:
                folder = _standalone(src, Path(work))
                marker = folder / MARKER
                if marker.is_file():
                    template = json.loads(marker.read_text(encoding="utf-8")).get("template", template)
            skip = skip_modules(folder)
            qcfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                      bnb_4bit_compute_dtype=torch.float32, llm_int8_skip_modules=skip) \
                if bits == 4 else BitsAndBytesConfig(load_in_8bit=True, llm_int8_skip_modules=skip)
            full_mb = _size_mb(folder) + (_size_mb(adapter) if adapter else 0)
            with LOAD_LOCK:  # see models/loading.py
                model = AutoModelForCausalLM.from_pretrained(folder, quantization_config=qcfg, device_map=device)
            footprint = model.get_memory_footprint()
            model.save_pretrained(tmp)
            tok_from = [adapter, folder] if adapter else [folder]
            for name in TOKENIZER_FILES:
                found = next((d / name for d in tok_from if (d / name).is_file()), None)
                if found is not None:
                    copyfile(found, tmp / name, metadata=True)
            how = "AutoModelForCausalLM.from_pretrained(folder) with bitsandbytes installed"
            if adapter is not None:
                (tmp / "adapter").mkdir()
                for f in adapter.iterdir():
                    if f.is_file() and f.name.startswith("adapter_"):
                        copyfile(f, tmp / "adapter" / f.name, metadata=True)
                footprint += sum(f.stat().st_size for f in (tmp / "adapter").glob("*.safetensors"))
                how += ", then model.load_adapter(folder + '/adapter') (peft installed)"
            info = {"kind": f"quantized-{bits}bit" + ("+adapter" if adapter else ""),
                    "what": f"A {bits}-bit model (bitsandbytes {'NF4, double quantization' if bits == 4 else 'LLM.int8'}"
                    f"{'; the LoRA adapter kept full precision in adapter/' if adapter else ''}); load it with {how}.",
                    "bits": bits, "source": str(src), "source_size_mb": full_mb, "memory_footprint_bytes": footprint,
                    "skip_modules": skip, "template": template, "created": time.strftime("%Y-%m-%d %H:%M:%S")}
            (tmp / MARKER).write_text(json.dumps(info, indent=1), encoding="utf-8")
            if out.exists():
                shutil.rmtree(out) if (out / MARKER).is_file() else out.rmdir()
            os.replace(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return {**info, "path": str(out), "size_mb": _size_mb(out)}
