"""Per-login quotas on a shared studio: who may upload what and how much, queued runs, a full disk.

The upload cases run the studio's guard in front of a stand-in for Gradio's upload route (the same cookie and
token contract as tests/app/test_launch_security.py), so each takes milliseconds; the run-queue cases use the
queue's own functions with a stub runner.
"""
from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import Request  # at module level: FastAPI reads the route's annotation by name

from tests.robustness.harness import expect, record

GROUP = "quotas"
MB = 2**20


def _app(tmp: Path, full_disk: bool = False, **kw: Any) -> Any:
    """Gradio's upload route in miniature: writes each multipart file into ``tmp`` and answers their paths."""
    from fastapi import FastAPI
    from studio.ui import app as studio_app
    web = FastAPI(middleware=[studio_app.auth_guard_middleware(**kw)])
    web.tokens, web.cookie_id = {"tok-owner": "alice", "tok-viewer": "bob", "tok-viewer2": "carol"}, "x"
    web.uploaded_file_dir = str(tmp)

    @web.post("/gradio_api/upload")
    async def upload(request: Request) -> list[str]:
        """As Gradio: each part into a NamedTemporaryFile in the upload folder, then moved to <hash>/<name>."""
        import shutil
        import tempfile
        form = await request.form()
        out = []
        for f in form.getlist("files"):
            data = await f.read()
            with tempfile.NamedTemporaryFile(delete=False, dir=tmp) as fh:
                if full_disk:  # the write that fills the disk: part of the file is already there
                    fh.write(data[:10])
                    fh.flush()
                    raise OSError(errno.ENOSPC, "No space left on device")
                fh.write(data)
            target = tmp / f"{time.monotonic_ns()}" / f.filename
            target.parent.mkdir(parents=True)
            shutil.move(fh.name, target)
            out.append(str(target))
        return out

    return web


def _client(web: Any, token: str, lang: str = "en") -> Any:
    from fastapi.testclient import TestClient
    c = TestClient(web, raise_server_exceptions=False)
    c.cookies.set("access-token-x", token)
    c.cookies.set("studio_lang", lang)
    return c


def _guard_kw(**over: Any) -> dict:
    from studio.app.upload_quota import UploadPolicy
    policy = UploadPolicy(data_mb=over.pop("data_mb", 1.0), model_mb=over.pop("model_mb", 8.0),
                          quota_mb=over.pop("quota_mb", 4.0), viewer_quota_mb=over.pop("viewer_quota_mb", 2.0))
    return dict(enabled=True, roles={"alice": "owner", "bob": "viewer", "carol": "viewer"}, uploads=policy, **over)


def _case(name: str, ok: bool, detail: str, verdict: str = "clear") -> None:
    outcome = verdict if ok else "survived"
    record(GROUP, "http", name, outcome, detail)
    expect(outcome, detail, verdict)


def test_a_viewer_may_upload_a_spreadsheet_up_to_the_data_limit_only(tmp_path: Path) -> None:
    web = _app(tmp_path, **_guard_kw())
    viewer, owner = _client(web, "tok-viewer"), _client(web, "tok-owner")
    res = viewer.post("/gradio_api/upload", files={"files": ("rows.csv", b"text\nfine\n")})
    _case("viewer uploads a small spreadsheet", res.status_code == 200, f"{res.status_code}", "ok")
    res = viewer.post("/gradio_api/upload", files={"files": ("big.csv", b"x" * (2 * MB))})
    _case("viewer uploads a spreadsheet over the data limit", res.status_code == 413 and "MB" in res.text,
          f"{res.status_code} {res.text[:200]}")
    res = viewer.post("/gradio_api/upload", files={"files": ("model.gguf", b"GGUF" + b"\0" * 100)})
    _case("viewer uploads a model file", res.status_code == 403 and not list(tmp_path.rglob("model.gguf")),
          f"{res.status_code} {res.text[:200]}")
    res = owner.post("/gradio_api/upload", files={"files": ("model.gguf", b"GGUF" + b"\0" * (3 * MB))})
    _case("owner uploads a model over the data limit", res.status_code == 200, f"{res.status_code}", "ok")
    res = viewer.post("/gradio_api/process_recording", files={"video": ("v.mp4", b"x" * (2 * MB))})
    _case("viewer sends a recording over the data limit", res.status_code == 413, f"{res.status_code}")


