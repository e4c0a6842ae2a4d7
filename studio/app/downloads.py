"""Export downloads without a second copy on disk: server-side links (token -> file or folder) and a zip made
while it is sent.

- a folder export comes as a zip written while it is sent: ``zipfile`` on a stream that cannot seek
  puts each entry's CRC and sizes in a data descriptor after its data, so no entry is rewound.
  Weights are stored (deflating safetensors saves a few percent at many times the CPU time), text
  files are deflated;
- a GGUF export also links its ``model.gguf`` itself (the one file llama.cpp and Ollama need), served
  from where the export wrote it.

A link names a random token, never a path: ``Downloads`` maps the token, on the server, to the file or folder it
was made for, the exports folder it must stay inside (checked again when it is served, symlinks resolved) and the
login session that exported it (``owner_of``: Gradio 6's login cookie, read from the request without importing
Gradio). The route that serves them is the page's (studio/web/export_download.py).
"""
from __future__ import annotations

import os
import secrets
import threading
import time
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import StudioError
from ..safe_files import iter_files, zip_writer
from ..workspace import confine

STORED = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".model")  # already dense: deflate would only cost time
CHUNK = 1 << 20       # bytes read from a file per step; what one piece sent holds at most (plus zip headers)
MAX_LINKS = 512       # remembered links (the oldest forgotten first)
LINK_TTL_S = 24 * 3600


@dataclass(frozen=True)
class Download:
    path: Path          # real path: a folder (sent as a zip) or a file (sent as it is)
    root: Path          # the exports folder it must stay inside
    owner: str | None   # the login session that exported it (None: the studio runs without a login)
    name: str           # what the browser saves it as
    created: float


class Downloads:
    """Server-side links: token -> what it downloads and for whom."""

    def __init__(self, limit: int = MAX_LINKS, ttl_s: float = LINK_TTL_S, clock: Callable[[], float] = time.time):
        self.limit, self.ttl_s, self.clock = limit, ttl_s, clock
        self._lock = threading.Lock()
        self._links: OrderedDict[str, Download] = OrderedDict()

    def add(self, target: str | Path | None, exports_dir: str | Path, owner: str | None,
            name: str | None = None) -> str | None:
        """A token for ``target`` (a folder or file inside ``exports_dir``, not the folder itself), or None.

        ``name``: what the browser saves it as (default: the file's name, or the folder's with ``.zip``)."""
        found = _inside(target, exports_dir)
        if found is None:
            return None
        path, root = found
        name = name or (f"{path.name}.zip" if path.is_dir() else path.name)
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._links[token] = Download(path, root, owner, name, self.clock())
            while len(self._links) > self.limit:
                self._links.popitem(last=False)
        return token

    def get(self, token: str, owner: str | None, name: str | None = None) -> Download | None:
        """What ``token`` downloads for ``owner``, still inside its exports folder; None otherwise."""
        with self._lock:
            link = self._links.get(token)
        if link is None or link.owner != owner or (name is not None and name != link.name) \
                or self.clock() - link.created > self.ttl_s:
            return None
        found = _inside(link.path, link.root)
        if found is None or found[0] != link.path:
            return None  # gone, or a symlink now leads elsewhere
        return link


DOWNLOADS = Downloads()  # the server's links (one studio per process)


def _inside(target: str | Path | None, exports_dir: str | Path) -> tuple[Path, Path] | None:
    """(real path, real exports folder) when ``target`` exists strictly inside the exports folder."""
    if not target:
        return None
    root = Path(os.path.realpath(exports_dir))
    try:
        path = confine(target, [root])
    except StudioError:
        return None
    if path == root or not (path.is_dir() or path.is_file()):
        return None
    return path, root


def folder_files(folder: Path) -> list[Path]:
    """The regular files under ``folder`` (symlinks neither followed nor sent), in a stable order."""
    return iter_files(folder)


class _Pipe:
    """A write-only stream without seek or tell: zipfile then writes data descriptors and never rewinds."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def stream_zip(folder: str | Path, chunk: int = CHUNK) -> Iterator[bytes]:
    """``folder`` as a zip (entries ``<folder name>/<relative path>``), produced piece by piece as it is read."""
    folder = Path(folder)
    pipe = _Pipe()
    with zip_writer(pipe) as zf:
        for f in folder_files(folder):
            info = zipfile.ZipInfo.from_file(f, f"{folder.name}/{f.relative_to(folder).as_posix()}")
            info.compress_type = zipfile.ZIP_STORED if f.suffix.lower() in STORED else zipfile.ZIP_DEFLATED
            with open(f, "rb") as src, zf.open(info, "w") as dest:
                while True:
                    block = src.read(chunk)
                    if not block:
                        break
                    dest.write(block)
                    data = pipe.take()
                    if data:
                        yield data
            data = pipe.take()
            if data:
                yield data
    data = pipe.take()  # the central directory
    if data:
        yield data


def login_needed(app: Any) -> bool:
    return getattr(app, "auth", None) is not None or getattr(app, "auth_dependency", None) is not None


def session_token(request: Any) -> str | None:
    """The caller's live Gradio login session (the value of its access-token cookie), or None.

    Gradio 6's rule (routes.py ``get_current_user``): the ``access-token-<cookie_id>`` cookie, else
    ``access-token-unsecure-<cookie_id>``, is a key of ``app.tokens``. ``request``: a Starlette request.
    """
    app = getattr(request, "app", None)
    cookie_id, tokens = getattr(app, "cookie_id", None), getattr(app, "tokens", None) or {}
    cookies = getattr(request, "cookies", None) or {}
    token = cookies.get(f"access-token-{cookie_id}") or cookies.get(f"access-token-unsecure-{cookie_id}")
    return token if token and token in tokens else None


def owner_of(request: Any) -> str | None:
    """Whom an event's link belongs to: its login session (teammates often share one account, so the session
    and not the user name), None when the studio runs without a login. ``request``: a ``gr.Request``."""
    inner = getattr(request, "request", None) if request is not None else None
    if inner is None or not login_needed(getattr(inner, "app", None)):
        return None
    return session_token(inner)
