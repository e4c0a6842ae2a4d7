"""The worst value of each input class, sent by a viewer to a real server with a real (tiny) model: the server's
memory grows by less than 1 GB and another user's page keeps answering in under 2 s meanwhile.

The fuzzer (test_endpoint_fuzz.py) sends huge values to every event and reads the answers; this test watches
what answers cannot show: the server process's resident memory (sampled every 50 ms) and an owner's page
latency while the viewer's requests run. Each request must end in a clear refusal or a normal answer.
"""
from __future__ import annotations

import csv
import shutil
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from tests.robustness.harness import expect, record

pytestmark = pytest.mark.integration
GROUP = "bounded requests"
OWNER, VIEWER = ("alice", "owner-pw"), ("bob", "viewer-pw")
RSS_GROWTH_MB = 1024
PAGE_S = 2.0


@pytest.fixture(scope="module")
def server(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ui_server import Server
    base = tmp_path_factory.mktemp("huge")
    logins = base / "logins"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    ws = base / "ws"
    shutil.copytree(runs["full"], ws / "runs" / "full")
    srv = Server(ws, "--auth-file", str(logins)).wait_ready()
    yield srv
    srv.stop()


def _login(server: Any, who: tuple[str, str]) -> httpx.Client:
    c = httpx.Client(base_url=server.url, timeout=120)
    assert c.post("login", data={"username": who[0], "password": who[1]}).json() == {"success": True}
    return c


def _call(client: httpx.Client, fn_index: int, data: list, session: str | None = None) -> str:
    """One event through Gradio's queue, in the page session ``session`` (a fresh one by default: a dropdown takes
    only the choices its session was given); every line of the answer's stream until it completed."""
    session = session or uuid.uuid4().hex[:11]
    res = client.post("gradio_api/queue/join", json={"data": data, "fn_index": fn_index, "session_hash": session,
                                                     "trigger_id": None, "event_data": None})
    if res.status_code != 200:
        return f"HTTP {res.status_code}: {res.text[:300]}"
    seen = []
    with client.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            seen.append(line)
            if '"msg":"process_completed"' in line.replace(" ", ""):
                break
    return "\n".join(seen)


def _csv(path: Path, texts: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text"])
        w.writerows([t] for t in texts)
    return path


def _upload(client: httpx.Client, path: Path) -> dict:
    res = client.post("gradio_api/upload", files={"files": (path.name, path.read_bytes())})
    assert res.status_code == 200, res.text[:300]
    p = res.json()[0]
    return {"path": p, "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}


class _Watch:
    """The server's peak RSS and an owner's slowest page answer, sampled in the background."""

    def __init__(self, pid: int, owner: httpx.Client):
        import psutil
        self.proc, self.owner = psutil.Process(pid), owner
        self.base = self.peak = self._rss()
        self.slowest = 0.0
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._mem, daemon=True), threading.Thread(target=self._page,
                                                                                          daemon=True)]
        for t in self.threads:
            t.start()

    def _rss(self) -> int:
        return sum(p.memory_info().rss for p in [self.proc, *self.proc.children(recursive=True)])

    def _mem(self) -> None:
        while not self.stop.wait(0.05):
            self.peak = max(self.peak, self._rss())

    def _page(self) -> None:
        while not self.stop.wait(0.2):
            start = time.perf_counter()
            res = self.owner.get("config")
            took = time.perf_counter() - start
            assert res.status_code == 200
            self.slowest = max(self.slowest, took)

    def end(self) -> tuple[float, float]:
        self.stop.set()
        for t in self.threads:
            t.join(5)
        return (self.peak - self.base) / 2**20, self.slowest


def test_the_worst_of_each_input_as_a_viewer_keeps_memory_and_others_pages(server: Any, tmp_path: Path) -> None:
    from studio.evaluation import limits
    viewer, owner = _login(server, VIEWER), _login(server, OWNER)
    deps = {d.get("api_name"): d for d in viewer.get("config").json()["dependencies"]}
    run = str(server.workspace / "runs" / "full")
    fn = lambda name: deps[name]["id"]  # noqa: E731
    warm = _upload(viewer, _csv(tmp_path / "warm.csv", ["good film", "bad film"]))
    assert "process_completed" in _call(viewer, fn("predict_file"), [run, warm])  # the model loaded once
    long_cell = "good film " * (limits.MAX_CELL_CHARS // 10 - 10)
    worst = {
        "batch file: a 4 MB cell": ("predict_file", [run, _upload(viewer, _csv(tmp_path / "cell.csv",
                                                                              ["x" * 4_000_000]))]),
        "batch file: cells at the cell limit": ("predict_file", [run, _upload(viewer, _csv(
            tmp_path / "long.csv", [long_cell] * 20))]),
        "batch file: rows over the limit": ("predict_file", [run, _upload(viewer, _csv(
            tmp_path / "rows.csv", [f"r{i}" for i in range(limits.MAX_BATCH_ROWS + 1)]))]),
        "check file: a 4 MB cell": ("on_check", [run, "upload", _upload(viewer, _csv(tmp_path / "c2.csv",
                                                                                      ["x" * 4_000_000])),
                                                 "score", 0]),
        "prompt: 300,000 characters": ("on_generate", [run, "A" * 300_000, "", 16, 0.0, 1.0, False, False]),
        "prompt at the limit, max_new_tokens 1e12": ("on_generate", [run, "good " * 3900, "", 10**12, 0.0, 1.0,
                                                                     False, False]),
        "chat: 20,000 turns of history": ("on_chat", ["hello", [{"role": "user", "content": "good film " * 50}]
                                                      * 20_000, run, 8, 0.0, 1.0]),
        "chat: one 3 MB message": ("on_chat", ["m" * 3_000_000, [], run, 8, 0.0, 1.0]),
    }
    watch = _Watch(server.proc.pid, owner)
    answers = {}
    try:
        for name, (api, data) in worst.items():
            start = time.perf_counter()
            answers[name] = (_call(viewer, fn(api), data), time.perf_counter() - start)
    finally:
        grew_mb, slowest = watch.end()
    problems = []
    for name, (text, took) in answers.items():
        ok = "process_completed" in text and "Traceback" not in text and "inside the studio" not in text
        outcome = "clear" if ok else "crash"
        record(GROUP, "http", f"viewer: {name}", outcome, f"{took:.1f} s: {text[-160:]}")
        if not ok:
            problems.append(f"{name}: {text[-300:]}")
    outcome = "clear" if grew_mb < RSS_GROWTH_MB and slowest < PAGE_S else "crash"
    detail = f"RSS grew {grew_mb:.0f} MB (limit {RSS_GROWTH_MB}); owner's slowest page {slowest:.2f} s"
    record(GROUP, "http", "server memory and another user's page under the worst requests", outcome, detail)
    assert not problems, "\n".join(problems)
    expect(outcome, detail, "clear")
    print(detail)
