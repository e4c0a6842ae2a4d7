"""The demo page of one finished run: python -m studio demo RUN, and the Share-a-demo panel.

Unit tests: the command's checks (unknown run, a path outside the workspace's runs folder, an unfinished run, a
network host without a login), the page per task, the scores against the evaluator's, batch prediction into a
temp folder, the panel's handlers. Integration: one real demo server, started by the panel's own handler as a
studio on the network would (a child ``python -m studio demo`` with the studio's login file), on a tiny trained
sentiment run: the login is required, 10 concurrent users get the evaluator's answers, every dependency in its
/config is fuzzed as in tests/robustness/test_endpoint_fuzz.py (nothing written into the workspace, nothing read
from outside the run), and headless Chromium logs in and classifies a review.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import httpx
import pytest

from studio.errors import StudioError
from tests.robustness.test_endpoint_fuzz import CANARY, SECRET_ROW, _call, _hostile, _leaks, _login, \
    _outside_unchanged, _tree_hash

RUN = "reviews-lora"
OWNER, VIEWER = ("alice", "owner-pw"), ("bob", "viewer-pw")


def _finished(path: Path, rows: list[dict], base: str = "tiny-demo") -> Path:
    """A run folder with a config, held-out rows and a (dummy) adapter: enough for every check but a model load."""
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    run = RunDir(path).ensure()
    RunConfig(model_name_or_path=base, dataset="d.jsonl", output_dir=str(path), val_size=0.2).save(run.config)
    run.write_status("finished", ended=0)
    run.adapter.mkdir(exist_ok=True)
    (run.adapter / "adapter_config.json").write_text("{}")
    run.val_data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ws(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with the tiny trained LoRA sentiment run, and a second run whose rows the demo must never show."""
    ws = tmp_path_factory.mktemp("demo") / "ws"
    shutil.copytree(runs["lora"], ws / "runs" / RUN)
    _finished(ws / "runs" / "other-run", [{"instruction": "q", "input": SECRET_ROW, "output": "positive"},
                                          {"instruction": "q", "input": "x", "output": "negative"}])
    return ws


