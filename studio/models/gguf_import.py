"""Turn a GGUF file into a normal Hugging Face model folder, once, and reuse it.

Why a prepared folder instead of loading the GGUF on every run: transformers reads GGUF by
dequantizing every tensor to fp32 (seconds to tens of seconds), and the model it returns carries a
GGUF ``quantization_config`` that refuses ``save_pretrained`` and confuses PEFT/Trainer. Rebuilding
the model from its config without that entry, loading the dequantized state dict and tying the
weights gives an ordinary fp32 folder that every other part of the studio (training, adapters,
evaluation, export) already knows how to load.

The folder holds ``studio_gguf.json``; its ``source_key`` (the GGUF's size + mtime, or a package
version for the built-in models) says whether the folder still matches its source.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import StudioError

MARKER = "studio_gguf.json"
Progress = Callable[[float, str], None]


def source_key(path: str | Path) -> str:
    """A cheap fingerprint of a file (size + mtime): a changed GGUF is prepared again."""
    st = Path(path).stat()
    return hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]


def folder_name(gguf_path: str | Path) -> str:
    """``<stem>-<key>``: a plain folder name, different for different files with the same name."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(gguf_path).stem).strip("-.") or "model"
    return f"{stem[:80]}-{source_key(gguf_path)[:8]}"


def is_prepared(folder: str | Path, key: str) -> bool:
    """True when ``folder`` was prepared from the source with this ``key`` and holds weights."""
    marker = Path(folder) / MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return data.get("source_key") == key and (Path(folder) / "config.json").exists()


def gguf_architecture(gguf_path: str | Path) -> str:
    """``general.architecture`` of a GGUF file (reads the header only).

    Raises:
        StudioError: the file is missing or not a GGUF file.
    """
    p = Path(gguf_path)
    if not p.is_file():
        raise StudioError(f"GGUF file '{p}' does not exist", "check the path to the .gguf file", code="model_path")
    from gguf import GGUFReader
    try:
        reader = GGUFReader(str(p))
        field = reader.fields["general.architecture"]
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    except (KeyError, ValueError, IndexError, OSError) as exc:
        raise StudioError(f"'{p.name}' is not a readable GGUF file", "pick a .gguf model file (llama.cpp format)",
                          why=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                          code="model_load") from None


def supported_architectures() -> list[str]:
    """The GGUF architectures this version of transformers can turn into a model."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
    return sorted(a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer"))


def prepare_gguf(gguf_path: str | Path, cache_dir: str | Path, *, name: str | None = None,
                 key: str | None = None, progress: Progress | None = None) -> Path:
    """A normal model folder ``cache_dir/<name>`` made from ``gguf_path`` (once; later calls return it).

    Args:
        name: folder name (default ``folder_name(gguf_path)``).
        key: what identifies the source (default ``source_key(gguf_path)``).
        progress: called with (fraction 0..1, message) at each stage.

    Raises:
        StudioError: missing file, unreadable GGUF, or an architecture transformers cannot read.
    """
    say = progress or (lambda f, m: None)
    src = Path(gguf_path)
    key = key or source_key(src)
    out = Path(cache_dir) / (name or folder_name(src))
    if is_prepared(out, key):
        say(1.0, f"Using the prepared model in {out}")
        return out
    arch = gguf_architecture(src)
    known = supported_architectures()
    if arch not in known:
        raise StudioError(f"'{src.name}' is a '{arch}' model, which this version of transformers cannot read "
                          "from GGUF", "use a GGUF of one of these architectures: " + ", ".join(known)
                          + " (or a model folder with config.json)", code="model_arch")
    started = time.time()
    say(0.05, f"Reading the tokenizer of {src.name}")
    model, tok = _load_gguf(src, say)
    say(0.75, "Rebuilding a plain fp32 model")
    plain = _plain_copy(model)
    del model
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        say(0.85, f"Saving the prepared model to {out}")
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / MARKER).write_text(json.dumps({
            "what": "Prepared by Fine-Tune Studio from a GGUF file (dequantized to fp32).",
            "source": str(src), "source_key": key, "architecture": arch,
            "n_params": sum(p.numel() for p in plain.parameters()),
            "seconds": round(time.time() - started, 1)}, indent=1), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(1.0, f"Prepared {out.name} in {time.time() - started:.0f} s")
    return out


def _load_gguf(src: Path, say: Progress) -> tuple[Any, Any]:
    """Model (dequantized, fp32) and tokenizer from a GGUF file via transformers' own reader."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    folder, file = str(src.parent), src.name
    try:
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=file)
        say(0.2, f"Dequantizing the weights of {file} to fp32")
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=file, dtype=torch.float32)
    except (ValueError, KeyError, OSError, RuntimeError, TypeError) as exc:
        raise StudioError(f"transformers could not read the model in '{file}'",
                          "check that the file is a complete GGUF of a supported text model",
                          why=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                          code="model_load") from None
    return model, tok


def _plain_copy(model: Any) -> Any:
    """The same weights in a model without the GGUF quantization_config (so it can be saved)."""
    import torch
    from transformers import AutoModelForCausalLM
    config = model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    tied = {k for k in missing if "lm_head" in k} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise StudioError("The GGUF's tensors do not match the model transformers built from its metadata",
                          "report this file; it may be a variant transformers does not support",
                          why=f"missing {sorted(set(missing) - tied)[:3]}, unexpected {sorted(unexpected)[:3]}",
                          code="model_load")
    plain.tie_weights()
    return plain
