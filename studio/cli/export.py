"""python -m studio export RUN_DIR --out DIR [--merge] [--quantize {4,8} [--keep-adapter]] [--overwrite]"""
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
    p.add_argument("--quantize", type=int, choices=(4, 8), default=None,
                   help="save a standalone 4-bit (NF4) or 8-bit bitsandbytes model (LoRA runs are merged first); "
                        "it reloads with plain transformers")
    p.add_argument("--keep-adapter", action="store_true",
                   help="with --quantize on a LoRA run: quantize only the base and keep the adapter full precision "
                        "in DIR/adapter (merging first rounds most of a small model's fine-tuning away)")
    p.add_argument("--overwrite", action="store_true", help="replace DIR if it already has files")


def main(args: argparse.Namespace) -> int:
    """Export and print where it went. Raises StudioError for user errors (exit code 2 via cli.py)."""
    from ..errors import StudioError
    from ..evaluation.export import export_model
    if getattr(args, "keep_adapter", False) and not getattr(args, "quantize", None):
        raise StudioError("--keep-adapter only applies with --quantize 4 or 8",
                          "add --quantize 4, or drop --keep-adapter (without --merge the adapter is exported as is)",
                          code="export")
    if getattr(args, "quantize", None):
        from ..evaluation.quantize import quantize_export
        with contextlib.redirect_stdout(sys.stderr):
            q = quantize_export(args.run, args.out, bits=args.quantize, overwrite=args.overwrite,
                                keep_adapter=getattr(args, "keep_adapter", False))
        kept = " with its LoRA adapter in adapter/" if "+adapter" in q["kind"] else ""
        print(f"Exported a {q['bits']}-bit model{kept} to {q['path']} ({q['size_mb']} MB on disk, was "
              f"{q['source_size_mb']} MB; {q['memory_footprint_bytes'] / 2**20:.1f} MB in memory).")
        return 0
    with contextlib.redirect_stdout(sys.stderr):  # library chatter stays off stdout
        info = export_model(args.run, args.out, merge=args.merge, overwrite=args.overwrite)
    print(f"Exported {info['kind']} model to {info['path']} ({info['size_mb']} MB).")
    print(f"Base model: {info['base_model']}. See {info['path']}/README.md for how to load it.")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m studio export")
    add_arguments(parser)
    raise SystemExit(main(parser.parse_args()))
