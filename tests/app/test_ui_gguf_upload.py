"""Settings: a .gguf uploaded in the page is kept inside the workspace, prepared once and becomes the Model; a file
that is too big, not GGUF, or of an architecture transformers cannot read gets a plain error and leaves nothing."""
from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from studio.errors import StudioError
from studio.words.error_words import page_message
from studio.app.context import AppContext
from studio.app.gguf_upload import accept_gguf, uploads_dir

from tests.models.test_gguf_import import write_rwkv7_gguf, write_tiny_llama_gguf


@pytest.fixture(scope="module")
def upload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where Gradio would have put the upload: its own temp folder, outside the workspace."""
    path = tmp_path_factory.mktemp("gradio-tmp") / "tiny llama.F32.gguf"
    write_tiny_llama_gguf(path)
    return path


def test_an_uploaded_gguf_is_prepared_into_the_workspace_once(upload: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM
    ctx = AppContext.create(tmp_path / "ws")
    stages: list[tuple[float, str]] = []
    folder, text = accept_gguf(ctx, upload, progress=lambda f, m: stages.append((f, m)))
    prepared = Path(folder)
    assert prepared.parent == ctx.workspace / "models" and (prepared / "config.json").is_file()
    assert (uploads_dir(ctx.workspace) / upload.name).read_bytes() == upload.read_bytes()
    assert stages and stages[-1][0] == 1.0
    assert "Prepared **tiny llama.F32.gguf** (llama, " in text and str(prepared) in text
    assert AutoModelForCausalLM.from_pretrained(prepared).config.num_hidden_layers == 2
    stamp = (prepared / "model.safetensors").stat().st_mtime_ns
    again, _ = accept_gguf(ctx, upload)  # the same file again: same copy, same folder, weights not rewritten
    assert again == folder and (prepared / "model.safetensors").stat().st_mtime_ns == stamp
    _, zh = accept_gguf(ctx, upload, "zh")
    assert zh.startswith("已把 **tiny llama.F32.gguf**")


def test_unsupported_architecture_too_big_and_not_gguf_are_plain_errors(upload: Path, tmp_path: Path) -> None:
    ctx = AppContext.create(tmp_path / "ws")
    odd = write_rwkv7_gguf(tmp_path / "odd.gguf")
    with pytest.raises(StudioError) as e:
        accept_gguf(ctx, odd)
    assert e.value.message.startswith("'odd.gguf' is a 'rwkv7' model, which this version of transformers cannot "
                                      "read from GGUF. Fix: use a GGUF of one of these architectures: ")
    assert page_message(e.value, "zh").startswith("“odd.gguf”是“rwkv7”模型")  # worded in the page's language
    notes = tmp_path / "notes.gguf"
    notes.write_text("hello")
    with pytest.raises(StudioError, match="'notes.gguf' is not a readable GGUF file"):
        accept_gguf(ctx, notes)
    with pytest.raises(StudioError, match="'model.bin' is not a .gguf file"):
        accept_gguf(ctx, tmp_path / "model.bin")
    ctx.max_model_upload_mb = 0.01
    with pytest.raises(StudioError, match=r"'tiny llama.F32.gguf' is [\d.]+ MB, over this studio's upload limit "
                                          r"of 0.01 MB"):
        accept_gguf(ctx, upload)
    uploads = uploads_dir(ctx.workspace)
    assert not uploads.exists() or not list(uploads.iterdir()), "a refused upload leaves nothing behind"
    assert not list((ctx.workspace / "models").glob("*/config.json")) if (ctx.workspace / "models").exists() else True


def test_settings_tab_has_the_upload_box_with_its_limit(tmp_path: Path) -> None:
    from studio.ui.i18n import make_i18n
    from studio.ui.settings_tab import build_settings_tab
    ctx = AppContext.create(tmp_path / "ws", max_model_upload_mb=300)
    with gr.Blocks() as demo:
        build_settings_tab(ctx, make_i18n())
    files = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "gguf-upload"]
    assert len(files) == 1 and files[0].file_types is None  # any file: accept_gguf refuses in the page's words
    info = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "gguf-info"][0]
    assert "Up to 300 MB" in info.value and "models/uploads/" in info.value
    deps = [d for d in demo.config["dependencies"] if d.get("api_name") == "upload_gguf"]
    assert deps and deps[0]["show_progress"] != "hidden"


def test_upload_through_the_running_page(upload: Path, tmp_path: Path) -> None:
    """The real endpoint (gradio_client uploads the file like a browser): prepared, chosen; a bad file: an error."""
    from gradio_client import Client, handle_file
    from ui_server import Server
    srv = Server(tmp_path / "ws", "--lang", "en").wait_ready()
    try:
        client = Client(srv.url, verbose=False)
        pick, field, text = client.predict(handle_file(str(upload)), "sentiment", api_name="/upload_gguf")
        assert Path(field).parent == (tmp_path / "ws" / "models").resolve() and pick["value"] == field
        assert (Path(field) / "config.json").is_file() and "it is now the Model" in text
        bad = tmp_path / "notes.gguf"
        bad.write_text("hello")
        with pytest.raises(Exception, match="'notes.gguf' is not a readable GGUF file"):
            client.predict(handle_file(str(bad)), "sentiment", api_name="/upload_gguf")
    finally:
        srv.stop()
