"""Loaded by every Python process started with this folder on PYTHONPATH (the studio server under test and the
training child it starts, which inherits PYTHONPATH): a ``sys.addaudithook`` that records file events.

Set by tests/ui_server.py when ``audit=True``:
    STUDIO_AUDIT_LOG     folder; each process appends JSON lines to <pid>.jsonl there
    STUDIO_AUDIT_ALLOW   os.pathsep-separated folders whose events are not recorded (workspace, model cache, ...)
    STUDIO_AUDIT_CANARY  os.pathsep-separated folders whose events are always recorded (planted canaries)

An event is recorded when its path (as given, or after its links) lies outside every allowed folder or inside a
canary folder. The hook must not trigger itself: a thread-local flag guards the path resolution and the write.
"""
from __future__ import annotations

import json
import os
import sys
import threading

EVENTS = {"open": 0, "os.listdir": 0, "os.scandir": 0, "os.remove": 0, "os.rename": 0, "os.rmdir": 0,
          "os.mkdir": 0, "os.symlink": 1, "os.link": 1, "os.chmod": 0, "os.truncate": 0, "os.utime": 0,
          "shutil.copyfile": 0, "shutil.copymode": 0, "shutil.copystat": 0, "shutil.copytree": 0,
          "shutil.rmtree": 0, "shutil.move": 0, "shutil.make_archive": 0, "os.exec": 0, "os.posix_spawn": 0,
          "subprocess.Popen": 0}


def _install() -> None:
    log_dir = os.environ.get("STUDIO_AUDIT_LOG")
    if not log_dir:
        return
    allow = [os.path.realpath(p) for p in os.environ.get("STUDIO_AUDIT_ALLOW", "").split(os.pathsep) if p]
    canary = [os.path.realpath(p) for p in os.environ.get("STUDIO_AUDIT_CANARY", "").split(os.pathsep) if p]
    out = open(os.path.join(log_dir, f"{os.getpid()}.jsonl"), "a", encoding="utf-8", buffering=1)
    busy = threading.local()

    def inside(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)

    def paths_of(event: str, args: tuple) -> list[str]:
        if event in ("subprocess.Popen", "os.exec", "os.posix_spawn"):
            argv = args[1] if len(args) > 1 else ()
            return [a for a in (argv or ()) if isinstance(a, (str, bytes, os.PathLike))][:20]
        if event == "os.rename" or event == "shutil.copyfile" or event == "shutil.copytree" or event == "shutil.move":
            return [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
        a = args[EVENTS[event]] if len(args) > EVENTS[event] else None
        return [a] if isinstance(a, (str, bytes, os.PathLike)) else []

    def hook(event: str, args: tuple) -> None:
        if event not in EVENTS or getattr(busy, "on", False):
            return
        busy.on = True
        try:
            for raw in paths_of(event, args):
                text = os.fsdecode(os.fspath(raw))
                if not text or "\x00" in text:
                    continue
                plain = os.path.abspath(text)
                real = os.path.realpath(plain)
                hit = inside(plain, canary) or inside(real, canary)
                if hit or not (inside(plain, allow) or inside(real, allow)):
                    out.write(json.dumps({"pid": os.getpid(), "event": event, "path": plain, "real": real,
                                          "canary": hit, "argv0": sys.argv[0][-80:]}) + "\n")
        except Exception:  # an audit hook that raises would break the audited call
            pass
        finally:
            busy.on = False

    sys.addaudithook(hook)


_install()
