"""State files fail loudly and lose nothing: an unreadable status.json, queue.json, settings.yaml,
dataset_info.json or login file is reported (which file, what to do, in English and Chinese), kept aside as
``<name>.corrupt-<UTC time>``, and everything else keeps working; the queue comes back from its last good copy;
a run's time comes only from recorded timestamps."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.runs.run_dir import RunDir

GARBAGE = b"\x00\xff{not json: [\n"


def _ctx(tmp_path: Path) -> Any:
    from studio.app.context import AppContext
    return AppContext.create(tmp_path / "ws")


def _kept_aside(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.corrupt-*"))


def _finished(path: Path) -> RunDir:
    run = RunDir(path).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(path)).save(run.config)
    run.adapter.mkdir()
    (run.adapter / "adapter_config.json").write_text("{}")
    run.append_event({"type": "progress", "step": 6, "total_steps": 6, "loss": 1.0})
    run.append_event({"type": "end", "state": "finished", "step": 6})
    return run


def test_a_garbage_status_json_keeps_the_finished_run_and_says_so(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    run = _finished(ctx.runs_root / "done")
    run.status_file.write_bytes(GARBAGE)
    rows = {r["name"]: r for r in ctx.runner.past_runs()}
    assert rows["done"]["state"] == "finished", rows["done"]  # rebuilt from the run's own log
    assert "status.json" in rows["done"]["reason"], rows["done"]
    kept = _kept_aside(run.path, "status.json")
    assert len(kept) == 1 and kept[0].read_bytes() == GARBAGE  # nothing lost
    from studio.evaluation.inference import finished_runs
    assert any(str(run.path) == v for _, v in finished_runs(ctx.runs_root)), "the run dropped out of Evaluate"


def test_the_page_names_the_file_and_the_fix_in_both_languages(tmp_path: Path) -> None:
    from studio.app.state_problems import state_problems_markdown
    ctx = _ctx(tmp_path)
    run = _finished(ctx.runs_root / "done2")
    run.status_file.write_bytes(GARBAGE)
    ctx.runner.past_runs()
    en, zh = state_problems_markdown("en"), state_problems_markdown("zh")
    assert str(run.status_file) in en and ".corrupt-" in en and "fix" in en.lower(), en
    assert str(run.status_file) in zh and "文件" in zh, zh


def test_a_corrupt_queue_comes_back_from_its_backup(tmp_path: Path) -> None:
    from studio.runs import queue as run_queue
    ctx = _ctx(tmp_path)
    ctx.runner.snapshot = lambda *a, **k: {"busy": True}  # type: ignore[method-assign]
    for name in ("a", "b"):
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir=f"runs/{name}"), lambda c: c)
    queue = ctx.workspace / run_queue.FILE
    assert [r["output_dir"] for r in json.loads((ctx.workspace / (run_queue.FILE + ".bak")).read_text())] == \
        ["runs/a", "runs/b"]  # the backup holds the latest state, not the one before
    queue.write_bytes(GARBAGE)  # the disk garbled the newest copy
    ctx.extra.clear()  # a restarted server
    assert run_queue.waiting(ctx) == 2, "the queued runs were dropped instead of restored from queue.json.bak"
    assert [k.read_bytes() for k in _kept_aside(ctx.workspace, run_queue.FILE)] == [GARBAGE]


def test_a_garbage_settings_yaml_is_reported_and_kept(tmp_path: Path) -> None:
    from studio.app import settings as simple
    ctx = _ctx(tmp_path)
    folder = simple.settings_folder(ctx, None)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / simple.SETTINGS_FILE).write_bytes(b"lora_rank: [unclosed\n\x00")
    values, _, why = simple.restore(ctx)
    assert values  # the page still opens, with derived settings
    assert "settings.yaml" in why and ".corrupt-" in why, why
    assert len(_kept_aside(folder, simple.SETTINGS_FILE)) == 1


def test_a_garbage_dataset_info_does_not_stop_the_data_tab(tmp_path: Path) -> None:
    from studio.ui import data_tab
    ctx = _ctx(tmp_path)
    info = ctx.data_root / "dataset_info.json"
    info.write_bytes(GARBAGE)
    src = ctx.workspace / "reviews.csv"
    src.write_text("text,label\ngood film,positive\nbad film,negative\nfine film,positive\nawful,negative\n")
    report, out = data_tab.convert(ctx, str(src), "sentiment", {"text": "text", "label": "label"}, "", "", "reviews")
    assert Path(out).is_file() and "dataset_info.json" in report and ".corrupt-" in report, report
    assert json.loads(info.read_text())["reviews"]["file_name"] == "reviews.jsonl"
    assert [k.read_bytes() for k in _kept_aside(ctx.data_root, "dataset_info.json")] == [GARBAGE]


def test_an_unreadable_login_file_is_a_clear_refusal(tmp_path: Path) -> None:
    from studio.app import server_flags as app
    p = argparse.ArgumentParser()
    app.add_arguments(p)
    logins = tmp_path / "logins"
    logins.write_bytes(b"alice:\xff\xfe\x00pw\n")
    with pytest.raises(StudioError) as err:
        app.parse_logins(p.parse_args(["--auth-file", str(logins)]))
    assert str(logins) in err.value.message and "Fix:" in err.value.message
    assert logins.read_bytes() == b"alice:\xff\xfe\x00pw\n"  # the operator's file is never moved or changed


@pytest.mark.parametrize("status", [{"state": "failed", "ended": time.time()},           # never started
                                    {"state": "aborted", "started": time.time()},          # never ended
                                    {"state": "failed", "started": time.time(), "ended": 5.0}])  # clock went back
def test_a_runs_time_comes_only_from_recorded_timestamps(tmp_path: Path, status: dict[str, Any]) -> None:
    from studio.ui import runs_tab
    ctx = _ctx(tmp_path)
    run = RunDir(ctx.runs_root / "orphan").ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(run.path)).save(run.config)
    run.status_file.write_text(json.dumps(status))
    row = runs_tab.table_rows(runs_tab.run_table(ctx), "en")[0]
    time_cell = row[6]
    assert time_cell in ("", "—"), f"a run without both timestamps shows a time: {time_cell!r}"


def test_a_cleared_queue_stays_cleared_when_queue_json_is_damaged(tmp_path: Path) -> None:
    """The backup was one write behind: runs the owner had cleared came back from queue.json.bak."""
    from studio.runs import queue as run_queue
    ctx = _ctx(tmp_path)
    ctx.runner.snapshot = lambda *a, **k: {"busy": True}  # type: ignore[method-assign]
    for name in ("a", "b"):
        run_queue.submit(ctx, RunConfig(dataset="d.jsonl", output_dir=f"runs/{name}"), lambda c: c)
    assert run_queue.clear(ctx) == 2
    (ctx.workspace / run_queue.FILE).write_bytes(GARBAGE)
    ctx.extra.clear()  # a restarted server
    assert run_queue.waiting(ctx) == 0, "cleared runs came back from queue.json.bak"
