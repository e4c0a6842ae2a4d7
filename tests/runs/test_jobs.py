"""JobRunner: real engine on tiny-demo (integration) and fake children for the failure paths."""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs.jobs import JobRunner
from studio.runs.processes import pid_alive
from studio.runs.run_dir import RunDir


def tiny_cfg(data: Path, out: Path, **kw: object) -> RunConfig:
    base = dict(dataset=str(data), output_dir=str(out), finetuning_type="full", cutoff_len=48,
                per_device_train_batch_size=8, learning_rate=2e-3, max_steps=30, logging_steps=1, save_steps=5,
                plot_loss=False, max_samples=64)
    base.update(kw)
    return RunConfig(**base)  # type: ignore[arg-type]


def wait_for(cond, timeout: float = 180, every: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not met in time")


class FakeRunner(JobRunner):
    """Runs a given python snippet instead of the engine (for exit/kill/escalation paths)."""

    def __init__(self, *a: object, code: str, **kw: object):
        self.code = code
        super().__init__(*a, **kw)  # type: ignore[arg-type]

    def command(self, run: RunDir, resume: str | None) -> list[str]:
        return [sys.executable, "-c", self.code, "studio", str(run.config)]  # argv like the trainer's


@pytest.mark.integration
def test_start_progress_abort_resume(tmp_path: Path, sample_reviews_jsonl: Path) -> None:
    runner = JobRunner(tmp_path / "runs", grace_s=60)
    cfg = tiny_cfg(sample_reviews_jsonl, tmp_path / "runs" / "a", max_steps=60)
    run = runner.start(cfg)
    wait_for(lambda: runner.snapshot()["step"] >= 2)
    snap = runner.snapshot()
    assert snap["busy"] and snap["state"] == "running" and snap["total_steps"] == 60
    assert snap["loss"] is not None and snap["tokens_per_s"] is not None

    with pytest.raises(StudioError, match="A training run is already going \\('a'\\)"):
        runner.start(tiny_cfg(sample_reviews_jsonl, tmp_path / "runs" / "b"))
    assert not (tmp_path / "runs" / "b" / "config.yaml").exists()

    pid = run.read_status()["pid"]
    assert runner.abort(by="alice")
    assert runner.wait(120) == "aborted"
    assert not pid_alive(pid)
    stopped_at = run.read_status()["step"]
    assert run.read_status()["reason"].startswith("stopped on request by alice at step")  # who stopped it is recorded
    assert 2 <= stopped_at < 60
    last = run.last_checkpoint()
    assert last is not None and last.name == f"checkpoint-{stopped_at}"
    assert not run.stop_flag.exists()

    runner.resume(run.path)
    assert runner.wait(180) == "finished"
    status = run.read_status()
    assert status["step"] == 60
    starts = [e for e in runner.events(run) if e["type"] == "start"]
    assert [s["step"] for s in starts] == [0, stopped_at] and starts[1]["resumed"]
    assert run.final_model() is not None
    past = runner.past_runs()
    assert past[0]["name"] == "a" and past[0]["state"] == "finished" and past[0]["final_loss"] is not None


@pytest.mark.integration
def test_sigkill_marks_failed_and_checkpoint_still_loads(tmp_path: Path, sample_reviews_jsonl: Path) -> None:
    runner = JobRunner(tmp_path / "runs")
    run = runner.start(tiny_cfg(sample_reviews_jsonl, tmp_path / "runs" / "k", max_steps=500, save_steps=2))
    wait_for(lambda: run.last_checkpoint() is not None and runner.snapshot()["step"] >= 3)
    os.kill(run.read_status()["pid"], signal.SIGKILL)
    assert runner.wait(60) == "failed"
    reason = run.read_status()["reason"]
    assert reason.startswith("the training process was killed (SIGKILL, signal 9).")
    assert "The last checkpoint (checkpoint-" in reason and "press Resume to continue from it" in reason
    assert runner.events(run)[-1]["type"] == "end" and runner.events(run)[-1]["state"] == "failed"
    ckpt = run.last_checkpoint()
    assert ckpt is not None and json.loads((ckpt / "trainer_state.json").read_text())["global_step"] >= 2
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(ckpt)
    assert sum(p.numel() for p in model.parameters()) > 0


def test_second_start_refused_while_running(tmp_path: Path) -> None:
    runner = FakeRunner(tmp_path / "runs", code="import time; time.sleep(30)", grace_s=0.3, poll_s=0.05)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "one")))
    with pytest.raises(StudioError) as err:
        runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "two")))
    assert err.value.message == ("A training run is already going ('one'). Fix: wait for it to finish, or press "
                                 "Abort first; one run at a time keeps the card's memory for that run.")
    assert runner.abort()
    assert runner.wait(10) == "aborted"
    assert run.read_status()["reason"].startswith("stopped on request before the first checkpoint.")
    run.append_event({"type": "start", "total_steps": 1})
    with pytest.raises(StudioError, match="already holds a run"):  # a fresh start would mix two runs' events
        runner.start(RunConfig(dataset="x.jsonl", output_dir=str(run.path)))


