"""Robustness through the live UI: bad inputs, bad settings, confined paths, two clients
pressing Start at once, and a run that outlives the browser that started it.

Every case asserts the exact message a person sees (the gr.Error text gradio_client raises as
AppError), that it carries no traceback, and that a failed convert leaves the workspace's data
folder exactly as it was. One server per module, started with --max-upload-mb 1.
"""
from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from studio.config.run_config import Draft, RunConfig
from studio.ui import forms

GOOD = "text,label\nlove it,positive\nhate it,negative\nfine,positive\n"
NO_FILE = "Upload a file or press the sample button first. Fix: use the upload box or the sample button."
OUTSIDE = ("The path '{p}' is outside the folders this studio may use. Fix: use a path inside '{ws}' "
           "(whoever runs the studio can add a folder).")  # the page's words; the CLI names --data-root
BUSY = ("A training run is already going ('{name}'). Fix: wait for it to finish, or press Abort first; one run "
        "at a time keeps the card's memory for that run.")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ui_server import Server
    # the model (.gguf) limit too: Gradio's one transport limit is the larger of the two (studio/app/uploads.py)
    srv = Server(tmp_path_factory.mktemp("rob") / "ws", "--max-upload-mb", "1", "--max-model-upload-mb", "1").wait_ready()
    srv.files = tmp_path_factory.mktemp("rob-files")
    yield srv
    try:  # a failed training test must not leave its (own-session) child training on
        client(srv).predict(api_name="/abort")
        deadline = time.time() + 60
        while client(srv).predict(api_name="/poll")[3]["busy"] and time.time() < deadline:
            time.sleep(0.5)
    finally:
        srv.stop()


def client(server: Any) -> Any:
    """A new browser session (its own session hash, so its own upload state)."""
    from gradio_client import Client
    return Client(server.url, verbose=False)


def write(server: Any, name: str, content: str | bytes, encoding: str = "utf-8") -> Path:
    path = server.files / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def upload(c: Any, path: Path) -> tuple:
    from gradio_client import handle_file
    return c.predict(handle_file(str(path)), api_name="/upload_data")


def convert(c: Any, text: str | None, label: str | None, name: str, label_map: str = "") -> tuple[str, str]:
    return c.predict("sentiment", text, label, None, None, None, None, label_map, "", name, api_name="/convert")


def app_error(fn: Any, *args: Any, **kwargs: Any) -> str:
    """The user-facing text of the call's refusal, never a traceback: the gr.Error it raises, or the error the page
    shows beside the control it is about (the Data tab's first output, "❌ what. Fix: ...")."""
    from gradio_client.exceptions import AppError
    try:
        out = fn(*args, **kwargs)
    except AppError as err:
        text = str(err)
    else:
        first = out[0] if isinstance(out, (list, tuple)) else out
        assert isinstance(first, str) and first.startswith("❌ "), f"the call was not refused: {out!r}"
        text = first.removeprefix("❌ ")
    assert "Traceback" not in text and 'File "' not in text, text
    return text


def data_state(server: Any) -> dict[str, tuple[bytes, int]]:
    data = server.workspace / "data"
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(data.iterdir())}


@pytest.fixture(scope="module")
def kept(server: Any) -> dict[str, tuple[bytes, int]]:
    """A converted dataset 'keep' that every failed convert below tries (and must fail) to overwrite."""
    c = client(server)
    upload(c, write(server, "good.csv", GOOD))
    report, out = convert(c, "text", "label", "keep")
    assert report.startswith("✅ Wrote 3 rows to") and Path(out).name == "keep.jsonl"
    return data_state(server)


# ---------------------------------------------------------------- 1. bad-input matrix (Data tab)
BAD_UPLOADS = [
    ("empty.csv", b"", "'empty.csv' is empty. Fix: export the data again; the file has no content."),
    ("header.csv", b"text,label\n",
     "'header.csv' has a header row (text, label) but no data rows. Fix: export the sheet again including its rows."),
    ("bad.jsonl", b'{"text": "a", "label": "pos"}\n{"text": "b", "label": "neg"}\n{"text": "c", label: neg}\n',
     "Line 3 of 'bad.jsonl' is not valid JSON (Expecting property name enclosed in double quotes, column 15). "
     "Fix: fix or delete line 3; each line must be one JSON object."),
    ("binary.csv", bytes(range(256)) * 8,
     "'binary.csv' is not a text file: it looks like a binary file. Fix: export the data as CSV (UTF-8), "
     "Excel (.xlsx) or JSONL."),
    ("sheet.csv", b"PK\x03\x04" + bytes(range(256)) * 4,
     "'sheet.csv' is not a text file: it looks like an Excel/zip file. Fix: rename it to 'sheet.xlsx', or save "
     "the sheet as 'CSV UTF-8' in Excel."),
]


