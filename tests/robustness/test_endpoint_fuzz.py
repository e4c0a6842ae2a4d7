"""Every event of the running app, fuzzed over HTTP: the browser names nothing on the server.

One real ``launch.py`` server with a login file (an owner and a viewer). The test reads the app's own
``/config`` and, for **every** dependency (public and private, by ``fn_index``), posts hostile values
through ``gradio_api/queue/join`` as an anonymous client, as a second user (a viewer), and as a second
session of the owner: paths outside the workspace, another session's upload, Markdown that embeds a
path in backticks, a huge string, wrong types, empty values. A handler added tomorrow is fuzzed the day
it is wired, because the list of events comes from the app, not from this file.

It asserts: no canary (a secret file outside the workspace, another session's upload) appears in any
answer or in any file an answer points to (zips opened); nothing outside the workspace is written;
no traceback or "internal error" text; the server still answers; a viewer is refused every owner action.

The server and every training run it starts run under a Python audit hook (tests/audit_hook/sitecustomize.py):
every open, listdir/scandir, copy, rmtree, remove, rename and mkdir outside the allowed folders is recorded, and
any event that touches the planted canary folder fails the test whatever the answer said (a model or checkpoint
read from outside never shows in an answer). Every path field of the Settings form (RunConfig's ``root``
metadata) is also sent, one at a time, inside an otherwise valid form to every event that reads the form.

A body over the guard's size limit (a huge value in every input of a wide event) is refused before the event it names
is read: each client sends its first such body, which must be refused with 413, and skips the repeats.
"""
from __future__ import annotations

import io
import json
import sys
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from studio.web.guard import MAX_EVENT_BODY
from tests.robustness.harness import record, tree_hash as _tree_hash

pytestmark = pytest.mark.integration
GROUP = "security"
OWNER, VIEWER = ("alice", "owner-pw"), ("bob", "viewer-pw")
OWNER_ACTIONS = {"start", "abort", "resume", "clear_queue", "export_run", "upload_gguf", "convert", "rename_run",
                 "start_demo", "stop_demo", "deploy_report", "download_model",
                 "delete_runs", "improve", "review_accept", "review_accept_new", "review_drop", "review_edit",
                 "feedback_make_dataset", "feedback_export_csv", "feedback_export_jsonl"}
CANARY = f"CANARY-{uuid.uuid4().hex}"
SECRET_ROW = f"SECRET-ROW-{uuid.uuid4().hex}"
TIMEOUT_S = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ui_server import Server
    from tests.robustness.test_http import _finished_run
    base = tmp_path_factory.mktemp("fuzz")
    outside = base / "outside"
    (outside / "secret-folder").mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY)
    (outside / "secret-folder" / "canary.txt").write_text(CANARY)
    (outside / "checkpoint-9").mkdir()  # the report's attack: a checkpoint (or a model) read from outside
    (outside / "checkpoint-9" / "trainer_state.json").write_text('{"global_step": 9, "log_history": []}')
    (outside / "checkpoint-9" / "config.json").write_text('{"model_type": "llama"}')
    (outside / "ds.json").write_text('{"train_batch_size": 1}')
    logins = base / "logins"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    ws = base / "ws"
    _finished_run(ws / "runs" / "done")
    _finished_full_run(ws / "runs" / "full")
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "fuzz.jsonl").write_text("".join(
        f'{{"instruction": "Is it good? {i}", "input": "", "output": "{"yes" if i % 2 else "no"}"}}\n'
        for i in range(16)))
    srv = Server(ws, "--auth-file", str(logins), audit={"allow": _allowed(ws), "canary": [outside]}).wait_ready()
    srv.outside = outside
    srv.outside_hash = _tree_hash(outside)
    yield srv
    srv.stop()