def test_abort_escalates_to_sigkill_for_a_stuck_child(tmp_path: Path) -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    runner = FakeRunner(tmp_path / "runs", code=code, grace_s=0.3, poll_s=0.05)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "stuck")))
    wait_for(lambda: run.read_status().get("pid"))
    pid = run.read_status()["pid"]
    time.sleep(0.3)  # let the child install its SIGTERM handler
    t0 = time.time()
    runner.abort()
    assert runner.wait(10) == "aborted"
    assert time.time() - t0 >= 0.6  # STOP flag, then SIGTERM after grace, then SIGKILL after 2x grace
    assert not pid_alive(pid)


def test_child_exit_without_end_state_is_failed_with_its_last_words(tmp_path: Path) -> None:
    runner = FakeRunner(tmp_path / "runs", code="import sys; print('boom: no such thing'); sys.exit(3)", poll_s=0.05)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "crash")))
    assert runner.wait(20) == "failed"
    reason = run.read_status()["reason"]
    assert reason.startswith("the training process exited with code 3 before finishing: boom: no such thing.")
    assert "No checkpoint was written yet" in reason
    assert not runner.busy


def test_restart_marks_orphaned_run_interrupted(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "runs" / "orphan").ensure()
    RunConfig(dataset="x.jsonl", output_dir=str(run.path)).save(run.config)
    run.write_status("running", pid=2 ** 22 + 12345, step=7)  # no such pid
    runner = JobRunner(tmp_path / "runs")
    status = run.read_status()
    assert status["state"] == "failed"
    assert status["reason"].startswith("interrupted: the training process is gone")
    assert runner.current == run and not runner.busy
    assert runner.snapshot()["state"] == "failed"


def test_restarted_server_reattaches_to_a_live_run(tmp_path: Path) -> None:
    """A new runner (the studio restarted) adopts a run whose trainer still lives, and can abort it."""
    run = RunDir(tmp_path / "runs" / "live").ensure()
    RunConfig(dataset="x.jsonl", output_dir=str(run.path)).save(run.config)
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code, "studio", str(run.config)], start_new_session=True)
    try:
        # a trainer that has been running: Popen can return while the kernel is still mid-exec, when
        # /proc/<pid>/cmdline is empty (CI failed here once, under load); a restart comes long after that
        deadline = time.time() + 10
        while Path("/proc").is_dir() and b"studio" not in Path(f"/proc/{child.pid}/cmdline").read_bytes() \
                and time.time() < deadline:
            time.sleep(0.01)
        run.write_status("running", pid=child.pid, step=3)
        runner = JobRunner(tmp_path / "runs", poll_s=0.05, grace_s=0.3)
        assert runner.busy and runner.current == run and runner.snapshot()["state"] == "running"
        with pytest.raises(StudioError, match="already going"):
            runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "other")))
        runner.abort()
        assert runner.wait(10) == "aborted"
        assert child.wait(5) == -signal.SIGKILL  # it ignored the STOP flag and SIGTERM
    finally:
        if child.poll() is None:
            child.kill()


