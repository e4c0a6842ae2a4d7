"""UI responsiveness while a run trains: python bench/ui_latency.py [--quick] [--requests N]

Measures, on a real ``launch.py`` server in a fresh workspace:
* cold start: process start -> the page is served (HTTP 200 on /), median of --starts launches;
* the "will it fit" endpoint (/estimate, what every settings edit calls) via gradio_client:
  N requests with the server idle (baseline), then N while a tiny-demo run trains in the job
  runner's child process; p50/p95 of each and the ratio busy/idle. Goal: p95 < 200 ms busy;
* the same endpoint over Gradio's plain HTTP call API (POST /gradio_api/call/..., then its SSE
  result), which is the browser's path without gradio_client's 50 ms polling sleeps; and a no-op
  endpoint (/abort while idle) through gradio_client, the client's own floor;
* the Train tab's 1 s poll (/poll) while training, for the same reason.
--quick is CI-sized (< 2 min on 2 cores).
"""
from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_P95_MS = 200.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(workspace: Path) -> tuple[subprocess.Popen, str, float]:
    """Start launch.py; returns (process, url, seconds until / answered 200)."""
    import httpx
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "*"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "launch.py"), "--port", str(port), "--workspace",
                             str(workspace)], cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"launch.py exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return proc, url, time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        if time.perf_counter() - t0 > 180:
            proc.kill()
            raise SystemExit("launch.py did not serve a page within 180 s")
        time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


def timed(fn: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized: fewer requests and launches")
    ap.add_argument("--requests", type=int, default=None, help="requests per arm (default 200, --quick 40)")
    ap.add_argument("--starts", type=int, default=None, help="cold starts to time (default 3, --quick 1)")
    a = ap.parse_args()
    n = a.requests or (40 if a.quick else 200)
    starts = a.starts or (1 if a.quick else 3)
    from gradio_client import Client
    from studio.config.run_config import RunConfig
    from studio.ui import forms

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}")
    tmp = Path(tempfile.mkdtemp(prefix="ui-latency-"))
    colds = []
    for i in range(starts - 1):
        proc, _, secs = launch(tmp / f"cold{i}")
        colds.append(secs)
        stop(proc)
    proc, url, secs = launch(tmp / "ws")
    colds.append(secs)
    try:
        client = Client(url, verbose=False)
        loaded = client.predict(api_name="/sample_data")
        _, dataset = client.predict("sentiment", loaded[4]["value"], loaded[5]["value"], None, None, None, None,
                                    loaded[10], "", "reviews", api_name="/convert")
        values = forms.config_to_values(RunConfig(dataset=dataset, finetuning_type="full", max_steps=100000,
                                                  logging_steps=1, save_steps=100000, cutoff_len=128,
                                                  per_device_train_batch_size=8, plot_loss=False))
        import httpx
        http = httpx.Client(base_url=url)

        def http_call(name: str, data: list) -> None:
            event = http.post(f"gradio_api/call/{name}", json={"data": data}).json()["event_id"]
            with http.stream("GET", f"gradio_api/call/{name}/{event}") as st:
                for line in st.iter_lines():
                    if line.startswith("event: error"):
                        raise SystemExit(f"/{name} failed")

        estimate = lambda: client.predict(*values, 24, api_name="/estimate")  # noqa: E731
        estimate_http = lambda: http_call("estimate", [*values, 24])  # noqa: E731
        poll = lambda: http_call("poll", [])  # noqa: E731
        timed(estimate, 3)  # warm the connection and the endpoint
        timed(estimate_http, 3)
        floor = timed(lambda: client.predict(api_name="/abort"), n // 2)
        idle = timed(estimate, n)
        idle_http = timed(estimate_http, n)
        client.predict(*values, api_name="/start")
        deadline = time.time() + 120
        while client.predict(api_name="/poll")[3].get("step", 0) < 2:  # wait until it really trains
            if time.time() > deadline:
                raise SystemExit("the run did not start training within 120 s")
            time.sleep(0.5)
        busy = timed(estimate, n)
        busy_http = timed(estimate_http, n)
        polls = timed(poll, max(10, n // 4))
        snap = client.predict(api_name="/poll")[3]
        client.predict(api_name="/abort")
    finally:
        stop(proc)

    def row(name: str, v: list[float]) -> str:
        return f"{name:<44} {len(v):>5} {statistics.median(v):>9.1f} {pct(v, 0.95):>9.1f} {max(v):>9.1f}"

    print(f"\ncold start launch.py -> page served: median {statistics.median(colds):.2f} s over {len(colds)} "
          f"start(s) ({', '.join(f'{c:.2f}' for c in colds)})")
    print(f"training while measured: step {snap.get('step')}, {snap.get('tokens_per_s')} tokens/s\n")
    print(f"{'endpoint':<44} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    print(row("no-op /abort, gradio_client (client floor)", floor))
    print(row("/estimate idle, gradio_client (baseline)", idle))
    print(row("/estimate training, gradio_client", busy))
    print(row("/estimate idle, HTTP call API", idle_http))
    print(row("/estimate training, HTTP call API", busy_http))
    print(row("/poll training, HTTP call API", polls))
    print(f"\np95 training/idle ratio: gradio_client {pct(busy, 0.95) / pct(idle, 0.95):.2f}x, "
          f"HTTP {pct(busy_http, 0.95) / pct(idle_http, 0.95):.2f}x")
    for name, v in (("gradio_client", busy), ("HTTP call API", busy_http)):
        print(f"goal p95 < {GOAL_P95_MS:.0f} ms while training ({name}): "
              f"{'met' if pct(v, 0.95) < GOAL_P95_MS else 'NOT met'} ({pct(v, 0.95):.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
