"""Plots on a Chinese page: a Chinese font when one is installed, else English words; never an empty box.

A missing glyph is what matplotlib warns about ("Glyph 25439 ... missing from font(s) DejaVu Sans") while it draws
the box, so every plot is rendered here with warnings recorded.
"""
from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
from matplotlib import font_manager
from matplotlib.text import Text

from studio.evaluation.metrics import confusion_figure
from studio.runs import plots
from studio.ui import train_tab
from studio.ui.i18n import msg

EVENTS = [{"type": "progress", "step": i, "loss": 2.0 / i} for i in range(1, 6)] + [
    {"type": "eval", "step": 5, "eval_loss": 0.5}]


def _cjk_files() -> list[str]:
    return [p for p in font_manager.findSystemFonts() if any(k in Path(p).name.lower() for k in plots._CJK_FILES)]


def _render(build: Callable[[], Any]) -> tuple[list[str], list[str]]:
    """(missing-glyph warnings, the figure's texts) of the figure ``build`` makes, drawn to PNG."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = build()
        fig.savefig(io.BytesIO(), format="png")
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text()]
    return [str(w.message) for w in caught if "missing from font" in str(w.message)], texts


@pytest.fixture()
def fonts(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool, bool], None]:
    """Make matplotlib's cached font list lack every CJK font (as when the font came after the cache), and
    optionally hide the system's CJK font files too (a machine with none)."""
    fm = font_manager.fontManager

    def setup(cached: bool, on_disk: bool) -> None:
        if not cached:
            monkeypatch.setattr(fm, "ttflist", [f for f in fm.ttflist if f.name not in plots._CJK_NAMES])
        if not on_disk:
            real = font_manager.findSystemFonts
            monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [
                p for p in real(*a, **k) if not any(x in Path(p).name.lower() for x in plots._CJK_FILES)])
        _clear()

    def _clear() -> None:
        plots.cjk_font.cache_clear()
        plots._charmap.cache_clear()
        fm._findfont_cached.cache_clear()

    yield setup
    monkeypatch.undo()
    _clear()


@pytest.mark.parametrize("cached", [True, False], ids=["font-in-cache", "font-installed-after-cache"])
def test_zh_plots_use_the_installed_cjk_font(fonts: Callable[[bool, bool], None], cached: bool) -> None:
    if not _cjk_files():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    fonts(cached, True)
    missing, texts = _render(lambda: train_tab.make_plot(EVENTS, "run-1", lang="zh"))
    assert not missing, missing[:3]
    assert msg("plot.step", "zh") in texts and msg("plot.title", "zh", name="run-1") in texts
    missing, texts = _render(lambda: confusion_figure({"labels": ["正面", "负面"], "matrix": [[3, 1], [0, 4]]}))
    assert not missing and "正面" in texts


def test_zh_plots_without_a_cjk_font_are_worded_in_english(fonts: Callable[[bool, bool], None]) -> None:
    fonts(False, False)
    assert plots.cjk_font() is None
    missing, texts = _render(lambda: train_tab.make_plot(EVENTS, "run-1", lang="zh"))
    assert not missing, missing[:3]
    assert msg("plot.step", "en") in texts and msg("plot.title", "en", name="run-1") in texts
    missing, texts = _render(lambda: confusion_figure({"labels": ["正面", "负面"], "matrix": [[3, 1], [0, 4]]}))
    assert not missing, missing[:3]
    assert "label 1" in texts


def test_compare_plot_follows_the_same_rule(fonts: Callable[[bool, bool], None]) -> None:
    fonts(False, False)
    missing, texts = _render(lambda: plots.overlay_figure([("a", EVENTS)], title=msg(
        "plot.compare", train_tab.plot_lang("zh")), labels=train_tab.plot_words("zh")))
    assert not missing and msg("plot.compare", "en") in texts


def test_the_evaluate_tabs_confusion_matrix_is_worded_in_the_pages_language(
        fonts: Callable[[bool, bool], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """The Evaluate tab redraws the service's (English, the CLI's) confusion matrix in the page's language: its
    title and axes too, not only the labels."""
    if not _cjk_files():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    fonts(True, True)
    from studio.evaluation import inference
    from studio.ui import evaluate_tab
    confusion = {"labels": ["positive", "negative"], "matrix": [[3, 1], [0, 4]], "unparseable": [0, 1]}
    result = {"accuracy": 0.8, "n": 9, "macro_f1": 0.8, "latency_ms_per_row": 1.0, "mode": "score",
              "unparseable": 1, "per_class": {}, "misclassified": [], "confusion": confusion,
              "figure": confusion_figure(confusion)}
    monkeypatch.setattr(inference, "sentiment_check", lambda *a, **k: result)
    fig = evaluate_tab.on_check("run", "validation", None, "score", None, lang="zh")[2]
    missing, texts = _render(lambda: fig)
    assert not missing, missing[:3]
    for key in ("cm.title", "cm.answer", "cm.truth", "cm.unparseable"):
        assert msg(key, "zh") in texts, (key, texts)
    assert not {"model's answer", "true label", "Confusion matrix"} & set(texts)
