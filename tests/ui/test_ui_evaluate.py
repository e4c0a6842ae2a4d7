"""Evaluate tab: builds inside gr.Blocks, handlers give the numbers, files land in the workspace."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest


from studio.ui import evaluate_tab as tab

ROOT = Path(__file__).resolve().parents[2]



def test_tab_module_does_not_import_torch() -> None:
    code = ("import sys, studio.ui.evaluate_tab; bad = [m for m in ('torch', 'transformers', 'peft') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tab_builds_and_lists_finished_runs(runs: dict, tmp_path: Path) -> None:
    ctx = SimpleNamespace(workspace=tmp_path, runs_root=runs["runs_root"], data_root=tmp_path, runner=None, lang="zh")
    with gr.Blocks():
        with gr.Tab("Evaluate"):
            parts = tab.build_evaluate_tab(ctx)
    values = [v for _, v in parts["run"].choices]
    assert sorted(values) == sorted([str(runs["full"]), str(runs["lora"])])
    assert parts["run"].value == values[0]
    assert parts["run"].label == "已完成的训练"


def test_check_scorecard_and_errors(runs: dict) -> None:
    run = str(runs["lora"])
    summary, table, figure, wrong = tab.on_check(run, "upload", str(runs["heldout_file"]), "score", 0)
    assert "on 30 rows" in summary and "unparseable answers: 0" in summary
    assert [row[0] for row in table] == ["negative", "positive"]
    assert sum(row[4] for row in table) == 30
    assert figure.axes and isinstance(wrong, list)
    summary_val, *_ = tab.on_check(run, "validation", None, "generate", 10)
    assert "on 10 rows" in summary_val and "mode `generate`" in summary_val
    card = tab.on_scorecard(run, "upload", str(runs["heldout_file"]), "score", 0)
    assert "| accuracy |" in card and "Same 30 rows" in card
    with pytest.raises(gr.Error, match="No file uploaded"):
        tab.on_check(run, "upload", None, "score", 0)
    with pytest.raises(gr.Error, match="No run is selected"):
        tab.on_check("", "upload", str(runs["heldout_file"]), "score", 0)


def test_the_before_after_fills_the_checks_tables_in_the_same_pass(runs: dict, tmp_path: Path) -> None:
    """Issue 52: Before/after fills per-class scores, the confusion matrix and the wrong rows too (the fine-tuned
    side's), the same as the check's own, with no second check; the button's event gives them all."""
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    run = str(runs["lora"])
    card, summary, table, figure, wrong = tab.on_before_after(run, "upload", str(runs["heldout_file"]), "score", 0)
    c_summary, c_table, _, c_wrong = tab.on_check(run, "upload", str(runs["heldout_file"]), "score", 0)
    assert "Same 30 rows" in card and "on 30 rows" in summary
    assert table == c_table and wrong == c_wrong and figure.axes
    app = build_app(AppContext.create(tmp_path / "ws", lang="en"))
    event = next(d for d in app.fns.values() if d.api_name == "on_scorecard")
    ids = {b._id: getattr(b, "elem_id", None) or getattr(b, "label", None) for b in app.blocks.values()}
    assert len(event.outputs) == 5 and "ev-wrong" in [ids[o._id] for o in event.outputs]


def test_playground_streams_both_models_and_chat(runs: dict) -> None:
    row = runs["heldout"][0]
    steps = list(tab.on_generate(str(runs["lora"]), row["instruction"], row["input"], 5, 0.0, 1.0, True, True))
    assert len(steps) >= 2
    tuned, base = steps[-1]
    assert tuned == row["output"] and base != tuned  # the base has not learned the answer
    once = list(tab.on_generate(str(runs["lora"]), row["instruction"], row["input"], 5, 0.0, 1.0, False, False))
    assert once == [(row["output"], "")]
    with pytest.raises(gr.Error, match="The prompt is empty"):
        list(tab.on_generate(str(runs["lora"]), " ", "", 5, 0.0, 1.0, True, False))
    chat = list(tab.on_chat(f"{row['instruction']}\n{row['input']}", [], str(runs["full"]), 5, 0.0, 1.0))
    _, history = chat[-1]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[-1]["content"].split("\n\n")[0] == row["output"]  # a labels run: its label, then the scores


def test_batch_prediction_and_export_into_the_workspace(runs: dict, tmp_path: Path) -> None:
    path, info = tab.on_predict(str(runs["full"]), str(runs["heldout_file"]), tmp_path / "predictions")
    assert Path(path).parent == tmp_path / "predictions" and "Predicted 30 rows (score mode" in info
    with open(path, encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 30
    msg, folder = tab.on_export(str(runs["lora"]), True, False, "", tmp_path / "exports")
    assert folder == str((tmp_path / "exports" / "lora-merged").resolve())
    assert (tmp_path / "exports" / "lora-merged" / "model.safetensors").is_file()
    assert "Exported **merged** model" in msg
    with pytest.raises(gr.Error, match="already exists"):
        tab.on_export(str(runs["lora"]), True, False, "", tmp_path / "exports")


def test_batch_prediction_on_unlabelled_rows_and_a_downloadable_export(runs: dict, tmp_path: Path) -> None:
    """Texts without labels are predicted with the run's labels; formula cells are
    neutralised; the export comes as a zip the browser can download; merge only shows for LoRA runs."""
    texts = tmp_path / "texts.csv"
    texts.write_text("text\ngreat value, works well\n=HYPERLINK(\"http://x\")\nterrible, broke in a day\n",
                     encoding="utf-8")
    path, info = tab.on_predict(str(runs["full"]), str(texts), tmp_path / "predictions")
    assert "Predicted 3 rows (score mode" in info and "accuracy" not in info
    with open(path, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["input"] for r in rows][1].startswith("'=HYPERLINK")  # a spreadsheet will not run it
    assert all(r["prediction"] for r in rows) and "output" not in rows[0]
    msg, folder = tab.on_export(str(runs["full"]), False, False, "full-dl", tmp_path / "exports")
    assert 'download="full-dl.zip"' in tab.export_links(folder, tmp_path / "exports")
    import io
    import zipfile
    from studio.app.downloads import stream_zip
    with zipfile.ZipFile(io.BytesIO(b"".join(stream_zip(folder)))) as zf:
        assert any(n.startswith("full-dl/") and n.endswith("model.safetensors") for n in zf.namelist())
    assert tab.merge_visible(str(runs["full"]))["visible"] is False
    assert tab.merge_visible(str(runs["lora"]))["visible"] is True


def test_export_links_only_for_an_export_folder(tmp_path: Path) -> None:
    """The folder comes from server-side state and is confined to the exports folder,
    so neither a path in text nor a state value outside exports/ ever gets a download link."""
    exports, outside = tmp_path / "exports", tmp_path / "secret"
    (exports / "mine").mkdir(parents=True)
    (exports / "mine" / "w.bin").write_bytes(b"x")
    outside.mkdir()
    (outside / "canary.txt").write_text("canary")
    for bad in (str(outside), f"Exported to `{outside}`", str(exports / ".." / "secret"), str(exports), "", None, "/"):
        assert tab.export_links(bad, exports) == "", bad
    html = tab.export_links(str(exports / "mine"), exports)
    assert 'download="mine.zip"' in html and str(tmp_path) not in html  # a token, not a path


def test_refresh_picks_a_run_that_finished_since_the_page_listed_them(tmp_path: Path) -> None:
    """A page opened earlier must not keep the oldest run selected while newer ones exist."""
    import json as _json
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir

    def finished(name: str, ended: float) -> str:
        run = RunDir(tmp_path / "runs" / name).ensure()
        RunConfig(dataset="d.jsonl", output_dir=str(run.path)).save(run.config)
        run.write_status("finished", ended=ended)
        run.model.mkdir()
        (run.model / "config.json").write_text(_json.dumps({"model_type": "llama"}))
        (run.model / "model.safetensors").write_bytes(b"")
        return str(run.path)

    old = finished("old", 1000.0)
    assert [v for _, v in tab.inference.finished_runs(tmp_path / "runs")] == [old]
    update, listed = tab.refresh_runs_and_listed(tmp_path / "runs", old, None)
    assert update["value"] == old and listed == [old]
    newer = finished("newer", 2000.0)
    update, listed = tab.refresh_runs_and_listed(tmp_path / "runs", old, listed)
    assert update["value"] == newer and listed == [newer, old]  # most recently finished first, and chosen
    update, _ = tab.refresh_runs_and_listed(tmp_path / "runs", old, listed)
    assert update["value"] == old  # the user's own later choice stays
    update, _ = tab.refresh_runs_and_listed(tmp_path / "runs", old, listed, "zh")
    assert all(f" · {tab.run_kinds('zh')[1]} · " in label for label, _ in update["choices"])  # its browser's words


def test_the_download_link_comes_at_once_for_a_big_export(tmp_path: Path) -> None:
    """Nothing is zipped before the download starts (zipping a 517 MB export first showed nothing for minutes),
    so the link is there at once (a sparse 4 GB file is never read for it)."""
    import time
    exports = tmp_path / "exports"
    (exports / "m").mkdir(parents=True)
    with open(exports / "m" / "model.safetensors", "wb") as fh:
        fh.truncate(4 * 2**30)
    (exports / "m" / "config.json").write_text("{}")
    seen: list[str] = []
    start = time.monotonic()
    html = tab.export_links(str(exports / "m"), exports, progress=lambda f, desc="": seen.append(desc))
    assert time.monotonic() - start < 2 and 'download="m.zip"' in html and "4096.0 MB" in html
    assert seen == ["Preparing the download link"]

def test_the_evaluate_runs_share_and_improve_handlers_answer_each_browser_in_its_language(runs: dict,
                                                                                           tmp_path: Path) -> None:
    """The page is built once, in the server's language; each handler answers the browser that asked in its own
    (its in-page switch here), the next browser in its own again."""
    import shutil
    from studio.app.context import AppContext
    from studio.ui.app import build_app
    from studio.ui.i18n import headers
    ws = tmp_path / "ws"
    shutil.copytree(runs["lora"], ws / "runs" / "lora")
    fns = {fn.api_name: fn.fn for fn in build_app(AppContext.create(ws, lang="en")).fns.values() if fn.api_name}
    zh = SimpleNamespace(session_hash="s-zh", headers={"cookie": "studio_lang=zh"}, username="ann")
    en = SimpleNamespace(session_hash="s-en", headers={"accept-language": "en-US"}, username="bob")
    update, _ = fns["refresh_runs"](None, None, zh)
    assert " · 低秩适配器 · " in update["choices"][0][0]
    assert " · LoRA adapter · " in fns["refresh_runs"](None, None, en)[0]["choices"][0][0]
    with pytest.raises(gr.Error, match="没有选择运行"):
        fns["on_scorecard"]("", "upload", str(runs["heldout_file"]), "score", 0, zh)
    with pytest.raises(gr.Error, match="No run is selected"):
        fns["on_check"]("", "upload", str(runs["heldout_file"]), "score", 0, en)
    table, _ = fns["runs_refresh"]([], zh)
    assert table["headers"] == headers("runs.headers", "zh") != headers("runs.headers", "en")
    assert fns["delete_runs"]([], zh) == "在上面勾选运行，并排查看它们的成绩。"
    with pytest.raises(gr.Error, match="请只勾选一个要重命名的运行"):
        fns["rename_run"]([], "x", zh)
    with pytest.raises(gr.Error, match="没有选择已完成的运行"):
        list(fns["start_demo"](None, zh))
    with pytest.raises(gr.Error, match="没有选择运行"):
        fns["improve"](None, "auto", zh)
