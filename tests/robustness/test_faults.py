"""Group 'faults': the job runner, the run folder and the converter when processes die and disks fill."""
from __future__ import annotations

import errno
import json
import signal
from pathlib import Path
from typing import Any, Callable

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs.jobs import JobRunner
from studio.runs.run_dir import RunDir
from tests.robustness.harness import api, cli, expect, record
from tests.runs.test_jobs import FakeRunner

GROUP = "faults"


def _enospc(*_a: Any, **_k: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _end_state(tmp: Path, code: str, *, patch: Callable[[pytest.MonkeyPatch], None] | None = None,
               mp: pytest.MonkeyPatch, abort: bool = False) -> tuple[str, str]:
    """Run a fake child; the runner must end in a terminal state with a reason and be free again."""
    runner = FakeRunner(tmp / "runs", code=code, poll_s=0.05, grace_s=0.3)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp / "runs" / "r")))
    if patch:
        mp.tmp = tmp  # type: ignore[attr-defined]
        patch(mp)
    if abort:
        runner.abort()
    state = runner.wait(20)
    snap = runner.snapshot()
    mp.undo()
    if runner.busy or state not in ("failed", "aborted", "finished") or not (snap["reason"] or state == "finished"):
        return "crash", f"runner stuck: state={state} busy={runner.busy}"
    runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp / "runs" / "again")))  # Start works again
    runner.abort()
    runner.wait(20)
    return "clear", f"{state}: {snap['reason'][:150]}"


CHILDREN = [
    ("child exits 1", "import sys; print('boom'); sys.exit(1)", None, False),
    ("child exits 0 without a result", "pass", None, False),
    ("child killed by SIGKILL", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", None, False),
    ("child segfaults", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", None, False),
    ("child ignores SIGTERM, abort", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
     "time.sleep(60)", None, True),
    ("disk full while recording the end", "import sys, time; time.sleep(0.3); sys.exit(1)",
     lambda m: (m.setattr(RunDir, "write_status", _enospc), m.setattr(RunDir, "append_event", _enospc)), False),
    ("disk full: stop flag cannot be written", "import time; time.sleep(60)",
     lambda m: m.setattr(Path, "touch", _enospc), True),
    ("status.json garbled mid-run", "import sys, time; time.sleep(0.3); sys.exit(2)",
     lambda m: Path(m.tmp / "runs" / "r" / "status.json").write_text("{garbage"), False),
]


@pytest.mark.parametrize("name, code, patch, abort", CHILDREN, ids=[c[0] for c in CHILDREN])
def test_child_faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, code: str,
                      patch: Any, abort: bool) -> None:
    outcome, detail = _end_state(tmp_path, code, patch=patch, mp=monkeypatch, abort=abort)
    record(GROUP, "python", name, outcome, detail)
    expect(outcome, detail, "clear")


def _run_with(tmp: Path, status: str | None = None, log: str | None = None, config: str | None = None) -> RunDir:
    run = RunDir(tmp / "runs" / "old").ensure()
    run.config.write_text(config if config is not None else RunConfig(dataset="x.jsonl",
                                                                       output_dir=str(run.path)).to_yaml())
    if status is not None:
        run.status_file.write_text(status)
    if log is not None:
        run.log.write_text(log)
    return run


FOLDERS: list[tuple[str, Callable[[Path], Any], bool]] = [
    ("start on a full disk", lambda t: _full_start(t), True),
    ("corrupt status.json", lambda t: JobRunner(_run_with(t, status="{not json").path.parent).snapshot(), False),
    ("half-written event line", lambda t: JobRunner(_run_with(t, status='{"state": "failed"}', log=
                                                              '{"type": "start"}\n{"type": "prog').path.parent
                                                    ).events(RunDir(t / "runs" / "old")), False),
    ("broken config.yaml in the run list", lambda t: JobRunner(_run_with(t, config="a: [").path.parent).past_runs(),
     False),
    ("resume a folder that is not a run", lambda t: JobRunner(t / "runs").resume(t / "nothing"), True),
    ("resume without a checkpoint", lambda t: JobRunner(t / "runs").resume(_run_with(t, status='{"state": "failed"}'
                                                                                      ).path), True),
    ("orphaned 'running' run after a restart", lambda t: _orphan(t), False),
    ("second start while one runs", lambda t: _double_start(t), True),
]


def _full_start(tmp: Path) -> Any:
    import studio.runs.run_dir
    real = studio.runs.run_dir.atomic_write_text
    studio.runs.run_dir.atomic_write_text = _enospc  # type: ignore[assignment]
    try:
        return FakeRunner(tmp / "runs", code="pass").start(RunConfig(dataset="x.jsonl", output_dir=str(tmp / "r")))
    finally:
        studio.runs.run_dir.atomic_write_text = real


def _orphan(tmp: Path) -> Any:
    run = _run_with(tmp, status=json.dumps({"state": "running", "pid": 2 ** 22 + 7}))
    JobRunner(run.path.parent)
    state = run.read_status()
    assert state["state"] == "failed" and state["reason"], state
    return state


def _double_start(tmp: Path) -> Any:
    runner = FakeRunner(tmp / "runs", code="import time; time.sleep(30)", grace_s=0.2, poll_s=0.05)
    runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp / "runs" / "one")))
    try:
        return runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp / "runs" / "two")))
    finally:
        runner.abort()
        runner.wait(10)


@pytest.mark.parametrize("name, fn, expect_error", FOLDERS, ids=[c[0] for c in FOLDERS])
def test_run_folder_faults(tmp_path: Path, name: str, fn: Callable[[Path], Any], expect_error: bool) -> None:
    outcome, detail = api(lambda: fn(tmp_path), expect_error)
    record(GROUP, "python", name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok")


def test_convert_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.data.convert as convert
    src = tmp_path / "d.csv"
    src.write_text("text,label\ngreat,positive\nawful,negative\n" * 5)
    monkeypatch.setattr(convert, "atomic_write_text", _enospc)
    outcome, detail = api(lambda: convert.convert_file(src, tmp_path / "out.jsonl"))
    record(GROUP, "python", "convert on a full disk", outcome, detail)
    expect(outcome, detail, "clear", "disk is full")


def test_eval_on_a_broken_config_json(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "llama", ')
    outcome, detail = cli("eval", "--model", str(model), "--data", str(tmp_path / "x.jsonl"))
    record(GROUP, "cli", "eval on a broken config.json", outcome, detail)
    expect(outcome, detail, "clear")


def test_train_cli_with_unwritable_output(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    data = tmp_path / "d.jsonl"
    data.write_text('{"instruction": "a", "input": "", "output": "b"}\n' * 4)
    outcome, detail = cli("train", "presets/recipes/tiny-demo-cpu.yaml", "--set", f"dataset={data}",
                          "--set", f"output_dir={blocker}/run", "--set", "max_steps=1")
    record(GROUP, "cli", "train into a path under a file", outcome, detail)
    expect(outcome, detail, "clear")
