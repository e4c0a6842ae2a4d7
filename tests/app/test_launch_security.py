"""Safe exposure: refusing unsafe launches, login enforcement, confined paths, Chinese labels."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from studio.errors import StudioError
from tests.ui.test_ui_i18n import tab_components
from studio.app import server_flags
from studio.ui import app
from studio.ui.i18n import translations
from studio.app.paths import confine

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")
MARK = re.compile(r'__i18n__\{"__type__": "translation_metadata", "key": "([^"]+)"\}')


def args(*flags: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    server_flags.add_arguments(p)
    return p.parse_args(list(flags))


def test_loopback_without_auth_is_fine() -> None:
    assert server_flags.parse_auth(args()) is None
    assert server_flags.parse_auth(args("--host", "::1")) is None


@pytest.mark.parametrize("flags,where", [(["--share"], "a public --share link"),
                                         (["--host", "0.0.0.0"], "--host 0.0.0.0 (reachable from other machines)")])
def test_exposed_without_auth_refuses(flags: list[str], where: str) -> None:
    with pytest.raises(StudioError) as err:
        server_flags.parse_auth(args(*flags))
    assert err.value.message.startswith(f"Refusing to start without a password on {where}.")
    assert "Fix: add --auth USER:PASS or --auth-file FILE; or pass --no-auth" in err.value.message
    assert server_flags.parse_auth(args(*flags, "--no-auth")) is None
    assert server_flags.parse_auth(args(*flags, "--auth", "a:b")) == [("a", "b")]


def test_auth_forms(tmp_path: Path) -> None:
    f = tmp_path / "logins"
    f.write_text("# team\nalice:s3cret:with:colons\n\nbob:pw\n", encoding="utf-8")
    assert server_flags.parse_auth(args("--auth-file", str(f), "--share")) == [("alice", "s3cret:with:colons"), ("bob", "pw")]
    with pytest.raises(StudioError, match="A login must look like USER:PASS"):
        server_flags.parse_auth(args("--auth", "alice"))
    with pytest.raises(StudioError, match="does not exist"):
        server_flags.parse_auth(args("--auth-file", str(tmp_path / "nope")))
    with pytest.raises(StudioError, match="--no-auth contradicts --auth/--auth-file"):
        server_flags.parse_auth(args("--auth", "a:b", "--no-auth"))


def test_share_without_auth_does_not_start_and_says_why(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "launch.py"), "--share", "--workspace", str(tmp_path / "ws")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("Error: Refusing to start without a password on a public --share link.")
    assert "Traceback" not in out.stderr + out.stdout
    assert not (tmp_path / "ws").exists()


def test_confine(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    extra.mkdir()
    (ws / "link").symlink_to("/etc")
    assert confine("runs/a", [ws, extra]) == ws.resolve() / "runs" / "a"
    assert confine(str(extra / "x.csv"), [ws, extra]) == extra.resolve() / "x.csv"
    for bad in ("/etc/passwd", "../outside", "link/passwd"):
        with pytest.raises(StudioError) as err:
            confine(bad, [ws, extra])
        assert err.value.message.startswith(f"The path '{bad}' is outside the folders this studio may use.")


# ---------------------------------------------------------------- live server with a login, Chinese default
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ui_server import Server
    srv = Server(tmp_path_factory.mktemp("sec") / "ws", "--auth", "alice:secret", "--lang", "zh").wait_ready()
    yield srv
    srv.stop()


def logged_in(server: Any) -> httpx.Client:
    c = httpx.Client(base_url=server.url)
    assert c.post("login", data={"username": "alice", "password": "secret"}).json() == {"success": True}
    return c


@pytest.mark.integration
def test_unauthenticated_requests_are_refused(server: Any) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AuthenticationError
    for path in ("config", "gradio_api/info", "gradio_api/file=/etc/passwd"):
        assert httpx.get(server.url + path).status_code == 401
    assert httpx.post(server.url + "login", data={"username": "alice", "password": "wrong"}).status_code == 400
    with pytest.raises(AuthenticationError):
        Client(server.url, verbose=False)
    with pytest.raises(ValueError):
        Client(server.url, auth=("alice", "wrong"), verbose=False)
    assert Client(server.url, auth=("alice", "secret"), verbose=False).predict(api_name="/poll")[3]["state"] == "idle"


@pytest.mark.integration
def test_no_arbitrary_file_download_and_paths_confined(server: Any) -> None:
    from gradio_client import Client
    c = logged_in(server)
    # a refused path, a missing one and another session's upload all answer 404
    for route in ("gradio_api/file=", "gradio_api/file/"):
        for target in ("/etc/passwd", server.workspace / "runs", "/no/such/file"):
            res = c.get(f"{route}{target}")
            assert res.status_code == 404 and res.json() == {"detail": "File not found"}, (route, target)
    client = Client(server.url, auth=("alice", "secret"), verbose=False)
    # the server runs with --lang zh, so the refusal is in the page's language, beside the control it is about
    out = client.predict("/etc/passwd", api_name="/open_data")
    assert "路径“/etc/passwd”不在本工作室可以使用的文件夹之内" in str(out), out


@pytest.mark.integration
def test_an_upload_is_visible_only_to_the_session_that_made_it(server: Any) -> None:
    """Two logins (teammates may share one account): the second must not read the first one's upload."""
    mine, theirs = logged_in(server), logged_in(server)
    up = mine.post("gradio_api/upload", files={"files": ("reviews.csv", b"text,label\nsecret row,positive\n")})
    assert up.status_code == 200, up.text
    path = up.json()[0]
    assert mine.get(f"gradio_api/file={path}").content.startswith(b"text,label")
    other = theirs.get(f"gradio_api/file={path}")
    assert other.status_code == 404 and b"secret row" not in other.content
    assert httpx.get(server.url + f"gradio_api/file={path}").status_code == 401


