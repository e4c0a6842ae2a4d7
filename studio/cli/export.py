"""python -m studio export RUN_DIR --out DIR [--merge] [--quantize {4,8} [--keep-adapter]] [--gguf TYPE [--no-modelfile]]
[--overwrite]"""
from __future__ import annotations

import argparse
import contextlib
import sys
from ..errors import StudioError


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
    p.add_argument("--gguf", choices=("f16", "q8_0", "q4_k_m"), default=None, metavar="{f16,q8_0,q4_k_m}",
                   help="write DIR/model.gguf for llama.cpp / Ollama (LoRA merged in, the run's chat template "
                        "embedded) and DIR/Modelfile; q4_k_m is not written here (the error says how to make it)")
    p.add_argument("--no-modelfile", action="store_true",
                   help="with --gguf: skip the Ollama Modelfile (for a prompt format Ollama's templates cannot say)")
    p.add_argument("--overwrite", action="store_true", help="replace DIR if it already has files")


def main(args: argparse.Namespace) -> int:
    """Export and print where it went. Raises StudioError for user errors (exit code 2 via cli.py)."""
    # start-up: 0.11-0.18 s at import; `studio export --help` never needs it
    from ..evaluation.export import export_model
    if getattr(args, "keep_adapter", False) and not getattr(args, "quantize", None):
        raise StudioError.of("cli.keep_adapter_alone", flag="--keep-adapter", needs="--quantize")
    if getattr(args, "no_modelfile", False) and not getattr(args, "gguf", None):
        raise StudioError.of("cli.no_modelfile_alone", flag="--no-modelfile", needs="--gguf")
    if getattr(args, "gguf", None):
        if args.merge or getattr(args, "quantize", None) or getattr(args, "keep_adapter", False):
            raise StudioError.of("cli.gguf_combined", flag="--gguf", others="--merge, --quantize",
                                 last="--keep-adapter")
        # start-up: 0.11-0.18 s at import; `studio export --help` never needs it
        from ..evaluation.gguf_export import gguf_export
        with contextlib.redirect_stdout(sys.stderr):
            g = gguf_export(args.run, args.out, gguf_type=args.gguf, overwrite=args.overwrite,
                            modelfile=not getattr(args, "no_modelfile", False))
        print(f"Exported a GGUF {g['gguf_type']} model ({g['architecture']}) to {g['gguf']} ({g['size_mb']} MB), "
              f"chat template '{g['template_name']}' embedded.")
        if g["modelfile"]:
            print(f"Ollama: cd {g['path']} && ollama create my-model -f Modelfile && ollama run my-model")
        print(f"llama.cpp: llama-cli -m {g['gguf']} --jinja")
        return 0
    if getattr(args, "quantize", None):
        # start-up: 0.11-0.18 s at import; `studio export --help` never needs it
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
