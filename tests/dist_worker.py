"""A torchrun worker for tests/engine/test_multiprocess.py: one engine run, then what a worker's process still holds.

rank 0 lingers after its run (as it does when it writes the final status and plot) so that a peer which
tears gloo down at interpreter exit meets a live connection.
"""
from __future__ import annotations

import json
import os
import sys
import time

from studio.config.run_config import RunConfig
from studio.engine import run_training

def _slow_rank_writes(rank: int) -> None:
    """Make one rank write its share of a checkpoint late, as a slower node does: its rng state comes last."""
    from transformers import Trainer
    original = Trainer._save_rng_state

    def late(self, output_dir):
        if int(os.environ["RANK"]) == rank:
            time.sleep(2.0)
        return original(self, output_dir)
    Trainer._save_rng_state = late


if __name__ == "__main__":
    if os.environ.get("SLOW_RANK"):
        _slow_rank_writes(int(os.environ["SLOW_RANK"]))
    summary = run_training(RunConfig.load(sys.argv[1]))
    import torch.distributed as dist
    # one write of line and newline (print writes them apart): two ranks share the pipe, and a write this short is
    # atomic, so their reports never run together on one line
    sys.stdout.write(json.dumps({"rank": int(os.environ["RANK"]), "state": summary["state"],
                                 "group_open": dist.is_initialized()}) + "\n")
    sys.stdout.flush()
    if os.environ["RANK"] == "0":
        time.sleep(1.0)