def _cli(*argv: str) -> int:
    from studio.__main__ import PAGE_VERBS
    from studio.cli.main import main
    return main(["demo", *argv], extra=PAGE_VERBS)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of the workspace but the feedback database, the one thing a demo writes there (teammates'
    feedback, studio/feedback/store.py; its own tests check what reaches it)."""
    from studio.feedback.store import DB_NAME
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
            if not p.name.startswith(DB_NAME)}


# ------------------------------------------------------------------ the command's checks
def test_a_run_that_is_unknown_outside_or_unfinished_is_refused(ws: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    from tests.ui_server import free_port
    outside = _finished(tmp_path / "elsewhere" / "stolen", [{"instruction": "q", "input": "a", "output": "b"}])
    (ws / "runs" / "link").symlink_to(outside, target_is_directory=True)
    _finished(ws / "runs" / "busy", [])
    (ws / "runs" / "busy" / "status.json").write_text('{"state": "running"}')
    cases = {"nope": "is not a run folder in", str(outside): "is outside the runs folder",
             "../../elsewhere/stolen": "is outside the runs folder", "link": "is outside the runs folder",
             "/etc": "is outside the runs folder", str(ws / "runs"): "is not a run folder",
             "busy": "has not finished"}
    try:
        for run, expected in cases.items():
            assert _cli(run, "--workspace", str(ws), "--port", str(free_port())) == 2, run
            err = capsys.readouterr().err
            assert expected in err and "Traceback" not in err, (run, err)
    finally:
        (ws / "runs" / "link").unlink()
        shutil.rmtree(ws / "runs" / "busy")


def test_a_network_host_needs_a_login_and_the_studios_login_file_is_taken(ws: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    import argparse
    from studio.app import server_flags
    from tests.ui_server import free_port
    assert _cli(RUN, "--workspace", str(ws), "--host", "0.0.0.0", "--port", str(free_port())) == 2
    assert "Refusing to start without a password" in capsys.readouterr().err
    logins = tmp_path / "logins"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n")
    parser = argparse.ArgumentParser()
    server_flags.add_demo_arguments(parser)
    args = parser.parse_args([RUN, "--workspace", str(ws), "--host", "0.0.0.0", "--port", str(free_port()),
                              "--auth-file", str(logins)])
    run, auth = server_flags.check_demo_flags(args)
    assert run.path == (ws / "runs" / RUN).resolve() and auth == [OWNER, VIEWER]
    assert _cli(RUN, "--workspace", str(ws), "--port", "0") == 2  # the studio's own port check
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


# ------------------------------------------------------------------ the page, per task
def _config(app: Any) -> dict:
    return app.get_config_file()


def _elem_ids(config: dict) -> set[str]:
    return {c.get("props", {}).get("elem_id") for c in config["components"]} - {None}


def test_a_sentiment_run_gets_the_classifier_page_a_free_text_run_the_chat(ws: Path) -> None:
    from studio.app.demo_run import describe_run
    from studio.ui.demo import build_demo
    info = describe_run(ws / "runs" / RUN)
    assert info.task == "labels" and info.labels == ["negative", "positive"]
    held_out = [json.loads(ln) for ln in (ws / "runs" / RUN / "val.jsonl").read_text().splitlines()]
    assert info.examples and {r["output"] for r in info.examples} == {"negative", "positive"}
    assert all(r in held_out for r in info.examples), "examples come from the run's own held-out rows"
    config = _config(build_demo(info, "en"))
    ids = _elem_ids(config)
    assert {"demo-text", "demo-classify", "demo-scores", "demo-expected", "demo-batch-file", "demo-csv"} <= ids
    assert "demo-chat" not in ids
    dataset = next(c for c in config["components"] if c["type"] == "dataset")
    assert dataset["props"]["headers"] == ["Text to classify", "Label in the data"]  # plain text, not i18n metadata
    names = {d.get("api_name") for d in config["dependencies"]} - {None}
    assert {"classify", "predict_file"} <= names
    assert not names & {"start", "abort", "export_run", "convert", "delete_runs", "upload_gguf", "start_demo"}

    chat_dir = _finished(ws.parent / "chat-runs" / "poems", [
        {"instruction": f"Write a line about {w}", "input": "", "output": f"The {w} sings at dawn, number {i}."}
        for i, w in enumerate(["rain", "sea", "wind", "snow", "sun", "moon", "trees", "stars", "hills", "rivers",
                               "birds", "clouds"])])
    chat = describe_run(chat_dir)
    assert chat.task == "chat" and chat.labels == [] and chat.examples == []
    zh = _config(build_demo(chat, "zh"))
    ids = _elem_ids(zh)
    assert {"demo-chat", "demo-message", "demo-stop"} <= ids and "demo-text" not in ids
    assert {d.get("api_name") for d in zh["dependencies"]} >= {"chat", "stop_chat"}
    title = next(c for c in zh["components"] if c.get("props", {}).get("elem_id") == "demo-title")
    assert "与模型对话" in str(title["props"]["value"])


def test_the_chat_page_streams_the_runs_model_and_stops(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat page's own handlers (as wired), on the tiny run: the reply grows; Stop names this session's reply."""
    from dataclasses import replace
    from studio.evaluation import inference
    from studio.app.demo_run import describe_run
    from studio.ui.demo import build_demo
    info = replace(describe_run(ws / "runs" / RUN), task="chat")
    monkeypatch.setattr(inference, "label_task", lambda run: None)  # a chat run (a labels run answers with a label)
    app = build_demo(info, "en")
    fns = {fn.api_name: fn.fn for fn in app.fns.values()}
    request = SimpleNamespace(session_hash="s1", headers={}, username=None)
    steps = [json.loads(json.dumps(step)) for step in fns["chat"]("The bag is lovely.", [], request)]  # copies
    assert steps[0][1][-1] == {"role": "assistant", "content": ""} and steps[-1][1][-1]["content"].strip()
    assert len(steps) > 2, f"the reply is streamed ({len(steps)} steps)"
    stopped: list[tuple[str | None, bool]] = []
    real_stop = inference.stop_generation
    monkeypatch.setattr(inference, "stop_generation", lambda key: stopped.append((key, real_stop(key))) or True)
    stream = fns["chat"]("The bag is lovely.", [], request)
    next(stream), next(stream)  # the model is writing this session's reply now
    fns["stop_chat"](request)
    list(stream)
    assert stopped == [("s1:chat", True)], "Stop found this session's running reply"


