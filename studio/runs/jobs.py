"""Background job runner: one training job at a time, in a child process, supervised by a thread.

Why a child process: a crash, an out-of-memory kill or a DeepSpeed launch stays outside the web
server, and the memory goes back to the system when the run ends. All state the UI shows is
derived from the run folder (studio/runs/run_dir.py), so a page reload, a second browser or a restarted
server sees the same job. This module never imports gradio or torch.

Abort is graceful first: the STOP flag (the engine saves a checkpoint and exits), then SIGTERM,
then SIGKILL to the child's process group (it has its own session, so torchrun workers go too).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..config.run_config import RunConfig
from ..data.dataset import check_preference_data
from ..errors import StudioError
from ..stages import stage_of
from ..workspace import REPO_ROOT
from .processes import end_reason, is_trainer, kill_group, pid_alive, tail
from ..workspace import is_disk_full
from ..safe_files import open_append
from .reasons import NO_REASON, Reason, disk_full, reason_fields
from .run_dir import RunDir, list_runs

log = logging.getLogger("studio.jobs")
ROOT = REPO_ROOT
TERMINAL = ("finished", "aborted", "failed")
ACTIVE = ("starting", "running")


# what was being written -> the codes of (a full disk, another write error)
_WRITE_CODES = {"config": ("run.disk_full_config", "run.write_config"),  # saving the run's config
                "folder": ("run.disk_full_folder", "run.write_folder")}  # preparing the run folder


def _write_error(exc: OSError, run: RunDir, doing: str) -> StudioError:
    """``doing``: "config" or "folder" (``_WRITE_CODES``)."""
    full, other = _WRITE_CODES[doing]
    if is_disk_full(exc):
        return StudioError.of(full, run=run.path.name,
                              detail=getattr(exc, "strerror", None) or "No space left on device")
    return StudioError.of(other, path=run.path, detail=str(exc))


def _login(name: str | None) -> str | None:
    """A login name as the run folder keeps it (trimmed, at most 80 characters); None for no login."""
    name = (name or "").strip()[:80]
    return name or None


STEP_EVENTS = ("start", "progress", "checkpoint", "end")  # the events that say which step the run is at


class JobRunner:
    """Starts, follows, aborts and resumes training runs; at most one at a time per runner."""

    def __init__(self, runs_root: str | Path, *, grace_s: float = 30.0, poll_s: float = 0.5,
                 env: dict[str, str] | None = None):
        self.runs_root = Path(runs_root).resolve()
        self.runs_root.mkdir(parents=True, exist_ok=True)
        self.grace_s = grace_s
        self.poll_s = poll_s
        self.env = dict(env or {})
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._pid: int | None = None           # the child (or an adopted run's) pid = its process group
        self._run: RunDir | None = None        # the active run, None when idle
        self._last: RunDir | None = None       # the most recent run (shown after it ends)
        self._abort_at: float | None = None
        self._abort_by: str | None = None  # the login that pressed Abort (the run's end reason names it)
        self._thread: threading.Thread | None = None
        self._events: dict[Path, list[dict[str, Any]]] = {}
        # end states that could not be written (full disk): shown from memory, written when space returns
        self._pending: dict[Path, dict[str, Any]] = {}
        self._reattach()

    # ------------------------------------------------------------ public API
    @property
    def busy(self) -> bool:
        with self._lock:
            return self._run is not None

    @property
    def current(self) -> RunDir | None:
        """The running job's folder, or the last one this runner knows about."""
        with self._lock:
            return self._run or self._last

    def start(self, cfg: RunConfig, *, resume: str | None = None, by: str | None = None,
              settings: str | None = None) -> RunDir:
        """Save ``cfg`` into its run folder and train it in a child process.

        ``by`` (the login that pressed Start) is kept in status.json as ``started_by``; None (no login, the
        CLI) records nothing. ``settings``: the key of the settings a person chose (runs/queue.py), kept in
        status.json so that the same settings started again while this run trains are recognised.

        ``cfg`` is valid (a RunConfig checks itself when it is built); the child reads it back from config.yaml by
        the same construction.

        Raises:
            StudioError: a job is already running, or the folder already holds a run; ConfigError for a Draft (a
                Python caller's) that does not build.
        """
        cfg = cfg if isinstance(cfg, RunConfig) else cfg.build()
        with self._lock:
            self._refuse_if_busy()
            run = RunDir(Path(cfg.output_dir).resolve())
            if run.log.exists() and not resume:  # a fresh run must not mix its events with an old one's
                raise StudioError.of("run.exists", path=run.path)
            if not resume:  # a preference run that cannot learn is refused before its folder is made
                check_preference_data(stage_of(cfg.stage).rows, cfg.dataset, cfg.dataset_dir)
            try:
                run.ensure()
                cfg.save(run.config)
            except OSError as exc:
                raise _write_error(exc, run, "config") from None
            return self._launch(run, resume, started_by=_login(by), settings=settings)

    def resume(self, run_dir: str | Path | None = None) -> RunDir:
        """Continue a stopped run from its newest complete checkpoint (same folder, same config).

        Raises:
            StudioError: a job is running, the folder is not a run, or it has no checkpoint.
        """
        with self._lock:
            self._refuse_if_busy()
            run = RunDir(run_dir) if run_dir else self.current
            if run is None or not run.config.exists():
                raise StudioError.of("run.nothing_to_resume")
            if run.last_checkpoint() is None:
                raise StudioError.of("run.no_checkpoint", name=run.path.name)
            if run.read_status().get("state") == "finished":
                raise StudioError.of("run.finished", name=run.path.name)
            return self._launch(run, "last")

    def abort(self, by: str | None = None) -> bool:
        """Ask the running job to stop (checkpoint then exit); escalates in the background.

        ``by`` (the login that pressed Abort) is written into the STOP flag, so the run's end reason says who.
        Returns False when nothing is running.
        """
        with self._lock:
            if self._run is None:
                return False
            if self._abort_at is None:
                self._abort_at = time.time()
                self._abort_by = _login(by)
            if not self._ask_stop(self._run, by or self._abort_by):
                # no flag possible (full disk): the engine's SIGTERM handler still saves and stops
                kill_group(self._pid, signal.SIGTERM)
            return True

    def wait(self, timeout: float | None = None) -> str:
        """Block until the current job ends (tests, CLI); returns its final state."""
        deadline = None if timeout is None else time.time() + timeout
        while self.busy:
            if deadline is not None and time.time() > deadline:
                raise TimeoutError("the training job is still running")
            time.sleep(0.1)
        run = self.current
        return self.status(run).get("state", "unknown") if run else "idle"

    def status(self, run: RunDir) -> dict[str, Any]:
        """status.json, or the end state this runner could not write yet (and writes now if it can)."""
        with self._lock:
            pending = self._pending.get(run.path)
        status = run.read_status()
        if pending is None:
            return status
        if self._write_end(run, pending):
            with self._lock:
                self._pending.pop(run.path, None)
            return run.read_status()
        return {**status, **pending}

    def events(self, run: RunDir | None = None) -> list[dict[str, Any]]:
        """All events of a run, read incrementally (only new lines are parsed on each call)."""
        run = run or self.current
        if run is None:
            return []
        with self._lock:
            cache = self._events.setdefault(run.path, [])
            if not run.log.exists():
                cache.clear()
                return []
            cache.extend(run.events(len(cache)))
            return list(cache)

    def snapshot(self, run: RunDir | None = None) -> dict[str, Any]:
        """Everything the Train tab shows, as plain data (no UI types)."""
        with self._lock:
            run = run or self.current
            busy = self._run is not None and run is not None and run.path == self._run.path
            aborting = busy and self._abort_at is not None
        if run is None:
            return {"state": "idle", "busy": False, "run": None, "events": 0}
        status = self.status(run)
        try:
            events = self.events(run)
        except OSError:
            events = []
        progress = [e for e in events if e.get("type") == "progress"]
        last = progress[-1] if progress else {}
        starts = [e for e in events if e.get("type") == "start"]
        # the step is the newest event's (a resumed run's start/checkpoint/end events carry it too): not
        # the largest ever logged (a resume from an older checkpoint really goes back) and not the last
        # progress line (logged every logging_steps, so older than the checkpoint a resume starts from)
        stepped = [e["step"] for e in events if e.get("type") in STEP_EVENTS and e.get("step") is not None]
        ckpt = run.last_checkpoint()
        return {
            "run": str(run.path), "name": run.path.name, "busy": busy, "aborting": aborting,
            "state": status.get("state", "starting" if busy else "unknown"), "reason": status.get("reason", ""),
            "reason_parts": status.get("reason_parts"), "page_error": status.get("page_error"),
            "step": stepped[-1] if stepped else (status.get("step") or 0),
            "total_steps": last.get("total_steps") or (starts[-1].get("total_steps") if starts else None),
            "epoch": last.get("epoch"), "loss": last.get("loss"), "eta_s": last.get("eta_s"),
            "tokens_per_s": last.get("tokens_per_s"), "mem_gb": last.get("mem_gb"),
            "events": len(events), "notices": [e for e in events if e.get("type") == "notice"][-5:],
            "checkpoint": str(ckpt) if ckpt else None, "final_model": str(run.final_model() or "") or None,
            "final_loss": status.get("final_loss"), "eval_loss": status.get("eval_loss"),
            "started_by": status.get("started_by"), "stopped_by": status.get("stopped_by"),
            "log_tail": tail(run.stdout, 30) if run.own(run.stdout) else "",
        }

    def past_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """Runs under runs_root, newest first, with their key settings and final metrics."""
        out = []
        for run in list(list_runs(self.runs_root))[:limit]:
            status = run.read_status()
            try:
                cfg = RunConfig.load(run.config)
                settings = {"model": cfg.model_name_or_path, "method": cfg.method, "dataset": cfg.dataset,
                            "learning_rate": cfg.learning_rate}
            except StudioError as exc:
                settings = {"model": "?", "method": "?", "dataset": exc.what, "learning_rate": None}
            out.append({"name": run.path.name, "path": str(run.path), "state": status.get("state", "unknown"),
                        "step": status.get("step"), "total_steps": status.get("total_steps"),
                        "final_loss": status.get("final_loss"), "eval_loss": status.get("eval_loss"),
                        "reason": status.get("reason", ""), "reason_parts": status.get("reason_parts"),
                        "page_error": status.get("page_error"),
                        "started": status.get("started"),
                        "started_by": status.get("started_by"), "stopped_by": status.get("stopped_by"), **settings})
        return out

    # ------------------------------------------------------------ internals
    def _refuse_if_busy(self) -> None:
        if self._run is not None:
            raise StudioError.of("run.busy", name=self._run.path.name)

    def command(self, run: RunDir, resume: str | None) -> list[str]:
        """The child's command line: the engine's own door (studio/engine/__main__.py) for a config the page wrote
        whole; a person may type the same line."""
        cmd = [sys.executable, "-m", "studio.engine", str(run.config)]
        return cmd + (["--resume", resume] if resume else [])

    def _launch(self, run: RunDir, resume: str | None, started_by: str | None = None,
                settings: str | None = None) -> RunDir:
        try:
            run.stop_flag.unlink(missing_ok=True)
            # Marks this attempt: if the child dies before the engine writes its own state, we know.
            # A resume keeps the starter; whoever stopped the last attempt is not the stopper of this one.
            who: dict[str, Any] = {"started_by": started_by} if started_by else {}
            if settings:
                who["settings_key"] = settings
            if run.read_status().get("stopped_by"):
                who["stopped_by"] = None
            run.write_status("starting", **reason_fields(NO_REASON), launched=time.time(), pid=None, **who)
            out = open_append(run.stdout)  # never through a link planted in the run folder
        except OSError as exc:
            raise _write_error(exc, run, "folder") from None
        self._pending.pop(run.path, None)
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        try:
            proc = subprocess.Popen(self.command(run, resume), cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            self._write_end(run, {"state": "failed", **reason_fields(Reason.of("start_failed", detail=str(exc)))})
            raise StudioError.of("run.start_failed", detail=str(exc))
        finally:
            out.close()
        try:
            run.write_status("starting", pid=proc.pid)
        except OSError:
            log.warning("could not record the pid of %s (disk full?)", run.path.name)
        self._proc, self._pid, self._run, self._last, self._abort_at = proc, proc.pid, run, run, None
        self._abort_by = None
        self._events.pop(run.path, None)
        self._thread = threading.Thread(target=self._supervise, name=f"job-{run.path.name}", daemon=True)
        self._thread.start()
        log.info("started %s (pid %s)", run.path, proc.pid)
        return run

    def _supervise(self) -> None:
        """Wait for the child, then record its end. Never dies: whatever goes wrong here (a full disk,
        a bug), the runner is released so Start and Abort keep working."""
        with self._lock:
            run = self._run
        try:
            self._watch()
        except Exception as exc:  # noqa: BLE001 - the thread must outlive any failure
            log.exception("supervising %s failed", run.path.name if run else "?")
            if run is not None:
                lost = Reason.of("runner_lost", detail=str(exc))
                self._pending[run.path] = {"state": "failed", "ended": time.time(), **reason_fields(lost)}
                self._release(run)

    def _watch(self) -> None:
        """Wait for the child; enforce abort escalation; record a plain reason if it died silently."""
        sent_term = sent_kill = False
        while True:
            with self._lock:
                proc, pid, run, abort_at = self._proc, self._pid, self._run, self._abort_at
            if run is None:
                return
            if proc is not None:
                rc = proc.poll()
                if rc is not None:
                    break
            elif not pid_alive(pid):  # an adopted run: not our child, so no exit code
                rc = None
                break
            if abort_at is not None:
                self._ask_stop(run, self._abort_by)  # the engine clears a stale flag at start-up
                waited = time.time() - abort_at
                if waited > self.grace_s and not sent_term:
                    log.warning("%s did not stop within %.0fs: SIGTERM", run.path.name, self.grace_s)
                    kill_group(pid, signal.SIGTERM)
                    sent_term = True
                elif waited > 2 * self.grace_s and not sent_kill:
                    log.warning("%s still alive: SIGKILL", run.path.name)
                    kill_group(pid, signal.SIGKILL)
                    sent_kill = True
            time.sleep(self.poll_s)
        kill_group(pid, signal.SIGKILL)  # leftovers of the group (torchrun workers, dataloaders)
        self._finish(run, rc, abort_at is not None)

    @staticmethod
    def _ask_stop(run: RunDir, by: str | None = None) -> bool:
        try:
            run.stop_flag.touch()
            if by:
                run.stop_flag.write_text(by.strip()[:80], encoding="utf-8")
            return True
        except OSError as exc:
            log.warning("cannot write the stop flag of %s: %s", run.path.name, exc)
            return False

    @staticmethod
    def _last_step(run: RunDir, status: dict[str, Any]) -> int:
        """The step the run reached: status.json is only updated at start, the events on every log step."""
        try:
            steps = [e.get("step") or 0 for e in run.events() if e.get("type") in ("progress", "checkpoint")]
        except OSError:
            steps = []
        return max([status.get("step") or 0, *steps])

    def _write_end(self, run: RunDir, end: dict[str, Any]) -> bool:
        """Write an end state (event + status.json); False when the disk refuses."""
        try:
            if run.read_status().get("state") not in TERMINAL:
                run.append_event({"type": "end", "state": end["state"], "reason": end.get("reason", ""),
                                  "reason_parts": end.get("reason_parts") or [],
                                  "step": end.get("step", run.read_status().get("step", 0))})
            run.write_status(end["state"], **{k: v for k, v in end.items() if k != "state"})
            return True
        except OSError as exc:
            log.warning("cannot write the end state of %s: %s", run.path.name, exc)
            return False

    def _release(self, run: RunDir) -> None:
        try:
            run.stop_flag.unlink(missing_ok=True)
        except OSError:
            pass
        with self._lock:
            if self._run is not None and self._run.path == run.path:
                self._run, self._proc, self._pid, self._abort_at, self._abort_by = None, None, None, None, None

    def _finish(self, run: RunDir, rc: int | None, aborted: bool) -> None:
        status = run.read_status()
        with self._lock:
            stopped_by = self._abort_by if aborted else None
        if stopped_by:  # beside the reason's words, a field the page shows in its own language
            try:
                run.write_status(status.get("state") or "aborted", stopped_by=stopped_by)
            except OSError:
                log.warning("could not record who stopped %s (disk full?)", run.path.name)
            status = run.read_status()
        if status.get("state") not in TERMINAL:
            state, reason = end_reason(run, rc, aborted)
            end = {"state": state, **reason_fields(reason), "ended": time.time(), "exit_code": rc,
                   "step": self._last_step(run, status)}
            if not self._write_end(run, end):
                full = disk_full(OSError(28, "No space left on device"), "disk_full_ending")
                end.update(reason_fields(full.then(Reason.of("before_that"), reason)))
                self._pending[run.path] = end
        self._release(run)
        log.info("%s ended: %s", run.path.name, self.status(run).get("state"))

    def _reattach(self) -> None:
        """After a server restart: adopt a run whose training process still lives, fail the orphans."""
        for run in list_runs(self.runs_root):
            status = run.read_status()
            if status.get("state") not in ACTIVE:
                continue
            pid = status.get("pid")
            if pid_alive(pid) and self._run is None and is_trainer(pid, run):
                self._pid, self._run, self._last = int(pid), run, run
                self._thread = threading.Thread(target=self._supervise, name=f"job-{run.path.name}", daemon=True)
                self._thread.start()
                log.info("re-attached to %s (pid %s)", run.path, pid)
                continue
            ckpt = run.last_checkpoint()
            gone = Reason.of("process_gone")
            reason = gone.then(Reason.of("resume_from", ckpt=ckpt.name)) if ckpt else gone
            end = {"state": "failed", **reason_fields(reason), "ended": time.time()}
            if not self._write_end(run, end):
                self._pending[run.path] = end
            if self._last is None:
                self._last = run
