"""Launch lines for multi-process and multi-node runs: what the CLI executes, what the UI shows and
the ready-to-run cluster files (torchrun per node, DeepSpeed hostfile, Slurm sbatch). One place for all.

Why generate text instead of calling a cluster API: the studio never reaches the cluster; the user
copies the folder to a login node, so every file must be plain, readable and runnable there as is.
"""
from __future__ import annotations

import logging
import os
import re
import shlex
import sys
from pathlib import Path

from ..errors import StudioError

DEFAULT_PORT = 29500
# a training process's exit code for each end state, whichever door started it (CLI verb or the runner's child)
EXIT = {"finished": 0, "aborted": 3, "failed": 1}
# a host name, an IPv4 address or a bracket-less IPv6 address; nothing a shell would interpret
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-:_]*$")


def torchrun_command(config_path: str, overrides: list[str], nproc: int, resume: str | None,
                     quiet: bool = False, module: str = "studio train") -> list[str]:
    """The single-machine multi-process launch line (also what the UI's 'show command' prints); ``module``: the
    workers' door, the CLI verb a person types or ``studio.engine`` (the job runner's child, no flags beyond resume)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", *module.split(), config_path]
    return cmd + _train_tail(overrides, resume, quiet)


def node_command(config_path: str, *, nnodes: int, node_rank: int, nproc_per_node: int, master_addr: str,
                 port: int = DEFAULT_PORT, rdzv_id: str = "studio", overrides: list[str] | None = None,
                 resume: str | None = None, quiet: bool = False, python: str | None = None) -> list[str]:
    """torchrun line for one node of an ``nnodes`` run (c10d rendezvous on ``master_addr:port``).

    ``--max-restarts 0``: a lost node ends the run (and is reported in status.json) instead of the
    survivors waiting for a replacement that never comes; resume from the last checkpoint instead.
    """
    cmd = [python or sys.executable, "-m", "torch.distributed.run", f"--nnodes={nnodes}",
           f"--node_rank={node_rank}", f"--nproc_per_node={nproc_per_node}", "--rdzv_backend=c10d",
           f"--rdzv_endpoint={_endpoint(master_addr, port)}", f"--rdzv_id={rdzv_id}", "--max-restarts=0",
           "-m", "studio", "train", config_path]
    return cmd + _train_tail([*(overrides or []), f"nproc={nproc_per_node}"], resume, quiet)


def _train_tail(overrides: list[str], resume: str | None, quiet: bool) -> list[str]:
    cmd: list[str] = []
    for o in overrides:
        cmd += ["--set", o]
    if resume:
        cmd += ["--resume", resume]
    if quiet:
        cmd.append("--quiet")
    return cmd


def _endpoint(addr: str, port: int) -> str:
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def check_cluster_shape(nnodes: int, gpus_per_node: int, master_addr: str, port: int,
                        hosts: list[str] | None, deepspeed: str | None) -> None:
    """Every problem with a cluster request at once, named by the CLI flag.

    Raises:
        StudioError: code engine.cluster_shape, its value ``problems`` a code (cluster.*) with its values for each
            (studio/words/run_errors.py CLUSTER_PROBLEMS words them).
    """
    p: list[dict] = []
    if nnodes < 1:
        p.append({"problem": "cluster.nnodes", "got": nnodes})
    if gpus_per_node < 1:
        p.append({"problem": "cluster.gpus_per_node", "got": gpus_per_node})
    if not _HOST.match(master_addr or ""):
        p.append({"problem": "cluster.master_addr", "addr": master_addr})
    if not 1024 <= port <= 65535:
        p.append({"problem": "cluster.master_port", "got": port})
    if hosts is not None:
        bad = [h for h in hosts if not _HOST.match(h)]
        if bad:
            p.append({"problem": "cluster.host_names", "hosts": bad})
        if len(hosts) != nnodes:
            p.append({"problem": "cluster.host_count", "hosts": len(hosts), "nnodes": nnodes})
    if nnodes * gpus_per_node > 1 and (not deepspeed or deepspeed == "none"):
        p.append({"problem": "cluster.deepspeed"})
    if p:
        raise StudioError.of("engine.cluster_shape", problems=p)


def cluster_files(config_path: str | Path, *, nnodes: int, gpus_per_node: int, master_addr: str,
                  port: int = DEFAULT_PORT, hosts: list[str] | None = None, job_name: str = "studio",
                  repo_root: str | Path | None = None, python: str | None = None,
                  deepspeed: str | None = "z3") -> dict[str, str]:
    """File name -> text of every ready-to-run launcher for ``config_path`` on ``nnodes`` machines.

    All paths are absolute: every node must see the checkout, the venv, the config, the data and
    ``output_dir`` at the same path (a shared filesystem), which multi-node checkpoints need anyway.

    Raises:
        StudioError: a bad shape (see check_cluster_shape).
    """
    check_cluster_shape(nnodes, gpus_per_node, master_addr, port, hosts, deepspeed)
    config = str(Path(config_path).resolve())
    root = str(Path(repo_root).resolve()) if repo_root else str(Path(__file__).resolve().parents[2])
    py = python or sys.executable
    hosts = hosts or ([master_addr] + [f"node{i}" for i in range(1, nnodes)])
    q = shlex.quote
    head = "#!/usr/bin/env bash\n# Written by `python -m studio cluster`. Run from any folder.\nset -euo pipefail\n"
    files: dict[str, str] = {}
    for rank in range(nnodes):
        cmd = node_command(config, nnodes=nnodes, node_rank=rank, nproc_per_node=gpus_per_node,
                           master_addr=master_addr, port=port, rdzv_id=job_name, python=py)
        files[f"torchrun_node{rank}.sh"] = (
            f"{head}# Node {rank} of {nnodes} ({hosts[rank]}); start this on every node within a few minutes.\n"
            f"cd {q(root)}\nexec {shlex.join(cmd)} \"$@\"\n")
    files["hostfile"] = "".join(f"{h} slots={gpus_per_node}\n" for h in hosts)
    ds_tail = ["--master_addr", master_addr, "--master_port", str(port), "--no_local_rank", "--module", "studio",
               "train", config, "--set", f"nproc={gpus_per_node}"]
    ds_line = f"{q(str(Path(py).parent / 'deepspeed'))} --hostfile \"$HERE/hostfile\" {shlex.join(ds_tail)}"
    files["deepspeed_launch.sh"] = (
        f"{head}# Start ONCE, on {hosts[0]}; the DeepSpeed launcher reaches the other hosts over ssh\n"
        "# (passwordless ssh to every host in ./hostfile, pdsh installed).\n"
        "HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n"
        f"cd {q(root)}\nexec {ds_line} \"$@\"\n")
    srun = [py, "-m", "torch.distributed.run", f"--nnodes={nnodes}", f"--nproc_per_node={gpus_per_node}",
            "--rdzv_backend=c10d", "--rdzv_endpoint=@EP@", "--rdzv_id=@JOB@", "--max-restarts=0",
            "-m", "studio", "train", config, "--set", f"nproc={gpus_per_node}"]
    srun_line = shlex.join(srun).replace("@EP@", "\"$MASTER_ADDR:$MASTER_PORT\"").replace(
        "@JOB@", "\"$SLURM_JOB_ID\"")
    files["slurm.sbatch"] = (
        "#!/usr/bin/env bash\n"
        f"#SBATCH --job-name={job_name}\n#SBATCH --nodes={nnodes}\n#SBATCH --ntasks-per-node=1\n"
        f"#SBATCH --gpus-per-node={gpus_per_node}\n#SBATCH --cpus-per-task={max(4, 4 * gpus_per_node)}\n"
        f"#SBATCH --output={job_name}-%j.out\n"
        "# Submit with: sbatch slurm.sbatch   (add --partition/--time/--account as your site needs)\n"
        "set -euo pipefail\n"
        "# rendezvous on the first node of the allocation\n"
        "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        f"MASTER_PORT={port}\nexport MASTER_ADDR MASTER_PORT\n"
        f"cd {q(root)}\n"
        "# one torchrun per node (ntasks-per-node=1); torchrun starts one worker per GPU\n"
        f"srun --kill-on-bad-exit=1 {srun_line}\n")
    files["README.txt"] = (
        f"Cluster launch files for {config}\n"
        f"{nnodes} node(s) x {gpus_per_node} GPU(s) = {nnodes * gpus_per_node} processes; rendezvous "
        f"{_endpoint(master_addr, port)}.\n\n"
        "Pick ONE way to start:\n"
        "  torchrun:  run torchrun_nodeN.sh on node N (N = 0.." + str(nnodes - 1) + ")\n"
        "  DeepSpeed: edit hostfile if needed, then run deepspeed_launch.sh once on the first host\n"
        "  Slurm:     sbatch slurm.sbatch (the first node of the allocation is the rendezvous)\n\n"
        "Every node needs the same checkout, venv, config, data and output_dir path (shared storage).\n"
        "Only global rank 0 writes status.json / trainer_log.jsonl; checkpoints are written by every rank.\n"
        "A lost node ends the run (--max-restarts 0); resume with --resume last.\n")
    return files


def write_cluster_files(out_dir: str | Path, files: dict[str, str]) -> list[Path]:
    """Write the files (scripts executable); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        if name.endswith((".sh", ".sbatch")):
            path.chmod(0o755)
        written.append(path)
    return written


