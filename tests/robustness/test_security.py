"""Group 'security' through the Python API: every typed path and name stays inside the allowed folders."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.workspace import confine, safe_name
from tests.robustness.harness import api, expect, record

GROUP = "security"


@pytest.fixture()
def area(tmp_path: Path) -> dict[str, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "runs" / "r").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    (outside / "config.json").write_text('{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, '
                                         '"num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100}')
    (ws / "link").symlink_to(outside)
    return {"ws": ws, "outside": outside, "tmp": tmp_path}


def _escaped(area: dict[str, Path]) -> str:
    out = area["outside"]
    if not (out / "keep.txt").exists() or (out / "keep.txt").read_text() != "precious":
        return "the file outside the workspace was changed or deleted"
    extra = {p.name for p in out.iterdir()} - {"keep.txt", "config.json"}
    extra |= {p.name for p in area["tmp"].iterdir()} - {"ws", "outside"}
    return f"created outside the workspace: {sorted(extra)}" if extra else ""


def _run(area: dict[str, Path], name: str, fn: Callable[[], Any], expect_error: bool = True,
         ok: Callable[[Any], bool] | None = None) -> None:
    outcome, detail = api(fn, expect_error, ok)
    leak = _escaped(area)
    if leak:
        outcome, detail = "escaped", leak
    elif outcome == "ok" and isinstance(detail, str) and "precious" in detail:
        outcome = "escaped"
    record(GROUP, "python", name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok")


PATHS = ["/etc/passwd", "../outside/keep.txt", "../../etc", "link/keep.txt", "link", "~/.ssh/id_rsa",
         "runs/../../outside", "//etc/passwd", "runs/\x00evil", "runs/a\nb", "/proc/self/environ", "   ",
         "runs/%2e%2e/%2e%2e/outside", "./../outside", "/tmp/../etc/shadow", "\\..\\..\\outside"]


@pytest.mark.parametrize("path", PATHS)
def test_confine(area: dict[str, Path], path: str) -> None:
    def go() -> Path:
        p = confine(path, [area["ws"]])
        if not str(p).startswith(str(area["ws"].resolve())):
            raise AssertionError(f"confine let {p} through")
        return p
    # '%2e%2e' and backslashes are plain characters on Linux: a name inside the workspace is fine
    _run(area, f"confine {path!r}", go, expect_error="%2e" not in path and not path.startswith("\\"))


NAMES = ["../../somewhere/important", "/abs/export", "..", ".", "a/b", "a\\b", "a\nb", "a\x00b", "x" * 200, "",
         "ok-name_1.0"]


@pytest.mark.parametrize("name", NAMES, ids=[repr(n)[:30] for n in NAMES])
def test_export_names(area: dict[str, Path], name: str) -> None:
    from studio.evaluation.inference import export_run
    valid = name == "ok-name_1.0"
    if valid:
        _run(area, f"safe_name {name!r}", lambda: safe_name(name), expect_error=False)
        return
    # the name is checked before the run is even looked at: a fake run folder is enough
    _run(area, f"export name {name!r}", lambda: export_run(str(area["ws"] / "runs" / "r"), area["ws"] / "exports",
                                                         True, True, name or "   "))


FIELDS = [("model_name_or_path", "/etc"), ("model_name_or_path", "../outside"), ("model_name_or_path", "link"),
          ("dataset", "/etc/passwd.jsonl"), ("dataset", "../outside/keep.txt"), ("dataset_dir", "/etc"),
          ("output_dir", "/tmp/../etc/run"), ("output_dir", "link/run"), ("deepspeed", "/etc/ds.json"),
          ("deepspeed", "link/config.json"), ("trust_remote_code", True)]


@pytest.mark.parametrize("field, value", FIELDS, ids=[f"{f}={v}" for f, v in FIELDS])
def test_start_paths(area: dict[str, Path], field: str, value: Any) -> None:
    from studio.app.context import AppContext
    from studio.app.paths import resolve_run_paths
    ctx = AppContext.create(area["ws"])
    _run(area, f"Start with {field}={value}", lambda: resolve_run_paths(RunConfig(dataset="d.jsonl").replace(
        **{field: value}), ctx))


ESTIMATES = [("model_name_or_path", "OUT"), ("model_name_or_path", "link"), ("deepspeed", "OUT/config.json"),
             ("deepspeed", "OUT/missing.json"), ("model_name_or_path", "/etc/\x00x")]


@pytest.mark.parametrize("field, value", ESTIMATES, ids=[f"{f}={v!r}" for f, v in ESTIMATES])
def test_live_estimate_reads(area: dict[str, Path], field: str, value: str) -> None:
    from studio.ui import forms
    from studio.app.context import AppContext
    from studio.ui.settings_tab import on_change
    ctx = AppContext.create(area["ws"])
    value = value.replace("OUT", str(area["outside"]))

    def go() -> str:
        fit, check = on_change(ctx, forms.config_to_values(RunConfig(dataset="d.jsonl").replace(**{field: value})),
                               24.0)
        if "outside the folders" not in fit + check and "control character" not in fit + check:
            return "read: " + fit  # accepted: the estimate looked at the file
        raise StudioError.from_dict({"what": "refused"})
    _run(area, f"live estimate {field}={value!r}", go)


def test_yaml_python_tag_does_not_run(area: dict[str, Path]) -> None:
    from studio.config.run_config import load_yaml_dict
    p = area["ws"] / "evil.yaml"
    p.write_text(f"dataset: !!python/object/apply:os.system ['touch {area['outside']}/pwned']\n")
    _run(area, "YAML python tag", lambda: load_yaml_dict(p))


@pytest.mark.parametrize("prompt, tokens", [("x" * 400_000, 128), ("hi", 10 ** 9), ("hi", -1), ("hi", "nan")])
def test_generation_caps(area: dict[str, Path], monkeypatch: pytest.MonkeyPatch, prompt: str, tokens: Any) -> None:
    from studio.evaluation import inference
    monkeypatch.setattr(inference, "get_model", lambda p: (_ for _ in ()).throw(AssertionError("model loaded")))
    _run(area, f"playground prompt {len(prompt)} chars, {tokens} tokens",
         lambda: next(inference.playground("run", prompt, "", tokens)))


@pytest.mark.parametrize("cell", ["=cmd|' /C calc'!A0", "+SUM(1)", "-2+3", "@A1", "\t=1", "\r=1"])
def test_predictions_csv_formulas(area: dict[str, Path], cell: str) -> None:
    from studio.evaluation.evaluate import csv_safe
    _run(area, f"predictions CSV cell {cell!r}", lambda: csv_safe(cell), expect_error=False,
         ok=lambda v: v.startswith("'"))