@pytest.mark.integration
def test_chinese_ui_labels_on_every_tab(server: Any) -> None:
    cfg = logged_in(server).get("config").json()
    zh = cfg["i18n_translations"]["zh"]
    assert zh == translations()["zh"]
    page = logged_in(server).get("").text  # --lang zh: the served page starts in Chinese
    from studio.web.session_lang import head_script
    assert page.index(head_script("zh")) < page.index('<script type="module"')  # before Gradio picks its locale
    tabs = tab_components(cfg)
    assert set(tabs) == {"data", "settings", "train", "evaluate", "runs", "feedback"}
    tab_labels = [c["props"]["label"] for c in cfg["components"] if c["type"] == "tabitem"]
    assert all(CJK.search(zh[MARK.search(t).group(1)]) for t in tab_labels)
    # strict on every tab, Evaluate included: labels, infos, buttons, table headers, named choices
    try:
        from tests.ui.test_ui_i18n import untranslated
    except ImportError:  # tests/ as a package
        from tests.ui.test_ui_i18n import untranslated
    problems, checked = untranslated(cfg, zh)
    assert problems == []
    assert set(checked) == {"data", "settings", "train", "evaluate", "runs", "feedback"}, checked
    assert min(v for k, v in checked.items() if k != "runs") >= 8 and checked["runs"] >= 4, checked


