"""Settings tab, "Will it fit": the estimator's suggestions can be applied to the form in one click."""
from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from studio.config.run_config import RunConfig
from studio.errors import StudioError
from studio.memory.estimator import estimate
from studio.ui import forms
from studio.app.context import AppContext
from studio.autoconfig import Hardware
from studio.ui.settings_tab import (apply_suggestion, build_settings_tab, estimate_markdown, suggestion_choices,
                                    suggestion_label)


RAM = 64.0   # the host RAM the page plans for (pinned: the panel, the list and Apply all use it)


@pytest.fixture()
def ctx(tmp_path: Path) -> AppContext:
    c = AppContext.create(tmp_path / "ws")
    c.extra["hardware"] = Hardware(gpu_gb=None, ram_gb=RAM, disk_gb=1000.0)
    return c


def _values(**fields: object) -> list:
    # checkpointing off, as the default was when these plans were written (it is on by default now, as in
    # LLaMA-Factory), so the first suggestion is still to turn it on; with held-out rows: a run without them
    # is now flagged, which is not what these test
    return forms.config_to_values(RunConfig(**{"dataset": "d.jsonl", "gradient_checkpointing": False,
                                               "val_size": 0.1, **fields}))


def test_applying_the_first_suggestion_moves_a_70b_full_plan_closer(ctx: AppContext) -> None:
    values = _values(model_name_or_path="llama3-70b", finetuning_type="full")
    before = estimate(forms.values_to_draft(values), 24, ram_gb=RAM)
    assert before.fits is False and before.suggestion_details
    choices = suggestion_choices(values, 24, ram_gb=RAM)
    assert [i for _, i in choices] == list(range(len(before.suggestion_details)))
    assert choices[0][0] == suggestion_label(before.suggestion_details[0])

    new_values, fit, check = apply_suggestion(ctx, values, 24, choices[0][1])
    new_cfg = forms.values_to_draft(new_values)
    wanted = before.suggestion_details[0]["settings"]
    assert {k: getattr(new_cfg, k) for k in wanted} == wanted
    changed = {n for n, a, b in zip(forms.FIELD_NAMES, values, new_values) if a != b}
    assert changed == set(wanted)  # nothing else on the form moves
    after = estimate(new_cfg, 24)
    assert after.gpu_gb < before.gpu_gb - 0.05
    assert fit.startswith("**Does not fit**") and f"{after.gpu_gb:.2f} GB" in fit  # the panel is re-estimated
    # the check agrees with the panel (never "No problems found" beside "still too big")
    assert check.startswith("- ❌ Does not fit the machine planned for") and check.count("❌") == 1, check


def test_a_suggestion_that_fits_makes_the_plan_fit(ctx: AppContext) -> None:
    values = _values(model_name_or_path="qwen2.5-7b", finetuning_type="full")
    details = estimate(forms.values_to_draft(values), 24, ram_gb=RAM).suggestion_details
    first_fitting = next(i for i, d in enumerate(details) if d["fits"])
    new_values, fit, check = apply_suggestion(ctx, values, 24, first_fitting)
    assert estimate(forms.values_to_draft(new_values), 24, ram_gb=RAM).fits is True
    assert fit.startswith("**Fits**") or fit.startswith("**fits, but tight**")
    assert check.startswith("✅"), check  # an applied suggestion never breaks validation
    assert suggestion_choices(new_values, 24, ram_gb=RAM) == []  # nothing left to suggest


def test_the_list_and_the_panel_give_one_verdict_with_host_ram() -> None:
    """llama3-70b on 80 GB: ZeRO-3 offload was "fits" in the list (host RAM ignored) and "still
    too big ... needs 151 GB host RAM" in the panel; both now judge the same card and host RAM."""
    values = _values(model_name_or_path="llama3-70b", finetuning_type="full")
    labels = [label for label, _ in suggestion_choices(values, 80, ram_gb=RAM)]
    zero3 = [label for label in labels if "ZeRO-3" in label]
    assert zero3 and all("still too big" in label and "host RAM" in label for label in zero3), zero3
    panel = estimate_markdown(forms.values_to_draft(values), 80, "en", RAM)
    shown = [line.removeprefix("💡 ") for line in panel.splitlines() if line.startswith("💡")]
    assert shown and shown == labels[:len(shown)]


def test_suggestions_name_the_page_fields_not_yaml_keys() -> None:
    values = _values(model_name_or_path="llama2-7b", finetuning_type="full")
    labels = [label for label, _ in suggestion_choices(values, 24, ram_gb=RAM)]
    assert labels and not any(k in label for label in labels for k in ("finetuning_type", "quantization_bit",
                                                                          "cutoff_len", "optim:", "deepspeed:"))
    assert all("GB of card memory" in label for label in labels)
    from studio.app.settings import field_label
    assert any(field_label("finetuning_type", "en") in label for label in labels)


