"""Issue 49 on a tiny labels run, through the services the page and the command line call: the "least sure"
queue, Improve keeping rows aside and inheriting held-out rows, the verdict on the frozen check set, and the
owner's promote / roll back that alone change what teammates see."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from studio.app import improve, least_sure, verdict, versions
from studio.errors import StudioError
from studio.evaluation import inference
from studio.evaluation.uncertainty import margin
from studio.feedback.check_set import is_aside
from studio.feedback.store import FeedbackStore
from studio.runs.run_dir import RunDir

try:
    from conftest import make_review_rows, train_tiny_labels_run
except ImportError:  # tests/ as a package
    from tests.conftest import make_review_rows, train_tiny_labels_run


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    ws = tmp_path_factory.mktemp("gate")
    train_tiny_labels_run(ws, tiny_model_dir)
    return ws


def _texts_file(tmp: Path, rows: list[dict]) -> Path:
    path = tmp / "texts.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text"])
        w.writerows([[r["input"]] for r in rows])
    return path


def test_the_queue_is_the_least_sure_rows_first_and_records_what_the_server_answered(ws: Path, tmp_path: Path) -> None:
    run = str(ws / "runs" / "old")
    rows = make_review_rows(30, seed=31)
    q = least_sure.build_queue(run, str(_texts_file(tmp_path, rows)), k=5)
    assert q["task"] == "labels" and q["pool"] == 30 and len(q["items"]) == 5
    labels, like = inference.label_task(run)
    every = inference.label_probabilities(run, [r["input"] for r in rows], labels, like)
    margins = sorted(round(margin(s), 4) for s in every)
    assert [i["sureness"] for i in q["items"]] == margins[:5]   # the five smallest margins, least sure first
    store = FeedbackStore.in_workspace(tmp_path)
    first = q["items"][0]
    other = next(lab for lab in labels if lab != first["answer"])
    q, fid = least_sure.answer(q, store, "bob", "down", other.upper())   # a label typed in another case
    row = store.get(fid)
    assert (row.login, row.input, row.answer, row.correction, row.verdict, row.source) == \
        ("bob", first["text"], first["answer"], other, "down", "batch")
    q, fid = least_sure.answer(q, store, "bob", "up")
    assert store.get(fid).verdict == "up" and least_sure.current(q) is q["items"][2]
    q, fid = least_sure.answer(q, store, "bob", "skip")
    assert fid is None and store.count() == 2
    with pytest.raises(StudioError) as e:
        least_sure.answer(q, store, "bob", "down", "not-a-label")
    assert e.value.code == "feedback.not_label"
    with pytest.raises(StudioError) as e:
        least_sure.build_queue(run, str(_texts_file(tmp_path, rows)), k=500)
    assert e.value.code == "queue.size"


def test_a_plan_with_nothing_to_teach_says_why_in_words(ws: Path) -> None:
    from studio.words.catalog import msg
    p = improve.plan(ws, "old")   # before any feedback (the next test adds it)
    assert p["method"] is None and p["why"] == "imp.no_corrections"
    assert msg(p["why"], "zh", **p["why_values"]) != msg(p["why"], "en", **p["why_values"])


def test_improve_judge_promote_and_roll_back(ws: Path) -> None:
    from studio.engine import run_training
    store = FeedbackStore.in_workspace(ws)
    fb = make_review_rows(30, seed=9)
    for i, r in enumerate(fb):   # half corrections (to the right label), half 👍 on right answers
        wrong = "negative" if r["output"] == "positive" else "positive"
        fid = store.add(run="old", login=f"t{i % 3}", input=r["input"], answer=r["output"] if i % 2 else wrong,
                        verdict="up" if i % 2 else "down", correction=None if i % 2 else r["output"])
        store.review(fid, reviewer="owner", status="accepted")
    aside = {r["input"] for r in fb if is_aside(r["input"])}
    assert 0 < len(aside) < len(fb)
    p = improve.plan(ws, "old", "auto")
    assert p["method"] == "sft" and p["aside"] == len({r["input"] for r in fb} & aside) and p["confirmed"] > 0
    assert improve.plan(ws, "old", "dpo")["warning"] == "imp.dpo_labels"   # said before a DPO run starts

    cfg = improve.prepare(ws, "old", "new")
    new = ws / "runs" / "new"
    taught = [json.loads(x) for x in (ws / "data" / "new_feedback.jsonl").read_text().splitlines()]
    assert {t["input"] for t in taught} & aside == set()          # kept aside: never trained on
    assert any(t["output"] for t in taught if t["input"] in {r["input"] for i, r in enumerate(fb) if i % 2})
    check = verdict.check_rows(new)
    assert {c["input"] for c in check if c["from"] == "feedback"} == aside
    assert [c for c in check if c["from"] == "held_out"] and RunDir(new).val_data.is_file()

    # nothing is promoted by Improve, and nothing before a verdict
    assert versions.live(store, ws / "runs", "old") == "old"
    assert run_training(cfg.replace(max_steps=3))["state"] == "finished"
    with pytest.raises(StudioError) as e:
        versions.promote(store, ws / "runs", "new", "alice")
    assert e.value.code == "gate.not_judged"
    assert inference.label_task(str(new)) is not None   # inherited held-out rows: a labels run with an accuracy

    v = verdict.judge(new, ws / "runs" / "old")
    assert v["n"] == len(check) and v["parts"]["feedback"]["n"] == len(aside)
    b, a = v["before"], v["after"]
    assert a["right"] - b["right"] == v["flipped_right"] - v["flipped_wrong"]
    assert set(b["per_label"]) == {"negative", "positive"}
    assert verdict.stored(new) == json.loads(json.dumps(v))   # kept with the run: shown again on reopening
    assert v["gate"]["passed"] == (a["right"] >= b["right"] and v["gate"]["code"] == "gate.passed")

    if not v["gate"]["passed"]:
        with pytest.raises(StudioError) as e:
            versions.promote(store, ws / "runs", "new", "alice")
        assert e.value.code == "gate.refused"
    versions.promote(store, ws / "runs", "new", "alice", anyway=not v["gate"]["passed"])
    assert versions.live(store, ws / "runs", "old") == "new" and versions.line_of(ws / "runs", "new") == "old"
    with pytest.raises(StudioError) as e:
        versions.promote(store, ws / "runs", "new", "alice", anyway=True)
    assert e.value.code == "gate.already_live"
    assert versions.rollback(store, ws / "runs", "new", "alice") == {"line": "old", "live": "old", "was": "new"}
    with pytest.raises(StudioError) as e:
        versions.rollback(store, ws / "runs", "old", "alice")
    assert e.value.code == "gate.nothing_to_undo"
    hist = store.version_history("old")
    assert [(h["run"], h["action"], h["login"]) for h in hist] == [("new", "promote", "alice"),
                                                                   ("old", "rollback", "alice")]
