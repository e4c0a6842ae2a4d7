"""What the job runner needs to know about operating-system processes, and how it says why one ended.

Alive (a zombie is not), ours (a reused pid is not), the whole group signalled, a log's last lines, and the
plain-words reason for a training process that ended without writing its own result (killed by a signal,
the kernel's OOM killer, an exit code) with what a resume would start from.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from .reasons import Reason
from .run_dir import RunDir


def pid_alive(pid: int | None) -> bool:
    """True while the process exists and is not a zombie."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    # a zombie still answers kill(0); it is not training any more
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def tail(path: Path, lines: int = 40, max_bytes: int = 20000) -> str:
    """Last lines of a text file without reading all of it. A line redrawn with carriage returns (a progress
    bar) counts once, as a terminal shows it: its last state, so bars never push the real lines out."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    shown = [ln.rstrip("\r").rsplit("\r", 1)[-1] for ln in data.split("\n")]
    if shown and not shown[-1]:
        shown.pop()  # the file's final newline
    return "\n".join(shown[-lines:])


def kill_group(pid: int | None, sig: signal.Signals) -> None:
    """Signal the child's whole process group (torchrun workers and dataloaders go too)."""
    if not pid:
        return
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def is_trainer(pid: Any, run: RunDir) -> bool:
    """Guard against pid reuse: the live process must be our trainer for this run."""
    try:
        cmdline = Path(f"/proc/{int(pid)}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc (macOS): trust the pid
    studio = any(arg == b"studio" or arg.startswith(b"studio.") for arg in cmdline)  # -m studio train / studio.engine
    return studio and str(run.config).encode() in cmdline


def end_reason(run: RunDir, rc: int | None, aborted: bool) -> tuple[str, Reason]:
    """(state, reason) for a run whose process ended before the engine wrote a terminal state: how it ended, then
    what a resume would start from."""
    ckpt = run.last_checkpoint()
    keep = Reason.of("checkpoint_kept", ckpt=ckpt.name) if ckpt else Reason.of("no_checkpoint")
    if aborted:
        who = run.stopped_by()
        asked = Reason.of("stopped_early_by", who=who) if who else Reason.of("stopped_early")
        return "aborted", asked.then(keep)
    if rc is None:
        return "failed", Reason.of("no_result").then(keep)
    if rc < 0:
        hint = [Reason.of("oom_killer")] if -rc == signal.SIGKILL else []
        return "failed", _killed(-rc).then(*hint, keep)
    last = [ln for ln in (tail(run.stdout, 15) if run.own(run.stdout) else "").splitlines() if ln.strip()]
    exited = (Reason.of("exited_with_line", rc=rc, line=last[-1][:300], log=run.stdout.name) if last
              else Reason.of("exited", rc=rc, log=run.stdout.name))
    return "failed", exited.then(keep)


def _killed(num: int) -> Reason:
    """Killed by signal ``num``, named where the system names it."""
    name = signal_name(num)
    return Reason.of("killed", signal=name, n=num) if name != f"signal {num}" else Reason.of("killed_unnamed", n=num)
