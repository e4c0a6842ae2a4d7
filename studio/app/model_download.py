"""Settings: what the model list says about getting each model, and the Download button of a built-in model.

Models you can get: the list marks which models are on this machine, which ship in a package, which
need a download and how big it is, and whether the hub answers from here; a download starts only when the user
presses Download (an owner action: it writes into the model cache). The name comes from the page's model field but
only a built-in model's name is accepted: nothing here takes a path or a hub id from the browser.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

from ..config.run_config import DEMO_MODEL
from ..errors import StudioError
from ..models import zoo
from ..words.catalog import msg

HUB_PROBE_S = 1.5          # a connect attempt, not a request: the page must not wait on a slow network
HUB_RECHECK_S = 300.0
_hub: dict[str, Any] = {"at": -1e18, "up": None}
_hub_lock = threading.Lock()


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_reachable() -> bool:
    """Whether a TCP connection to the hub (``HF_ENDPOINT`` or huggingface.co) opens from here; kept 5 minutes."""
    with _hub_lock:
        if time.monotonic() - _hub["at"] < HUB_RECHECK_S:
            return bool(_hub["up"])
        url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
        try:
            with socket.create_connection((url.hostname or "huggingface.co", url.port or 443), HUB_PROBE_S):
                up = True
        except OSError:
            up = False
        _hub.update(at=time.monotonic(), up=up)
        return up


def availability_note(name: str, lang: str, params: int | None = None) -> str:
    """The part of a model's list label that says whether this machine has it and what getting it costs."""
    if name == DEMO_MODEL:
        return ""
    if zoo.is_builtin(name):
        state = zoo.availability(name)
        return msg("model.needs_get" if state == "download" else f"model.{state}", lang,
                   mb=f"{zoo.download_mb(name):.0f}")
    if Path(name).expanduser().is_dir():
        return ""
    if hub_offline():
        return msg("model.offline", lang)
    size = msg("model.hub_size", lang, gb=f"{params * 2 / 1e9:.0f}") if params else ""  # bf16 weights
    return msg("model.download", lang, size=size) + msg("model.hub_up" if hub_reachable() else "model.hub_down", lang)


def button(name: str | None, lang: str) -> dict[str, Any]:
    """The Download button: shown, with the size, only while a built-in model needs its file."""
    name = (name or "").strip()
    if zoo.is_builtin(name) and zoo.availability(name) == "download":
        return {"visible": True, "value": msg("model.get", lang, name=name, mb=f"{zoo.download_mb(name):.0f}")}
    return {"visible": False}


def download(name: str | None, lang: str, progress: Callable[[float, str], None] | None = None) -> str:
    """Fetch a built-in model's file (the explicit act); returns the page's message.

    Raises:
        StudioError: the name is not a built-in model, or the download failed (the error says what to check).
    """
    name = (name or "").strip()
    if not zoo.is_builtin(name):
        raise StudioError.of("app.download_not_builtin", name=name[:80])
    if zoo.availability(name) != "download":
        return msg("model.get_have", lang, name=name)
    # each step of the download in the page's language (studio/models/progress.py says them by code)
    zoo.download(name, progress=(lambda f, step: progress(f, step.text(lang))) if progress else None)
    return msg("model.get_done", lang, name=name, mb=f"{zoo.download_mb(name):.0f}")