def test_the_page_scores_like_the_evaluator(ws: Path) -> None:
    """The demo's label scores pick exactly the labels the sentiment check picks, row by row."""
    from studio.evaluation import inference
    from studio.app.demo_run import describe_run
    from studio.ui.demo import check_text, on_classify_batch
    info = describe_run(ws / "runs" / RUN)
    rows = [json.loads(ln) for ln in (ws / "runs" / RUN / "val.jsonl").read_text().splitlines()]
    probs = inference.label_probabilities(info.path, [r["input"] for r in rows], info.labels, info.like)
    assert all(abs(sum(p.values()) - 1) < 1e-6 and set(p) == set(info.labels) for p in probs)
    check = inference.sentiment_check(info.path)
    wrong = {m["input"] for m in check["misclassified"]}
    picked = [max(p, key=p.get) for p in probs]
    assert [r["input"] for r, lab in zip(rows, picked) if lab != r["output"]] == \
        [r["input"] for r in rows if r["input"] in wrong]
    assert sum(lab == r["output"] for r, lab in zip(rows, picked)) / len(rows) == pytest.approx(check["accuracy"])
    # a batch of several users' texts: each gets its own answer; a bad one does not fail the others
    huge = "x" * (inference.MAX_PROMPT_CHARS + 1)
    [answers] = on_classify_batch(info, [rows[0]["input"], "   ", huge, None, rows[1]["input"]])
    assert answers[0] == pytest.approx(probs[0], abs=1e-5) and answers[4] == pytest.approx(probs[1], abs=1e-5)
    assert answers[1] == "The text is empty" and answers[3] == "The text is empty" and "over the limit" in answers[2]
    for bad in ("   ", huge):
        with pytest.raises(Exception, match="The text is empty|over the limit"):
            check_text(bad)
    check_text(rows[0]["input"])