def _allowed(ws: Path) -> list[Path]:
    """Where the server may touch files without the audit recording it: its workspace, the model cache, temp,
    the interpreter and its packages, the repository's own code and presets, and the system's read-only places."""
    import sysconfig
    import tempfile
    from studio.workspace import cache_dir
    root = Path(__file__).resolve().parents[2]
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return [ws, cache_dir(), Path(tempfile.gettempdir()), Path(sys.prefix), Path(sys.base_prefix),
            Path(sys.exec_prefix), *map(Path, paths), root / "studio", root / "presets", root / "launch.py",
            root / "tests", Path.home() / ".cache", Path("/proc"), Path("/sys"), Path("/dev"), Path("/etc"),
            Path("/usr"), Path("/lib"), Path("/lib64"), Path("/bin"), Path("/run")]



def _canary_events(server: Any, seen: int = 0) -> list[dict]:
    """File events the audit hook saw touching the canary folder (from the ``seen``-th recorded event on)."""
    return [e for e in server.audit_events()[seen:] if e.get("canary")]


def _finished_full_run(path: Path) -> None:
    """A finished full-model run (its export is a plain copy of its model folder)."""
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    run = RunDir(path).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(path), finetuning_type="full").save(run.config)
    run.write_status("finished", ended=1)
    run.model.mkdir()
    (run.model / "config.json").write_text('{"model_type": "llama"}')
    (run.model / "model.safetensors").write_bytes(b"weights")


def _login(server: Any, who: tuple[str, str]) -> httpx.Client:
    c = httpx.Client(base_url=server.url, timeout=TIMEOUT_S)
    assert c.post("login", data={"username": who[0], "password": who[1]}).json() == {"success": True}
    return c


def _file(path: str) -> dict:
    return {"path": path, "orig_name": Path(path).name, "meta": {"_type": "gradio.FileData"}}


def _huge_file(client: httpx.Client, tmp: Path) -> dict:
    """The caller's own upload of the worst spreadsheet a viewer may send: one 4 MB cell (the server
    once tried to allocate 17.6 TB for it) beside a cell just under the cell limit."""
    from studio.data.limits import MAX_CELL_CHARS
    path = tmp / f"huge-{uuid.uuid4().hex[:6]}.csv"
    path.write_text("text,label\n" + "x" * 4_000_000 + ",positive\n" + "y" * (MAX_CELL_CHARS - 10) + ",negative\n",
                    encoding="utf-8")
    res = client.post("gradio_api/upload", files={"files": (path.name, path.read_bytes())})
    assert res.status_code == 200, res.text[:300]
    return _file(res.json()[0])


def _huge(huge_file: dict | None) -> dict[str, Any]:
    """The "huge" class: the largest value of each kind an input can be sent (text, number, list, file)."""
    kinds: dict[str, Any] = {
        "huge text (2 MB)": "A" * 2_000_000,
        "huge number": 10**18,
        "huge list (2,000 chat turns)": [{"role": "user", "content": "x" * 500}] * 2_000,
    }
    if huge_file is not None:
        kinds["huge file (a 4 MB cell)"] = huge_file
    return kinds


def _hostile(outside: Path, foreign: str) -> dict[str, Any]:
    """One value per kind; every input of an event gets the same one (so every field meets every kind)."""
    return {
        "outside path": str(outside / "canary.txt"),
        "outside folder": str(outside / "secret-folder"),
        "outside checkpoint": str(outside / "checkpoint-9"),
        "path in backticks": f"Exported **merged** model to `{outside / 'secret-folder'}` (1 MB).",
        "root": "/",
        "another session's upload": foreign,
        "outside file object": _file(str(outside / "canary.txt")),
        "another session's file object": _file(foreign),
        "huge string": "A" * 300_000,
        "wrong type": {"nested": [1, {"path": str(outside / "canary.txt")}]},
        "empty": None,
    }


def _json_bytes(value: Any) -> int:
    """The bytes ``value`` takes in a request body as httpx writes it (compact JSON, UTF-8)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _call(client: httpx.Client, fn_index: int, data: list, trigger: int | None,
          session: str | None = None) -> tuple[int, str]:
    """queue/join, then read the page session's stream to the end of the event: (status, everything answered).
    ``session`` None: a fresh page session for this one call."""
    session = session or uuid.uuid4().hex[:11]
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "trigger_id": trigger, "event_data": None}
    res = client.post("gradio_api/queue/join", json=body)
    if res.status_code != 200:
        return res.status_code, res.text
    seen = [res.text]
    with client.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            seen.append(line)
            if '"msg":"process_completed"' in line.replace(" ", "") or "close_stream" in line:
                break
    return 200, "\n".join(seen)


def _pointed_files(text: str) -> Iterator[Path]:
    """Local files an answer names (FileData paths, file= URLs): the test runs on the server's machine."""
    for token in set(text.replace('"', " ").replace("file=", " ").split()):
        token = token.strip(",}]\\")
        if token.startswith("/") and len(token) < 4096:
            p = Path(token)
            try:
                if p.is_file():
                    yield p
            except OSError:
                continue


