"""python -m studio export RUN_DIR --out DIR [--merge] [--overwrite]"""
from __future__ import annotations

import argparse
import contextlib
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN_DIR", help="finished run folder (runs/<name>) or an adapter folder")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to create for the exported model")
    p.add_argument("--merge", action="store_true",
                   help="LoRA runs: merge the adapter into the base and save a standalone model "
                        "(default: save the adapter only). Full/freeze runs always export the whole model")
    p.add_argument("--overwrite", action="store_true", help="replace DIR if it already has files")


def main(args: argparse.Namespace) -> int:
    """Export and print where it went. Raises StudioError for user errors (exit code 2 via cli.py)."""
    from ..evaluation.export import export_model
    with contextlib.redirect_stdout(sys.stderr):  # library chatter stays off stdout
        info = export_model(args.run, args.out, merge=args.merge, overwrite=args.overwrite)
    print(f"Exported {info['kind']} model to {info['path']} ({info['size_mb']} MB).")
    print(f"Base model: {info['base_model']}. See {info['path']}/README.md for how to load it.")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m studio export")
    add_arguments(parser)
    raise SystemExit(main(parser.parse_args()))
