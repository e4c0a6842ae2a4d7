"""The web studio through gradio_client against a live launch.py, plus form/module unit checks."""
from __future__ import annotations

import ast
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from studio.config.run_config import Draft, RunConfig
from studio.errors import ConfigError
from studio.ui import forms

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "studio" / "ui"
HEAVY = ("torch", "transformers", "peft")


def test_ui_modules_never_import_torch() -> None:
    for path in sorted([*UI.glob("*.py"), *(ROOT / "studio" / "app").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] in HEAVY for n in names), f"{path.name} imports {names}"
    code = ("import sys; from studio.ui.app import build_app; from studio.app.context import AppContext; "
            "import tempfile; build_app(AppContext.create(tempfile.mkdtemp())); "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_form_covers_every_field_and_round_trips() -> None:
    assert forms.FIELD_NAMES == RunConfig.field_names()
    cfg = RunConfig(dataset="d.jsonl", quantization_bit=4, deepspeed="z2", learning_rate=1e-4, max_samples=10)
    assert forms.values_to_config(forms.config_to_values(cfg)) == cfg
    assert forms.values_to_draft(forms.config_to_values(Draft())) == Draft()
    browser_values = forms.config_to_values(Draft())  # the browser sends an empty number box as 0
    for name in ("max_samples", "eval_steps", "max_tokens_per_batch"):
        browser_values[forms.FIELD_NAMES.index(name)] = 0
    assert forms.values_to_draft(browser_values) == Draft()


def test_form_type_errors_name_the_field() -> None:
    values = forms.config_to_values(Draft())
    values[forms.FIELD_NAMES.index("cutoff_len")] = 12.5
    with pytest.raises(ConfigError, match="cutoff_len: expected a whole number, got '12.5'"):
        forms.values_to_config(values)


def test_command_line_matches_the_cli(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    from studio.app.form_values import command_line
    from studio.workspace import studio_command, studio_python
    ctx = AppContext.create(tmp_path / "ws")
    single = command_line(ctx, forms.config_to_values(RunConfig(dataset="d.jsonl")))
    assert single == studio_command(["-m", "studio", "train", str(ctx.workspace / "configs" / "settings.yaml")])
    assert f"&& {studio_python()} -m studio train" in single  # the studio's Python, never a bare `python`
    assert RunConfig.load(ctx.workspace / "configs" / "settings.yaml").dataset == "d.jsonl"
    multi = command_line(ctx, forms.config_to_values(RunConfig(dataset="d.jsonl", nproc=2, deepspeed="z2")))
    assert "torch.distributed.run --standalone --nproc_per_node=2 -m studio train" in multi


# ---------------------------------------------------------------- live server
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ui_server import Server
    srv = Server(tmp_path_factory.mktemp("ui") / "ws").wait_ready()
    yield srv
    srv.stop()


def poll_until(client: Any, cond: Any, timeout: float = 240) -> tuple:
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = client.predict(api_name="/poll")
        if cond(out[3]):
            return out
        assert out[3]["busy"] or out[3]["state"] in ("idle", "starting"), f"ended early: {out[3]}"
        time.sleep(0.3)
    raise AssertionError(f"timed out; last snapshot {out[3]}")


@pytest.mark.integration
def test_data_to_trained_model_through_the_api(server: Any) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError
    client = Client(server.url, verbose=False)
    loaded = client.predict(api_name="/sample_data")
    assert loaded[0].startswith("Read ") and loaded[3] == "sentiment"
    text_col, label_col = loaded[4]["value"], loaded[5]["value"]
    assert (text_col, label_col) == (["text"], "label")  # the text role takes several columns
    report, dataset = client.predict("sentiment", text_col, label_col, None, None, None, None, loaded[10], "",
                                     "reviews", api_name="/convert")
    assert dataset == str(server.workspace.resolve() / "data" / "reviews.jsonl") and Path(dataset).is_file()
    assert "No problems found." in report and (server.workspace / "data" / "dataset_info.json").is_file()

    cfg = RunConfig(dataset=dataset, finetuning_type="full", max_steps=60, logging_steps=2, save_steps=4,
                    cutoff_len=48, per_device_train_batch_size=8, learning_rate=2e-3, max_samples=64, plot_loss=False,
                    val_size=8)  # without held-out rows the Settings check now flags the run
    values = forms.config_to_values(cfg)
    fit, check = client.predict(*values, 24, api_name="/estimate")
    assert fit.startswith("**Fits**") and check.startswith("✅")

    snap = client.predict(*values, api_name="/start")
    assert snap["busy"] and Path(snap["run"]).parent == server.workspace.resolve() / "runs"
    assert Path(snap["run"]).name.startswith("tiny-demo-")  # named after its model and data
    # a second Start of the same settings while it runs names the run that trains them (nothing trains twice)
    with pytest.raises(Exception, match="is training with these settings right now"):
        client.predict(*values, api_name="/start")
    # a Start of other settings while it runs queues the next run (it is not refused)
    other_values = forms.config_to_values(cfg.replace(learning_rate=3e-3))
    assert client.predict(*other_values, api_name="/start")["queued"] == 1
    client.predict(api_name="/clear_queue")
    out = poll_until(client, lambda s: s["step"] >= 2)
    client.predict(api_name="/abort")
    assert "Step " in out[0] and "/ 60" in out[0]

    out = poll_until(client, lambda s: s["state"] == "aborted" and not s["busy"])
    assert "Aborted" in out[0] and out[3]["checkpoint"]
    stopped = out[3]["step"]
    assert stopped < 60

    # a fresh client (a reloaded page) sees the same run, and can resume it
    other = Client(server.url, verbose=False)
    first = other.predict(api_name="/poll")
    assert first[3]["run"] == snap["run"] and first[3]["state"] == "aborted"
    plot = first[1]  # a new page draws the loss curve at once
    assert plot["type"] == "matplotlib" and plot["plot"].startswith("data:image/png;base64,")
    other.predict(snap["run"], api_name="/resume")
    out = poll_until(other, lambda s: s["state"] == "finished")
    assert out[3]["step"] == 60 and "Finished" in out[0] and out[3]["final_model"]
