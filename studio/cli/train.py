"""python -m studio train CONFIG.yaml [--set key=value ...] [--resume [last|PATH]] [--nproc N]"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from ..config.run_config import RunConfig
from ..config.yaml_io import load_yaml_dict, parse_overrides
from ..engine import run_training
from ..engine.launch import EXIT, torchrun_command
from ..engine.nvme import check_nvme_ready
from ..errors import StudioError
from ..runs.run_dir import RunDir

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
    # a RunConfig checks itself as it is built: a config.yaml the job runner wrote, or a person's file and --set
    cfg = RunConfig.load(args.config, overrides)
    if not args.resume:  # a resumed run keeps the plan it started with
        cfg = _derive_unset(cfg, args.config, overrides, quiet=args.quiet or "LOCAL_RANK" in os.environ)
    if "LOCAL_RANK" not in os.environ:  # once, before any worker starts (torchrun's workers see it done)
        guard_output_dir(cfg, args.config, args.resume)
    if cfg.deepspeed == "z3-nvme" and "LOCAL_RANK" not in os.environ:  # before any process starts
        check_nvme_ready(cfg.offload_nvme_path)
    if cfg.nproc > 1 and "LOCAL_RANK" not in os.environ:
        # re-launch ourselves under torchrun; each worker sees LOCAL_RANK and trains its shard
        cmd = torchrun_command(args.config, overrides, cfg.nproc, args.resume, args.quiet)
        print("Launching: " + " ".join(cmd), file=sys.stderr)
        return subprocess.call(cmd)
    follower = None
    if not args.quiet and os.environ.get("RANK", "0") == "0":
        follower = _print_progress_from_events(cfg)
    try:
        summary = run_training(cfg, resume_from=args.resume)
    except StudioError:
        raise
    except Exception as exc:
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


def _derive_unset(cfg: RunConfig, path: str, overrides: list[str], quiet: bool) -> RunConfig:
    """Fields neither the file nor --set names take the page's derived plan (studio.autoconfig owns it), so a
    config that names only the data trains a model that learns and keeps held-out rows; each is printed."""
    data = load_yaml_dict(path)
    data.update(parse_overrides(overrides))
    if set(RunConfig.field_names()) <= set(data):  # every field named (the job runner's config.yaml): none unset
        return cfg
    from ..autoconfig import explicit_keys, fill_unset  # start-up: 0.005 s at import; `studio train --help` never needs it
    try:
        cfg, reasons = fill_unset(cfg, explicit_keys(data))
    except StudioError:
        return cfg  # unreadable data: training reports it in its own words
    if reasons and not quiet:
        print("Derived for this model, data and machine (set a key in the config or with --set to choose it "
              "yourself):", file=sys.stderr)
        for r in reasons:
            print(f"  {r.field}: {r.text}", file=sys.stderr)
    return cfg


def _studio_names(run: RunDir) -> set[str]:
    """Every name the studio writes at the top of a run folder (the layout is RunDir's; temps beside it)."""
    made = {run.config, run.status_file, run.log, run.stdout, run.base_model, run.checkpoints, run.adapter,
            run.model, run.val_data, run.train_keys, run.loss_plot, run.stop_flag, run.lineage,
            run.check_set, run.verdict}
    names = {p.name for p in made} | {"error.log", ".loss.tmp.png"}
    return names | {f"{p.name}.tmp" for p in (run.base_model, run.adapter, run.model)}


def _is_studio_temp(name: str, names: set[str]) -> bool:
    """atomic_write_text's ``.<name>.<random>`` files, left behind only by a crash."""
    return name.startswith(".") and any(name.startswith(f".{n}.") for n in names)


def guard_output_dir(cfg: RunConfig, config_file: str, resume: str | None) -> None:
    """Refuse to train a new run into a folder that holds a run or anything else, unless asked to replace a run.

    Allowed as they are: a missing or empty folder, ``--resume`` (the same run continues), and a folder the job
    runner has just prepared for this very config (its own config.yaml, no log yet). With
    ``overwrite_output_dir: true`` a folder holding nothing but a studio run is emptied first (so the old run's
    log and model cannot mix with the new one); a folder with any other file is never emptied.

    Raises:
        StudioError: output_dir is a file, holds files the studio did not make, holds a run (without
            ``overwrite_output_dir``), or holds a run that is training now.
    """
    out = Path(cfg.output_dir)
    if resume or not out.exists():
        return
    if not out.is_dir():
        raise StudioError.of("cli.output_is_file", path=out)
    run = RunDir(out)
    names = _studio_names(run)
    entries = sorted(p.name for p in out.iterdir())
    foreign = [n for n in entries if n not in names and not _is_studio_temp(n, names)]
    if foreign:
        if len(foreign) > 5:
            raise StudioError.of("cli.output_foreign_more", path=out, files=foreign[:5], more=len(foreign) - 5)
        raise StudioError.of("cli.output_foreign", path=out, files=foreign)
    # improved_from.json, and the parent's held-out rows and the frozen check set: "Improve this run" writes them
    # before the queue starts the run
    prepared = {run.config.name, run.status_file.name, run.stdout.name, run.stop_flag.name, run.lineage.name,
                run.val_data.name, run.check_set.name}
    own_config = Path(config_file).resolve() == run.config.resolve()
    # the job runner may be rewriting status.json (a temp file beside it) while this child starts
    settled = {n for n in entries if not _is_studio_temp(n, names)}
    if not entries or (own_config and not run.log.exists() and settled <= prepared
                       and run.read_status().get("state") in (None, "starting")):
        return
    status = run.read_status()
    state = status.get("state") or "unknown"
    if state in ("starting", "running") and _alive(status.get("pid")):
        raise StudioError.of("cli.output_training", path=out, pid=status.get("pid"))
    if not cfg.overwrite_output_dir:
        if status.get("step"):
            raise StudioError.of("cli.output_has_run_step", path=out, state=state, step=status["step"])
        raise StudioError.of("cli.output_has_run", path=out, state=state)
    for name in entries:  # only studio names reach here
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    print(f"overwrite_output_dir: replaced the earlier run in {out}", file=sys.stderr)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _stop(follower: tuple | None) -> None:
    if follower is not None:
        thread, done = follower
        done.set()
        thread.join(timeout=5)


def _print_progress_from_events(cfg: RunConfig) -> tuple:
    """Print each progress event as one line, by tailing the run's event log from a thread."""
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
