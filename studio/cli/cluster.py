"""python -m studio cluster CONFIG --out DIR --nnodes N --gpus-per-node G --master-addr HOST

Writes ready-to-run launch files for the same run config on a cluster: a torchrun script per node,
a DeepSpeed hostfile + launcher script, and a Slurm sbatch script (studio/engine/launch.py makes them).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..config.run_config import RunConfig
from ..engine.launch import DEFAULT_PORT, cluster_files, write_cluster_files


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="run config YAML (see presets/recipes/)")
    p.add_argument("--out", required=True, help="folder for the launch files (created)")
    p.add_argument("--nnodes", type=int, required=True, help="number of machines")
    p.add_argument("--gpus-per-node", type=int, required=True, help="GPUs (= processes) per machine")
    p.add_argument("--master-addr", required=True, help="address of the first machine (the rendezvous)")
    p.add_argument("--master-port", type=int, default=DEFAULT_PORT, help=f"rendezvous port (default {DEFAULT_PORT})")
    p.add_argument("--hosts", default=None, help="comma list of host names for the hostfile (default: "
                                                 "--master-addr then node1, node2, ...)")
    p.add_argument("--job-name", default="studio", help="Slurm job name and rendezvous id")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config key; the resolved config is saved as DIR/config.yaml")


def main(args: argparse.Namespace) -> int:
    cfg = RunConfig.load(args.config, args.overrides + [f"nproc={args.gpus_per_node}"])  # checked as it is built
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / "config.yaml"  # the resolved config, so every node runs exactly these settings
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts else None
    files = cluster_files(config_path, nnodes=args.nnodes, gpus_per_node=args.gpus_per_node,
                          master_addr=args.master_addr, port=args.master_port, hosts=hosts,
                          job_name=args.job_name, deepspeed=cfg.deepspeed)
    cfg.save(config_path)
    for path in write_cluster_files(out, files):
        print(path)
    print(f"{args.nnodes} node(s) x {args.gpus_per_node} GPU(s); see {out / 'README.txt'}")
    return 0
