"""The demo page on a real run: python bench/demo_real.py --workspace WS --run RUN [--starts 2] [--users 10]
[--screenshot docs/screenshots/demo_sentiment.png]

Measures, for ``python -m studio demo RUN`` with a login file (the model already prepared in WS/models):
* start-up: process start -> the "ready" line (the model is loaded by then) -> the page answers HTTP 200,
  with the child's CPU-seconds at "ready" (median of --starts fresh processes); the goal is under 20 s for a
  270M model on a CPU;
* --users concurrent users, each with its own gradio_client login (made first), each classifying one held-out row
  at the same moment (a barrier):
  wall time of the burst, every answer against the row's label, and every answer against the same text sent
  again one by one afterwards (the scores must agree: concurrency changes nothing);
* optionally a headless-Chromium screenshot of the page after classifying a review.
Prints one JSON line and a Markdown table row (docs/BENCHMARKS.md quotes them). Not a CI test: it loads a real model.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
USER = ("bench", "bench-pw")
REVIEW = "The hotel room was dirty and the staff ignored us. Never again."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (and its reaped children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def start(workspace: Path, run: str, logins: Path, log: Path) -> tuple[subprocess.Popen, str, dict[str, float]]:
    import httpx
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "*",
           "STUDIO_MODEL_CACHE": str(workspace / "models")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "studio", "demo", run, "--workspace", str(workspace),
                             "--port", str(port), "--auth-file", str(logins)], cwd=str(ROOT), env=env,
                            stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    url, times = f"http://127.0.0.1:{port}/", {}
    while "ready_s" not in times:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text()[-3000:])
        if " ready in " in log.read_text(errors="replace"):
            times["ready_s"] = time.perf_counter() - t0
            times["cpu_s_at_ready"] = cpu_seconds(proc.pid)
        time.sleep(0.05)
    while "http_s" not in times:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                times["http_s"] = time.perf_counter() - t0
        except httpx.HTTPError:
            time.sleep(0.05)
    said = next(ln for ln in log.read_text().splitlines() if " ready in " in ln)
    times["self_reported_s"] = float(said.split(" ready in ")[1].split(" s")[0])
    return proc, url, times


def burst(url: str, rows: list[dict[str, str]], users: int) -> dict[str, Any]:
    from gradio_client import Client
    texts = [rows[i % len(rows)]["input"] for i in range(users)]
    gold = [rows[i % len(rows)]["output"] for i in range(users)]

    clients = [Client(url, auth=USER, verbose=False) for _ in range(users)]  # logged in first: the burst is the work
    gate = threading.Barrier(users)

    def one(i: int) -> tuple[dict, float]:
        gate.wait()
        t = time.perf_counter()
        answer = clients[i].predict(texts[i], api_name="/classify")
        return answer, time.perf_counter() - t

    t0 = time.perf_counter()
    with ThreadPoolExecutor(users) as pool:
        results = list(pool.map(one, range(users)))
    wall = time.perf_counter() - t0
    solo = Client(url, auth=USER, verbose=False)
    again, solo_s = [], []
    for t in texts:  # one user alone: the latency a teammate sees on an idle demo
        t0 = time.perf_counter()
        again.append(solo.predict(t, api_name="/classify"))
        solo_s.append(time.perf_counter() - t0)

    def scores(a: dict) -> dict[str, float]:
        return {c["label"]: c["confidence"] for c in a["confidences"]}

    agree = all(a["label"] == b["label"] and all(abs(scores(a)[k] - scores(b)[k]) < 1e-4 for k in scores(a))
                for (a, _), b in zip(results, again))
    return {"users": users, "burst_wall_s": round(wall, 2),
            "latency_p50_s": round(statistics.median(t for _, t in results), 2),
            "latency_max_s": round(max(t for _, t in results), 2),
            "alone_p50_s": round(statistics.median(solo_s), 2),
            "correct": sum(a["label"] == g for (a, _), g in zip(results, gold)),
            "same_as_one_by_one": agree}


def screenshot(url: str, path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright
    from tests.ui.browser.test_browser import ARGS, CHROMIUM
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, locale="en-US")
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_label("username").fill(USER[0])
        page.get_by_label("password").fill(USER[1])
        page.get_by_role("button", name="Login").click()
        page.locator("#demo-text textarea").fill(REVIEW)
        page.locator("#demo-classify").click()
        expect(page.locator("#demo-scores")).to_contain_text("%")
        page.wait_for_timeout(500)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=True)
        browser.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workspace", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--starts", type=int, default=2)
    p.add_argument("--users", type=int, default=10)
    p.add_argument("--screenshot", default=None)
    a = p.parse_args()
    ws = Path(a.workspace).resolve()
    rows = [json.loads(ln) for ln in (ws / "runs" / a.run / "val.jsonl").read_text(encoding="utf-8").splitlines()]
    tmp = Path(tempfile.mkdtemp(prefix="bench-demo-"))
    logins = tmp / "logins"
    logins.write_text(f"{USER[0]}:{USER[1]}\n")
    load_before = os.getloadavg()
    starts, result = [], {}
    for i in range(a.starts):
        proc, url, times = start(ws, a.run, logins, tmp / f"demo-{i}.log")
        starts.append(times)
        try:
            if i == a.starts - 1:
                result = burst(url, rows, a.users)
                if a.screenshot:
                    screenshot(url, Path(a.screenshot))
        finally:
            proc.terminate()
            proc.wait(30)
    med = {k: round(statistics.median(s[k] for s in starts), 1) for k in starts[0]}
    out = {"bench": "demo_real", "run": a.run, "starts": a.starts, "start_median": med,
           "starts_all": [{k: round(v, 1) for k, v in s.items()} for s in starts], **result,
           "loadavg_before": [round(x, 2) for x in load_before],
           "loadavg_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
           "python": platform.python_version()}
    print(json.dumps(out))
    print(f"| {a.run} | {med['ready_s']} s (CPU {med['cpu_s_at_ready']} s) | {med['http_s']} s | "
          f"{result.get('correct')}/{a.users} correct, {result.get('burst_wall_s')} s burst, "
          f"p50 {result.get('latency_p50_s')} s; alone {result.get('alone_p50_s')} s | {'same' if result.get('same_as_one_by_one') else 'DIFFERENT'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
