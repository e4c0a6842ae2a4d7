"""An export downloads without a second copy on disk, only by a server-side link, only for its login.

The zip is written while it is sent (studio/app/downloads.py ``stream_zip``), the GGUF is the file itself; the route
refuses a forged or another session's token, a target outside the exports folder, and a caller without a login.
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from studio.app import downloads
from studio.web import export_download as dl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _export(exports: Path, name: str = "run-adapter") -> Path:
    folder = exports / name
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "adapter_model.safetensors").write_bytes(os.urandom(3 * downloads.CHUNK + 12345))
    (folder / "adapter_config.json").write_text('{"r": 8, "lora_alpha": 16}\n' * 200)
    (folder / "sub" / "deeper" / "tokenizer.json").write_text('{"vocab": {}}')
    (folder / "README.md").write_text("# How to load it\n")
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {f"{folder.name}/{p.relative_to(folder).as_posix()}": p.read_bytes()
            for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def test_the_streamed_zip_is_the_folder_and_a_valid_zip(tmp_path: Path) -> None:
    folder = _export(tmp_path / "exports")
    outside = tmp_path / "secret.txt"
    outside.write_text("canary")
    (folder / "link.txt").symlink_to(outside)  # a symlink in an export is neither followed nor sent
    data = b"".join(downloads.stream_zip(folder))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        got = {n: zf.read(n) for n in zf.namelist()}
        kinds = {i.filename: i.compress_type for i in zf.infolist()}
        descriptors = all(i.flag_bits & 0x08 for i in zf.infolist())
    assert got == _files(folder) and "run-adapter/link.txt" not in got
    assert kinds["run-adapter/adapter_model.safetensors"] == zipfile.ZIP_STORED      # weights: stored
    assert kinds["run-adapter/adapter_config.json"] == zipfile.ZIP_DEFLATED          # text: deflated
    assert descriptors, "written to a stream that cannot seek: sizes follow each entry's data"


def test_the_zip_is_sent_piece_by_piece_and_writes_no_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exports = tmp_path / "exports"
    folder = _export(exports)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))

    def no_temp(*a: Any, **k: Any) -> Any:
        raise AssertionError("the download wrote a temporary file")

    for name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"):
        monkeypatch.setattr(tempfile, name, no_temp)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    total = sum(len(v) for v in _files(folder).values())
    pieces = downloads.stream_zip(folder)
    first = next(pieces)
    assert len(first) < total / 2, "the first piece came only after the whole zip was made"
    sizes = [len(first)] + [len(p) for p in pieces]
    assert len(sizes) > 3 and max(sizes) <= downloads.CHUNK + 64 * 1024, sizes
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before, "a file appeared while the zip was sent"


def test_links_only_for_what_is_inside_exports(tmp_path: Path) -> None:
    exports, secret = tmp_path / "exports", tmp_path / "secret"
    _export(exports, "mine")
    secret.mkdir()
    (secret / "canary.txt").write_text("canary")
    (exports / "escape").symlink_to(secret)
    reg = downloads.Downloads()
    for bad in (str(secret), str(secret / "canary.txt"), f"Exported to `{secret}`", str(exports / ".." / "secret"),
                str(exports), str(exports / "escape"), str(exports / "missing"), "", None, "/", "\x00"):
        assert reg.add(bad, exports, None) is None, bad
    token = reg.add(str(exports / "mine"), exports, "session-a")
    assert token and reg.get(token, "session-a").name == "mine.zip"
    assert reg.get(token, "session-b") is None and reg.get(token, None) is None  # another session's link
    assert reg.get(token + "x", "session-a") is None and reg.get("forged", "session-a") is None
    assert reg.get(token, "session-a", name="other.zip") is None
    # the folder swapped for a symlink out of exports after the link was made: refused when served
    (exports / "mine").rename(exports / "moved")
    (exports / "mine").symlink_to(secret)
    assert reg.get(token, "session-a") is None


def test_links_expire_and_are_bounded() -> None:
    now = [1000.0]
    reg = downloads.Downloads(limit=2, ttl_s=60, clock=lambda: now[0])
    root = Path(tempfile.mkdtemp())
    try:
        for n in "abc":
            (root / n).mkdir()
        a, b, c = (reg.add(str(root / n), root, None) for n in "abc")
        assert reg.get(a, None) is None and reg.get(b, None) and reg.get(c, None)  # the oldest forgotten
        now[0] += 61
        assert reg.get(c, None) is None
    finally:
        import shutil
        shutil.rmtree(root)


def test_export_links_name_no_path_and_give_the_gguf_itself(tmp_path: Path) -> None:
    from studio.ui import evaluate_tab as tab
    exports = tmp_path / "exports"
    folder = exports / "run-gguf-q8_0"
    folder.mkdir(parents=True)
    (folder / "model.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    (folder / "Modelfile").write_text("FROM ./model.gguf\n")
    reg = downloads.Downloads()
    html = tab.export_links(str(folder), exports, None, "en", downloads=reg)
    assert str(tmp_path) not in html and html.count("<a ") == 2
    assert 'download="run-gguf-q8_0.gguf"' in html and 'download="run-gguf-q8_0.zip"' in html
    assert "the file itself" in html
    assert tab.export_links(str(tmp_path), exports, None, "en", downloads=reg) == ""
    assert "下载" in tab.export_links(str(folder), exports, None, "zh", downloads=reg)


# ------------------------------------------------------------------ the route, on a real Gradio server
def _cookie_token(client: httpx.Client) -> str:
    return next(c.value for c in client.cookies.jar if c.name.startswith("access-token"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Gradio app with a login, the studio's guard and the download route."""
    import gradio as gr
    from ui_server import free_port
    from studio.web.guard import auth_guard_middleware
    exports = tmp_path_factory.mktemp("dl") / "exports"
    folder = _export(exports)
    reg = downloads.Downloads()
    with gr.Blocks() as demo:
        gr.Markdown("x")
    port = free_port()
    demo.launch(server_port=port, auth=[("alice", "a"), ("bob", "b")], prevent_thread_lock=True, quiet=True,
                app_kwargs={"middleware": [auth_guard_middleware(enabled=True)], "routes": [dl.route(reg)]})
    try:
        yield f"http://127.0.0.1:{port}/", reg, exports, folder
    finally:
        demo.close()