def test_typed_paths_in_settings_are_confined(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.app.context import AppContext
    from studio.app.paths import resolve_run_paths
    from studio.ui.settings_tab import check_markdown
    ctx = AppContext.create(tmp_path / "ws")
    for field, value in (("model_name_or_path", "/etc"), ("dataset", "/etc/passwd.jsonl"),
                         ("output_dir", "/tmp/../etc/run"), ("deepspeed", "/etc/ds.json")):
        cfg = RunConfig(dataset="d.jsonl").replace(**{field: value})
        with pytest.raises(StudioError, match="is outside the folders this studio may use"):
            resolve_run_paths(cfg, ctx)
        assert "is outside the folders this studio may use" in check_markdown(cfg, ctx)
    hub = resolve_run_paths(RunConfig(model_name_or_path="Qwen/Qwen2.5-0.5B", dataset="d.jsonl"), ctx)
    assert hub.model_name_or_path == "Qwen/Qwen2.5-0.5B"
    # a run is named after its model and data, not 'latest'
    assert hub.output_dir == str(ctx.runs_root / "Qwen2.5-0.5B-d") and hub.dataset_dir == str(ctx.data_root)
    (ctx.runs_root / "tiny-demo-d").mkdir()
    (ctx.runs_root / "tiny-demo-d" / "config.yaml").write_text("{}")
    again = resolve_run_paths(RunConfig(dataset="d.jsonl"), ctx)
    assert Path(again.output_dir).name.startswith("tiny-demo-d-")  # a used run folder is never reused
    typed = resolve_run_paths(RunConfig(dataset="d.jsonl", output_dir="runs/my-try"), ctx)
    assert typed.output_dir == str(ctx.runs_root / "my-try")  # a name the user typed is kept


# ---------------------------------------------------------------- launch flags, logins, a workspace: plain errors
@pytest.mark.parametrize("flags, expected", [
    (["--max-upload-mb", "nan"], "Error: --max-upload-mb must be a number above 0 (got nan)."),
    (["--max-upload-mb", "inf"], "Error: --max-upload-mb must be a number above 0 (got inf)."),
    (["--port", "99999"], "Error: --port must be between 1 and 65535 (got 99999)."),
])
def test_bad_launch_flags_are_clear(tmp_path: Path, flags: list[str], expected: str) -> None:
    with pytest.raises(StudioError) as err:
        server_flags.check_flags(args(*flags))
    assert err.value.message.startswith(expected[len("Error: "):])


def test_port_in_use_is_a_clear_message(tmp_path: Path) -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(StudioError) as err:
            server_flags.check_flags(args("--port", str(port)))
    assert err.value.what == f"Port {port} on 127.0.0.1 is already in use"


def test_password_from_env_and_auth_flag_warns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("STUDIO_AUTH", "carol:pw1")
    assert server_flags.parse_auth(args("--share")) == [("carol", "pw1")]
    monkeypatch.delenv("STUDIO_AUTH")
    assert server_flags.parse_auth(args("--auth", "a:b")) == [("a", "b")]
    assert "shows the password in the process list" in capsys.readouterr().err


def _guarded_app(**kw: Any) -> Any:
    """A stand-in for Gradio's routes (same cookie and login contract) behind the studio's guard."""
    from fastapi import FastAPI, Form, HTTPException
    from fastapi.responses import HTMLResponse
    from starlette.middleware import Middleware
    web = FastAPI(middleware=[app.auth_guard_middleware(**kw)])
    web.tokens, web.cookie_id = {"good": "alice"}, "x"  # type: ignore[attr-defined]

    @web.post("/login")
    def login(username: str = Form(), password: str = Form()) -> dict:
        if password != "secret":
            raise HTTPException(400, "Incorrect credentials.")
        return {"success": True}

    @web.get("/")
    def page() -> HTMLResponse:
        return HTMLResponse('<script>window.gradio_config = {"a": 1};</script><script>window.gradio_api_info = '
                            '{"named_endpoints": {"/export_run": {}}};</script>')

    @web.post("/gradio_api/cancel")
    def cancel() -> dict:
        return {"success": True}

    return web


def test_login_lockout_grows_after_failures() -> None:
    from fastapi.testclient import TestClient
    now = [1000.0]
    client = TestClient(_guarded_app(clock=lambda: now[0]))
    for _ in range(5):
        assert client.post("/login", data={"username": "alice", "password": "wrong"}).status_code == 400
    locked = client.post("/login", data={"username": "alice", "password": "secret"})
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) == 30
    assert "Too many failed logins" in locked.json()["detail"]
    now[0] += 31
    assert client.post("/login", data={"username": "alice", "password": "wrong"}).status_code == 400
    assert client.post("/login", data={"username": "alice", "password": "secret"}).headers["retry-after"] == "60"
    now[0] += 61
    assert client.post("/login", data={"username": "alice", "password": "secret"}).status_code == 200
    assert client.post("/login", data={"username": "alice", "password": "wrong"}).status_code == 400  # reset


def test_anonymous_gets_no_api_description_cancel_or_reset() -> None:
    from fastapi.testclient import TestClient
    client = TestClient(_guarded_app())
    page = client.get("/")
    assert page.status_code == 200 and "export_run" not in page.text and "gradio_config" in page.text
    assert client.post("/gradio_api/cancel", json={}).status_code == 401
    client.cookies.set("access-token-x", "good")
    assert "export_run" in client.get("/").text
    assert client.post("/gradio_api/cancel", json={}).status_code == 200


def test_trust_remote_code_only_from_the_command_line(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.app.context import AppContext
    from studio.app.paths import resolve_run_paths
    ctx = AppContext.create(tmp_path / "ws")
    with pytest.raises(StudioError) as err:
        resolve_run_paths(RunConfig(dataset="d.jsonl", trust_remote_code=True), ctx)
    assert err.value.what == "Trust remote code is off for this studio"
    assert "--trust-remote-code" in err.value.fix
    ctx.allow_remote_code = True
    assert resolve_run_paths(RunConfig(dataset="d.jsonl", trust_remote_code=True), ctx).trust_remote_code


def test_unwritable_workspace_is_a_plain_error(tmp_path: Path) -> None:
    """A workspace that cannot be created gives what/fix, not a bare [Errno 30]."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = subprocess.run([sys.executable, str(ROOT / "launch.py"), "--workspace", str(blocker / "ws")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-500:]
    assert "cannot be created" in out.stderr and "--workspace DIR" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout
