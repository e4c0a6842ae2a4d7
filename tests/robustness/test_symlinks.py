"""No symlink is followed out of the workspace, by any read, copy, zip, export, delete, rename or download.

Links to a canary file and a canary folder outside the workspace are planted in every kind of folder the studio
keeps (the workspace root, data, runs, a run folder, its checkpoints, its adapter and model folders, exports, the
model cache, the model uploads and a prepared model, and a whole run folder that is a link), then every
operation runs on them: the listing of runs and datasets, exports (adapter folder, full model folder, merged,
GGUF, quantized, the deploy report), the download zip, loading a run or a prepared model, rename and delete. No canary byte may come back (zips opened, exported
folders read) and nothing outside may change (the canary tree is hashed before and after).

The second test holds the rule in one place: no module copies, zips or archives except through
studio/safe_files.py, so tomorrow's export is covered the day it is written.
"""
from __future__ import annotations

import io
import os
import re
import uuid
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest

from studio.errors import StudioError
from tests.robustness.harness import record, tree_hash as _tree_hash

GROUP = "security"
CANARY = f"CANARY-LINK-{uuid.uuid4().hex}".encode()
ROOT = Path(__file__).resolve().parents[2]



def _plant(folder: Path, outside: Path, tag: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{tag}-file-link.txt").symlink_to(outside / "canary.txt")
    (folder / f"{tag}-dir-link").symlink_to(outside / "secret")


@pytest.fixture()
def area(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from studio.app.context import AppContext
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (outside / "canary.txt").write_bytes(CANARY)
    (outside / "secret" / "weights.safetensors").write_bytes(CANARY)
    (outside / "secret" / "config.json").write_bytes(b'{"model_type": "llama", "note": "' + CANARY + b'"}')
    # an outside "run" a link in the runs folder points at: listing or exporting it would read outside
    fake = outside / "fake-run"
    RunDir(fake).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(fake), finetuning_type="full").save(fake / "config.yaml")
    (fake / "status.json").write_text('{"state": "finished"}')
    (fake / "model").mkdir()
    (fake / "model" / "config.json").write_bytes(CANARY)
    cache = tmp_path / "cache"
    monkeypatch.setenv("STUDIO_MODEL_CACHE", str(cache))
    ctx = AppContext.create(tmp_path / "ws")
    ws = ctx.workspace
    for run_name, kind in (("lora", "adapter"), ("full", "model")):
        run = RunDir(ctx.runs_root / run_name).ensure()
        RunConfig(dataset="d.jsonl", output_dir=str(run.path),
                  finetuning_type="lora" if kind == "adapter" else "full").save(run.config)
        run.write_status("finished", started=1.0, ended=2.0)
        final = run.path / kind
        final.mkdir()
        (final / ("adapter_config.json" if kind == "adapter" else "config.json")).write_text("{}")
        (final / "weights.safetensors").write_bytes(b"real weights")
        _plant(final, outside, kind)
        _plant(run.path, outside, "run")
        _plant(run.checkpoints / "checkpoint-1", outside, "ckpt")
    (ctx.runs_root / "linked-run").symlink_to(fake)
    (outside / "rows.jsonl").write_bytes(b'{"instruction": "i", "input": "", "output": "' + CANARY + b'"}\n')
    held = RunDir(ctx.runs_root / "heldout").ensure()  # its held-out rows are a link out
    RunConfig(dataset="d.jsonl", output_dir=str(held.path), val_size=0.1).save(held.config)
    held.val_data.symlink_to(outside / "rows.jsonl")
    talky = RunDir(ctx.runs_root / "talky").ensure()  # its log, output and STOP flag are links out
    RunConfig(dataset="d.jsonl", output_dir=str(talky.path)).save(talky.config)
    talky.write_status("aborted", started=1.0, ended=2.0)
    for f in (talky.stdout, talky.log, talky.stop_flag, talky.train_keys):
        f.symlink_to(outside / "canary.txt")
    _plant(ws, outside, "ws")
    _plant(ctx.data_root, outside, "data")
    (ctx.data_root / "stolen.jsonl").symlink_to(outside / "canary.txt")
    _plant(ws / "exports" / "old-export", outside, "export")
    _plant(cache, outside, "cache")
    _plant(ws / "models" / "uploads", outside, "uploads")  # .gguf uploads (studio/app/gguf_upload.py)
    prepared = ws / "models" / "prepared"  # a model prepared from an upload
    prepared.mkdir(parents=True)
    (prepared / "config.json").write_text('{"model_type": "llama"}')
    _plant(prepared, outside, "prepared")
    return {"ctx": ctx, "outside": outside, "hash": _tree_hash(outside), "tmp": tmp_path}


def _leaked(value: Any, area: dict[str, Any], seen: set[str]) -> str | None:
    """A canary byte in what an operation returned, or in a file under the workspace (zips opened) that an earlier
    operation did not already show (``seen``)."""
    if CANARY in repr(value).encode():
        return "the answer holds the canary"
    ws = area["ctx"].workspace
    for p in ws.rglob("*"):
        if str(p) in seen:
            continue
        if p.is_symlink() or not p.is_file():
            continue
        data = p.read_bytes()
        if CANARY in data:
            seen.add(str(p))
            return f"{p.relative_to(ws)} holds the canary"
        if zipfile.is_zipfile(io.BytesIO(data)):
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if any(CANARY in zf.read(n) for n in zf.namelist() if not n.endswith("/")):
                    seen.add(str(p))
                    return f"zip {p.relative_to(ws)} holds the canary"
    return None


def _operations(area: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    from studio.app.datasets import datasets
    from studio.evaluation.deploy_report import deploy_report
    from studio.evaluation.inference import export_run, finished_runs
    from studio.evaluation.evaluate import validation_rows
    from studio.evaluation.leakage import training_keys
    from studio.runs.run_dir import RunDir
    from studio.evaluation.export import export_model
    from studio.evaluation.quantize import quantize_export
    from studio.models.loading import load_for_inference
    from studio.runs.manage import delete_runs, rename_run
    from studio.app.downloads import stream_zip
    ctx = area["ctx"]
    runs, exports = ctx.runs_root, ctx.workspace / "exports"

    def zipped(folder: Path) -> bytes:
        data = b"".join(stream_zip(folder))
        (area["tmp"] / "ws" / "exports" / f"{folder.name}.zip").write_bytes(data)
        return data
    return {
        "list runs": lambda: ctx.runner.past_runs(),
        "list finished runs (Evaluate)": lambda: finished_runs(runs),
        "list datasets (Settings)": lambda: datasets(ctx),
        "export adapter folder": lambda: export_run(str(runs / "lora"), exports, merge=False, name="e-adapter"),
        "export full model folder": lambda: export_run(str(runs / "full"), exports, name="e-full"),
        "export merged": lambda: export_run(str(runs / "lora"), exports, merge=True, name="e-merged"),
        "export GGUF": lambda: export_run(str(runs / "full"), exports, name="e-gguf", fmt="f16"),
        "export quantized": lambda: quantize_export(runs / "full", exports / "e-q8", bits=8),
        "deploy report": lambda: deploy_report(runs / "full", [{"text": "a", "label": "b"}], labels=["b"]),
        "export the linked outside run": lambda: export_run(str(runs / "linked-run"), exports, name="e-linked"),
        "load a run for evaluation": lambda: load_for_inference(runs / "full"),
        "held-out rows of a run (Evaluate)": lambda: validation_rows(runs / "heldout"),
        "a run's status, log and events on the page": lambda: ctx.runner.snapshot(RunDir(runs / "talky")),
        "who stopped a run": lambda: RunDir(runs / "talky").stopped_by(),
        "the training keys of a run (leakage check)": lambda: training_keys(runs / "talky"),
        "a run appends an event to its log": lambda: RunDir(runs / "talky").append_event({"type": "log"}),
        "load a prepared model folder": lambda: load_for_inference(ctx.workspace / "models" / "prepared"),
        "export a prepared model folder": lambda: export_model(ctx.workspace / "models" / "prepared",
                                                               exports / "e-prepared"),
        "download zip of the uploads folder": lambda: zipped(ctx.workspace / "models" / "uploads"),
        "download zip of an export": lambda: zipped(exports / "old-export"),
        "download zip of a run's model": lambda: zipped(runs / "full" / "model"),
        "rename a run": lambda: rename_run(ctx.runner, runs / "lora", "lora-renamed"),
        "delete a run": lambda: delete_runs(ctx.runner, [str(runs / "full")]),
        "delete the linked outside run": lambda: delete_runs(ctx.runner, [str(runs / "linked-run")]),
    }


def test_no_operation_follows_a_link_out_of_the_workspace(area: dict[str, Any]) -> None:
    problems: list[str] = []
    seen: set[str] = set()
    for name, op in _operations(area).items():
        try:
            value, outcome = op(), "ok"
        except StudioError as exc:
            value, outcome = exc.message, "clear"
        except Exception as exc:  # a library's own error on a fake model is fine, if nothing leaked before it
            value, outcome = repr(exc), "clear"
        leak = _leaked(value, area, seen)
        changed = _tree_hash(area["outside"]) != area["hash"]
        if leak or changed:
            outcome = "escaped"
            problems.append(f"{name}: {leak or 'a file outside the workspace changed'}")
        record(GROUP, "python", f"symlink out: {name}", outcome, (leak or str(value))[:200])
    assert problems == [], "\n".join(problems)


def test_listings_do_not_show_the_linked_outside_run(area: dict[str, Any]) -> None:
    names = [r["name"] for r in area["ctx"].runner.past_runs()]
    assert "linked-run" not in names, names


COPIES = re.compile(r"shutil\.(copytree|copy2|copyfile|copy|make_archive|move)\(|zipfile\.ZipFile\([^)]*['\"]w['\"]")


def test_every_copy_and_zip_goes_through_the_one_module() -> None:
    """The rule in one place: shutil's copies and archives and zip writers appear only in studio/safe_files.py."""
    offenders = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        if path.name == "safe_files.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if COPIES.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == [], "copy/zip through studio/safe_files.py instead:\n" + "\n".join(offenders)


def test_rmtree_never_follows_a_link(tmp_path: Path) -> None:
    """The delete the studio uses (shutil.rmtree, fd-based on Linux) removes a link, never what it points at."""
    import shutil
    assert shutil.rmtree.avoids_symlink_attacks
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(CANARY)
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "link").symlink_to(outside)
    shutil.rmtree(inside)
    assert (outside / "keep").read_bytes() == CANARY
    assert os.path.isdir(outside)
