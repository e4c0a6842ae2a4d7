"""Settings: a .gguf file uploaded in the page becomes the base model.

The upload is checked (name, size, a bounded walk of the GGUF header, an architecture transformers can read, tensors
that cover it) before anything is kept, copied into ``<workspace>/models/uploads/`` (confined: the name cannot step out of that folder), and prepared once
by ``studio.models.gguf_import.prepare_gguf`` into ``<workspace>/models/<name>-<key>/``, a plain model folder that the
estimator, training and evaluation read like any other. Uploading the same file again reuses both.
No torch here: ``gguf_import`` imports transformers only inside its functions.
"""
from __future__ import annotations

import filecmp
import json
import os
from pathlib import Path
from typing import Any, Callable

from ..errors import StudioError
from ..models.gguf_import import MARKER, check_coverage, gguf_architecture, prepare_gguf, read_header, \
    supported_architectures
from ..safe_files import copyfile
from ..workspace import confine, safe_name
from ..words.catalog import msg
from .uploads import MB, MODEL_MB

EXAMPLE_ARCHS = "llama, mistral, qwen2, qwen3, gemma3, phi3"  # shown in the page; the check uses the real list


def uploads_dir(workspace: Path) -> Path:
    return Path(workspace) / "models" / "uploads"


def accept_gguf(ctx: Any, upload: str | Path | None, lang: str = "en",
                progress: Callable[[float, str], None] | None = None) -> tuple[str, str]:
    """Keep and prepare an uploaded .gguf -> (the prepared model folder, a message for the page).

    Raises:
        StudioError: no file, not a .gguf, over the upload limit, not a readable GGUF, or an architecture
            transformers cannot read (the uploaded copy is then removed).
    """
    if not upload:
        raise StudioError.of("upload.not_gguf", name="")
    src = Path(upload)
    name = src.name
    if not name.lower().endswith(".gguf"):
        raise StudioError.of("upload.not_gguf", name=name)
    size = src.stat().st_size
    limit = float(getattr(ctx, "max_model_upload_mb", MODEL_MB))
    if size > limit * MB:
        raise StudioError.of("upload.gguf_too_big", name=name, mb=size / MB, limit=limit)
    arch = gguf_architecture(src)  # a file that is not GGUF: a plain error, nothing copied
    known = supported_architectures()
    if arch not in known:
        raise StudioError.of("model.gguf_arch", file=name, arch=arch, known=list(known))
    check_coverage(read_header(src), name)  # metadata without the tensors it implies: refused before the copy
    folder = uploads_dir(ctx.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    target = confine(folder / safe_name(name, code="name.file"), [folder])
    fresh = not (target.is_file() and filecmp.cmp(src, target, shallow=False))
    if fresh:  # the same file uploaded again keeps its copy (and so its prepared folder)
        part = target.with_name(f".{target.name}.part")
        copyfile(src, part, [Path(os.path.realpath(src)).parent])  # the upload itself, never a link's target
        os.replace(part, target)
    say = progress or (lambda f, m: None)
    try:
        prepared = prepare_gguf(target, Path(ctx.workspace) / "models", progress=lambda f, step: say(f, step.text(lang)))
    except BaseException:
        if fresh:
            target.unlink(missing_ok=True)
        raise
    info = json.loads((prepared / MARKER).read_text(encoding="utf-8"))
    return str(prepared), msg("gguf.prepared", lang, name=name, arch=info.get("architecture", arch),
                              params=int(info.get("n_params", 0)), path=prepared)


def note(ctx: Any, lang: str) -> str:
    """The line under the upload box: what is accepted, where it goes, the size limit."""
    return msg("set.gguf_note", lang, archs=EXAMPLE_ARCHS, mb=float(getattr(ctx, "max_model_upload_mb", MODEL_MB)))
