"""python -m studio train CONFIG.yaml [--set key=value ...] [--resume [last|PATH]] [--nproc N]"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from ..config.run_config import RunConfig
from ..engine.launch import torchrun_command
from ..errors import StudioError

EXIT = {"finished": 0, "aborted": 3, "failed": 1}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="run config YAML (see presets/recipes/)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config key, e.g. --set learning_rate=1e-4 (repeatable)")
    p.add_argument("--resume", nargs="?", const="last", default=None, metavar="last|CHECKPOINT",
                   help="continue from the newest checkpoint of output_dir (or a given checkpoint folder)")
    p.add_argument("--nproc", type=int, default=None, help="data-parallel processes (overrides nproc)")
    p.add_argument("--quiet", action="store_true", help="print only the final summary")


def main(args: argparse.Namespace) -> int:
    overrides = list(args.overrides)
    if args.nproc is not None:
        overrides.append(f"nproc={args.nproc}")
    cfg = RunConfig.load(args.config, overrides)
    cfg.check()
    if cfg.deepspeed == "z3-nvme" and "LOCAL_RANK" not in os.environ:  # before any process starts
        from ..engine.nvme import check_nvme_ready
        check_nvme_ready(cfg.offload_nvme_path)
    if cfg.nproc > 1 and "LOCAL_RANK" not in os.environ:
        # re-launch ourselves under torchrun; each worker sees LOCAL_RANK and trains its shard
        cmd = torchrun_command(args.config, overrides, cfg.nproc, args.resume, args.quiet)
        print("Launching: " + " ".join(cmd), file=sys.stderr)
        return subprocess.call(cmd)
    follower = None
    if not args.quiet and os.environ.get("RANK", "0") == "0":
        follower = _print_progress_from_events(cfg)
    from ..engine import run_training
    try:
        summary = run_training(cfg, resume_from=args.resume)
    except StudioError:
        raise
    except Exception as exc:
        from ..runs.run_dir import RunDir
        reason = RunDir(cfg.output_dir).read_status().get("reason") or str(exc)
        _stop(follower)
        print(f"Error: {reason}", file=sys.stderr)
        return 1
    finally:
        _stop(follower)  # its last lines come before our final message
    if os.environ.get("RANK", "0") == "0":
        print(json.dumps({k: summary[k] for k in ("state", "step", "total_steps", "final_loss", "train_seconds")
                          if k in summary}))
    return EXIT.get(summary["state"], 1)


def _stop(follower: tuple | None) -> None:
    if follower is not None:
        thread, done = follower
        done.set()
        thread.join(timeout=5)


def _print_progress_from_events(cfg: RunConfig) -> tuple:
    """Print each progress event as one line, by tailing the run's event log from a thread."""
    import threading
    import time
    from ..runs.run_dir import RunDir
    run = RunDir(cfg.output_dir)
    start = len(run.events())
    done = threading.Event()

    def follow() -> None:
        seen = start
        while True:
            finishing = done.is_set()
            events = run.events(seen)
            seen += len(events)
            for e in events:
                if e["type"] == "progress":
                    print(f"step {e['step']}/{e['total_steps']}  loss {e['loss']}  "
                          f"{e['tokens_per_s']} tok/s  eta {e['eta_s']}s", file=sys.stderr, flush=True)
                elif e["type"] in ("notice", "eval", "checkpoint", "end"):
                    print(json.dumps(e, ensure_ascii=False), file=sys.stderr, flush=True)
                if e["type"] == "end":
                    return
            if finishing:
                return
            done.wait(0.5)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    return thread, done