def peer_lost_error(exc: BaseException) -> StudioError | None:
    """A plain error when ``exc`` means another process of a multi-process run vanished or stalled (its
    ``message`` is the run's end reason; the page words it by its code).

    Why match text: gloo and NCCL raise plain RuntimeError/DistBackendError whose only signal is the
    message ('Connection reset by peer', 'Connection closed by peer', a collective timeout).
    """
    text = f"{type(exc).__name__}: {exc}"
    markers = ("Connection reset by peer", "Connection closed by peer", "Broken pipe", "DistBackendError",
               "timed out", "Timed out", "NCCL communicator was aborted", "ProcessGroupGloo", "gloo/transport")
    if not any(m in text for m in markers):
        return None
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return StudioError.of("engine.peer_lost", detail=first)


def leave_process_group() -> None:
    """End this worker's part in a multi-process run: destroy the process group before the interpreter exits.

    Why: left to interpreter teardown, a gloo group can kill a worker that exits while its peer is still
    busy (global rank 0 writes the final status and plot after the last collective) with SIGABRT
    ('terminate called without an active exception'), so torchrun fails a run that finished. A CI run
    failed on it twice (rank 1 SIGABRT, rank 0 SIGTERM). No barrier first: a rank that failed or stopped at
    another step would wait on a collective its peers never join. Only for runs under torchrun (WORLD_SIZE > 1):
    an in-process single run keeps its group for the next run in the same process.
    """
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        try:
            dist.destroy_process_group()
        except Exception as exc:  # a group broken by a lost peer: never hide the error that ended the run
            logging.getLogger("studio.engine").warning("could not close the process group: %s", exc)


def end_torchrun_worker(code: int) -> None:
    """End a worker of a multi-process run (WORLD_SIZE > 1) at once with ``code``, skipping interpreter teardown.

    Why: with its process group already destroyed (``leave_process_group``), a worker could still die of SIGABRT
    ('terminate called without an active exception') while the interpreter tore down DeepSpeed's and gloo's C++
    objects, which still hold tensors and async work: torchrun then failed a run whose status said finished, and
    the other node's agent lost its rendezvous store (CI, 2026-12-04, a two-node ZeRO-3 run on localhost; the
    same class of crash as pytorch/pytorch#179291). Everything the run writes is on disk by now; the streams are
    flushed here. Outside torchrun this returns and the process exits as usual.
    """
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or "LOCAL_RANK" not in os.environ:
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing left to flush
            pass
    os._exit(code)
