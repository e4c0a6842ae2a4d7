"""python -m studio.engine CONFIG.yaml [--resume last|CHECKPOINT]: train one run from a config that names every field.

The job runner's child (studio/runs/jobs.py). The page has built the RunConfig, which checked itself, and written it
whole into the run's folder, so this door derives nothing, guards no folder and prints no progress: it reads the file
by the same construction, starts torchrun's workers when the config asks for several processes, and trains. A
person's file goes through ``python -m studio train`` (studio/cli/train.py), which adds what such a file needs
(fields left unset, the output-folder guard, progress lines) and comes to the same ``run_training``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys

from ..config.run_config import RunConfig
from ..errors import command_exit_code
from .launch import EXIT, end_torchrun_worker, torchrun_command
from .nvme import check_nvme_ready
from .run import run_training


def train_file(config: str, resume: str | None) -> int:
    """Train the run ``config`` describes; the exit code of its end state."""
    cfg = RunConfig.load(config)
    if "LOCAL_RANK" not in os.environ:  # once, before any worker starts
        if cfg.deepspeed == "z3-nvme":
            check_nvme_ready(cfg.offload_nvme_path)
        if cfg.nproc > 1:
            return subprocess.call(torchrun_command(config, [], cfg.nproc, resume, module="studio.engine"))
    summary = run_training(cfg, resume_from=resume)
    if os.environ.get("RANK", "0") == "0":
        print(json.dumps({k: summary[k] for k in ("state", "step", "total_steps", "final_loss", "train_seconds")
                          if k in summary}))
    return EXIT.get(summary["state"], 1)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)  # optional CPU kernels missing: it works without them
    p = argparse.ArgumentParser(prog="python -m studio.engine", description=__doc__.splitlines()[0])
    p.add_argument("config", help="a run's config.yaml, every field named (what the page writes)")
    p.add_argument("--resume", nargs="?", const="last", default=None, metavar="last|CHECKPOINT",
                   help="continue from the newest checkpoint of output_dir (or a given checkpoint folder)")
    args = p.parse_args(argv)
    code = command_exit_code(lambda: train_file(args.config, args.resume))
    end_torchrun_worker(code)  # returns only outside a multi-process run
    return code


if __name__ == "__main__":
    sys.exit(main())
