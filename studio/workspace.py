"""Where things live, and the one check that keeps user-typed paths inside the studio's folders.

Every path a user can type (UI field, HTTP API argument, uploaded name) goes through ``confine``
before any file is read, stat'ed, written or deleted, so a shared studio never becomes a way to
reach the rest of the server.
"""
from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

from .errors import StudioError

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
PRESETS_DIR = REPO_ROOT / "presets"
ASSETS_DIR = PACKAGE_DIR / "assets"
CACHE_ENV = "STUDIO_MODEL_CACHE"  # moves the model cache (tests, a second disk)


def studio_python() -> str:
    """The studio's own Python as a user types it in the studio's folder (``.venv/bin/python``).

    A bare ``python`` in a terminal is whatever the shell finds first, usually not the studio's .venv ("No module
    named 'gradio'"). ``sys.executable`` stays unresolved: a venv's python is a symlink to the base interpreter.
    """
    import sys
    exe = Path(sys.executable)
    try:
        return str(exe.relative_to(REPO_ROOT))
    except ValueError:
        return str(exe)


def studio_command(args: list[str]) -> str:
    """A shell line (POSIX quoting) that runs ``python ARGS`` with the studio's Python from any folder: it enters
    the studio's folder first, where ``-m studio`` imports from and the relative interpreter path points."""
    import shlex
    return f"cd {shlex.quote(str(REPO_ROOT))} && {shlex.join([studio_python(), *args])}"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def is_inside(path: str | Path, root: str | Path) -> bool:
    """True when ``path`` (symlinks resolved) is ``root`` or lies below it."""
    real, top = _real(Path(path)), _real(Path(root))
    return real == top or top in real.parents


def confine(path: str | Path, roots: list[Path]) -> Path:
    """``path`` resolved (relative to the first root, symlinks followed) if it lies inside one of ``roots``.

    Raises:
        StudioError: the path is empty, holds a NUL byte or a line break, or points outside every root.
    """
    text = str(path).strip()
    if not text:
        raise StudioError.of("path.empty")
    if any(c in text for c in "\x00\n\r"):
        raise StudioError.of("path.control_char")
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = roots[0] / p
    real = _real(p)
    for root in roots:
        if is_inside(real, root):
            return real
    raise StudioError.of("path.outside", path=text, roots=[str(r) for r in roots])


def safe_name(name: str, *, code: str = "name.plain") -> str:
    """A single folder/file name a user typed: no separators, no '..', no control characters (``code``: the error
    that names what the name is for: name.plain, name.file, name.export or name.run).

    Raises:
        StudioError: the name could step out of its folder or is not a plain name.
    """
    text = name.strip() if isinstance(name, str) else ""
    bad = (not text or text in {".", ".."} or "/" in text or "\\" in text or os.sep in text
           or any(ord(c) < 32 for c in text) or len(text) > 120)
    if bad:
        raise StudioError.of(code, name=shown_name(text))
    return text


# a name a person gives something new: letters and digits of any script, '-', '_', '.', '~' (the studio's own run
# names use '~'), not starting with '.', '-' or '~' (a hidden file, a command-line flag)
_PLAIN = re.compile(r"[\w.~-]+")


def shown_name(text: str) -> str:
    """A refused name as an error may quote it: cut, and any character that is not text replaced (a lone surrogate
    in a message cannot be sent back to a browser)."""
    return text[:60].encode("utf-8", "replace").decode("utf-8")


def plain_name(name: str, *, code: str = "name.new_run") -> str:
    """A new run's, dataset's or export's name, by the rule its error states (``code``: name.new_run or
    name.new_dataset): letters, digits, '-', '_', '.' or '~', starting with a letter, a digit or '_', at most 120
    characters. Such a name is the same text as a folder, in a command line and on a page.

    Raises:
        StudioError: any other name.
    """
    text = name.strip() if isinstance(name, str) else ""
    if not text or len(text) > 120 or not _PLAIN.fullmatch(text) or text[0] in ".-~":
        raise StudioError.of(code, name=shown_name(text))
    return text


def _umask() -> int:
    """The process umask, read without changing it (os.umask can only set it, which races with threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def atomic_write_text(path: Path, text: str) -> None:
    """Write to a temp file in the same folder, fsync, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; users' files get the usual mode (0644 under 022)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(exc: BaseException) -> bool:
    """True for 'No space left on device' and 'Disk quota exceeded' (also when wrapped by a library)."""
    seen: BaseException | None = exc
    for _ in range(5):  # torch/safetensors wrap the OSError; follow the chain a little way
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno in DISK_FULL:
            return True
        seen = seen.__cause__ or seen.__context__
    return "No space left on device" in str(exc) or "Disk quota exceeded" in str(exc)


def user_cache_dir() -> Path:
    """The per-user default of ``cache_dir`` (``$STUDIO_MODEL_CACHE`` not applied)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base).expanduser() / "fine-tune-studio" / "models").resolve()


def cache_dir() -> Path:
    """Where prepared models live: ``$STUDIO_MODEL_CACHE``, else the user's cache
    (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``fine-tune-studio/models``).

    Why outside the workspace by default: preparing Gemma from its GGUF costs ~28 CPU-seconds
    (docs/logs/benchmarks-history.md section 6), and every new workspace (a second studio, a CLI run in another folder, each test) paid it again; the folder is keyed by
    the package's version (gguf_import's marker), and preparations are serialised by a file lock."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return user_cache_dir()