def _leaks(text: str, outside: Path, originals: set[Path]) -> str | None:
    """A canary's content in the answer, or in a file the answer names (a copy, a zip); naming a path is no leak."""
    for secret in (CANARY, SECRET_ROW):
        if secret in text:
            return f"answer holds {secret[:12]}"
    for p in _pointed_files(text):
        if outside.resolve() in p.resolve().parents or p.resolve() in originals:
            continue  # a canary itself, named back in a refusal
        data = p.read_bytes()[: 50 * 2**20]
        if CANARY.encode() in data or SECRET_ROW.encode() in data:
            return f"{p} holds a canary"
        if zipfile.is_zipfile(io.BytesIO(data)):
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if any(CANARY.encode() in zf.read(n) for n in zf.namelist() if not n.endswith("/")):
                    return f"zip {p} holds the canary"
    return None


def _outside_unchanged(server: Any) -> bool:
    return _tree_hash(server.outside) == server.outside_hash


def test_every_event_is_fuzzed_as_anonymous_viewer_and_owner(server: Any) -> None:
    owner_a = _login(server, OWNER)
    up = owner_a.post("gradio_api/upload", files={"files": ("mine.csv", f"text,label\n{SECRET_ROW},positive\n".encode())})
    assert up.status_code == 200, up.text
    foreign = up.json()[0]
    originals = {Path(foreign).resolve()}
    config = owner_a.get("config").json()
    deps = config["dependencies"]
    assert len(deps) > 40, "the app's events come from its own /config"
    names = {d.get("api_name") for d in deps}
    assert OWNER_ACTIONS <= names, OWNER_ACTIONS - names
    clients = {"anonymous": httpx.Client(base_url=server.url, timeout=TIMEOUT_S),
               "viewer": _login(server, VIEWER), "owner, second session": _login(server, OWNER)}
    # one page session per client, as a browser tab keeps one: every call of a client also meets the state its
    # earlier hostile calls left (a fresh session per call also cost Gradio a copy of every component's config)
    page = {who: uuid.uuid4().hex[:11] for who in clients}
    problems: list[str] = []
    checked: list[str] = []
    took: list[tuple[float, str]] = []
    oversized: list[str] = []  # calls not sent: the one size check before any event is read refused their like
    for who, client in clients.items():
        kinds = _hostile(server.outside, foreign)
        if who == "anonymous":  # every call is refused before Gradio: one value per event is enough
            kinds = {"outside path": kinds["outside path"]}
        else:
            kinds.update(_huge(_huge_file(client, server.outside.parent)))
        size = {kind: _json_bytes(value) for kind, value in kinds.items()}
        refused_size = False  # this client's first body over MAX_EVENT_BODY was sent and refused with 413
        for dep in deps:
            fn, trigger = dep["id"], (dep.get("targets") or [[None]])[0][0]
            refused_first = who == "viewer" and dep.get("api_name") in OWNER_ACTIONS
            # a viewer's owner action is refused at queue/join, before any value is read: one value shows it; an
            # event without inputs gets the same empty call whatever the value: once is all of it
            one = refused_first or not dep.get("inputs")
            for kind, value in ({"outside path": kinds["outside path"]} if one else kinds).items():
                name = f"{who}: event {fn} ({dep.get('api_name') or 'private'}) <- {kind}"
                # every input gets the value: a wide event's body can pass the guard's size limit, which it checks
                # before it reads which event the body names; the client's first such call shows the refusal (it
                # must be a 413), the others would only repeat it, at ~2 s each (a 100+ MB body built and sent)
                too_big = len(dep.get("inputs", [])) * size[kind] > MAX_EVENT_BODY
                if too_big and refused_size:
                    oversized.append(name)
                    continue
                seen = len(server.audit_events())
                t0 = time.monotonic()
                try:
                    status, text = _call(client, fn, [value] * len(dep.get("inputs", [])), trigger, page[who])
                except httpx.HTTPError as exc:
                    status, text = 599, f"no answer: {exc!r}"
                took.append((time.monotonic() - t0, name))
                leak = _leaks(text, server.outside, originals)
                touched = _canary_events(server, seen)
                if touched:  # the server (or a run it started) opened, listed or changed the canary folder
                    leak = "file events on the canary: " + "; ".join(f"{e['event']} {e['path']}" for e in touched[:3])
                if leak or not _outside_unchanged(server):
                    outcome, detail = "escaped", leak or "a file outside the workspace changed"
                elif status >= 500 or "Traceback (most recent call last)" in text or "internal error" in text.lower():
                    outcome, detail = "crash", f"{status}: {text[:200]}"
                elif who == "anonymous" and status != 401:
                    outcome, detail = "escaped", f"anonymous call answered {status}: {text[:200]}"
                elif who == "viewer" and dep.get("api_name") in OWNER_ACTIONS and status != 403:
                    outcome, detail = "escaped", f"viewer ran an owner action: {status} {text[:200]}"
                elif too_big and status != 413:
                    outcome, detail = "survived", f"a body over {MAX_EVENT_BODY >> 20} MB was not refused: {status}"
                else:
                    outcome, detail = "clear", f"{status}"
                if kind == "outside path" or outcome != "clear":  # one row per event and client in the table
                    record(GROUP, "fuzz", name, outcome, detail)
                if outcome != "clear":
                    problems.append(f"{outcome}: {name}: {detail}")
                refused_size = refused_size or (too_big and status == 413)
            checked.append(f"{who}: {fn} {dep.get('api_name') or 'private'}")
            assert owner_a.get("config").status_code == 200, f"the server stopped answering after {who}'s calls"
    owner_a.post("gradio_api/queue/join", json={"data": [], "fn_index": _fn(deps, "abort"),
                                                "session_hash": "cleanup", "trigger_id": None})
    late = _canary_events(server)  # a child process may reach the canary after its event answered
    problems += [f"escaped: file event on the canary after the calls: {e['event']} {e['path']}" for e in late[:10]]
    outside = sorted({f"{e['event']} {e['path']}" for e in server.audit_events()})
    print(f"\naudit-hook fuzz: {len(checked)} event x client pairs checked:\n  " + "\n  ".join(checked)
          + f"\nfile events outside the allowed folders ({len(outside)}, none on the canary):\n  "
          + "\n  ".join(outside[:40]))
    took.sort(reverse=True)
    by_kind: dict[str, float] = {}
    for t, n in took:
        by_kind[n.rsplit(" <- ", 1)[1]] = by_kind.get(n.rsplit(" <- ", 1)[1], 0.0) + t
    print(f"calls: {len(took)}, {sum(t for t, _ in took):.0f} s in all ("
          + ", ".join(f"{k} {t:.0f} s" for k, t in sorted(by_kind.items(), key=lambda x: -x[1]))
          + f"); not sent, over the size limit like a call refused before: {len(oversized)}; slowest:\n  "
          + "\n  ".join(f"{t:.1f} s {n}" for t, n in took[:25]))
    assert problems == [], "\n".join(problems[:40])