def test_each_login_has_a_disk_quota_and_the_oldest_upload_goes_first(tmp_path: Path) -> None:
    web = _app(tmp_path, **_guard_kw())
    viewer, other = _client(web, "tok-viewer"), _client(web, "tok-viewer2")
    theirs = other.post("/gradio_api/upload", files={"files": ("theirs.csv", b"y" * (MB // 2))}).json()[0]
    paths = [viewer.post("/gradio_api/upload", files={"files": (f"p{i}.csv", b"x" * (MB * 3 // 4))}).json()[0]
             for i in range(4)]  # 3 MB in all, over the viewer's 2 MB quota
    kept = [p for p in paths if Path(p).exists()]
    total = sum(Path(p).stat().st_size for p in kept)
    ok = total <= 2 * MB and kept == paths[-len(kept):] and Path(paths[-1]).exists() and Path(theirs).exists()
    _case("a login's uploads over its disk quota: the oldest removed", ok, f"kept {len(kept)} of 4, {total} bytes")


def test_uploads_older_than_a_day_are_swept(tmp_path: Path) -> None:
    from studio.app import upload_quota
    web = _app(tmp_path, **_guard_kw())
    viewer = _client(web, "tok-viewer")
    old = viewer.post("/gradio_api/upload", files={"files": ("old.csv", b"a\n1\n")}).json()[0]
    day_ago = time.time() - upload_quota.KEEP_S - 60
    os.utime(old, (day_ago, day_ago))
    new = viewer.post("/gradio_api/upload", files={"files": ("new.csv", b"a\n2\n")}).json()[0]
    swept = upload_quota.sweep(tmp_path)
    _case("an upload older than a day is swept", not Path(old).exists() and Path(new).exists(),
          f"swept {swept}")


@pytest.mark.parametrize("lang,words,login", [("en", "disk", True), ("zh", "磁盘", True), ("en", "disk", False)])
def test_a_full_disk_during_an_upload_is_a_plain_message_and_leaves_nothing(tmp_path: Path, lang: str,
                                                                           words: str, login: bool) -> None:
    web = _app(tmp_path, full_disk=True, **{**_guard_kw(), "enabled": login})
    res = _client(web, "tok-owner", lang).post("/gradio_api/upload", files={"files": ("a.csv", b"text\nx\n")})
    left = [p for p in tmp_path.rglob("*") if p.is_file()]
    ok = res.status_code == 507 and words in res.json().get("detail", "") and "Traceback" not in res.text \
        and not left
    _case(f"disk full during an upload ({lang}{'' if login else ', no login'})", ok, f"{res.status_code} {res.text[:200]} left={left}")


# ------------------------------------------------------------------ the run queue
class _Runner:
    def __init__(self) -> None:
        self.started: list[Any] = []

    def snapshot(self) -> dict:
        return {"busy": bool(self.started)}

    def start(self, cfg: Any, by: str | None = None, settings: str | None = None) -> Any:
        self.started.append(cfg)
        return SimpleNamespace(path=Path(cfg.output_dir or "run"))


def _ctx(tmp: Path) -> Any:
    return SimpleNamespace(workspace=tmp, runner=_Runner(), extra={})


def test_a_login_may_queue_only_so_many_runs(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.errors import StudioError
    from studio.runs import queue as run_queue
    ctx = _ctx(tmp_path)
    refused = None
    for i in range(run_queue.MAX_QUEUED_PER_LOGIN + 3):
        try:
            run_queue.submit(ctx, RunConfig(dataset="d.jsonl", learning_rate=1e-4 * (i + 1)), lambda c: c,
                                     by="bob")
        except StudioError as exc:
            refused = exc
            break
    ok = refused is not None and run_queue.waiting(ctx) == run_queue.MAX_QUEUED_PER_LOGIN
    _case("40 Starts by one login", ok, refused.message if refused else f"{run_queue.waiting(ctx)} queued")
    run_queue.submit(ctx, RunConfig(dataset="d.jsonl", learning_rate=0.5), lambda c: c, by="alice")
    assert run_queue.waiting(ctx) == run_queue.MAX_QUEUED_PER_LOGIN + 1, "another login still may queue"


def test_a_second_start_of_the_same_settings_is_already_queued(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.errors import StudioError
    from studio.runs import queue as run_queue
    ctx = _ctx(tmp_path)
    cfg = RunConfig(dataset="d.jsonl")
    run_queue.submit(ctx, cfg, lambda c: c, by="alice")  # starts
    run_queue.submit(ctx, RunConfig(dataset="d.jsonl", learning_rate=3e-4), lambda c: c, by="alice")
    try:
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", learning_rate=3e-4), lambda c: c, by="alice")
        outcome, detail = "survived", f"{run_queue.waiting(ctx)} queued"
    except StudioError as exc:
        outcome, detail = "clear", exc.message
    record(GROUP, "python", "a second Start of the same settings within seconds", outcome, detail)
    expect(outcome, detail, "clear", "already queued")
    assert run_queue.waiting(ctx) == 1
    assert json.loads((tmp_path / "queue.json").read_text())


# ------------------------------------------------------------------ a full disk anywhere on the page
def test_a_full_disk_during_an_export_is_a_message_and_leaves_nothing(runs: dict, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Any handler's disk-full OSError (here the export's copy, after part of it is written) is the page's
    what/fix message, not 'Something went wrong', and the half-written export is gone."""
    import shutil
    import gradio as gr
    from studio.evaluation import export as export_mod
    from studio.ui import evaluate_tab

    def full_copy(src: Any, dst: Any, **kw: Any) -> None:
        Path(dst).mkdir(parents=True, exist_ok=True)
        (Path(dst) / "model.safetensors").write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export_mod.shutil, "copytree", full_copy)
    exports = tmp_path / "exports"
    try:
        evaluate_tab.on_export(str(runs["full"]), False, True, "", exports)
        outcome, detail = "survived", "accepted"
    except gr.Error as exc:
        text = str(exc.message)
        left = [p for p in exports.rglob("*") if p.is_file()] if exports.exists() else []
        outcome = "clear" if "disk" in text and "Fix:" in text and not left else "crash"
        detail = f"{text[:200]} left={left}"
    record(GROUP, "python", "disk full during an export", outcome, detail)
    expect(outcome, detail, "clear", "disk")


def test_uploads_are_counted_in_files_and_in_the_bytes_the_disk_holds(tmp_path: Path) -> None:
    """2,000 one-byte uploads took 16 MB of disk and 4,000 inodes (a folder each) while the quota counted 2 KB:
    a viewer keeps at most 100 uploads (upload_quota.MAX_FILES) and each counts its blocks and its folder."""
    from studio.app.upload_quota import UploadPolicy, remove
    policy = UploadPolicy(viewer_quota_mb=1.0)
    for i in range(500):  # 500 tiny uploads: past the file count and, as the disk counts them, past 1 MB
        folder = tmp_path / f"{i:040x}"  # Gradio keeps each upload in a folder named by its hash
        folder.mkdir()
        (folder / "rows.csv").write_bytes(b"a")
        remove(policy.kept("bob", [str(folder / "rows.csv")], "viewer", set()))
    left = list(tmp_path.rglob("rows.csv"))
    held = sum(p.stat().st_blocks * 512 + 4096 for p in left)
    ok = len(left) <= 100 and held <= MB and len(list(tmp_path.iterdir())) == len(left)
    _case("500 one-byte uploads by a viewer: files and disk bytes counted", ok,
          f"{len(left)} uploads and {len(list(tmp_path.iterdir()))} folders kept, {held / MB:.1f} MB on disk")
