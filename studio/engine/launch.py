"""Launch lines for multi-process runs: what the CLI executes and what the UI shows (one place for both)."""
from __future__ import annotations

import sys


def torchrun_command(config_path: str, overrides: list[str], nproc: int, resume: str | None,
                     quiet: bool = False) -> list[str]:
    """The multi-process launch line (also what the UI's 'show command' prints)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", "studio", "train", config_path]
    for o in overrides:
        cmd += ["--set", o]
    if resume:
        cmd += ["--resume", resume]
    if quiet:
        cmd.append("--quiet")
    return cmd
