"""python -m studio convert|train|eval|export|estimate|models|cluster|feedback (and webui|demo)

Each subcommand lives in its own module with ``add_arguments(parser)`` and ``main(args)``;
this file only dispatches and turns StudioError into a plain message and exit code 2. The two verbs that serve a
page (webui, demo) are handed in by studio/__main__.py as ``extra``: cli/ never names a module of ui/.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from ..errors import command_exit_code

COMMANDS = {
    "convert": ("studio.cli.convert", "turn a CSV/Excel/JSON file into instruction data (alpaca JSONL)"),
    "train": ("studio.cli.train", "train a model from a run config YAML"),
    "eval": ("studio.cli.evaluate", "check a trained model: sentiment accuracy or generation"),
    "export": ("studio.cli.export", "save a standalone model (merge LoRA) or the adapter"),
    "cluster": ("studio.cli.cluster", "write launch files for a cluster: torchrun per node, DeepSpeed hostfile, "
                                      "Slurm sbatch"),
    "models": ("studio.cli.models", "the built-in models this machine has; 'models get NAME' downloads one"),
    "estimate": ("studio.cli.estimate", "will it fit? memory estimate for a model and a memory plan"),
    "feedback": ("studio.cli.feedback", "teammates' feedback on a run's answers: list, accept, drop, edit, "
                                        "make a dataset (instruction, ranking, KTO rows), export, "
                                        "improve a run with it and compare"),
}


Verbs = dict[str, tuple[str, str]]  # name -> (module with add_arguments and main, help)


def build_parser(command: str | None = None, extra: Verbs | None = None
                 ) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    """Parser with every subcommand listed (``extra``: more verbs, after COMMANDS); only ``command``'s module is
    imported (gradio, torch and DeepSpeed are slow to import, and ``train`` should not pay for the web UI)."""
    parser = argparse.ArgumentParser(prog="python -m studio", description="Fine-Tune Studio command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules: dict[str, object] = {}
    for name, (module_name, help_text) in {**COMMANDS, **(extra or {})}.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name != command:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # a part not installed/built yet should not break the others
            sp.set_defaults(_unavailable=f"'{name}' is unavailable: {exc}")
            continue
        module.add_arguments(sp)
        modules[name] = module
    return parser, modules


def main(argv: list[str] | None = None, extra: Verbs | None = None) -> int:
    """Run one verb of ``argv`` (default: the process's arguments); ``extra``: verbs beyond COMMANDS."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # bitsandbytes warns at import that optional CPU kernels are missing; it works without them
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    verbs = {**COMMANDS, **(extra or {})}
    parser, modules = build_parser(command if command in verbs else None, extra)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    if getattr(args, "_unavailable", None):
        print(f"Error: {args._unavailable}", file=sys.stderr)
        return 2
    code = command_exit_code(lambda: modules[args.command].main(args))  # type: ignore[attr-defined]
    if args.command == "train":
        # start-up: the engine package costs 0.3 s at import (numpy, yaml); every other verb's start never needs it
        from ..engine.launch import end_torchrun_worker
        end_torchrun_worker(code)  # returns only outside a multi-process run
    return code