def test_batch_prediction_writes_a_csv_in_a_temp_folder_only(ws: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.app.demo_run import describe_run
    from studio.ui import demo
    info = describe_run(ws / "runs" / RUN)
    upload = tmp_path / "reviews.csv"
    upload.write_text("text\nThe bag is lovely.\nThe chair is awful.\n=cmd|' /C calc'!A0\n", encoding="utf-8")
    before = _snapshot(ws)
    path, summary = demo.on_predict_file(info, str(upload))
    assert Path(path).parent.parent == Path(tempfile.gettempdir()) and "studio-demo-" in Path(path).parent.name
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "instruction,input,prediction" and len(lines) == 4
    assert lines[1].endswith("lovely.,positive") and lines[2].endswith("awful.,negative")
    assert ",'=cmd" in lines[3]  # a formula is defused for spreadsheets (evaluate.csv_safe)
    assert "Predicted 3 rows" in summary and str(tempfile.gettempdir()) not in summary
    assert _snapshot(ws) == before, "nothing is written into the workspace"
    monkeypatch.setattr(demo, "MAX_PREDICT_ROWS", 2)
    with pytest.raises(Exception, match="over this page's limit of 2"):
        demo.on_predict_file(info, str(upload))


# ------------------------------------------------------------------ the Share-a-demo panel
def _studio_ctx(ws: Path, host: str, **flags: Any) -> SimpleNamespace:
    """What app.py hands the Evaluate tab: the workspace, its runs folder and the launch flags."""
    args = SimpleNamespace(**{"host": host, "auth": None, "auth_file": None, "no_auth": False, "lang": None,
                              "trusted_proxy": [], **flags})
    return SimpleNamespace(workspace=ws, runs_root=ws / "runs",
                           extra={"launch": args, "network": host not in ("127.0.0.1", "localhost", "::1")})


def test_share_panel_command_uses_the_studios_own_python(ws: Path, tmp_path: Path) -> None:
    """Pasted into a terminal anywhere, each shown command runs the studio's CLI (a bare ``python`` there was
    the system's: "No module named 'gradio'")."""
    import shlex
    from studio.ui import share_demo
    local = _studio_ctx(ws, "127.0.0.1", auth_file="/srv/studio/logins.txt")
    text = share_demo.command_markdown(local, str(ws / "runs" / RUN))
    commands = [b.strip() for b in text.split("```")[1::2]]
    assert len(commands) == 2 and f"--host 0.0.0.0 --auth-file /srv/studio/logins.txt" in commands[1]
    for line in commands:
        assert f"-m studio demo {RUN} --workspace {shlex.quote(str(ws))}" in line
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # a fresh terminal: no venv, no PYTHONPATH
        proc = subprocess.run(["bash", "-c", line + " --help"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0 and "--auth-file" in proc.stdout, (line, proc.stderr[-500:])


def test_share_panel_starts_and_stops_the_demo_on_a_loopback_studio(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    """A studio on 127.0.0.1 starts the demo itself, on 127.0.0.1 (the child is a stand-in that says it is ready)."""
    import gradio as gr
    from studio.app import shared_demos
    from studio.ui import share_demo
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    def fake_popen(cmd: list[str], stdout: Any, **kw: Any) -> subprocess.Popen:
        started.append(cmd)
        stdout.write(b"* demo ready in 1.0 s\n")
        stdout.flush()
        return real_popen([sys.executable, "-c", "import time; time.sleep(60)"])

    monkeypatch.setattr(shared_demos.subprocess, "Popen", fake_popen)
    local = _studio_ctx(ws, "127.0.0.1")
    said = list(share_demo.start_demo(local, str(ws / "runs" / RUN)))
    assert started and started[0][started[0].index("--host") + 1] == "127.0.0.1"
    assert "http://127.0.0.1:" in said[-1] and "this computer" in said[-1], said
    demo = next(iter(local.extra["demos"].values()))
    assert "Stopped the demo" in share_demo.stop_demo(local, str(ws / "runs" / RUN))
    assert demo.proc.poll() is not None
    with gr.Blocks():
        run = gr.Dropdown(choices=[(RUN, str(ws / "runs" / RUN))], value=str(ws / "runs" / RUN))
        panel = share_demo.build_share_panel(lambda k: k, "en", run, local)
    assert panel["start"].visible is not False and panel["start"].parent.visible is not False


def test_share_panel_refuses_runs_it_does_not_own_and_keeps_logins_off_the_command_line(ws: Path) -> None:
    import gradio as gr
    from studio.app import shared_demos
    from studio.ui import share_demo
    from studio.app.roles import is_owner_only
    network = _studio_ctx(ws, "0.0.0.0")
    for hostile in ("/etc", str(ws / "runs"), "../../x", str(ws / "runs" / "other-run" / "val.jsonl"), ""):
        with pytest.raises(StudioError):
            next(share_demo.start_demo(network, hostile))
    assert network.extra.get("demos", {}) == {}, "no child started for a refused run"
    # the studio's logins reach the child by file or environment, never on its command line
    cmd, env = shared_demos.child_command(_studio_ctx(ws, "0.0.0.0", auth_file="logins"), "run", 7999)
    assert cmd[-2:] == ["--auth-file", str(Path("logins").resolve())] and "STUDIO_AUTH" not in env
    cmd, env = shared_demos.child_command(_pw_ctx(ws), "run", 7999)
    assert env["STUDIO_AUTH"] == "alice:s3cret" and not any("s3cret" in c for c in cmd)
    with gr.Blocks() as app:
        run = gr.Dropdown(choices=[(RUN, str(ws / "runs" / RUN))], value=str(ws / "runs" / RUN))
        panel = share_demo.build_share_panel(lambda k: k, "en", run, network)
    fns = {fn.api_name: fn.fn for fn in app.fns.values()}
    assert is_owner_only(fns["start_demo"]) and is_owner_only(fns["stop_demo"])
    assert f"demo {RUN}" in panel["command"].value


def test_the_studio_hands_the_panel_its_host_and_logins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """app.main puts its launch flags and whether it is on the network where the panel reads them."""
    import argparse
    from studio.ui import app
    from tests.ui_server import free_port
    seen: list[Any] = []

    def stop_here(ctx: Any) -> None:
        seen.append(ctx)
        raise KeyboardInterrupt  # nothing is built or launched

    monkeypatch.setattr(app, "build_app", stop_here)
    for name in ("STUDIO_MODEL_CACHE", "FORWARDED_ALLOW_IPS", "GRADIO_ANALYTICS_ENABLED"):
        monkeypatch.delenv(name, raising=False)  # main sets them: restored after this test
    logins = tmp_path / "logins"
    logins.write_text("alice:pw\n")
    for host, network in (("127.0.0.1", False), ("0.0.0.0", True)):
        parser = argparse.ArgumentParser()
        app.add_arguments(parser)
        args = parser.parse_args(["--workspace", str(tmp_path / "ws"), "--host", host, "--port", str(free_port()),
                                  "--auth-file", str(logins)])
        with pytest.raises(KeyboardInterrupt):
            app.main(args)
        assert seen[-1].extra["launch"] is args and seen[-1].extra["network"] is network


def _pw_ctx(ws: Path) -> SimpleNamespace:
    ctx = _studio_ctx(ws, "0.0.0.0")
    ctx.extra["launch"].auth = "alice:s3cret"
    return ctx


# ------------------------------------------------------------------ one real demo server
@pytest.fixture(scope="module")
def server(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The demo, started by the Share panel's handler of a studio listening on the network with a login file."""
    from studio.ui import share_demo
    base = tmp_path_factory.mktemp("demo-server")
    outside = base / "outside"
    (outside / "secret-folder").mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY)
    (outside / "secret-folder" / "canary.txt").write_text(CANARY)
    logins = base / "logins"
    logins.write_text(f"{OWNER[0]}:{OWNER[1]}:owner\n{VIEWER[0]}:{VIEWER[1]}:viewer\n", encoding="utf-8")
    ctx = _studio_ctx(ws, "0.0.0.0", auth_file=str(logins))
    before = _snapshot(ws)
    said = list(share_demo.start_demo(ctx, str(ws / "runs" / RUN)))
    demo = ctx.extra["demos"][str((ws / "runs" / RUN).resolve())]
    url = demo.urls[0]
    assert url.startswith("http://127.0.0.1:") and url in said[-1], said
    srv = SimpleNamespace(url=url, outside=outside, outside_hash=_tree_hash(outside), workspace=ws, before=before,
                          log=demo.log)
    yield srv
    assert "Stopped the demo" in share_demo.stop_demo(ctx, str(ws / "runs" / RUN))
    assert demo.proc.poll() is not None


@pytest.mark.integration
def test_the_demo_needs_a_login(server: SimpleNamespace) -> None:
    for method, path in (("GET", "config"), ("POST", "gradio_api/queue/join"), ("POST", "gradio_api/call/classify"),
                         ("GET", "gradio_api/info")):
        res = httpx.request(method, server.url + path, json={"data": ["x"], "fn_index": 0, "session_hash": "s"})
        assert res.status_code == 401, (path, res.status_code, res.text[:200])
    page = httpx.get(server.url)
    assert page.status_code == 200 and "classify" not in page.text.split("gradio_api_info", 1)[-1][:200]
    res = httpx.post(server.url + "login", data={"username": OWNER[0], "password": "wrong"})
    assert res.status_code in (400, 401)


@pytest.mark.integration
def test_ten_concurrent_users_get_the_evaluators_answers(server: SimpleNamespace, ws: Path) -> None:
    from gradio_client import Client
    from studio.evaluation import inference
    from studio.app.demo_run import describe_run
    info = describe_run(ws / "runs" / RUN)
    rows = [json.loads(ln) for ln in (ws / "runs" / RUN / "val.jsonl").read_text().splitlines()]
    texts = [r["input"] for r in rows[:8]] + [rows[0]["input"], rows[0]["input"]]  # the same text three times
    expected = inference.label_probabilities(info.path, texts, info.labels, info.like)

    def user(i: int) -> dict:
        who = OWNER if i % 2 else VIEWER  # a viewer may try the model too
        return Client(server.url, auth=who, verbose=False).predict(texts[i], api_name="/classify")

    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(user, range(10)))
    for text, want, got in zip(texts, expected, answers):
        scores = {c["label"]: c["confidence"] for c in got["confidences"]}
        assert got["label"] == max(want, key=want.get), text
        assert scores == pytest.approx(want, abs=1e-4), text
    same = [{c["label"]: c["confidence"] for c in answers[i]["confidences"]} for i in (0, 8, 9)]
    assert same[1] == pytest.approx(same[0], abs=1e-5) and same[2] == pytest.approx(same[0], abs=1e-5)  # padding
    gold = {r["input"]: r["output"] for r in rows}
    assert sum(a["label"] == gold[t] for t, a in zip(texts, answers)) >= 8


@pytest.mark.integration
def test_every_endpoint_refuses_writes_and_reads_nothing_outside_the_run(server: SimpleNamespace) -> None:
    """The fuzzer's approach, on the demo: every dependency in /config, hostile values, three kinds of caller."""
    owner_a = _login(server, OWNER)
    up = owner_a.post("gradio_api/upload", files={"files": ("mine.csv", f"text\n{SECRET_ROW}\n".encode())})
    assert up.status_code == 200, up.text
    foreign = up.json()[0]
    originals = {Path(foreign).resolve()}
    deps = owner_a.get("config").json()["dependencies"]
    assert {d.get("api_name") for d in deps} >= {"classify", "predict_file"}
    clients = {"anonymous": httpx.Client(base_url=server.url, timeout=60), "viewer": _login(server, VIEWER),
               "owner, second session": _login(server, OWNER)}
    problems: list[str] = []
    answered = 0  # calls that reached a handler (so the fuzz is not only refused at the door)
    for who, client in clients.items():
        kinds = _hostile(server.outside, foreign)
        if who == "anonymous":
            kinds = {"outside path": kinds["outside path"]}
        for dep in deps:
            fn, trigger = dep["id"], (dep.get("targets") or [[None]])[0][0]
            for kind, value in kinds.items():
                status, text = _call(client, fn, [value] * len(dep.get("inputs", [])), trigger)
                name = f"{who}: event {fn} ({dep.get('api_name') or 'private'}) <- {kind}"
                answered += status == 200 and "process_completed" in text
                if _leaks(text, server.outside, originals) or not _outside_unchanged(server):
                    problems.append(f"escaped: {name}: {text[:200]}")
                elif status >= 500 or "Traceback (most recent call last)" in text or "internal error" in text.lower():
                    problems.append(f"crash: {name}: {status} {text[:200]}")
                elif who == "anonymous" and status != 401:
                    problems.append(f"anonymous answered: {name}: {status}")
                elif str(server.workspace) in text:
                    problems.append(f"names the workspace: {name}: {text[:200]}")
        assert owner_a.get("config").status_code == 200, f"the demo stopped answering after {who}'s calls"
    assert problems == [], "\n".join(problems[:30])
    print(f"fuzzed {len(deps)} dependencies; {answered} calls reached a handler")
    assert answered >= len(deps) * 10, answered
    assert _snapshot(server.workspace) == server.before, "the demo wrote into the workspace"
    from studio.feedback.store import LIMITS, FeedbackStore
    for row in FeedbackStore.in_workspace(server.workspace).iter_rows():  # what the fuzz left there is bounded and
        assert row.run == RUN and len(row.input) <= LIMITS["input"]   # names only the demo's own run


@pytest.mark.integration
@pytest.mark.browser
def test_a_browser_logs_in_and_classifies_a_review(server: SimpleNamespace, tmp_path: Path) -> None:
    from tests.ui.browser.test_browser import ARGS, CHROMIUM, SHOTS, _HAVE_CHROMIUM
    if not _HAVE_CHROMIUM:
        pytest.skip("needs Debian's chromium: apt-get install -y chromium")
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, locale="en-US")
        page.set_default_timeout(60_000)
        page.goto(server.url)
        page.get_by_label("username").fill(VIEWER[0])
        page.get_by_label("password").fill(VIEWER[1])
        page.get_by_role("button", name="Login").click()
        page.locator("#demo-text textarea").fill("The watch is terrible, broken after a day.")
        page.locator("#demo-classify").click()
        expect(page.locator("#demo-scores")).to_contain_text("negative")
        expect(page.locator("#demo-scores")).to_contain_text("%")
        shot = tmp_path / "demo_sentiment.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.stat().st_size > 10_000
    if os.environ.get("STUDIO_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, SHOTS / "demo_sentiment.png")