def _login(url: str, user: str, pw: str) -> httpx.Client:
    c = httpx.Client(base_url=url, timeout=60)
    assert c.post("login", data={"username": user, "password": pw}).json() == {"success": True}
    return c


def test_the_route_serves_its_session_and_refuses_everyone_else(served: Any) -> None:
    url, reg, exports, folder = served
    alice, alice2, bob = _login(url, "alice", "a"), _login(url, "alice", "a"), _login(url, "bob", "b")
    token = reg.add(str(folder), exports, _cookie_token(alice))
    address = dl.link(token, "run-adapter.zip")
    res = alice.get(address)
    assert res.status_code == 200 and res.headers["content-type"] == "application/zip"
    assert "attachment" in res.headers["content-disposition"] and "content-encoding" not in res.headers
    with zipfile.ZipFile(io.BytesIO(res.content)) as zf:
        assert {n: zf.read(n) for n in zf.namelist()} == _files(folder)
    assert httpx.get(url + address).status_code == 401                      # no login
    assert httpx.get(url + address, cookies={"access-token-x": "forged"}).status_code == 401
    for client in (bob, alice2):                                             # another login, another session
        assert client.get(address).status_code == 404
    assert alice.get(dl.link("forged-token", "run-adapter.zip")).status_code == 404
    assert alice.get(dl.link(token, "other.zip")).status_code == 404
    assert alice.get(dl.link(token, "..%2F..%2Fetc%2Fpasswd")).status_code == 404
    one = reg.add(str(folder / "adapter_model.safetensors"), exports, _cookie_token(alice), "weights.bin")
    res = alice.get(dl.link(one, "weights.bin"))
    assert res.status_code == 200 and res.content == (folder / "adapter_model.safetensors").read_bytes()


def test_the_route_checks_the_login_itself_without_the_guard(tmp_path: Path) -> None:
    """Defence in depth: the route alone (no guard in front) still needs Gradio's login cookie."""
    import gradio as gr
    from ui_server import free_port
    exports = tmp_path / "exports"
    folder = _export(exports)
    reg = downloads.Downloads()
    token = reg.add(str(folder), exports, None)
    with gr.Blocks() as demo:
        gr.Markdown("x")
    port = free_port()
    demo.launch(server_port=port, auth=[("alice", "a")], prevent_thread_lock=True, quiet=True,
                app_kwargs={"routes": [dl.route(reg)]})
    try:
        url = f"http://127.0.0.1:{port}/"
        assert httpx.get(url + dl.link(token, "run-adapter.zip"), timeout=60).status_code == 401
        alice = _login(url, "alice", "a")
        assert alice.get(dl.link(token, "run-adapter.zip")).status_code == 404  # made without a login: not hers
    finally:
        demo.close()


def test_the_studio_launches_with_the_route() -> None:
    import argparse
    from studio.ui import app
    p = argparse.ArgumentParser()
    app.add_arguments(p)
    routes = app.launch_kwargs(p.parse_args([]), None, None)["app_kwargs"]["routes"]
    assert [r.path for r in routes] == [dl.ROUTE + "/{token}/{name}"]


def test_the_single_gguf_link_says_where_its_modelfile_is(tmp_path: Path) -> None:
    """The .gguf downloaded alone has no Modelfile (whose FROM names ./model.gguf): its link says the zip has it,
    in the page's language; an export without a Modelfile says nothing of one."""
    from studio.ui import evaluate_tab as tab
    exports = tmp_path / "exports"
    folder = exports / "run-gguf-q8_0"
    folder.mkdir(parents=True)
    (folder / "model.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    (folder / "Modelfile").write_text("FROM ./model.gguf\n")
    reg = downloads.Downloads()
    html = tab.export_links(str(folder), exports, None, "en", downloads=reg)
    gguf_line = next(p for p in html.split("</p>") if 'download="run-gguf-q8_0.gguf"' in p)
    assert "Modelfile" in gguf_line and "zip" in gguf_line, gguf_line
    assert "Modelfile" in next(p for p in tab.export_links(str(folder), exports, None, "zh", downloads=reg)
                               .split("</p>") if ".gguf\"" in p)
    (folder / "Modelfile").unlink()
    assert "Modelfile" not in tab.export_links(str(folder), exports, None, "en", downloads=reg)
