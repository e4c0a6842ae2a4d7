"""Paths have a type: every RunConfig field that names a file or folder says which root it belongs to (its
``root`` metadata, studio/config/run_config.py), and the page confines a config by that metadata in one place
(``studio.app.paths.confine_config``). The enumeration below covers a field the day it is added, as
test_ranges.py does for numbers: a new path field without a root fails here, and a field with a root that the
page does not confine fails the second test."""
from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from studio.config.run_config import PATH_ROOTS, RunConfig, field_meta
from studio.errors import StudioError
from studio.words.catalog import FIELD_LABELS
from tests.robustness.harness import record

GROUP = "security"
HINTS = typing.get_type_hints(RunConfig)
PATH_WORDS = re.compile(r"\b(path|paths|dir|directory|folder|folders|file|files|checkpoint|json|jsonl)\b", re.I)


def _textual(hint: Any) -> bool:
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return typing.get_origin(hint) is not typing.Literal and any(a in (str, Path) for a in args)


TEXT_FIELDS = [f for f in dataclasses.fields(RunConfig) if _textual(HINTS[f.name])]
HELP = {m["name"]: m["help"] for m in field_meta()}  # each field's English help (studio/words/fields.py)


def _path_like(f: dataclasses.Field) -> bool:
    words = f.name.replace("_", " ") + " " + HELP[f.name]
    default = f.default if isinstance(f.default, str) else ""
    return bool(PATH_WORDS.search(words)) or "/" in default or default.startswith(("~", "."))


def test_text_fields_are_found() -> None:
    names = {f.name for f in TEXT_FIELDS}
    assert {"model_name_or_path", "dataset", "output_dir", "resume_from_checkpoint", "offload_nvme_path",
            "deepspeed", "lora_target", "optim"} <= names, names


@pytest.mark.parametrize("f", TEXT_FIELDS, ids=[f.name for f in TEXT_FIELDS])
def test_every_path_like_field_declares_its_root(f: dataclasses.Field) -> None:
    if not _path_like(f):
        assert "root" not in f.metadata or f.metadata["root"] in PATH_ROOTS
        return
    assert f.metadata.get("root") in PATH_ROOTS, (
        f"{f.name} names a file or folder: declare root= one of {PATH_ROOTS} in its metadata "
        "(studio/config/run_config.py) so the page confines it")
    assert {m["name"]: m for m in field_meta()}[f.name]["root"] == f.metadata["root"]


ROOTED = [f for f in dataclasses.fields(RunConfig) if f.metadata.get("root")]


@pytest.fixture()
def area(tmp_path: Path) -> dict[str, Any]:
    from studio.app.context import AppContext
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ckpt = outside / "checkpoint-2"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": 2}))
    (outside / "ds.json").write_text("{}")
    (outside / "d.jsonl").write_text('{"instruction": "a", "output": "b"}\n')
    (outside / "config.json").write_text('{"model_type": "llama"}')
    ctx = AppContext.create(ws)
    return {"ctx": ctx, "ws": ws, "outside": outside, "ckpt": ckpt}


def _outside_value(name: str, area: dict[str, Any]) -> dict[str, Any]:
    """A config whose ``name`` field names the outside folder (with what the field needs beside it)."""
    out: Path = area["outside"]
    values = {"resume_from_checkpoint": str(area["ckpt"]), "deepspeed": str(out / "ds.json"),
              "dataset": str(out / "d.jsonl"), "offload_nvme_path": str(out)}
    extra = {"deepspeed": "z3-nvme"} if name == "offload_nvme_path" else {}
    return {name: values.get(name, str(out)), **extra}


@pytest.mark.parametrize("f", ROOTED, ids=[f.name for f in ROOTED])
def test_every_rooted_field_is_confined_on_the_page(f: dataclasses.Field, area: dict[str, Any]) -> None:
    from studio.app.paths import resolve_run_paths
    cfg = RunConfig(dataset="d.jsonl").replace(**_outside_value(f.name, area))
    try:
        resolve_run_paths(cfg, area["ctx"])
        outcome, detail = "escaped", f"{f.name} outside the workspace was accepted"
    except StudioError as exc:
        outcome, detail = "clear", exc.page_message
    record(GROUP, "python", f"Start with {f.name} outside its root", outcome, detail)
    assert outcome == "clear", detail
    named = (f.name, FIELD_LABELS[f.name][0])  # the page names a field by its Settings label
    assert any(n in detail for n in named) or "outside" in detail, detail


