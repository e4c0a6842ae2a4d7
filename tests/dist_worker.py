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

if __name__ == "__main__":
    summary = run_training(RunConfig.load(sys.argv[1]))
    import torch.distributed as dist
    print(json.dumps({"rank": int(os.environ["RANK"]), "state": summary["state"],
                      "group_open": dist.is_initialized()}), flush=True)
    if os.environ["RANK"] == "0":
        time.sleep(1.0)
