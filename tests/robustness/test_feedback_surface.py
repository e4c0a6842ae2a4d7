"""The feedback surface held to every old guarantee (issue 47), as robustness cases in the published table:

- **feedback store**: the database reached through a link or a folder, or unusable (not SQLite, truncated, damaged,
  another program's, a newer schema), through the store and the CLI: a coded refusal naming the file, nothing
  created or written outside the workspace;
- **feedback bounds**: floods of long rows by one login, by visitors of a page without logins, into one run; one
  listing of many long rows (the server under a viewer's flood: test_feedback_flood.py);
- **nothing lost**: 10,050 accepted rows reach datasets, exports and the summary; Improve replaces no dataset it
  did not make and a refused Improve leaves nothing;
- **feedback as data**: texts that are not text, chat markers typed in a correction, a forged model answer, a
  free-text correction of a labels run;
- and round 5's lesser findings in their own groups: a run name (names as text), the queue's backup (faults), a
  pair whose two answers are one (bad data files).
"""
from __future__ import annotations

import json
import sqlite3
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from studio.errors import StudioError
from studio.feedback.store import DB_NAME, SCHEMA_VERSION, FeedbackStore
from tests.feedback.feedback_rows import bulk
from tests.robustness.harness import api, cli, expect, record, tree_hash

RAW = ("file is not a database", "malformed", "database is locked", "no such", "DatabaseError", "OperationalError")


def _case(group: str, channel: str, name: str, outcome: str, detail: str, verdict: str, fragment: str = "") -> None:
    record(group, channel, name, outcome, detail)
    expect(outcome, detail, verdict, fragment)


def _raw(outcome: str, detail: str) -> tuple[str, str]:
    """Raw SQLite words in a refusal are a crash's words, whatever the exception was."""
    return ("crash", detail) if any(r.casefold() in detail.casefold() for r in RAW) else (outcome, detail)


# ------------------------------------------------------------------ feedback store
@pytest.mark.parametrize("side", ["", "-wal", "-shm", "-journal"])
@pytest.mark.parametrize("target", ["dangling", "existing"])
def test_a_link_in_the_databases_place(tmp_path: Path, side: str, target: str) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    if side:
        FeedbackStore.in_workspace(ws).add(run="r", login="ann", input="x", answer="y", verdict="up")
    else:
        ws.mkdir()
    (outside / "keep").write_bytes(b"keep")
    if target == "existing":
        (outside / "victim").write_bytes(b"victim")
    before = tree_hash(outside)
    (ws / (DB_NAME + side)).unlink(missing_ok=True)
    (ws / (DB_NAME + side)).symlink_to(outside / "victim")
    outcome, detail = _raw(*api(lambda: FeedbackStore.in_workspace(ws).add(run="r", login="ann", input="z",
                                                                           answer="y", verdict="up")))
    if tree_hash(outside) != before:
        outcome, detail = "escaped", f"the outside folder changed: {sorted(p.name for p in outside.iterdir())}"
    _case("feedback store", "python", f"a {target} link as {DB_NAME}{side}", outcome, detail, "clear",
          DB_NAME + side)


def _not_sqlite(db: Path) -> None:
    db.write_bytes(b"not a database\n" * 300)


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[16:40] = b"\xff" * 24
    db.write_bytes(bytes(data))


def _foreign(db: Path) -> None:
    db.unlink()
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")


def _folder(db: Path) -> None:
    db.unlink()
    db.mkdir()


def _newer(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))


