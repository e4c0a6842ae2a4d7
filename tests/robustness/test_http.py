"""Group 'security' over HTTP: one real launch.py server with a login (loopback only), shared by every case.

The brute-force case runs last: it locks 127.0.0.1 out of the login, as it should.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from tests.robustness.harness import expect, record

GROUP = "security"
USER, PASSWORD = "alice", "s3cret-pw"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import os
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ui_server import Server
    os.environ["STUDIO_AUTH"] = f"{USER}:{PASSWORD}"  # not --auth: no password in the process list
    ws = tmp_path_factory.mktemp("http") / "ws"
    _finished_run(ws / "runs" / "done")  # listed in Evaluate's run choices, so export_run reaches the name check
    try:
        srv = Server(ws).wait_ready()
    finally:
        os.environ.pop("STUDIO_AUTH", None)
    outside = srv.workspace.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    srv.outside = outside
    yield srv
    srv.stop()


def _finished_run(path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    run = RunDir(path).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(path)).save(run.config)
    run.write_status("finished", ended=0)
    run.adapter.mkdir()
    (run.adapter / "adapter_config.json").write_text("{}")


def _classify(name: str, res: httpx.Response, refused: tuple[int, ...], server: Any) -> None:
    body = res.text
    if "root:x:0:0" in body or "precious" in body or (server.outside / "keep.txt").read_text() != "precious" \
            or len(list(server.outside.iterdir())) != 1:
        outcome, detail = "escaped", f"{res.status_code}: {body[:200]}"
    elif res.status_code >= 500 or "Traceback" in body:
        outcome, detail = "crash", f"{res.status_code}: {body[:200]}"
    elif res.status_code in refused:
        outcome, detail = "clear", f"{res.status_code}: {body[:120]}"
    else:
        outcome, detail = "survived", f"{res.status_code}: {body[:200]}"
    record(GROUP, "http", name, outcome, detail)
    expect(outcome, detail, "clear")


ANON = [("GET", "config"), ("GET", "gradio_api/info"), ("POST", "gradio_api/cancel"), ("POST", "gradio_api/reset"),
        ("GET", "gradio_api/file=/etc/passwd"), ("POST", "gradio_api/upload"), ("POST", "gradio_api/call/export_run"),
        ("POST", "gradio_api/queue/join"), ("GET", "gradio_api/openapi.json"),
        ("GET", "gradio_api/studio-download/forged/x.zip")]


@pytest.mark.parametrize("method, path", ANON, ids=[f"{m} {p}" for m, p in ANON])
def test_anonymous_is_refused(server: Any, method: str, path: str) -> None:
    res = httpx.request(method, server.url + path, json={"data": [], "session_hash": "x", "fn_index": 0})
    _classify(f"anonymous {method} /{path}", res, (401, 403, 422), server)


def test_anonymous_page_has_no_api_description(server: Any) -> None:
    res = httpx.get(server.url)
    ok = res.status_code == 200 and "export_run" not in res.text and '"named_endpoints": {}' in res.text
    record(GROUP, "http", "anonymous GET / (API description)", "clear" if ok else "survived",
           f"{res.status_code}, {len(res.text)} bytes")
    assert ok


def _client(server: Any) -> httpx.Client:
    c = httpx.Client(base_url=server.url)
    assert c.post("login", data={"username": USER, "password": PASSWORD}).json() == {"success": True}
    return c


FILES = ["/etc/passwd", "../../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "/proc/self/environ", "WS/runs",
         "OUT/keep.txt", "WS/../outside/keep.txt"]


@pytest.mark.parametrize("path", FILES)
def test_file_route_confined(server: Any, path: str) -> None:
    path = path.replace("WS", str(server.workspace)).replace("OUT", str(server.outside))
    res = _client(server).get(f"gradio_api/file={path}")
    _classify(f"logged in GET file={path}", res, (403, 404), server)


@pytest.mark.parametrize("path", FILES)
def test_export_download_route_takes_no_path(server: Any, path: str) -> None:
    """The export download route knows tokens the server made, never a path the browser names."""
    path = path.replace("WS", str(server.workspace)).replace("OUT", str(server.outside))
    res = _client(server).get(f"gradio_api/studio-download/{path}/x.zip")
    _classify(f"logged in GET studio-download/{path}", res, (404,), server)


def _predict(server: Any, api_name: str, *args: Any) -> httpx.Response:
    """Call an endpoint the way gradio_client does (/call then the event stream), as plain HTTP."""
    c = _client(server)
    start = c.post(f"gradio_api/call/{api_name}", json={"data": list(args)})
    if start.status_code != 200:
        return start
    events = c.get(f"gradio_api/call/{api_name}/{start.json()['event_id']}", timeout=120)
    # an 'error' event carries the StudioError text; make it look like a refusal for _classify
    status = 200
    if "event: error" in events.text:  # a StudioError says what and how to fix; anything else is a crash
        status = 400 if "Fix:" in events.text or "is not in the list of choices" in events.text else 500
    elif "event: complete" in events.text and '["\\u274c' in events.text and "Fix:" in events.text:
        status = 400  # a refusal the page shows beside its control (❌ what. Fix: how), not as a toast
    return httpx.Response(status, text=events.text)


OPEN = ["/etc/passwd", "../../etc/passwd", "OUT/keep.txt", "data/\x00x.csv", "data/a\nb.csv"]


@pytest.mark.parametrize("path", OPEN, ids=[repr(p) for p in OPEN])
def test_open_data_confined(server: Any, path: str) -> None:
    res = _predict(server, "open_data", path.replace("OUT", str(server.outside)))
    _classify(f"open_data {path!r}", res, (400,), server)


EXPORTS = ["../../somewhere/important", "OUT", "..", "a/b"]


@pytest.mark.parametrize("name", EXPORTS)
def test_export_name_confined(server: Any, name: str) -> None:
    res = _predict(server, "export_run", str(server.workspace / "runs" / "done"), True, True,
                   name.replace("OUT", str(server.outside)), "folder")
    _classify(f"export_run name {name!r}", res, (400,), server)


def test_zz_brute_force_login_is_slowed(server: Any) -> None:
    """Last on purpose: it locks this client out of the login."""
    codes = [httpx.post(server.url + "login", data={"username": USER, "password": f"guess{i}"}).status_code
             for i in range(8)]
    locked = httpx.post(server.url + "login", data={"username": USER, "password": PASSWORD})
    ok = codes[:5] == [400] * 5 and set(codes[5:]) == {429} and locked.status_code == 429
    record(GROUP, "http", "8 wrong passwords, then the right one", "clear" if ok else "survived",
           f"{codes} then {locked.status_code}")
    assert ok, (codes, locked.status_code)