@pytest.mark.parametrize("name,content,message", BAD_UPLOADS, ids=[b[0] for b in BAD_UPLOADS])
def test_bad_upload_is_refused_and_nothing_is_written(server: Any, kept: dict, name: str, content: bytes,
                                                      message: str) -> None:
    before = data_state(server)
    c = client(server)
    assert app_error(upload, c, write(server, name, content)) == message
    # the refused file never became this session's source: Convert has nothing to convert
    assert app_error(convert, c, None, None, "keep") == NO_FILE
    assert data_state(server) == before and before["keep.jsonl"] == kept["keep.jsonl"]


def test_convert_problems_name_the_fix_and_keep_the_old_file(server: Any, kept: dict) -> None:
    before = data_state(server)
    c = client(server)
    loaded = upload(c, write(server, "wrongcol.csv", "review,stars\ngood phone,positive\nbad phone,negative\n"))
    assert loaded[0] == "Read 2 rows and 2 columns from wrongcol.csv."
    # a column name the file does not have (only possible through the API: the dropdown offers the real ones)
    assert app_error(convert, c, "text", "label", "keep") == \
        "Value: text is not in the list of choices: ['review', 'stars']"

    upload(c, write(server, "nolabel.csv", "id,comment\n1,good phone\n2,bad phone\n"))
    assert app_error(convert, c, "comment", None, "keep") == \
        ("Could not tell which column holds the label in 'nolabel.csv'. Available columns: id, comment. "
         "Fix: pick it under Label column on the Data tab.")  # page words, never a CLI flag

    upload(c, write(server, "mixed.csv", "text,label\nwin money now,Spam\nclick here,spam\nlunch at noon,ham\n"
                                         "see you,Ham\nmeeting,ham\n"))
    fix_map = "Ham=ham,Spam=spam,ham=ham,spam=spam"
    assert app_error(convert, c, "text", "label", "keep") == \
        ("Label column 'label' spells the same label differently: 'Ham' (1 row) / 'ham' (2 rows); 'Spam' (1 row) "
         f"/ 'spam' (1 row). Fix: merge them in the Label map box on the Data tab, e.g. '{fix_map}'.")
    assert data_state(server) == before and before["keep.jsonl"] == kept["keep.jsonl"]
    report, out = convert(c, "text", "label", "spam", label_map=fix_map)  # the suggested fix works as given
    assert report.startswith("✅ Wrote 5 rows to")
    assert sorted({json.loads(ln)["output"] for ln in Path(out).read_text(encoding="utf-8").splitlines()}) == \
        ["ham", "spam"]
    assert data_state(server)["keep.jsonl"] == kept["keep.jsonl"]


def test_gbk_and_utf8_bom_csv_are_read_correctly(server: Any) -> None:
    c = client(server)
    gbk = write(server, "gbk.csv", "评论,标签\n这个手机质量很好,好评\n物流太慢了,差评\n", encoding="gbk")
    loaded = upload(c, gbk)
    assert loaded[0] == "Read 2 rows and 2 columns from gbk.csv."
    assert loaded[1]["value"]["headers"] == ["评论", "标签"]
    assert loaded[1]["value"]["data"] == [["这个手机质量很好", "好评"], ["物流太慢了", "差评"]]
    assert loaded[10] == "好评=好评,差评=差评"  # the team's own label words are kept
    _, out = convert(c, "评论", "标签", "gbk", label_map=loaded[10])
    rows = [json.loads(ln) for ln in Path(out).read_text(encoding="utf-8").splitlines()]
    assert [(r["input"], r["output"]) for r in rows] == [("这个手机质量很好", "好评"), ("物流太慢了", "差评")]

    bom = write(server, "bom.csv", "text,label\n\u201cgreat\u201d phone,positive\nbroken,negative\n",
                encoding="utf-8-sig")
    loaded = upload(c, bom)
    assert loaded[1]["value"]["headers"] == ["text", "label"]  # no '\ufefftext' column
    assert loaded[1]["value"]["data"] == [["\u201cgreat\u201d phone", "positive"], ["broken", "negative"]]
    assert (loaded[4]["value"], loaded[5]["value"]) == (["text"], "label")  # the text role takes several columns