def _fn(deps: list[dict], api_name: str) -> int:
    return next(d["id"] for d in deps if d.get("api_name") == api_name)


def test_a_viewer_is_refused_owner_actions_and_may_use_results(server: Any) -> None:
    viewer, owner = _login(server, VIEWER), _login(server, OWNER)
    deps = viewer.get("config").json()["dependencies"]
    for action in sorted(OWNER_ACTIONS):
        res = viewer.post("gradio_api/queue/join", json={"data": [None] * len(next(
            d for d in deps if d["id"] == _fn(deps, action))["inputs"]), "fn_index": _fn(deps, action),
            "session_hash": "v" + action, "trigger_id": None})
        assert res.status_code == 403 and "viewer" in res.json()["detail"], (action, res.text)
        res = viewer.post(f"gradio_api/call/{action}", json={"data": []})
        assert res.status_code == 403, (action, res.text)
    status, text = _call(viewer, _fn(deps, "poll"), [None], None)  # looking at the run is a viewer's right
    assert status == 200 and "process_completed" in text and '"success":true' in text.replace(" ", ""), text[-400:]
    status, _ = _call(owner, _fn(deps, "clear_queue"), [], None)  # the owner may
    assert status == 200


def _id_forms(deps: list[dict], dep: dict) -> list[tuple[str, str, dict]]:
    """(label, route, body) for every way Gradio accepts to name ``dep``: its fn_index as an integer, a string, a
    float, with spaces, as True where it is 1 (Gradio's request model is lax), on queue/join and on the direct
    routes of a harmless event's name (a route's name loses to the body's fn_index there), and its own name on
    every named route (run, api, call, call/v2)."""
    index, name = dep["id"], dep.get("api_name")
    harmless = next(d.get("api_name") for d in deps if d.get("api_name") == "poll")
    data = [None] * len(dep.get("inputs", []))
    forms: list[tuple[str, str, dict]] = []
    values: list[Any] = [index, str(index), float(index), f" {index} ", f"{index}.0"] + ([True] if index == 1 else [])
    for v in values:
        forms.append((f"queue/join fn_index={v!r}", "gradio_api/queue/join",
                      {"data": data, "fn_index": v, "session_hash": uuid.uuid4().hex[:11], "trigger_id": None}))
        for route in ("run", "api"):
            forms.append((f"{route}/{harmless} fn_index={v!r}", f"gradio_api/{route}/{harmless}",
                          {"data": data, "fn_index": v}))
    if name:
        for route in ("run", "api", "call"):
            forms.append((f"{route}/{name}", f"gradio_api/{route}/{name}", {"data": data}))
        forms.append((f"call/v2/{name}", f"gradio_api/call/v2/{name}", {}))
    return forms


