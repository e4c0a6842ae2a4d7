"""Start launch.py (or the demo verb) as a real server on a free port (used by the UI, security and browser tests)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
AUDIT_HOOK = Path(__file__).resolve().parent / "audit_hook"  # its sitecustomize.py installs the hook


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A launch.py child process; ``url`` once it serves; ``stop()`` ends it (and its runs)."""

    def command(self) -> list[str]:
        """What the child runs before ``--port`` and ``--workspace``."""
        return [str(ROOT / "launch.py")]

    def __init__(self, workspace: Path, *flags: str, port: int | None = None,
                 audit: dict[str, list[Path]] | None = None):
        """``audit``: run the server (and the training runs it starts) under the file-event audit hook
        (tests/audit_hook/sitecustomize.py) with {"allow": [...], "canary": [...]}; ``audit_events()`` reads it."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.workspace = Path(workspace)
        self.log = self.workspace.parent / f"server-{self.port}.log"
        self.workspace.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "*"}
        self.audit_dir: Path | None = None
        if audit is not None:
            self.audit_dir = self.workspace.parent / f"audit-{self.port}"
            self.audit_dir.mkdir(exist_ok=True)
            env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(AUDIT_HOOK)]), STUDIO_AUDIT_LOG=str(self.audit_dir),
                       STUDIO_AUDIT_ALLOW=os.pathsep.join(str(p) for p in audit.get("allow", [])),
                       STUDIO_AUDIT_CANARY=os.pathsep.join(str(p) for p in audit.get("canary", [])))
        self.proc = subprocess.Popen([sys.executable, *self.command(), "--port", str(self.port),
                                      "--workspace", str(self.workspace), *flags], cwd=str(ROOT), env=env,
                                     stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 120) -> "Server":
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url, timeout=2).status_code in (200, 401):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"server did not start in {timeout}s: {self.log.read_text()[-3000:]}")

    def audit_events(self) -> list[dict]:
        """Every file event the audit hook recorded so far, in the server and in every child it started."""
        import json
        events = []
        for f in sorted((self.audit_dir or Path("/nonexistent")).glob("*.jsonl")):
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue  # a line being written as we read
        return events

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class DemoServer(Server):
    """``python -m studio demo RUN`` (the verb a teammate is given) as a child process on a free port."""

    def __init__(self, workspace: Path, run: str, *flags: str, **kwargs: object):
        self.run = run
        super().__init__(workspace, *flags, **kwargs)  # type: ignore[arg-type]

    def command(self) -> list[str]:
        return ["-m", "studio", "demo", self.run]