def test_file_over_the_upload_limit(server: Any, kept: dict) -> None:
    before = data_state(server)
    big = write(server, "big.csv", "text,label\n" + "this row is fine,positive\n" * 85000)  # ~2 MB
    assert 2 * 1024 * 1024 < big.stat().st_size < 3 * 1024 * 1024
    # a script using gradio_client is stopped before sending (the limit is in the app config)
    with pytest.raises(ValueError, match="exceeds the maximum file size of 1048576 bytes"):
        upload(client(server), big)
    # a client that skips that check is refused by the server itself
    with big.open("rb") as fh:
        r = httpx.post(server.url + "gradio_api/upload", files={"files": ("big.csv", fh)})
    # the login guard answers first, with the limit of this login's role in the studio's words
    assert r.status_code == 413 and "over the limit of 1 MB for this login" in r.json()["detail"], r.text
    # the same file typed as a workspace path goes through the studio's own check
    inside = server.workspace / "big.csv"
    inside.write_bytes(big.read_bytes())
    assert app_error(client(server).predict, "big.csv", api_name="/open_data") == \
        ("'big.csv' is 2.1 MB, over the 1 MB limit. Fix: split the file into smaller parts, or ask whoever runs the "
         "studio to raise its upload limit to at least 3 MB.")
    assert data_state(server) == before and before["keep.jsonl"] == kept["keep.jsonl"]


# ---------------------------------------------------------------- 2. malformed settings YAML
def test_malformed_settings_yaml(server: Any) -> None:
    from gradio_client import handle_file
    c = client(server)
    current = forms.config_to_values(Draft())
    cases = [("broken.yaml", "model_name_or_path: tiny-demo\nlearning_rate: [1e-4\nmax_steps: 10\n",
              "Config file 'broken.yaml' is not valid YAML at line 3, column 10. "
              "Fix: fix the indentation or quoting there (each line is 'key: value')."),
             ("typo.yaml", "learning_rat: 1e-4\n",
              "The run configuration has 1 problem: unknown key 'learning_rat' in typo.yaml (did you mean "
              "'Learning rate'?). Fix: correct the listed fields on the Settings tab."),
             ("list.yaml", "- a\n- b\n",
              "Config file 'list.yaml' must be a mapping of 'key: value' lines, not a list. "
              "Fix: write one 'key: value' per line.")]
    for name, text, message in cases:
        path = write(server, name, text)
        assert app_error(c.predict, handle_file(str(path)), *current, api_name="/load_yaml") == message


# ---------------------------------------------------------------- 3. typed paths outside the roots
def test_paths_outside_the_allowed_roots_are_refused(server: Any) -> None:
    c = client(server)
    ws = server.workspace.resolve()
    runs_before = sorted(p.name for p in (ws / "runs").iterdir())
    for field, value in (("model_name_or_path", "/etc"), ("output_dir", "/tmp/elsewhere/run"),
                         ("dataset", "/etc/passwd.jsonl"), ("dataset_dir", "../outside")):
        cfg = RunConfig(dataset=str(ws / "data" / "keep.jsonl")).replace(**{field: value})
        root = ws / "runs" if field == "output_dir" else ws  # a run folder belongs in the runs folder
        assert app_error(c.predict, *forms.config_to_values(cfg), api_name="/start") == \
            OUTSIDE.format(p=value, ws=root), field
    assert app_error(c.predict, "/etc/passwd", api_name="/open_data") == OUTSIDE.format(p="/etc/passwd", ws=ws)
    assert sorted(p.name for p in (ws / "runs").iterdir()) == runs_before
    assert not Path("/tmp/elsewhere/run").exists()