def test_a_viewer_is_refused_owner_actions_in_every_id_form(server: Any) -> None:
    """Every owner action of the page, as a viewer and as an anonymous caller, with its event id in every form
    Gradio accepts: each is refused before it runs, and no file of the workspace changes. (The action's own check,
    which holds even where this gate would not, is tests/robustness/test_roles_every_event.py.)"""
    viewer, anonymous = _login(server, VIEWER), httpx.Client(base_url=server.url, timeout=TIMEOUT_S)
    deps = viewer.get("config").json()["dependencies"]
    before = _tree_hash(server.workspace / "runs")
    problems, tried = [], []
    for dep in deps:
        if dep.get("api_name") not in OWNER_ACTIONS:
            continue
        for label, route, body in _id_forms(deps, dep):
            for who, client, refused in (("viewer", viewer, 403), ("anonymous", anonymous, 401)):
                res = client.post(route, json=body)
                tried.append(f"{who}: {dep.get('api_name')} by {label}: {res.status_code}")
                if res.status_code != refused:
                    problems.append(f"{who}: {dep.get('api_name')} by {label}: {res.status_code} {res.text[:160]}")
    after = _tree_hash(server.workspace / "runs")
    print(f"\n{len(tried)} calls of owner actions by a viewer and an anonymous caller:\n  " + "\n  ".join(tried))
    assert problems == [] and after == before, "\n".join(problems[:40]) or "a run folder changed"


def test_uploads_are_owned_end_to_end(server: Any) -> None:
    """The old file route, passing another session's upload to a handler, re-uploading the same bytes."""
    a, b = _login(server, OWNER), _login(server, OWNER)
    content = f"text,label\n{SECRET_ROW} again,positive\n".encode()
    path = a.post("gradio_api/upload", files={"files": ("a.csv", content)}).json()[0]
    for route in ("gradio_api/file=", "gradio_api/file/"):
        assert a.get(route + path).status_code == 200
        res = b.get(route + path)
        assert res.status_code == 404 and SECRET_ROW.encode() not in res.content, route
    deps = b.get("config").json()["dependencies"]
    status, text = _call(b, _fn(deps, "upload_data"), [_file(path)], None)
    assert status == 404 and SECRET_ROW not in text
    assert b.post("gradio_api/upload", files={"files": ("a.csv", content)}).json()[0] == path  # same bytes and name: one path
    assert b.get("gradio_api/file=" + path).status_code == 200
    assert a.get("gradio_api/file=" + path).status_code == 200  # the first owner keeps it


