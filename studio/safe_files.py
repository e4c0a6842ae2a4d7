"""No symlink is followed out of the workspace: the one module that copies, zips and walks the studio's folders.

A run, export or data folder may hold a symlink (planted by anyone who can write there, or carried in by a
copied model) that points at any file of the machine. ``shutil.copytree`` follows such links before a zipper
that skips them ever sees the copy, and the libraries that load a model read through them, so the rule lives
here: every copy, zip and walk goes through these functions (tests/robustness/test_symlinks.py holds the rest of
studio/ to it), and a folder that a library is about to read is checked first (``refuse_links_out``).

A link is allowed only when its real target stays inside the folder being worked on, the model caches (the
studio's and the Hugging Face hub's, whose snapshots are links by design), or the folders the server registered (``register_roots``: its workspace and --data-root folders). Deleting needs no
helper: ``shutil.rmtree`` is fd-based on Linux (``avoids_symlink_attacks``) and removes a link, not its target;
``os.rename`` moves a link itself.
"""
from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path
from typing import Any, Iterable

from .errors import StudioError
from .words.render import UnknownCode
from .workspace import cache_dir, confine, is_inside

_ROOTS: list[Path] = []


def register_roots(paths: Iterable[str | Path]) -> None:
    """The server's own folders (workspace, --data-root): links into them are not links out."""
    for p in paths:
        real = Path(os.path.realpath(p))
        if real not in _ROOTS:
            _ROOTS.append(real)


def _hub_cache() -> Path:
    """The Hugging Face hub's cache, whose snapshot folders are links into its blobs (huggingface_hub's rule)."""
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(os.path.realpath(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub")))


def roots_for(folder: str | Path) -> list[Path]:
    """Where a link under ``folder`` may point: the folder itself, the model caches (the studio's, the hub's), the
    registered roots."""
    return [Path(os.path.realpath(folder)), Path(os.path.realpath(cache_dir())), _hub_cache(), *_ROOTS]


def leaves(path: str | Path, roots: list[Path]) -> bool:
    """True for a symlink whose real target lies outside every root (a dangling one included)."""
    p = Path(path)
    return p.is_symlink() and not any(is_inside(os.path.realpath(p), r) for r in roots)


def links_out(folder: str | Path, roots: list[Path] | None = None) -> list[Path]:
    """Every symlink under ``folder`` (``folder`` itself included) that leads out of ``roots``; links are not
    followed while looking."""
    folder = Path(folder)
    roots = roots if roots is not None else roots_for(folder)
    if folder.is_symlink():
        return [folder] if leaves(folder, roots) else []
    found = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        for n in dirs + names:
            p = Path(top) / n
            if leaves(p, roots):
                found.append(p)
    return found


# the kind of folder refuse_links_out names -> its error's code (studio/words/app_errors.py)
_LINK_OUT = {"folder": "files.link_out", "run folder": "files.link_out_run", "model folder": "files.link_out_model"}


def refuse_links_out(folder: str | Path, what: str = "folder") -> None:
    """Before a library reads ``folder`` (a run, a model): refuse when a link in it leads out.

    Raises:
        StudioError: naming up to three such links and how to fix it.
        UnknownCode: ``what`` is a kind of folder without words (a bug of the caller, found on its first call,
            whether or not the folder holds a link).
    """
    code = _LINK_OUT.get(what)  # the folder's kind is part of the words: a code of its own
    if code is None:
        raise UnknownCode(f"no words for a link out of a {what!r} (studio/safe_files.py _LINK_OUT)")
    folder = Path(folder)
    found = links_out(folder, roots_for(folder.parent if folder.is_symlink() else folder))
    if found:
        names = ", ".join(f"'{p.relative_to(folder.parent)}'" for p in found[:3])
        raise StudioError.of(code, name=folder.name, names=names)


def copytree(src: str | Path, dst: str | Path, *, skip: tuple[str, ...] = ()) -> None:
    """``shutil.copytree`` that never copies through a link out of ``src``'s roots (such links are left out),
    and leaves out the names in ``skip`` (glob patterns).

    Raises:
        StudioError: ``src`` itself is a link out.
    """
    src = Path(src)
    roots = roots_for(src)
    if leaves(src, roots_for(src.parent)):
        refuse_links_out(src)
    patterns = shutil.ignore_patterns(*skip) if skip else None

    def ignore(top: str, names: list[str]) -> set[str]:
        dropped = set(patterns(top, names)) if patterns else set()
        return dropped | {n for n in names if leaves(Path(top) / n, roots)}
    shutil.copytree(src, dst, ignore=ignore)


def copyfile(src: str | Path, dst: str | Path, roots: list[Path] | None = None, *, metadata: bool = False) -> Path:
    """Copy one file, resolved and confined to ``roots`` (default: its own folder's roots) first.

    Raises:
        StudioError: ``src`` (after its links) lies outside the roots.
    """
    src = Path(src)
    real = confine(src, roots if roots is not None else roots_for(src.parent))
    (shutil.copy2 if metadata else shutil.copyfile)(real, dst)
    return Path(dst)


def iter_files(folder: str | Path) -> list[Path]:
    """The regular files under ``folder`` (symlinks neither followed nor listed), in a stable order."""
    files = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(top, d)))
        for n in sorted(names):
            p = Path(top) / n
            if p.is_file() and not p.is_symlink():
                files.append(p)
    return files


def open_append(path: str | Path) -> Any:
    """``path`` opened for appending bytes, never through a link: a link planted in its place is removed first (the
    file is the caller's own, e.g. a run's log), and O_NOFOLLOW refuses one that appears meanwhile."""
    path = Path(path)
    if path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    return os.fdopen(fd, "ab")


def zip_writer(stream: Any) -> zipfile.ZipFile:
    """A zip writer on ``stream``; fill it with ``iter_files`` only (no link is ever read into it)."""
    return zipfile.ZipFile(stream, "w", allowZip64=True)


__all__ = ["copyfile", "copytree", "iter_files", "leaves", "links_out", "open_append", "refuse_links_out",
           "register_roots", "roots_for", "zip_writer"]
