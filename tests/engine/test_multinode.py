"""Two torchrun launchers on this host as two "nodes" (c10d rendezvous, gloo on CPU) running ZeRO-3.

One module-scoped 2-node run feeds the checks: its loss matches the 1-process run at every logged
step, its checkpoint resumes on 1 process and on 2 nodes, and a killed node ends the survivor with
a plain failure in status.json within a bound (not a hang).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.engine.launch import node_command
from studio.runs.run_dir import RunDir
from tests.conftest import make_review_rows, write_jsonl
from tests.helpers import ROOT, losses, run_cli, worker_errors

pytestmark = pytest.mark.integration
STEPS, SAVE = 6, 3


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def start_nodes(config: Path, out: Path, *extra: str, nnodes: int = 2) -> list[subprocess.Popen]:
    """One torchrun launcher per node, each in its own session (so a test can kill a whole 'node')."""
    port = _port()
    procs = []
    for rank in range(nnodes):
        cmd = node_command(str(config), nnodes=nnodes, node_rank=rank, nproc_per_node=1, master_addr="127.0.0.1",
                           port=port, rdzv_id=out.name, quiet=True) + list(extra)
        log = open(out.parent / f"{out.name}-node{rank}.log", "w")
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    return procs


def wait_all(procs: list[subprocess.Popen], timeout: float) -> list[int]:
    deadline = time.time() + timeout
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=max(deadline - time.time(), 1)))
        except subprocess.TimeoutExpired:
            kill_node(p)
            codes.append(-999)
    return codes


def kill_node(p: subprocess.Popen) -> None:
    """SIGKILL the launcher and its workers (torchrun puts workers in their own sessions)."""
    import psutil
    try:
        root = psutil.Process(p.pid)
        for proc in root.children(recursive=True) + [root]:
            proc.send_signal(signal.SIGKILL)
    except psutil.NoSuchProcess:
        pass
    p.wait(timeout=30)


def _log_tail(out: Path) -> str:
    return "\n".join(f"node {r}: " + worker_errors((out.parent / f"{out.name}-node{r}.log").read_text())
                     for r in range(2) if (out.parent / f"{out.name}-node{r}.log").exists())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Tiny random Llama + data; the 1-process run and the 2-node run (2 x 4 rows = 1 x 8) side by side."""
    from studio.models.loading import build_tiny_llama, demo_texts
    root = tmp_path_factory.mktemp("multinode")
    rows = make_review_rows(240)
    data = write_jsonl(root / "data.jsonl", rows)
    model = build_tiny_llama(root / "model", demo_texts(rows), hidden=32, layers=2, heads=2, vocab_size=400, seed=0)
    common = dict(model_name_or_path=str(model), dataset=str(data), finetuning_type="full", cutoff_len=48,
                  learning_rate=3e-3, max_steps=STEPS, logging_steps=1, save_steps=SAVE, save_total_limit=3,
                  lr_scheduler_type="constant", deepspeed="z3", plot_loss=False, ddp_timeout=60)
    one = RunConfig(**common, per_device_train_batch_size=8, output_dir=str(root / "one"))
    two = RunConfig(**common, per_device_train_batch_size=4, output_dir=str(root / "two"))
    one.save(root / "one.yaml")
    two.save(root / "two.yaml")
    t0 = time.time()
    nodes = start_nodes(root / "two.yaml", root / "two")
    single = subprocess.Popen([sys.executable, "-m", "studio", "train", str(root / "one.yaml"), "--quiet"], cwd=ROOT,
                              env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    codes = wait_all(nodes, timeout=240)
    _, err = single.communicate(timeout=240)
    print(f"1-process and 2-node runs side by side: {time.time() - t0:.1f}s")
    assert single.returncode == 0, err[-2000:]
    assert codes == [0, 0], _log_tail(root / "two")
    return root


def test_two_nodes_match_one_process(cluster):
    l1, l2 = losses(cluster / "one"), losses(cluster / "two")
    print("1-process:", [round(x, 4) for x in l1])
    print("2 nodes:  ", [round(x, 4) for x in l2])
    assert len(l1) == len(l2) == STEPS  # logging_steps=1 (the first step is logged once)
    assert l2[-1] < l2[0] * 0.9  # the 2-node run learns
    for a, b in zip(l1, l2):
        assert b == pytest.approx(a, rel=0.10)
    status = RunDir(cluster / "two").read_status()
    assert status["state"] == "finished" and status["step"] == STEPS
    shards = sorted(p.name for p in (cluster / "two/checkpoints" / f"checkpoint-{SAVE}" / f"global_step{SAVE}")
                    .glob("*optim_states.pt"))
    assert len(shards) == 2, shards  # ZeRO-3 really partitioned over the two nodes


def test_two_node_checkpoint_resumes_on_one_process(cluster):
    """DeepSpeed refuses shards of another world size; the engine converts to a universal checkpoint."""
    ckpt = cluster / "two/checkpoints" / f"checkpoint-{SAVE}"
    r = run_cli("train", str(cluster / "one.yaml"), "--set", f"output_dir={cluster / 'resume1'}",
                "--resume", str(ckpt), "--quiet", env={"OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert (ckpt / "latest_universal").is_file()
    resumed, full = losses(cluster / "resume1"), losses(cluster / "two")
    assert [e["step"] for e in RunDir(cluster / "resume1").events() if e["type"] == "progress"][0] == SAVE + 1
    for a, b in zip(full[SAVE:], resumed):  # continues the curve, not a restart from the base model
        assert b == pytest.approx(a, rel=0.10)
    assert resumed[0] < losses(cluster / "one")[0] * 0.95


def test_resumes_on_two_nodes_and_a_killed_node_fails_the_other_clearly(cluster):
    """One 2-node launch checks both (each launch costs ~30 s of CPU here): the resumed run continues the
    curve, then killing one node ends the survivor with a plain failure in status.json, bounded in time."""
    ckpt = cluster / "two/checkpoints" / f"checkpoint-{SAVE}"
    out = cluster / "resume2"
    cfg = RunConfig.load(cluster / "two.yaml", [f"output_dir={out}", "max_steps=100000", "save_steps=100000"])
    cfg.save(cluster / "resume2.yaml")
    nodes = start_nodes(cluster / "resume2.yaml", out, "--resume", str(ckpt))
    deadline = time.time() + 240
    while len(losses(out)) < STEPS - SAVE:
        assert time.time() < deadline and all(p.poll() is None for p in nodes), _log_tail(out)
        time.sleep(0.5)
    resumed, full = losses(out)[:STEPS - SAVE], losses(cluster / "two")
    assert [e["step"] for e in RunDir(out).events() if e["type"] == "progress"][0] == SAVE + 1
    for a, b in zip(full[SAVE:], resumed):
        assert b == pytest.approx(a, rel=0.02)  # same world size, same shards, constant LR: the same curve

    kill_node(nodes[1])
    t0 = time.time()
    try:
        code = nodes[0].wait(timeout=cfg.ddp_timeout + 60)  # the distributed timeout bounds even a silent stall
    except subprocess.TimeoutExpired:
        kill_node(nodes[0])
        pytest.fail("the surviving node hung after its peer was killed")
    print(f"survivor exited {code} {time.time() - t0:.1f}s after the kill")
    assert code != 0
    status = RunDir(out).read_status()
    assert status["state"] == "failed", status
    assert status.get("code") == "peer_lost", status
    assert "Lost contact with another process" in status["reason"] and "--resume last" in status["reason"]
    assert RunDir(out).events()[-1]["type"] == "end"
