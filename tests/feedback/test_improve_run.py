"""`python -m studio feedback improve|compare`: a tiny labels run, its accepted corrections, the improving run
trained for real (a few steps) and both runs scored side by side; and the errors users get instead of tracebacks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.cli.main import main as cli
from studio.config.run_config import RunConfig
from studio.feedback.store import FeedbackStore
from studio.runs.run_dir import RunDir

try:
    from conftest import add_corrections, make_review_rows, train_tiny_labels_run
except ImportError:  # tests/ as a package
    from tests.conftest import add_corrections, make_review_rows, train_tiny_labels_run


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """runs/old trained on 40 reviews, with 6 accepted corrections of answers it gave (and one row left new)."""
    ws = tmp_path_factory.mktemp("ws")
    train_tiny_labels_run(ws, tiny_model_dir)
    add_corrections(ws, 7, accepted=6)
    return ws


def _cli(ws: Path, *args: str) -> list[str]:
    return ["feedback", "--workspace", str(ws), *args]


def test_improve_trains_a_new_run_and_compare_shows_both_runs_side_by_side(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli(_cli(workspace, "improve", "old", "--name", "new", "--quiet")) == 0
    out = capsys.readouterr()
    assert json.loads(out.out.strip().splitlines()[-1])["state"] == "finished"
    assert "method sft" in out.err  # auto on a labels run: SFT with replay, although pairs exist
    new = RunDir(workspace / "runs" / "new")
    # none of the 6 corrections' inputs falls in the one-in-five kept aside (feedback/check_set.py)
    assert json.loads(new.lineage.read_text()) == {"run": "old", "method": "sft", "feedback_rows": 6,
                                                   "feedback_data": "new_feedback",
                                                   "data_dir": str(workspace / "data"), "corrections": 6,
                                                   "confirmed": 0, "aside": 0,
                                                   "check_set": {"held_out": 8, "feedback": 0}}
    assert "Check passed" in out.err or "Check failed" in out.err  # the verdict, printed once it trained
    cfg = RunConfig.load(new.config)
    assert cfg.adapter_name_or_path == str(RunDir(workspace / "runs" / "old").adapter)

    assert cli(_cli(workspace, "compare", "new", "--json")) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["old_run"], result["new_run"], result["labels"]) == ("old", "new", ["negative", "positive"])
    held, fb = result["sets"]["held_out"], result["sets"]["feedback"]
    assert held["old"]["n"] == held["new"]["n"] == 8  # 20% of 40 held out by the old run
    assert fb["old"]["n"] == 6  # the accepted corrections only
    for side in (held, fb):
        assert side["delta"]["accuracy"] == pytest.approx(side["new"]["accuracy"] - side["old"]["accuracy"])
        for lab in ("negative", "positive"):
            assert side["delta"]["per_class"][lab] == pytest.approx(
                side["new"]["per_class"][lab]["f1"] - side["old"]["per_class"][lab]["f1"])

    assert cli(_cli(workspace, "compare", "new")) == 0
    table = capsys.readouterr().out
    assert "improved from old with 6 feedback rows (sft)" in table
    assert "held-out rows of old (n=8)" in table and "feedback rows (n=6)" in table and "F1 positive" in table

    # the gate on the command line: the verdict, then promote (an owner's word after it) and roll back
    assert cli(_cli(workspace, "verdict", "new", "--json")) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["n"] == 8 and v["parts"]["held_out"]["n"] == 8 and set(v["before"]["per_label"]) == {"negative",
                                                                                                  "positive"}
    promote = ["promote", "new"] + ([] if v["gate"]["passed"] else ["--anyway"])
    assert cli(_cli(workspace, *promote)) == 0
    assert "Teammates of old now see new." in capsys.readouterr().out
    assert cli(_cli(workspace, "versions")) == 0
    assert "old: old -> new (live: new)" in capsys.readouterr().out
    assert cli(_cli(workspace, "rollback", "new")) == 0
    assert "Teammates of old now see old." in capsys.readouterr().out


def test_dpo_is_chosen_only_when_asked_for_a_labels_run(workspace: Path) -> None:
    from studio.app.improve import plan, prepare
    assert plan(workspace, "old") == {"corrections": 6, "pairs": 6, "confirmed": 0, "aside": 0, "skipped": 0,
                                      "method": "sft", "why": "", "why_values": {}, "warning": None}
    assert plan(workspace, "old", "dpo")["warning"] == "imp.dpo_labels"
    assert plan(workspace, "old", "dpo")["method"] == "dpo"
    cfg = prepare(workspace, "old", "as-dpo", method="dpo")
    assert (cfg.stage, cfg.dataset) == ("dpo", "as-dpo_feedback_pref")
    assert json.loads(RunDir(cfg.output_dir).lineage.read_text())["method"] == "dpo"


@pytest.mark.parametrize("args, words", [
    (("improve", "nope"), "There is no run 'nope'"),
    (("improve", "old", "--name", "old"), "Run 'old' already exists"),
    (("improve", "old", "--name", "../x"), "name"),
    (("compare", "old"), "was not made by 'Improve this run'"),
    (("compare", "ghost"), "There is no run 'ghost'"),
])
def test_errors_are_one_plain_line(workspace: Path, capsys: pytest.CaptureFixture, args: tuple, words: str) -> None:
    assert cli(_cli(workspace, *args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and words in err and "Traceback" not in err


def test_a_run_without_accepted_feedback_is_refused(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    import shutil
    shutil.copytree(workspace / "runs" / "old", workspace / "runs" / "quiet")
    assert cli(_cli(workspace, "improve", "quiet")) == 2
    assert "no accepted feedback" in capsys.readouterr().err
    assert not (workspace / "runs" / "quiet-improved").exists()  # nothing half-made



def test_dpo_without_pairs_is_refused_before_any_dataset_is_written(workspace: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    import shutil
    shutil.copytree(workspace / "runs" / "old", workspace / "runs" / "plain")
    store = FeedbackStore.in_workspace(workspace)
    for i, r in enumerate(make_review_rows(2, seed=4)):  # corrections with no model answer: no pair
        store.review(store.add(run="plain", login=f"p{i}", input=r["input"], answer="", verdict="down",
                               correction=r["output"]), reviewer="owner", status="accepted")
    assert cli(_cli(workspace, "improve", "plain", "--method", "dpo")) == 2
    assert "no (correction, model answer) pair" in capsys.readouterr().err
    assert not list((workspace / "data").glob("plain-improved*")) and not (workspace / "runs" / "plain-improved").exists()


def test_the_page_box_plans_queues_and_shows_before_and_after(workspace: Path, tiny_model_dir: Path) -> None:
    """What the Train tab's box calls (app/improve_page.py): the real run queue trains the improving run in its
    own process, then the comparison appears."""
    import time
    from studio.app import improve_page
    from studio.app.context import AppContext
    ctx = AppContext.create(workspace, data_roots=[tiny_model_dir])  # its base model is allowed, as when it trained
    assert improve_page.feedback_runs(ctx)[0] == ("old · 6 accepted", "old")
    said = improve_page.plan_text(ctx, "old", "auto")
    assert "6 correction(s), 6 preference pair(s)" in said and "**SFT**" in said
    assert "**DPO**" in improve_page.plan_text(ctx, "old", "dpo")
    ctx.lang = "zh"
    assert "6 条更正" in improve_page.plan_text(ctx, "old", "auto")
    ctx.lang = "en"
    made = improve_page.queue_improvement(ctx, "old", "auto")
    assert made["place"] == 0 and Path(made["run"]).name.startswith("old-improved")
    deadline = time.time() + 300
    text, done = improve_page.progress_text(ctx, made["run"])
    while not done and time.time() < deadline:
        time.sleep(1)
        text, done = improve_page.progress_text(ctx, made["run"])
    assert done and "improved from **old** with 6 feedback rows (sft)" in text, text
    assert "held-out rows of old" in text and "| F1 positive |" in text and "| accuracy |" in text
    assert improve_page.lineage_line(made["run"], "en") == "improved from old with 6 feedback rows (sft)"
    assert improve_page.lineage_line(workspace / "runs" / "old", "en") == ""


def test_the_improve_button_is_an_owner_action(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    from studio.app.roles import is_owner_only
    from studio.ui.app import build_app
    app = build_app(AppContext.create(tmp_path / "ws"))
    named = {fn.api_name: fn.fn for fn in app.fns.values() if fn.api_name}
    assert is_owner_only(named["improve"])


def _registered(ws: Path) -> dict:
    info = ws / "data" / "dataset_info.json"
    return json.loads(info.read_text()) if info.is_file() else {}


@pytest.mark.parametrize("n, suffix", list(enumerate(["_feedback", "_feedback_pref", "_feedback_kto",
                                                      "_feedback_replay"])))
def test_improve_never_replaces_a_dataset_it_did_not_make(workspace: Path, n: int, suffix: str) -> None:
    """Someone's dataset under a name an Improve would make (NEW_feedback, _pref, _kto, _replay) stays as it is:
    "Improve this run" named N used to overwrite N_feedback (427 rows became 8)."""
    from studio.app.improve import prepare
    from studio.data.convert import write_jsonl
    from studio.data.registry import register_dataset
    from studio.data.dataset import load_rows
    from studio.errors import StudioError
    data, new = workspace / "data", f"keep{n}"
    mine = [{"instruction": "mine", "input": str(i), "output": "kept"} for i in range(5)]
    register_dataset(data, new + suffix, write_jsonl(mine, data / f"{new}{suffix}.jsonl"), mine)
    before = _registered(workspace)
    with pytest.raises(StudioError) as err:
        prepare(workspace, "old", new)
    assert err.value.code == "improve.dataset_taken" and f"{new}{suffix}" in err.value.message
    assert load_rows(new + suffix, str(data)) == mine and _registered(workspace) == before
    assert not (workspace / "runs" / new).exists()


def test_a_refused_improve_leaves_nothing_registered(workspace: Path) -> None:
    """Only 👎 without a correction on a run: nothing to train on (a confirmed 👍 teaches; a bare 👎 says only "not
    this one"). The refusal used to come after N_feedback_kto was written."""
    import shutil
    from studio.app.improve import prepare
    from studio.errors import StudioError
    shutil.copytree(workspace / "runs" / "old", workspace / "runs" / "thumbs")
    store = FeedbackStore.in_workspace(workspace)
    for i, verdict in enumerate(["down", "down", "down"]):
        store.review(store.add(run="thumbs", login=f"v{i}", input=f"a tweet {i}", answer="positive",
                               verdict=verdict), reviewer="owner", status="accepted")
    before, files = _registered(workspace), sorted((workspace / "data").glob("*"))
    with pytest.raises(StudioError) as err:
        prepare(workspace, "thumbs", "thumbs-new")
    assert err.value.code == "feedback.no_correction"
    assert _registered(workspace) == before and sorted((workspace / "data").glob("*")) == files
    assert not (workspace / "runs" / "thumbs-new").exists()


def test_an_improve_the_queue_refuses_leaves_nothing_behind(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.app import improve_page
    from studio.app.context import AppContext
    from studio.errors import StudioError

    def full(*a: object, **k: object) -> int:
        raise StudioError.of("run.queue_full", n=5)
    monkeypatch.setattr(improve_page.run_queue, "submit", full)
    ctx = AppContext.create(workspace)
    before, runs = _registered(workspace), sorted(p.name for p in (workspace / "runs").iterdir())
    with pytest.raises(StudioError, match="waiting in the queue"):
        improve_page.queue_improvement(ctx, "old", "auto")
    assert _registered(workspace) == before
    assert sorted(p.name for p in (workspace / "runs").iterdir()) == runs


def test_the_queue_and_agreement_verbs(workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text("text\n" + "\n".join(r["input"] for r in make_review_rows(12, seed=40)) + "\n")
    assert cli(_cli(workspace, "queue", "old", str(texts), "--n", "3")) == 0
    items = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(items) == 3 and [i["sureness"] for i in items] == sorted(i["sureness"] for i in items)
    assert {i["answer"] for i in items} <= {"negative", "positive"}
    store = FeedbackStore.in_workspace(workspace)
    for who, said in (("ann", "positive"), ("cy", "negative")):  # two people, one text, two labels
        store.add(run="old", login=who, input="a text two people read", answer="positive",
                  verdict="up" if said == "positive" else "down", correction=None if said == "positive" else said)
    assert cli(_cli(workspace, "agreement", "--run", "old")) == 0
    out = capsys.readouterr().out
    assert "ann & cy: 1 shared row(s), 0 agree" in out and "1 input(s) in conflict" in out