# ---------------------------------------------------------------- a full disk
def _enospc(*_a: object, **_k: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_supervisor_survives_a_full_disk_and_recovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while the supervisor writes the end state: the run ends 'failed' with the reason, the
    runner is free again (Start works), and the state reaches disk once space returns."""
    runner = FakeRunner(tmp_path / "runs", code="import time, sys; time.sleep(0.5); sys.exit(1)", poll_s=0.05)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "full")))
    with monkeypatch.context() as m:
        m.setattr(RunDir, "write_status", _enospc)
        m.setattr(RunDir, "append_event", _enospc)
        assert runner.wait(10) == "failed"
        assert runner._thread is not None and not runner._thread.is_alive()
        snap = runner.snapshot()
        assert not runner.busy and snap["state"] == "failed"
        assert "The disk is full" in snap["reason"] and "exited with code 1" in snap["reason"]
    # space is back: the next look writes the state, and a new run starts
    assert runner.snapshot()["state"] == "failed"
    assert run.read_status()["state"] == "failed" and "The disk is full" in run.read_status()["reason"]
    runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "next")))
    assert runner.wait(10) == "failed"


def test_start_on_a_full_disk_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = FakeRunner(tmp_path / "runs", code="pass", poll_s=0.05)
    monkeypatch.setattr("studio.runs.run_dir.atomic_write_text", _enospc)
    with pytest.raises(StudioError) as err:
        runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "nospace")))
    assert err.value.what.startswith("The disk is full")
    assert err.value.code in ("run.disk_full_config", "run.disk_full_folder")
    assert not runner.busy


def test_abort_works_when_the_stop_flag_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = FakeRunner(tmp_path / "runs", code="import time; time.sleep(60)", grace_s=30, poll_s=0.05)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "stuck")))
    wait_for(lambda: run.read_status().get("pid"))
    monkeypatch.setattr(Path, "touch", _enospc)
    t0 = time.time()
    assert runner.abort()
    assert runner.wait(10) == "aborted"
    assert time.time() - t0 < 10  # no flag possible: SIGTERM at once instead of waiting out the grace


@pytest.mark.integration
def test_cli_checkpoint_on_full_disk_leaves_failed_status_and_error_log(
        tmp_path: Path, sample_reviews_jsonl: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """The checkpoint write hits ENOSPC and the disk stays full until the partial checkpoint is removed:
    the engine frees it, then status.json says 'failed' with the reason and error.log has the traceback."""
    import builtins

    import transformers

    import studio.runs.run_dir
    from studio.cli.main import main as cli_main
    out = tmp_path / "run"
    staging = out / "checkpoints" / ".staging"

    def save_fails(self, model, trial):  # type: ignore[no-untyped-def]
        (staging / "checkpoint-2").mkdir(parents=True, exist_ok=True)
        (staging / "checkpoint-2" / "model.safetensors").write_bytes(b"\0" * 1000)
        _enospc()

    real_open, real_atomic = builtins.open, studio.runs.run_dir.atomic_write_text

    def disk(path: object) -> None:
        if staging.exists() and str(out) in str(path):
            _enospc()

    def full_open(file, mode="r", *a, **k):  # type: ignore[no-untyped-def]
        if any(c in mode for c in "wax"):
            disk(file)
        return real_open(file, mode, *a, **k)

    def full_atomic(path, text):  # type: ignore[no-untyped-def]
        disk(path)
        return real_atomic(path, text)

    monkeypatch.setattr(transformers.Trainer, "_save_checkpoint", save_fails)
    monkeypatch.setattr(builtins, "open", full_open)
    monkeypatch.setattr(studio.runs.run_dir, "atomic_write_text", full_atomic)
    cfg = out.parent / "c.yaml"
    tiny_cfg(sample_reviews_jsonl, out, max_steps=4, save_steps=2).save(cfg)
    assert cli_main(["train", str(cfg), "--quiet"]) == 1
    status = RunDir(out).read_status()
    assert status["state"] == "failed"
    assert status["reason"].startswith("The disk is full (No space left on device)")
    assert "OSError" in (out / "error.log").read_text()
    assert not staging.exists()
    assert "Error: The disk is full" in capsys.readouterr().err


@pytest.mark.integration
def test_steps_continue_across_resume(tmp_path: Path, sample_reviews_jsonl: Path) -> None:
    """After Abort and Resume the step shown (runner snapshot, Train tab status, runs table)
    never goes below the step the run was stopped at (it went 21 -> 20, here 7 -> 0: no progress line
    is logged before step 150, so only the start/checkpoint/end events know the step)."""
    import re
    from studio.ui.train_tab import status_markdown
    runner = JobRunner(tmp_path / "runs", grace_s=60)
    run = runner.start(tiny_cfg(sample_reviews_jsonl, tmp_path / "runs" / "r", max_steps=400, logging_steps=150,
                                save_steps=3))
    wait_for(lambda: any(e["type"] == "checkpoint" for e in runner.events(run)))
    assert runner.abort() and runner.wait(120) == "aborted"
    stopped_at = run.read_status()["step"]
    assert 3 <= stopped_at < 150 and runner.snapshot()["step"] == stopped_at

    runner.resume(run.path)
    seen: list[tuple[int, int, int | None]] = []

    def watch() -> bool:
        snap = runner.snapshot()
        shown = re.search(r"Step (\d+) /", status_markdown(snap, "en"))
        table = runner.past_runs()[0]["step"]
        seen.append((snap["step"], int(shown.group(1)) if shown else -1, table))
        resumed = [e for e in runner.events(run) if e["type"] == "checkpoint" and e["step"] > stopped_at + 3]
        return bool(resumed)
    wait_for(watch, every=0.02)
    assert runner.abort() and runner.wait(120) == "aborted"
    assert seen and all(s >= stopped_at and md >= stopped_at and (t or 0) >= stopped_at for s, md, t in seen), \
        (stopped_at, [x for x in seen if min(x[0], x[1], x[2] or 0) < stopped_at][:5])