def test_apply_without_a_pick_says_what_to_do(ctx: AppContext) -> None:
    values = _values()  # tiny-demo fits: no suggestions at all
    assert suggestion_choices(values, 24) == []
    for index in (None, 0):
        with pytest.raises(StudioError) as err:
            apply_suggestion(ctx, values, 24, index)
        assert err.value.message == ("Pick a suggested change first. Fix: the list fills when the plan does not "
                                     "fit.")
    bad = list(values)
    bad[forms.FIELD_NAMES.index("cutoff_len")] = 12.5
    assert suggestion_choices(bad, 24) == []  # a half-typed form shows no suggestions, not a popup


def test_chinese_suggestions_name_the_settings() -> None:
    values = _values(model_name_or_path="llama3-70b", finetuning_type="full")
    label, _ = suggestion_choices(values, 24, "zh")[0]
    # the change in Chinese (the Chinese page showed none: it was English only), then the page's field names, not
    # config keys (never gradient_checkpointing=True)
    assert label.startswith("开启梯度检查点：设为 梯度检查点 = 开启（→ ") and "gradient_checkpointing" not in label and label.endswith("GB 显存，仍然放不下）")


def test_the_tab_has_the_apply_controls(ctx: AppContext) -> None:
    from studio.ui.i18n import make_i18n
    with gr.Blocks() as demo:
        parts = build_settings_tab(ctx, make_i18n())
    assert isinstance(parts.suggest, gr.Dropdown) and isinstance(parts.apply, gr.Button)
    names = {d.get("api_name") for d in demo.get_config_file()["dependencies"]}
    assert {"apply_suggestion", "estimate", "load_preset"} <= names


def test_template_choices_come_from_the_template_registry() -> None:
    """Every template the engine knows is offered (studio, alpaca, gemma were missing), nothing it does not."""
    from studio.data.templates import TEMPLATE_NAMES
    choices = forms.WIDGET_CHOICES["template"]()
    assert choices == TEMPLATE_NAMES
    assert {"auto", "studio", "default", "alpaca", "llama3", "qwen", "chatml", "gemma"} <= set(choices)


def test_the_derived_plan_and_the_panel_speak_of_the_same_card(ctx: AppContext) -> None:
    """llama2-7b on a 24 GB card showed "Fits — 13.87 GB / 24 GB" next to "even batch 1 does
    not fit this machine's memory": the plan was derived for the detected machine (no card), the panel for the
    card typed in. Both now use the typed card."""
    from studio.app.settings import derive
    for card in (24.0, 16.0):
        values, why = derive(ctx, "llama2-7b", "sentiment", "balanced", None, _values(), card)
        panel = estimate_markdown(forms.values_to_draft(values), card, "en", RAM)
        assert panel.startswith(("**Fits**", "**fits, but tight**")), panel
        assert "does not fit" not in why and "this machine" not in why, why


def test_when_nothing_fits_the_panel_says_what_would() -> None:
    """With no suggestion left, the panel still says what would fit (a bigger card or a smaller model)."""
    cfg = forms.values_to_draft(_values(model_name_or_path="qwen2.5-72b", finetuning_type="full"))
    panel = estimate_markdown(cfg, 8, "en", 16)
    assert "Does not fit" in panel and "it needs a card with at least" in panel and "smaller model" in panel
    assert "➡️" in estimate_markdown(cfg, 8, "zh", 16)


def test_host_ram_of_the_target_machine_is_typed_and_kept(ctx: AppContext) -> None:
    """Planning llama3-70b full ZeRO-3 offload for an 80 GB card with 512 GB host RAM was
    judged against this machine's RAM. Host RAM on the page is the target's: the panel, the list and Apply use it,
    and it comes back on reload (per login, with the card memory)."""
    from studio.ui.settings_tab import on_change, target_ram
    from studio.app.settings import restore, save_state
    values = _values(model_name_or_path="llama3-70b", finetuning_type="lora", deepspeed="z3-offload",
                     gradient_checkpointing=True)
    here, _ = on_change(ctx, values, 80, None)        # this machine: 64 GB
    server, _ = on_change(ctx, values, 80, 512)       # the server typed in
    assert "/ 64.0 GB" in here and "/ 512.0 GB" in server, (here, server)
    assert "Host RAM is too small" in here and "Host RAM is too small" not in server, server
    assert target_ram(ctx, 0) == RAM and target_ram(ctx, float("nan")) == RAM and target_ram(ctx, 512) == 512
    lora = _values(model_name_or_path="llama3-70b", finetuning_type="lora")
    offload_here = [lab for lab, _ in suggestion_choices(lora, 80, ram_gb=target_ram(ctx, None)) if "ZeRO-3" in lab]
    offload_server = [lab for lab, _ in suggestion_choices(lora, 80, ram_gb=target_ram(ctx, 512)) if "ZeRO-3" in lab]
    assert offload_here and all("still too big" in lab for lab in offload_here), offload_here
    assert any("still too big" not in lab for lab in offload_server), offload_server
    save_state(ctx, values, {"task": "sentiment", "budget": "balanced", "gpu_mem": 80.0, "host_ram": 512.0})
    _, choices, _ = restore(ctx)
    assert choices["gpu_mem"] == 80.0 and choices["host_ram"] == 512.0
