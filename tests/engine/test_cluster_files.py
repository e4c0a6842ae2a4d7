"""`python -m studio cluster`: ready-to-run torchrun / DeepSpeed hostfile / Slurm files, and the torchrun
form really run on localhost as two nodes."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.engine.launch import cluster_files
from studio.errors import StudioError
from studio.runs.run_dir import RunDir
from tests.helpers import ROOT, losses, run_cli


def _files(**kw) -> dict[str, str]:
    args = dict(nnodes=2, gpus_per_node=4, master_addr="10.0.0.1", port=29555, hosts=["gpu-a", "gpu-b"])
    return cluster_files("/shared/run/config.yaml", **{**args, **kw})


def test_torchrun_script_per_node_with_c10d_rendezvous_on_the_first_node():
    files = _files()
    for rank in (0, 1):
        text = files[f"torchrun_node{rank}.sh"]
        assert "-m torch.distributed.run --nnodes=2" in text and f"--node_rank={rank}" in text
        assert "--nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=10.0.0.1:29555" in text
        assert "--max-restarts=0" in text  # a lost node ends the run, it does not wait for a replacement
        assert "-m studio train /shared/run/config.yaml --set nproc=4" in text
        assert f"cd {ROOT}" in text
    assert "torchrun_node2.sh" not in files


def test_deepspeed_hostfile_and_launcher():
    files = _files()
    assert files["hostfile"] == "gpu-a slots=4\ngpu-b slots=4\n"
    ds = files["deepspeed_launch.sh"]
    assert '/deepspeed --hostfile "$HERE/hostfile" --master_addr 10.0.0.1 --master_port 29555' in ds
    assert "--no_local_rank --module studio train /shared/run/config.yaml --set nproc=4" in ds


def test_slurm_script_takes_the_rendezvous_from_the_first_allocated_node():
    sb = _files()["slurm.sbatch"]
    for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=1", "#SBATCH --gpus-per-node=4"):
        assert line + "\n" in sb
    assert 'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)' in sb
    assert 'srun --kill-on-bad-exit=1 ' in sb
    assert '--rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" --rdzv_id="$SLURM_JOB_ID"' in sb
    assert "--node_rank" not in sb  # c10d numbers the nodes; srun starts the same line on each


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_scripts_are_valid_bash(tmp_path):
    from studio.engine.launch import write_cluster_files
    for path in write_cluster_files(tmp_path, _files()):
        if path.suffix in (".sh", ".sbatch"):
            assert os.access(path, os.X_OK)
            r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            assert r.returncode == 0, (path.name, r.stderr)


def test_bad_shapes_are_named_by_flag():
    with pytest.raises(StudioError) as e:
        cluster_files("c.yaml", nnodes=0, gpus_per_node=0, master_addr="x; rm -rf /", port=80, hosts=["a"],
                      deepspeed="z3")
    msg = e.value.message
    for flag in ("--nnodes", "--gpus-per-node", "--master-addr", "--master-port", "--hosts"):
        assert flag in msg
    with pytest.raises(StudioError, match="DeepSpeed plan"):
        cluster_files("c.yaml", nnodes=2, gpus_per_node=1, master_addr="n0", deepspeed=None)


def test_cli_writes_files_and_the_resolved_config(tmp_path):
    cfg = RunConfig(dataset="d.jsonl", deepspeed="z3", output_dir=str(tmp_path / "run"))
    cfg.save(tmp_path / "c.yaml")
    out = tmp_path / "launch"
    r = run_cli("cluster", str(tmp_path / "c.yaml"), "--out", str(out), "--nnodes", "3", "--gpus-per-node", "8",
                "--master-addr", "gpu-node-1", "--set", "learning_rate=1e-5")
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["README.txt", "config.yaml", "deepspeed_launch.sh", "hostfile", "slurm.sbatch", "torchrun_node0.sh",
         "torchrun_node1.sh", "torchrun_node2.sh"])
    saved = RunConfig.load(out / "config.yaml")
    assert saved.learning_rate == 1e-5 and saved.nproc == 8
    assert f"train {out.resolve() / 'config.yaml'}" in (out / "torchrun_node2.sh").read_text()
    bad = run_cli("cluster", str(tmp_path / "c.yaml"), "--out", str(out), "--nnodes", "2", "--gpus-per-node", "1",
                  "--master-addr", "gpu-node-1", "--set", "deepspeed=none")
    assert bad.returncode == 2 and "DeepSpeed plan" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.integration
def test_generated_torchrun_scripts_train_on_localhost(tmp_path):
    """The files as a user gets them: two node scripts started together on this host."""
    from studio.models.loading import build_tiny_llama, demo_texts
    from tests.conftest import make_review_rows, write_jsonl
    rows = make_review_rows(120)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    model = build_tiny_llama(tmp_path / "model", demo_texts(rows), hidden=32, layers=1, heads=2, vocab_size=300)
    RunConfig(model_name_or_path=str(model), dataset=str(data), finetuning_type="full", cutoff_len=48,
              per_device_train_batch_size=4, learning_rate=3e-3, max_steps=3, logging_steps=1, save_steps=1000,
              deepspeed="z3", plot_loss=False, output_dir=str(tmp_path / "run")).save(tmp_path / "c.yaml")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "launch"
    r = run_cli("cluster", str(tmp_path / "c.yaml"), "--out", str(out), "--nnodes", "2", "--gpus-per-node", "1",
                "--master-addr", "127.0.0.1", "--master-port", str(port))
    assert r.returncode == 0, r.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    nodes = [subprocess.Popen(["bash", str(out / f"torchrun_node{i}.sh"), "--quiet"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in (0, 1)]
    outputs = [p.communicate(timeout=300)[0] for p in nodes]
    assert [p.returncode for p in nodes] == [0, 0], outputs[0][-2000:] + outputs[1][-2000:]
    run = RunDir(tmp_path / "run")
    assert run.read_status()["state"] == "finished"
    assert len(losses(Path(run.path))) == 3


@pytest.mark.parametrize("world", ["2", "1"])
def test_a_torchrun_worker_ends_without_interpreter_teardown(world):
    """Under torchrun (WORLD_SIZE > 1) the train command's worker leaves with os._exit after flushing its streams:
    interpreter teardown is where gloo/DeepSpeed C++ objects aborted a finished worker (SIGABRT) in CI. Outside a
    multi-process run the process exits as usual (atexit handlers run)."""
    code = ("import atexit; atexit.register(lambda: print('teardown ran', flush=True)); "
            "from studio.engine.launch import end_torchrun_worker; print('written before'); "
            "end_torchrun_worker(3); print('returned')")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLD_SIZE": world, "LOCAL_RANK": "0"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if world == "2":
        assert r.returncode == 3 and r.stdout.splitlines() == ["written before"], (r.returncode, r.stdout)
    else:
        assert r.returncode == 0 and r.stdout.splitlines() == ["written before", "returned", "teardown ran"]


def test_the_train_command_ends_its_workers_through_end_torchrun_worker(tmp_path, monkeypatch):
    """cli/main.py hands the train command's exit code to end_torchrun_worker, also when training raised."""
    import studio.engine.launch as launch
    from studio.cli.main import main
    seen: list[int] = []
    monkeypatch.setattr(launch, "end_torchrun_worker", lambda c: seen.append(c))
    assert main(["train", str(tmp_path / "missing.yaml")]) == 2
    assert seen == [2]
