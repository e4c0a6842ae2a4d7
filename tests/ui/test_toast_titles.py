"""A toast's title is in the page's language: Gradio titles gr.Info "Info" and gr.Warning "Warning" in English
whatever the page speaks, so the page raises its toasts only through ui/common (info, warning, user_error)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from studio.errors import StudioError
from studio.ui import common

UI = Path(__file__).resolve().parents[2] / "studio" / "ui"


@pytest.mark.parametrize("lang,titles", [("zh", ("提示", "注意", "错误")), ("en", ("Info", "Warning", "Error"))])
def test_every_toast_is_titled_in_the_pages_language(monkeypatch: pytest.MonkeyPatch, lang: str,
                                                     titles: tuple[str, str, str]) -> None:
    shown: list[tuple[str, Any]] = []
    monkeypatch.setattr(gr, "Info", lambda text, **kw: shown.append((text, kw.get("title"))))
    monkeypatch.setattr(gr, "Warning", lambda text, **kw: shown.append((text, kw.get("title"))))
    common.info("a", lang)
    common.warning("b", lang)
    error = common.user_error(StudioError.of("page.empty_message"), "chat", lang)
    assert [t for _, t in shown] + [error.title] == list(titles)


def test_no_page_module_raises_a_toast_with_gradios_english_title() -> None:
    """gr.Info / gr.Warning / gr.Error appear only in ui/common.py, which titles them in the page's words."""
    toast = re.compile(r"\bgr\.(Info|Warning|Success|Error)\(")
    found = [f"{p.name}:{n}" for p in sorted(UI.glob("*.py")) if p.name != "common.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if toast.search(line)]
    assert found == []