# ---------------------------------------------------------------- 4./5. runs: two clients, disconnects
@pytest.fixture(scope="module")
def reviews(server: Any) -> str:
    c = client(server)
    loaded = c.predict(api_name="/sample_data")
    return convert(c, "text", "label", "reviews", label_map=loaded[10])[1]


def tiny(dataset: str, **kw: Any) -> list[Any]:
    cfg = RunConfig(dataset=dataset, finetuning_type="full", cutoff_len=32, per_device_train_batch_size=4,
                    max_samples=64, logging_steps=1, save_steps=1000, plot_loss=False, **kw)
    return forms.config_to_values(cfg)


def poll_until(c: Any, cond: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.time() + timeout
    snap: dict[str, Any] = {}
    while time.time() < deadline:
        snap = c.predict(api_name="/poll")[3]
        if cond(snap):
            return snap
        time.sleep(0.3)
    raise AssertionError(f"timed out; last snapshot {snap}")


@pytest.mark.integration
def test_two_clients_press_start_at_once(server: Any, reviews: str) -> None:
    from gradio_client.exceptions import AppError
    runs = server.workspace.resolve() / "runs"
    before = {p.name for p in runs.iterdir()}
    values = tiny(reviews, max_steps=200, output_dir="runs/race")
    clients = [client(server), client(server)]
    gate = threading.Barrier(2)
    results: list[Any] = [None, None]

    def press(i: int) -> None:
        gate.wait()
        try:
            results[i] = clients[i].predict(*values, api_name="/start")
        except AppError as exc:
            results[i] = exc
    threads = [threading.Thread(target=press, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # one press starts the run; the other, the same settings by the same (here: no) login at the same moment, is
    # answered "already running" (or "already queued", had it come first) instead of training them twice
    started = [r for r in results if isinstance(r, dict)]
    refused = [r for r in results if isinstance(r, AppError)]
    assert len(started) == 1 and started[0]["queued"] == 0 and started[0]["busy"], results
    assert len(refused) == 1 and re.search("already queued|is training with these settings", str(refused[0])), results
    assert started[0]["run"] == str(runs / "race")
    assert {p.name for p in runs.iterdir()} - before == {"race"}  # the refused press made no folder
    clients[0].predict(api_name="/clear_queue")

    clients[1].predict(api_name="/abort")  # either client may stop the shared run
    snap = poll_until(clients[0], lambda s: not s["busy"])
    assert snap["state"] == "aborted" and snap["step"] < 200 and snap["reason"]
    ends = [e for e in map(json.loads, (runs / "race" / "trainer_log.jsonl").read_text().splitlines())
            if e["type"] == "end"]
    assert [e["state"] for e in ends] == ["aborted"]


@pytest.mark.integration
def test_run_survives_the_browser_disconnecting(server: Any, reviews: str) -> None:
    first = client(server)
    snap = first.predict(*tiny(reviews, max_steps=20, output_dir="runs/detached"), api_name="/start")
    run = snap["run"]
    first.close()  # the page goes away at once: its heartbeat stops, the server drops the session
    first.reset_session()
    later = client(server)  # a new page, opened while the run is still loading or training
    seen = []
    deadline = time.time() + 120
    while time.time() < deadline:
        s = later.predict(api_name="/poll")[3]
        assert s["run"] == run, s
        seen.append((s["state"], s["step"]))
        if not s["busy"]:
            break
        time.sleep(0.2)
    assert s["state"] == "finished" and s["step"] == s["total_steps"] == 20, s
    # the new page attached to the live run (not just to its result), and watched it reach the end
    assert seen[0][0] in ("starting", "running") and seen[0][1] < 20, seen
    assert [step for _, step in seen] == sorted(step for _, step in seen)
    events = [json.loads(ln) for ln in (Path(run) / "trainer_log.jsonl").read_text().splitlines()]
    progress = [e["step"] for e in events if e["type"] == "progress"]
    assert progress == list(range(1, 21))  # logging_steps=1: one event per step, in order
    assert events[-1]["type"] == "end" and events[-1]["state"] == "finished"
    assert re.search(r"\*\*Step 20 / 20\*\* \(100%\)", later.predict(api_name="/poll")[0])
