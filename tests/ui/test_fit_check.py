"""The Settings check and "Will it fit?" come from one estimate: a plan that does not fit is a
problem in the check too (it said "No problems found" beside "still too big"), and one that fits is not."""
from __future__ import annotations

from pathlib import Path

from studio.autoconfig import Hardware
from studio.config.run_config import RunConfig
from studio.ui import forms
from studio.app.context import AppContext
from studio.ui.settings_tab import apply_suggestion, on_change, suggestion_choices


def _ctx(tmp_path: Path) -> AppContext:
    ctx = AppContext.create(tmp_path / "ws")
    ctx.extra["hardware"] = Hardware(gpu_gb=None, ram_gb=64.0, disk_gb=100000.0)
    return ctx


def test_the_check_says_does_not_fit_when_the_panel_does(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    values = forms.config_to_values(RunConfig(model_name_or_path="llama3-70b", finetuning_type="full",
                                              gradient_checkpointing=False, dataset="d.jsonl"))
    for lang in ("en", "zh"):
        ctx.lang = lang
        fit, check = on_change(ctx, values, 80, 512)
        assert fit.startswith("**Does not fit**" if lang == "en" else "**放不下**"), fit
        assert check.splitlines()[0].startswith("- ❌ Does not fit the machine planned for: it needs 1055" if
                                                lang == "en" else "- ❌ 放不下所规划的机器：需要 1055"), check
    ctx.lang = "en"
    fitting = [i for label, i in suggestion_choices(values, 80, "en", 512) if label.lower().endswith(", fits")]
    assert fitting
    new_values, fit, check = apply_suggestion(ctx, values, 80, fitting[0], 512)
    assert fit.startswith("**Fits**") or fit.startswith("**fits, but tight**"), fit
    assert "Does not fit" not in check, check


def test_a_plan_that_fits_adds_nothing_to_the_check(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    values = forms.config_to_values(RunConfig(dataset="d.jsonl"))  # tiny-demo
    fit, check = on_change(ctx, values, 24, None)
    assert "Does not fit" not in check and "Fits" in fit, (fit, check)