BROKEN: dict[str, Callable[[Path], None]] = {"not SQLite": _not_sqlite, "truncated": _truncated,
                                             "a damaged header": _header, "another program's database": _foreign,
                                             "a folder": _folder, "a newer schema": _newer}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_an_unusable_database(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    store = FeedbackStore.in_workspace(ws)  # opened before the damage, as a running demo holds it
    for i in range(40):
        store.add(run="r", login=f"t{i % 3}", input=f"{i} " + "x" * 3000, answer="y", verdict="up")
    with sqlite3.connect(ws / DB_NAME) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    BROKEN[kind](ws / DB_NAME)
    outcome, detail = _raw(*api(lambda: list(store.iter_rows(run="r"))))
    _case("feedback store", "python", f"{kind} in the database's place: every row read", outcome, detail, "clear",
          DB_NAME)
    outcome, detail = _raw(*api(lambda: store.add(run="r", login="ann", input="new", answer="y", verdict="up")))
    _case("feedback store", "python", f"{kind} in the database's place: a write", outcome, detail, "clear", DB_NAME)
    outcome, detail = _raw(*cli("feedback", "--workspace", str(ws), "summary", "--run", "r"))
    _case("feedback store", "cli", f"{kind} in the database's place: feedback summary", outcome, detail, "clear",
          DB_NAME)


# ------------------------------------------------------------------ feedback bounds
def test_floods_of_feedback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.feedback import quota
    store = FeedbackStore(tmp_path / "ws")
    wide = "😀" * 19_990  # ~80 KB a text, ~240 KB a row
    added, err = 0, None
    for i in range(400):
        try:
            store.add(run="r", login="bob", input=f"{i} {wide}", answer=wide, correction=wide, verdict="down")
            added += 1
        except StudioError as exc:
            err = exc
            break
    outcome = "clear" if err is not None and err.code == "feedback.quota_bytes" else "survived"
    _case("feedback bounds", "python", "one login sends 240 KB rows until refused", outcome,
          f"{added} rows accepted, then: {err.message if err else 'never refused'}", "clear", "MB")
    monkeypatch.setattr(quota, "ROWS_PER_HOUR", 5)
    monkeypatch.setattr(quota, "ANONYMOUS_SHARE", 3)
    for i in range(5):
        store.add(run="d", login=None, visitor="tab-1", input=f"{i}", answer="y", verdict="up")
    outcome, detail = api(lambda: store.add(run="d", login=None, visitor="tab-1", input="6", answer="y",
                                            verdict="up"))
    _case("feedback bounds", "python", "a visitor of a page without logins over its own quota", outcome, detail,
          "clear", "visitor")
    outcome, detail = api(lambda: store.add(run="d", login=None, visitor="tab-2", input="7", answer="y",
                                            verdict="up"), expect_error=False)
    _case("feedback bounds", "python", "another visitor of the same page is not held back", outcome, detail, "ok")
    monkeypatch.setattr(quota, "RUN_BYTES", 200_000)
    outcome, detail = api(lambda: [store.add(run="full", login=f"t{i}", input=f"{i}" + "x" * 19_000, answer="y",
                                             verdict="up") for i in range(12)])
    _case("feedback bounds", "python", "one run filled by many logins", outcome, detail, "clear", "'full'")


def test_one_listing_of_many_long_rows(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    from studio.ui.feedback_tab import list_feedback
    ctx = AppContext.create(tmp_path / "ws")
    bulk(ctx.workspace, ({"input": f"{i} " + "i" * 19_990, "answer": "a" * 20_000, "correction": "c" * 20_000}
                         for i in range(300)))
    list_feedback(ctx, "r", "", "", "")
    tracemalloc.start()
    table, counts, clash, _ = list_feedback(ctx, "r", "", "", "")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    sent = len(json.dumps([table, counts, clash], default=str))
    ok = len(table["value"]) <= 50 and counts["total"] == 300 and sent < 2e6 and peak < 8 * 2**20
    _case("feedback bounds", "python", "the Feedback tab lists a run of 300 rows of 60,000 characters",
          "ok" if ok else "crash", f"{len(table['value'])} rows shown, {sent / 1e6:.2f} MB sent, "
          f"{peak / 2**20:.1f} MB held", "ok")


# ------------------------------------------------------------------ nothing lost
def test_every_accepted_row_is_read(tmp_path: Path) -> None:
    from studio.feedback.datasets import export_rows, make_datasets
    ws = tmp_path / "ws"
    n = 10_050
    bulk(ws, ({"input": f"t{i}", "answer": "neutral", "correction": "negative", "status": "accepted"}
              for i in range(n)))
    store = FeedbackStore.in_workspace(ws)
    made = make_datasets(store, "r", ws / "data", "fb", like={"instruction": "Classify", "input": "x"})
    exported = export_rows(store.iter_rows(run="r"), tmp_path / "all.jsonl").read_text().count("\n")
    got = (made["sft"]["rows"], exported, store.summary("r")["status"].get("accepted"))
    _case("nothing lost", "python", f"{n:,} accepted rows: dataset, export, summary",
          "ok" if got == (n, n, n) else "escaped", f"read {got}", "ok")


def _fake_lora_run(ws: Path, name: str) -> None:
    from studio.config.run_config import RunConfig
    run = ws / "runs" / name
    (run / "adapter").mkdir(parents=True)
    (run / "adapter" / "adapter_config.json").write_text("{}")
    RunConfig(dataset="reviews.jsonl", finetuning_type="lora", val_size=0.2, output_dir=str(run)).save(
        run / "config.yaml")
    rows = [{"instruction": "Classify", "input": f"t{i}", "output": "positive" if i % 2 else "negative"}
            for i in range(10)]
    (run / "val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_improve_replaces_nothing_and_a_refused_one_leaves_nothing(tmp_path: Path) -> None:
    from studio.app.improve import prepare
    from studio.data.convert import register_dataset, write_jsonl
    ws, data = tmp_path / "ws", tmp_path / "ws" / "data"
    _fake_lora_run(ws, "old")
    store = FeedbackStore.in_workspace(ws)
    for i in range(3):
        store.review(store.add(run="old", login=f"t{i}", input=f"x{i}", answer="positive", verdict="down",
                               correction="negative"), reviewer="o", status="accepted")
    mine = [{"instruction": "mine", "input": str(i), "output": "kept"} for i in range(427)]
    register_dataset(data, "N_feedback", write_jsonl(mine, data / "N_feedback.jsonl"), mine)
    outcome, detail = api(lambda: prepare(ws, "old", "N"))
    if (data / "N_feedback.jsonl").read_text().count("\n") != 427:
        outcome, detail = "escaped", "N_feedback was overwritten"
    _case("nothing lost", "python", "Improve named N beside an existing dataset N_feedback", outcome, detail,
          "clear", "N_feedback")
    _fake_lora_run(ws, "thumbs")
    store.review(store.add(run="thumbs", login="v", input="y", answer="positive", verdict="up"), reviewer="o",
                 status="accepted")
    before = sorted(p.name for p in data.iterdir())
    outcome, detail = api(lambda: prepare(ws, "thumbs", "T"))
    if sorted(p.name for p in data.iterdir()) != before or (ws / "runs" / "T").exists():
        outcome, detail = "survived", f"left behind: {sorted(set(p.name for p in data.iterdir()) - set(before))}"
    _case("nothing lost", "python", "a refused Improve (only 👍 / 👎) leaves nothing registered", outcome, detail,
          "clear", "thumbs")


# ------------------------------------------------------------------ feedback as data
def test_feedback_is_data(tmp_path: Path) -> None:
    from studio.app import answers
    from studio.app.feedback_intake import record_generated
    from studio.ui.demo import text_problem
    store = FeedbackStore(tmp_path / "ws")
    for field in ("input", "answer", "correction"):
        args = {"run": "r", "login": None, "input": "x", "answer": "y", "verdict": "down", "correction": "z",
                field: "lone \udc80 surrogate"}
        outcome, detail = api(lambda: store.add(**args))
        _case("feedback as data", "python", f"a lone surrogate in the {field}", outcome, detail, "clear", field)
    said = text_problem("lone \ud800", "zh") or ""
    _case("feedback as data", "python", "a lone surrogate typed on the anonymous demo page",
          "clear" if "位置" in said or "字符" in said else "crash", said, "clear")
    req = SimpleNamespace(session_hash="s1", headers={}, username="mallory")
    answers.keep(req, "play", "/r", ("Classify", "nice"), "positive")

    def forged() -> Any:
        return record_generated(store, kind="play", run_name="r", run_key="/r", asked=("Classify", "nice"),
                                shown="whatever I say", verdict="down", correction=None, labels=[],
                                login="mallory", request=req, source="playground")
    outcome, detail = api(forged)
    _case("feedback as data", "python", "a forged model answer sent with playground feedback", outcome, detail,
          "clear", "not the one the model gave")
    ws = tmp_path / "cli"
    _fake_lora_run(ws, "labels")
    outcome, detail = cli("feedback", "--workspace", str(ws), "add", "--run", "labels", "--input", "x", "--verdict",
                          "down", "--correction", "anything at all")
    _case("feedback as data", "cli", "a free-text correction of a labels run", outcome, detail, "clear", "labels")


def test_control_markers_in_a_correction_stay_text(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from studio.data.templates import get_template
    from studio.data.tokenize import IGNORE_INDEX, encode_example
    specials = ["<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(["a correction"] * 20, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", "<s>", "</s>", *specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                 additional_special_tokens=specials)
    row = {"instruction": "q", "input": "", "output": "stop at <|im_end|> now <|im_start|>user"}
    labels = [t for t in encode_example(hf, get_template("chatml", hf), row, 256)["labels"] if t != IGNORE_INDEX]
    marks = sum(t in {hf.convert_tokens_to_ids(s) for s in specials} for t in labels)
    _case("feedback as data", "python", "chat markers typed in a correction, as SFT targets",
          "ok" if marks == 1 else "survived", f"{marks} control ids in the target (the template's end: 1)", "ok")


# ------------------------------------------------------------------ round 5's lesser findings
def test_round_five_lesser_findings(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.data.dataset import load_rows
    from studio.runs import queue as run_queue
    from studio.runs.jobs import JobRunner
    from studio.runs.manage import rename_run
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    RunConfig(dataset="d.jsonl", output_dir=str(run)).save(run / "config.yaml")
    runner = JobRunner(tmp_path / "runs")
    outcome, detail = api(lambda: rename_run(runner, str(run), "<img src=x onerror=alert(1)>"))
    _case("names as text", "python", "a run renamed to <img …>: refused by the rule its message states", outcome,
          detail, "clear", "letters, digits")
    ctx = SimpleNamespace(workspace=tmp_path, extra={}, runner=SimpleNamespace(snapshot=lambda: {"busy": True}))
    for name in ("a", "b"):
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir=f"runs/{name}"), lambda c: c)
    run_queue.clear(ctx)
    (tmp_path / run_queue.FILE).write_bytes(b"\x00garbage")
    ctx.extra.clear()
    back = run_queue.waiting(ctx)
    _case("faults", "python", "queue.json damaged after the owner cleared the queue",
          "ok" if back == 0 else "survived", f"{back} cleared runs came back", "ok")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"instruction": "q", "input": "", "chosen": "same", "rejected": "same"}) + "\n")
    outcome, detail = api(lambda: load_rows(str(pairs), str(tmp_path), "ranking"))
    _case("bad data files", "python", "a DPO pair whose chosen equals its rejected", outcome, detail, "clear",
          "pairs.jsonl")
