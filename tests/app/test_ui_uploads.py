"""Two upload limits (studio/app/uploads.py): a real .gguf model (93 MB SmolLM2, 240 MB Gemma 3) is accepted by
default, while data and settings files keep the 50 MB limit, checked by each handler that reads them."""
from __future__ import annotations

import argparse
from pathlib import Path

import gradio as gr
import pytest

from studio.errors import StudioError
from studio.words.error_words import page_message
from studio.app import server_flags
from studio.ui import app, evaluate_tab
from studio.app.context import AppContext
from studio.app.gguf_upload import accept_gguf, note
from studio.app.uploads import MB, check_data_upload

from tests.models.test_gguf_import import write_tiny_llama_gguf


def _args(*flags: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    server_flags.add_arguments(p)
    return p.parse_args(list(flags))


def test_the_server_limit_is_the_larger_of_the_two():
    assert app.launch_kwargs(_args(), None, None)["max_file_size"] == 4096 * MB
    assert app.launch_kwargs(_args("--max-model-upload-mb", "10"), None, None)["max_file_size"] == 50 * MB
    assert app.launch_kwargs(_args("--max-upload-mb", "1", "--max-model-upload-mb", "1"), None, None)[
        "max_file_size"] == 1 * MB


@pytest.mark.parametrize("value", ["nan", "-1", "0"])
def test_a_bad_model_limit_is_refused_by_its_flag_name(value: str):
    with pytest.raises(StudioError, match=rf"--max-model-upload-mb must be a number above 0 \(got {value.lstrip('-')}"
                                          r"|--max-model-upload-mb must be a number above 0"):
        server_flags.check_flags(_args("--max-model-upload-mb", value, "--port", "1"))


def test_a_model_over_the_data_limit_is_accepted_under_the_model_limit(tmp_path: Path):
    """The old code held a .gguf to --max-upload-mb (50 MB), so every real model needed a typed path."""
    upload = tmp_path / "tiny.gguf"
    write_tiny_llama_gguf(upload)
    size_mb = upload.stat().st_size / MB
    ctx = AppContext.create(tmp_path / "ws", max_upload_mb=size_mb / 2, max_model_upload_mb=size_mb * 2)
    folder, _ = accept_gguf(ctx, upload)
    assert (Path(folder) / "config.json").is_file()
    assert "Up to 4096 MB" in note(AppContext.create(tmp_path / "ws2"), "en")


def _big_csv(tmp_path: Path) -> Path:
    path = tmp_path / "big.csv"
    path.write_text("text,label\n" + "this row is fine,positive\n" * 12000)  # ~0.3 MB
    return path


def test_data_files_keep_the_data_limit_in_every_handler_that_reads_them(tmp_path: Path):
    big = _big_csv(tmp_path)
    limit = 0.1  # MB: the file is over it
    expected = (r"'big.csv' is 0.3 MB, over this studio's limit of 0.1 MB for data and settings files")
    with pytest.raises(StudioError, match=expected):
        check_data_upload(big, limit)
    check_data_upload(big, 1.0)  # under the limit: nothing to say
    # Evaluate: check, scorecard and batch prediction refuse it before loading any model
    for call in (lambda: evaluate_tab.on_check("no-such-run", "upload", str(big), "score", 0, limit_mb=limit),
                 lambda: evaluate_tab.on_scorecard("no-such-run", "upload", str(big), "score", 0, limit_mb=limit),
                 lambda: evaluate_tab.on_predict("no-such-run", str(big), tmp_path / "out", limit_mb=limit)):
        with pytest.raises(gr.Error, match=expected):
            call()
    assert not (tmp_path / "out").exists()
    with pytest.raises(StudioError) as e:
        check_data_upload(big, limit)
    # worded when shown, in the page's language
    assert page_message(e.value, "zh").startswith("“big.csv”有 0.3 MB，超过了本工作室对数据和设置文件的上限 0.1 MB")


def test_settings_yaml_upload_keeps_the_data_limit(tmp_path: Path):
    from studio.ui.i18n import make_i18n
    from studio.ui.settings_tab import build_settings_tab
    ctx = AppContext.create(tmp_path / "ws", max_upload_mb=0.1)
    with gr.Blocks() as demo:
        build_settings_tab(ctx, make_i18n())
    dep = [d for d in demo.config["dependencies"] if d.get("api_name") == "load_yaml"][0]
    fn = demo.fns[dep["id"]].fn
    yaml = tmp_path / "settings.yaml"
    yaml.write_text("learning_rate: 0.001\n" + "# padding\n" * 20000)
    with pytest.raises(gr.Error, match=r"'settings.yaml' is 0.2 MB, over this studio's limit of 0.1 MB"):
        fn(str(yaml), *[None] * (len(dep["inputs"]) - 1))