@pytest.mark.parametrize("path", ["gradio_api/runs", "gradio_api/runs/", "gradio_api/info", "gradio_api/openapi.json",
                                  "gradio_api/file/etc/passwd", "gradio_api/heartbeat/x", "gradio_api/upload_progress",
                                  "gradio_api/deep_link", "config", "gradio_api/studio-download/forged/x.zip"])
def test_anonymous_gets_nothing_under_gradio_api(server: Any, path: str) -> None:
    """The page config (API description, workspace paths) only after a login."""
    res = httpx.get(server.url + path, timeout=TIMEOUT_S)
    outcome = "clear" if res.status_code == 401 and str(server.workspace) not in res.text else "escaped"
    record(GROUP, "http", f"anonymous GET /{path}", outcome, f"{res.status_code}: {res.text[:120]}")
    assert outcome == "clear", res.text[:300]


def _call_in(client: httpx.Client, fn_index: int, data: list, session: str) -> str:
    """queue/join in one page session (its gr.State kept between calls): everything the event answered."""
    res = client.post("gradio_api/queue/join", json={"data": data, "fn_index": fn_index, "session_hash": session,
                                                     "trigger_id": None, "event_data": None})
    assert res.status_code == 200, res.text
    seen = []
    with client.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            seen.append(line)
            if '"msg":"process_completed"' in line.replace(" ", ""):
                break
    return "\n".join(seen)


def test_an_export_download_link_serves_only_the_session_that_exported(server: Any) -> None:
    """The link names a server-side token of the exporting login session; nobody else gets the file."""
    import re
    owner = _login(server, OWNER)
    config = owner.get("config").json()
    deps = config["dependencies"]
    html_id = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "export-download")
    links_fn = next(d["id"] for d in deps if d.get("outputs") == [html_id])
    export = next(d for d in deps if d.get("api_name") == "export_run")
    run_box = next(c for c in config["components"] if c["id"] == export["inputs"][0])
    run = next(v for _, v in run_box["props"]["choices"] if v.endswith("full"))
    session = uuid.uuid4().hex[:11]
    text = _call_in(owner, export["id"], [run, False, True, "dl-check", "folder"], session)
    assert '"success":true' in text.replace(" ", ""), text[-600:]
    text = _call_in(owner, links_fn, [None], session)  # the folder comes from the session's state, not from here
    hrefs = re.findall(r'href=\\"([^"\\]+)\\"', text)
    assert hrefs and all(h.startswith("gradio_api/studio-download/") for h in hrefs), text[-600:]
    assert str(server.workspace) not in text.split("href", 1)[1]
    href = hrefs[0]
    res = owner.get(href)
    assert res.status_code == 200 and zipfile.ZipFile(io.BytesIO(res.content)).namelist(), res.text[:200]
    others = {"anonymous": httpx.Client(base_url=server.url, timeout=TIMEOUT_S), "viewer": _login(server, VIEWER),
              "owner, second session": _login(server, OWNER)}
    for who, client in others.items():
        res = client.get(href)
        outcome = "clear" if res.status_code in (401, 404) and not res.content.startswith(b"PK") else "escaped"
        record(GROUP, "http", f"{who} GET an export link", outcome, f"{res.status_code}")
        assert outcome == "clear", (who, res.status_code)
    forged = href.rsplit("/", 2)[0] + "/" + "A" * 32 + "/" + href.rsplit("/", 1)[1]
    assert owner.get(forged).status_code == 404
    record(GROUP, "http", "owner GET a forged export link", "clear", "404")


