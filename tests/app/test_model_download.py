"""Models you can get: the model list says what this machine has and what a download costs, and the
Settings tab's Download button is the only way the page fetches a built-in model's file."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.words.error_words import page_message
from studio.models import zoo
from studio.models.progress import Step
from studio.app import model_download as md

SMOL = "smollm2-135m-instruct"


@pytest.mark.parametrize("state, words", [("ready", "on this machine"), ("package", "prepared on first use"),
                                          ("download", "a 93 MB download from PyPI first"),
                                          ("missing", "package is not installed")])
def test_each_builtin_state_has_its_own_words_in_both_languages(monkeypatch, state, words):
    monkeypatch.setattr(zoo, "availability", lambda name, cache=None: state)
    assert words in md.availability_note(SMOL, "en")
    zh = md.availability_note(SMOL, "zh")
    assert zh and not any(w in zh for w in ("machine", "package", "download", "first use"))


def test_the_download_button_shows_only_while_a_builtin_needs_its_file(monkeypatch):
    monkeypatch.setattr(zoo, "availability", lambda name, cache=None: "download" if name == SMOL else "ready")
    assert md.button(SMOL, "en") == {"visible": True, "value": "Download smollm2-135m-instruct (93 MB)"}
    for other in ("gemma3-270m", "tiny-demo", "Qwen/Qwen2.5-0.5B", "/etc", None):
        assert md.button(other, "en") == {"visible": False}


def test_download_takes_only_a_builtin_name(monkeypatch):
    monkeypatch.setattr(zoo, "download", lambda *a, **k: pytest.fail("downloaded"))
    for bad in ("../../etc", "Qwen/Qwen2.5-0.5B", "", None, "x" * 5000):
        with pytest.raises(StudioError) as e:
            md.download(bad, "en")
        assert "not a built-in model" in e.value.message and len(e.value.message) < 400
        assert "不是内置模型" in page_message(e.value, "zh")  # worded when shown, in the page's language


def test_download_fetches_once_and_says_so(monkeypatch):
    got = []
    state = {"now": "download"}
    monkeypatch.setattr(zoo, "availability", lambda name, cache=None: state["now"])

    def fake(name, cache=None, progress=None):
        got.append(name)
        progress(1.0, Step.of("ready", file="model.gguf", mb=93.0))  # each step is said by code (models/progress.py)
        state["now"] = "package"
        return Path("/x")
    monkeypatch.setattr(zoo, "download", fake)
    said = []
    assert md.download(SMOL, "en", progress=lambda f, m: said.append(f)) == \
        "smollm2-135m-instruct downloaded (93 MB); it is prepared when a run first uses it."
    assert md.download(SMOL, "en") == "smollm2-135m-instruct is already on this machine."
    assert got == [SMOL] and said == [1.0]


def test_hub_probe_follows_hf_endpoint(monkeypatch):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        monkeypatch.setitem(md._hub, "at", -1e18)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
        assert md.hub_reachable() is True
    finally:
        server.close()
    monkeypatch.setitem(md._hub, "at", -1e18)
    assert md.hub_reachable() is False  # nothing listens there now
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    note = md.availability_note("Qwen/Qwen2.5-7B", "en", params=7_600_000_000)
    assert note == " · ⬇ downloads about 15 GB from the Hugging Face hub first (the hub does not answer from here: " \
                   "it cannot be downloaded now)"


def test_settings_tab_download_is_an_owner_action_wired_to_the_button(tmp_path):
    from studio.ui import app
    from studio.app.context import AppContext
    from studio.app.roles import is_owner_only
    blocks = app.build_app(AppContext.create(tmp_path / "ws"))
    fn = next(f for f in blocks.fns.values() if f.api_name == "download_model")
    assert is_owner_only(fn.fn)
