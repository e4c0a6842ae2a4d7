"""Upload size limits: data files and settings keep ``--max-upload-mb``; ``.gguf`` models get ``--max-model-upload-mb``.

Why a module: Gradio has one size limit for every upload a server takes (``launch(max_file_size=...)``), but a GGUF
model is 100 MB to several GB while a spreadsheet over 50 MB is almost always a mistake (or an attack). The server
limit is therefore the larger of the two, and every handler that takes a data-like upload checks the data limit here
before reading the file; the GGUF handler checks the model limit (``gguf_upload.accept_gguf``).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import StudioError

MB = 2 ** 20
DATA_MB = 50.0
MODEL_MB = 4096.0


def model_upload_mb(args: object) -> float:
    """launch.py's --max-model-upload-mb (a namespace built without it, e.g. by an older caller: the default)."""
    return float(getattr(args, "max_model_upload_mb", MODEL_MB))


def server_limit_bytes(data_mb: float, model_mb: float) -> int:
    """Gradio's one limit: the larger of the data and the model limits."""
    return int(max(data_mb, model_mb) * MB)


def check_data_upload(path: str | Path | None, limit_mb: float, kinds: tuple[str, ...] | list[str] = ()) -> None:
    """Raises StudioError (worded by the page in its language) when an uploaded data or settings file is over the
    data limit, or (``kinds`` given) not of one of those kinds. The page's file boxes take any file and leave the
    refusal to this check: Gradio's own refusal of a file type is an English toast that vanishes."""
    if not path:
        return
    p = Path(path)
    if kinds and p.suffix.lower() not in kinds:
        raise StudioError.of("data.unsupported_type", file=p.name, suffix=p.suffix.lower() or "—",
                             choices=list(kinds))
    size = p.stat().st_size if p.is_file() else 0
    if size > limit_mb * MB:
        raise StudioError.of("upload.too_big", name=p.name, mb=size / MB, limit=limit_mb)
