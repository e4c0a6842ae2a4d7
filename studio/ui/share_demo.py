"""The Evaluate tab's "Share a demo" panel: the command that serves the picked run's demo page, and a button that
starts that page as a child process on a free port of the studio's own host (loopback included: then the page is for
this computer, as the studio is).

The child is ``python -m studio demo`` (studio/ui/demo_server.py) on the studio's own host with the studio's own logins:
its --auth-file, or its one --auth / STUDIO_AUTH login handed over in the child's environment (never on a command
line, where ``ps`` shows it). So teammates log in to the demo exactly as to the studio. The run comes from the
Evaluate tab's dropdown and is resolved on the server (``find_finished_run``: a finished run inside the runs
folder, nothing else). The child's output goes to a temp folder, not the workspace; children end with the studio.

Wiring (evaluate_tab.py, after the run dropdown exists): ``build_share_panel(T, lang, run, ctx)``.
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
from typing import Any, Iterator

import gradio as gr

from .text import Markdown

from ..errors import StudioError
from ..runs.run_dir import find_finished_run
from ..workspace import REPO_ROOT, studio_command
from ..app.addresses import urls
from .common import ui_errors
from .i18n import msg
from ..app.roles import owner_only

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


def _launch(ctx: Any) -> Any:
    """The studio's own launch flags (app.py puts them in ctx.extra); None when built without them (tests)."""
    return (getattr(ctx, "extra", None) or {}).get("launch")


def on_network(ctx: Any) -> bool:
    """Whether the studio listens beyond this machine (app.py decides it with its own is_loopback)."""
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


def command_markdown(ctx: Any, run: str | None, lang: str = "en") -> str:
    """The panel's text: the command for the picked run, on this computer and for teammates on the network."""
    if not run:
        return msg("demo.no_run", lang)
    name = Path(str(run)).name
    args = _launch(ctx)
    auth_file = getattr(args, "auth_file", None) or "logins.txt"
    return msg("demo.command", lang, local=demo_command(name, ctx.workspace),
               network=demo_command(name, ctx.workspace, host="0.0.0.0", auth_file=auth_file))


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _child(ctx: Any, run_path: str, port: int) -> tuple[list[str], dict[str, str]]:
    """The demo's command line and environment: the studio's host, language and logins."""
    args = _launch(ctx)
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


def start_demo(ctx: Any, run: str | None, lang: str = "en") -> Iterator[str]:
    """Start (or find) the picked run's demo page on a free port; yields the panel's message as it goes.

    The child listens where the studio does, so on a loopback studio the demo is for this computer too.

    Raises:
        StudioError: no finished run picked, MAX_DEMOS already running, or the child ended before it served.
    """
    if not run:
        raise StudioError(msg("demo.no_run", lang), msg("demo.no_run_fix", lang), code="demo_run")
    found = find_finished_run(ctx.runs_root, str(run))
    key, name = str(found.path), found.path.name
    with _lock:
        demos = _demos(ctx)
        demo = demos.get(key)
        if demo is None or not demo.alive():
            running = sum(d.alive() for d in demos.values())
            if running >= MAX_DEMOS:
                raise StudioError(msg("demo.too_many", lang, n=running), msg("demo.too_many_fix", lang),
                                  code="demo_busy")
            host = getattr(_launch(ctx), "host", "127.0.0.1")
            port = _free_port(host)
            cmd, env = _child(ctx, key, port)
            log = Path(tempfile.mkdtemp(prefix="studio-demo-log-")) / "demo.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=str(REPO_ROOT), env=env)
            if not demos:
                atexit.register(_stop_all, demos)
            demo = demos[key] = Demo(key, proc, urls(host, port), log)
    if not _ready(demo, lambda _s: None):
        yield msg("demo.starting", lang, run=name)
        if not _ready(demo, time.sleep, READY_S):
            why = _last_line(demo.log) or "it did not answer in time"
            demo.proc.terminate()
            raise StudioError(msg("demo.failed", lang, run=name, why=why), msg("demo.failed_fix", lang),
                              code="demo_failed")
    yield msg("demo.running" if on_network(ctx) else "demo.running_local", lang, run=name,
              urls="\n".join(f"- {u}" for u in demo.urls))


def _ready(demo: Demo, sleep: Any, wait_s: float = 0.0) -> bool:
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


def _last_line(log: Path) -> str:
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines if ln.startswith("Error:")]
    return (errors or lines or [""])[-1][:300]


def stop_demo(ctx: Any, run: str | None, lang: str = "en") -> str:
    """Stop the picked run's demo page (its child process), if this studio started one."""
    if not run:
        raise StudioError(msg("demo.no_run", lang), msg("demo.no_run_fix", lang), code="demo_run")
    found = find_finished_run(ctx.runs_root, str(run))
    with _lock:
        demo = _demos(ctx).pop(str(found.path), None)
    if demo is None or not demo.alive():
        return msg("demo.none_running", lang, run=found.path.name)
    demo.proc.terminate()
    try:
        demo.proc.wait(20)
    except subprocess.TimeoutExpired:
        demo.proc.kill()
    return msg("demo.stopped", lang, run=found.path.name)


# ------------------------------------------------------------------ layout
def build_share_panel(T: Any, lang: str, run_dropdown: Any, ctx: Any) -> dict[str, Any]:
    """The panel inside the caller's layout; its text follows ``run_dropdown``. Returns its components."""
    with gr.Accordion(T("demo.share"), open=False):
        Markdown(T("demo.share_intro"))
        command = Markdown(command_markdown(ctx, run_dropdown.value, lang), elem_id="share-demo-command")
        with gr.Row():
            start = gr.Button(T("demo.start"), variant="primary", elem_id="share-demo-start")
            stop = gr.Button(T("demo.stop"), elem_id="share-demo-stop")
        status = Markdown(elem_id="share-demo-status")

    @ui_errors
    def on_start(run: str | None) -> Iterator[str]:
        yield from start_demo(ctx, run, lang)

    @ui_errors
    def on_stop_demo(run: str | None) -> str:
        return stop_demo(ctx, run, lang)

    # the Evaluate tab's run pick: its cheap listeners are "multiple", none "always_last" (test_ui_events.py)
    run_dropdown.change(lambda r: command_markdown(ctx, r, lang), run_dropdown, command, api_visibility="private",
                        trigger_mode="multiple")
    start.click(owner_only(on_start), run_dropdown, status, api_name="start_demo")
    stop.click(owner_only(on_stop_demo), run_dropdown, status, api_name="stop_demo")
    return {"command": command, "start": start, "stop": stop, "status": status}