def test_the_page_refuses_an_outside_checkpoint_before_anything_starts(area: dict[str, Any]) -> None:
    """The attack of the report: Start with resume_from_checkpoint naming an outside folder that holds a
    trainer_state.json; nothing may start or queue, and the answer must not say whether it holds a checkpoint."""
    from studio.app import form_values as forms
    from studio.ui import train_tab
    from studio.runs import queue as run_queue
    ctx = area["ctx"]
    started: list[Any] = []

    def start(*a: Any, **k: Any) -> None:
        started.append(a)
        raise AssertionError("a run started with resume_from_checkpoint outside the workspace")
    ctx.runner.start = start  # type: ignore[method-assign]
    values = forms.config_to_values(RunConfig(dataset="d.jsonl", resume_from_checkpoint=str(area["ckpt"])))
    with pytest.raises(StudioError) as err:
        train_tab.start_run(ctx, values)
    assert started == [] and run_queue.waiting(ctx) == 0
    missing = str(area["outside"] / "nothing-here")
    with pytest.raises(StudioError) as err2:
        train_tab.start_run(ctx, forms.config_to_values(RunConfig(dataset="d.jsonl", resume_from_checkpoint=missing)))
    # no oracle: a folder with a checkpoint and one without are refused with the same words
    assert err.value.what.replace(str(area["ckpt"]), "X") == err2.value.what.replace(missing, "X")


def test_a_checkpoint_inside_the_runs_root_is_accepted(area: dict[str, Any]) -> None:
    from studio.app.paths import resolve_run_paths
    ckpt = area["ws"] / "runs" / "old" / "checkpoints" / "checkpoint-4"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text("{}")
    cfg = resolve_run_paths(RunConfig(dataset="d.jsonl", resume_from_checkpoint="runs/old/checkpoints/checkpoint-4"),
                            area["ctx"])
    assert cfg.resume_from_checkpoint == str(ckpt.resolve())
    assert resolve_run_paths(RunConfig(dataset="d.jsonl", resume_from_checkpoint="last"), area["ctx"]
                             ).resume_from_checkpoint == "last"
    data_dir = area["ws"] / "data" / "checkpoint-1"  # inside the workspace but not a run's: refused
    data_dir.mkdir(parents=True)
    (data_dir / "trainer_state.json").write_text("{}")
    with pytest.raises(StudioError):
        resolve_run_paths(RunConfig(dataset="d.jsonl", resume_from_checkpoint=str(data_dir)), area["ctx"])


def test_nvme_folder_only_inside_what_the_operator_named(area: dict[str, Any], tmp_path: Path) -> None:
    from studio.app.paths import resolve_run_paths
    ctx = area["ctx"]
    nvme = tmp_path / "nvme"
    (nvme / "swap").mkdir(parents=True)
    cfg = RunConfig(dataset="d.jsonl", deepspeed="z3-nvme", offload_nvme_path=str(nvme / "swap"))
    with pytest.raises(StudioError) as err:  # no --nvme-root: nothing is allowed, and the fix says who can
        resolve_run_paths(cfg, ctx)
    assert "--nvme-root" in err.value.message and "offload_nvme_path" in err.value.message
    assert "NVMe" in err.value.page_message
    ctx.nvme_roots = [nvme.resolve()]
    assert resolve_run_paths(cfg, ctx).offload_nvme_path == str((nvme / "swap").resolve())
    with pytest.raises(StudioError):
        resolve_run_paths(cfg.replace(offload_nvme_path=str(area["outside"])), ctx)
    with pytest.raises(StudioError):  # the workspace is not an NVMe folder the operator named
        resolve_run_paths(cfg.replace(offload_nvme_path=str(area["ws"] / "runs")), ctx)


def test_the_nvme_root_is_a_launch_flag() -> None:
    import argparse
    from studio.ui import app
    p = argparse.ArgumentParser()
    app.add_arguments(p)
    assert p.parse_args(["--nvme-root", "/mnt/nvme"]).nvme_root == ["/mnt/nvme"]


def test_the_command_line_keeps_the_users_own_paths(tmp_path: Path) -> None:
    """The person at the terminal owns the machine: a YAML with paths anywhere loads and validates as written."""
    cfg = RunConfig.from_dict({"dataset": "/srv/d.jsonl", "resume_from_checkpoint": "/srv/ckpt/checkpoint-3",
                               "deepspeed": "z3-nvme", "offload_nvme_path": "/mnt/nvme", "output_dir": "/srv/run"})
    assert cfg.validate() == [] or all("path" not in p for p in cfg.validate())
    assert (cfg.resume_from_checkpoint, cfg.offload_nvme_path) == ("/srv/ckpt/checkpoint-3", "/mnt/nvme")


def test_resume_from_the_page_confines_the_runs_saved_paths(area: dict[str, Any]) -> None:
    """A run folder whose config.yaml (written by hand or by the CLI) names data outside: the page's Resume refuses
    it as a Start would, and never a run outside the runs folder."""
    from studio.runs.run_dir import RunDir
    from studio.app.paths import resume_run
    ctx = area["ctx"]
    run = RunDir(ctx.runs_root / "handmade").ensure()
    RunConfig(dataset=str(area["outside"] / "d.jsonl"), output_dir=str(run.path)).save(run.config)
    (run.checkpoints / "checkpoint-1").mkdir(parents=True)
    (run.checkpoints / "checkpoint-1" / "trainer_state.json").write_text("{}")
    run.write_status("aborted")
    resumed: list[Any] = []
    ctx.runner.resume = lambda *a, **k: resumed.append(a)  # type: ignore[method-assign]
    with pytest.raises(StudioError):
        resume_run(ctx, str(run.path))
    with pytest.raises(StudioError):
        resume_run(ctx, str(area["outside"]))
    assert resumed == []