def _form_events(config: dict) -> tuple[list[dict], dict[int, str]]:
    """The events that read the Settings form (inputs named field-<RunConfig field>) and component id -> field."""
    fields = {c["id"]: c["props"]["elem_id"][len("field-"):] for c in config["components"]
              if str(c.get("props", {}).get("elem_id") or "").startswith("field-")}
    deps = [d for d in config["dependencies"] if sum(i in fields for i in d.get("inputs", [])) >= 10]
    return deps, fields


def test_every_path_field_of_every_form_event_under_the_audit_hook(server: Any) -> None:
    """Each path field of RunConfig (its ``root`` metadata), pointed at the canary, inside an otherwise valid form
    (a real dataset, the defaults), sent to every event that reads the form: nothing may touch the canary, also
    in a training run such an event starts; waits for such a run so its child's file events are seen."""
    from studio.config.run_config import field_meta
    owner = _login(server, OWNER)
    config = owner.get("config").json()
    deps, fields = _form_events(config)
    assert any(d.get("api_name") == "start" for d in deps), [d.get("api_name") for d in deps]
    values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
    valid = {"dataset": str(server.workspace / "data" / "fuzz.jsonl"), "max_steps": 2, "val_size": 0.0}
    out = server.outside
    hostile = {"resume_from_checkpoint": str(out / "checkpoint-9"), "offload_nvme_path": str(out / "secret-folder"),
               "deepspeed": str(out / "ds.json"), "dataset": str(out / "canary.txt"),
               "model_name_or_path": str(out / "checkpoint-9")}
    rooted = [m["name"] for m in field_meta() if m["root"]]
    problems, checked = [], []
    for dep in deps:
        for field in rooted:
            data = []
            for i in dep["inputs"]:
                name = fields.get(i)
                value = valid.get(name, values.get(i)) if name else values.get(i)
                if name == field:
                    value = hostile.get(field, str(out / "secret-folder"))
                if name == "deepspeed" and field == "offload_nvme_path":
                    value = "z3-nvme"
                data.append(value)
            seen = len(server.audit_events())
            status, text = _call(owner, dep["id"], data, (dep.get("targets") or [[None]])[0][0])
            if '"success":true' in text.replace(" ", "") and dep.get("api_name") == "start":
                _wait_idle(server, owner, config)  # a run started: let its child read what it was given
            touched = _canary_events(server, seen)
            name = f"form event {dep['id']} ({dep.get('api_name') or 'private'}) <- {field} outside"
            checked.append(name)
            if touched or not _outside_unchanged(server) or _leaks(text, out, set()):
                detail = "; ".join(f"{e['event']} {e['path']}" for e in touched[:3]) or "changed or leaked"
                problems.append(f"{name}: {detail}")
                record(GROUP, "fuzz", name, "escaped", detail)
            else:
                record(GROUP, "fuzz", name, "clear", f"{status}")
    print(f"\naudit-hook form fuzz: {len(checked)} cases:\n  " + "\n  ".join(checked))
    assert problems == [], "\n".join(problems)


def _wait_idle(server: Any, client: httpx.Client, config: dict, limit_s: float = 90.0) -> None:
    """Until no run goes (or ``limit_s``), then abort whatever still goes and clear the queue."""
    deps = config["dependencies"]
    deadline = time.time() + limit_s
    while time.time() < deadline:
        _, text = _call(client, _fn(deps, "poll"), [None], None)
        if '"busy":true' not in text.replace(" ", ""):
            break
        time.sleep(2)
    for action in ("clear_queue", "abort"):
        _call(client, _fn(deps, action), [], None)


def test_zz_login_backoff_counts_the_real_peer_not_x_forwarded_for(server: Any) -> None:
    """Rotating X-Forwarded-For gives no extra guesses (runs last: it locks this peer out)."""
    statuses = []
    for i in range(8):
        res = httpx.post(server.url + "login", data={"username": "alice", "password": f"wrong{i}"},
                         headers={"X-Forwarded-For": f"10.0.0.{i}"}, timeout=TIMEOUT_S)
        statuses.append(res.status_code)
    assert 429 in statuses, statuses  # the guesses were counted against this peer, whatever the header said
    record(GROUP, "http", "login back-off with a rotating X-Forwarded-For", "clear", str(statuses))


