"""The demo pages the studio started for teammates: one child process per finished run, on a free port of the
studio's own host, with the studio's own logins.

The child is ``python -m studio demo`` (studio/ui/demo.py) on the studio's own host (loopback included: then
the page is for this computer, as the studio is) with the studio's logins: its --auth-file, or its one --auth /
STUDIO_AUTH login handed over in the child's environment (never on a command line, where ``ps`` shows it). The
caller resolves the run on the server first (``find_finished_run``). The child's output goes to a temp folder, not
the workspace; children end with the studio. The Evaluate tab's panel (studio/ui/share_demo.py) puts words on it.
"""
from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..workspace import REPO_ROOT, studio_command
from .addresses import urls

MAX_DEMOS = 2      # each demo holds its own copy of a model in memory
READY_S = 300.0    # a first load of a 270M model on a busy CPU takes a while
_lock = threading.Lock()


@dataclass
class Demo:
    run: str
    proc: subprocess.Popen
    urls: list[str]
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None


class TooManyDemos(Exception):
    """MAX_DEMOS demo pages already run; ``running`` says how many."""

    def __init__(self, running: int):
        super().__init__(running)
        self.running = running


def launch_flags(ctx: Any) -> Any:
    """The studio's own launch flags (ui/app.py puts them in ctx.extra); None when built without them (tests)."""
    return (getattr(ctx, "extra", None) or {}).get("launch")


def on_network(ctx: Any) -> bool:
    """Whether the studio listens beyond this machine (ui/app.py decides it with server_flags.is_loopback)."""
    return bool((getattr(ctx, "extra", None) or {}).get("network"))


def demo_command(run: str, workspace: str | Path, host: str | None = None, auth_file: str | None = None) -> str:
    """The shell line that serves ``run``'s demo page (quoted for a POSIX shell), runnable from any folder:
    it enters the studio's folder (``-m studio`` imports from there) and uses the studio's own interpreter."""
    cmd = ["-m", "studio", "demo", run, "--workspace", str(workspace)]
    if host:
        cmd += ["--host", host]
    if auth_file:
        cmd += ["--auth-file", auth_file]
    return studio_command(cmd)


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def child_command(ctx: Any, run_path: str, port: int) -> tuple[list[str], dict[str, str]]:
    """The demo's command line and environment: the studio's host, language and logins."""
    args = launch_flags(ctx)
    host = getattr(args, "host", "127.0.0.1")
    cmd = [sys.executable, "-m", "studio", "demo", run_path, "--workspace", str(ctx.workspace), "--host", host,
           "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT)] + [p for p in [os.environ.get(
        "PYTHONPATH")] if p])}
    env.pop("STUDIO_AUTH", None)
    if getattr(args, "lang", None):
        cmd += ["--lang", args.lang]
    if getattr(args, "auth_file", None):
        cmd += ["--auth-file", str(Path(args.auth_file).resolve())]
    elif getattr(args, "auth", None) or os.environ.get("STUDIO_AUTH"):
        env["STUDIO_AUTH"] = getattr(args, "auth", None) or os.environ["STUDIO_AUTH"]  # not in the process list
    elif getattr(args, "no_auth", False):
        cmd.append("--no-auth")  # the studio itself was opened to the network without a login, on purpose
    for proxy in getattr(args, "trusted_proxy", None) or []:
        cmd += ["--trusted-proxy", proxy]
    return cmd, env


def _demos(ctx: Any) -> dict[str, Demo]:
    return ctx.extra.setdefault("demos", {})


def _stop_all(demos: dict[str, Demo]) -> None:
    for demo in list(demos.values()):
        if demo.alive():
            demo.proc.terminate()


def start(ctx: Any, run_path: str) -> Demo:
    """The demo of ``run_path`` (a finished run the caller resolved), started now unless it already runs.

    Raises:
        TooManyDemos: MAX_DEMOS other demos already run.
    """
    with _lock:
        demos = _demos(ctx)
        demo = demos.get(run_path)
        if demo is None or not demo.alive():
            running = sum(d.alive() for d in demos.values())
            if running >= MAX_DEMOS:
                raise TooManyDemos(running)
            host = getattr(launch_flags(ctx), "host", "127.0.0.1")
            port = _free_port(host)
            cmd, env = child_command(ctx, run_path, port)
            log = Path(tempfile.mkdtemp(prefix="studio-demo-log-")) / "demo.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=str(REPO_ROOT), env=env)
            if not demos:
                atexit.register(_stop_all, demos)
            demo = demos[run_path] = Demo(run_path, proc, urls(host, port), log)
    return demo


def ready(demo: Demo, sleep: Callable[[float], Any], wait_s: float = 0.0) -> bool:
    """True once the child printed its addresses; False when it ended or ``wait_s`` passed."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            text = demo.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if " ready in " in text:
            return demo.alive()
        if not demo.alive() or time.monotonic() >= deadline:
            return False
        sleep(0.5)


def last_line(log: Path) -> str:
    """Why a child ended: its last ``Error:`` line, else its last line."""
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines if ln.startswith("Error:")]
    return (errors or lines or [""])[-1][:300]


def stop(ctx: Any, run_path: str) -> bool:
    """Stop the demo of ``run_path`` if this studio started one; False when none was running."""
    with _lock:
        demo = _demos(ctx).pop(run_path, None)
    if demo is None or not demo.alive():
        return False
    demo.proc.terminate()
    try:
        demo.proc.wait(20)
    except subprocess.TimeoutExpired:
        demo.proc.kill()
    return True
