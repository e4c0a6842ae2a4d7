"""Without a browser: derived settings, problems before Start, plain words, the fit panel,
label-column warnings, settings kept per workspace, the dataset list."""
from __future__ import annotations

import re

import json
from pathlib import Path
from typing import Any

import pytest

from studio.autoconfig import Hardware, learning_problems, suggest_settings
from studio.config.run_config import Draft, RunConfig
from studio.workspace import PRESETS_DIR
from studio.data.label_check import label_warnings
from studio.memory.estimator import estimate
from studio.ui import forms
from studio.app.context import AppContext
from studio.ui.settings_tab import check_markdown, estimate_markdown
from studio.app.datasets import dataset_choices
from studio.app.settings import derive, error_line, restore, save_state, settings_version
from studio.errors import StudioError

CPU = Hardware(gpu_gb=None, ram_gb=24.0, disk_gb=100.0)


@pytest.fixture()
def ctx(tmp_path: Path) -> AppContext:
    c = AppContext.create(tmp_path / "ws")
    c.extra["hardware"] = CPU
    return c


def test_tiny_demo_gets_full_fine_tuning_and_held_out_rows() -> None:
    changes, reasons = suggest_settings("tiny-demo", 427, "sentiment", CPU, "balanced")
    cfg = Draft().replace(**changes)
    assert cfg.finetuning_type == "full" and cfg.val_size == 0.1 and cfg.learning_rate == 0.002
    assert cfg.num_train_epochs == 10 and learning_problems(cfg, 427) == []
    assert {r.field for r in reasons} >= {"finetuning_type", "learning_rate", "val_size", "num_train_epochs"}
    assert suggest_settings("tiny-demo", 427, "sentiment", CPU, "quick")[0]["num_train_epochs"] == 5


def test_pretrained_models_get_lora_and_qlora_only_when_16_bit_does_not_fit() -> None:
    big = suggest_settings("qwen2.5-7b", 1000, "instruction", Hardware(80, 256, 500))[0]
    small = suggest_settings("qwen2.5-7b", 1000, "instruction", Hardware(12, 64, 500))[0]
    assert big["finetuning_type"] == small["finetuning_type"] == "lora"
    assert big["quantization_bit"] is None and small["quantization_bit"] == 4
    fitted = estimate(Draft().replace(**small), 12, ram_gb=64)
    assert fitted.fits and big["per_device_train_batch_size"] * big["gradient_accumulation_steps"] == 16


def test_lora_plans_use_no_adapter_dropout() -> None:
    """LoRA dropout 0.05 made every step 40-48% slower on the CPU for no measured gain (SmolLM2 6 steps 22.6/23.2 s
    without, 33.6/32.5 s with; Gemma 15.4 vs 21.8 s; docs/logs/benchmarks-history.md section 6): the derived plan uses
    LLaMA-Factory's and peft's default, 0."""
    for model, hw in (("smollm2-135m-instruct", CPU), ("gemma3-270m", CPU), ("qwen2.5-7b", Hardware(80, 256, 500))):
        assert suggest_settings(model, 427, "sentiment", hw)[0]["lora_dropout"] == 0.0


def test_few_rows_keep_no_validation_split_and_say_so() -> None:
    changes, reasons = suggest_settings("tiny-demo", 12, "sentiment", CPU)
    assert changes["val_size"] == 0.0 and any(r.code == "val_none" for r in reasons)


def test_a_partial_method_on_the_random_model_is_a_problem_before_start(ctx: AppContext) -> None:
    cfg = RunConfig(dataset="d.jsonl", finetuning_type="lora", val_size=0.0)
    codes = [r.code for r in learning_problems(cfg)]
    assert codes == ["partial_random", "no_val"]
    check = check_markdown(cfg, ctx)
    assert "tiny-demo starts from random weights" in check and "No problems" not in check


def test_problems_name_page_fields_not_config_keys_or_flags(ctx: AppContext) -> None:
    check = check_markdown(Draft(dataset="", per_device_train_batch_size=0, val_size=0.1, finetuning_type="full"),
                           ctx)
    assert "'Training data' is empty: convert a file on the Data tab" in check
    assert "'Batch size' must be at least 1" in check
    assert "per_device_train_batch_size" not in check and "python -m studio" not in check
    shown = error_line(StudioError.of("model.nproc_over_cards", index=2, cards=1), "en")
    assert "'Processes (cards)' is more than the 1 card(s) here" in shown and "nproc" not in shown, shown


def test_no_card_means_the_cpu_and_host_ram_is_the_budget() -> None:
    md = estimate_markdown(Draft(), 0, "en", ram_gb=24.0)
    assert "No GPU: training runs on the CPU" in md and "/ 24.0 GB" in md and "card" not in md.split("\n")[2]
    huge = estimate_markdown(Draft(model_name_or_path="qwen2.5-7b", finetuning_type="full"), 0, "en", ram_gb=24.0)
    assert "**Does not fit**" in huge


def test_offload_plans_are_judged_against_host_ram() -> None:
    """7B full with ZeRO-3 offload needs far more host RAM than a 24 GB machine has."""
    cfg = Draft(model_name_or_path="qwen2.5-7b", finetuning_type="full", deepspeed="z3-offload")
    md = estimate_markdown(cfg, 24, "en", ram_gb=24.0)
    assert md.startswith("**Does not fit**") and "Host RAM is too small" in md


def test_offload_plans_check_the_free_disk_of_the_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An offload plan writes whole-model checkpoints; too little free disk -> "Does not fit"."""
    import re
    from studio.autoconfig import offload_disk_problem
    from studio.ui import fit_panel
    cfg = Draft(model_name_or_path="qwen2.5-7b", finetuning_type="lora", deepspeed="z3-offload",
                    output_dir=str(tmp_path / "runs" / "new"))
    asked: list[Any] = []
    free = {"gb": 2.0}
    monkeypatch.setattr(fit_panel, "_free_disk", lambda where=None: asked.append(where) or free["gb"])
    small = estimate_markdown(cfg, 24, "en", ram_gb=256.0)
    need = re.search(r"a checkpoint needs about (\d+) GB of disk, only 2 GB are free", small)
    assert small.startswith("**Does not fit**") and need and 10 <= int(need.group(1)) <= 20, small
    assert asked == [cfg.output_dir]  # the disk the run goes to, not the server's current folder
    free["gb"] = 500.0
    roomy = estimate_markdown(cfg, 24, "en", ram_gb=256.0)
    assert roomy.startswith("**Fits") and "of disk" not in roomy, roomy
    # the same rule without the page: the fit estimate plus the machine's disk
    est = estimate(cfg, 24, ram_gb=256.0)
    assert offload_disk_problem(cfg, est, Hardware(24.0, 256.0, 2.0)) is not None
    assert offload_disk_problem(cfg, est, Hardware(24.0, 256.0, 500.0)) is None
    # a plan without offload keeps its checkpoints small and never asks the disk
    asked.clear()
    free["gb"] = 2.0
    estimate_markdown(cfg.replace(deepspeed=None), 24, "en", ram_gb=256.0)
    assert asked == []


def test_free_disk_is_read_where_the_run_folder_will_be(tmp_path: Path) -> None:
    from studio.ui.fit_panel import _free_disk
    import shutil
    assert _free_disk(tmp_path / "not" / "yet") == pytest.approx(shutil.disk_usage(tmp_path).free / 1024 ** 3, rel=0.01)


@pytest.mark.parametrize("recipe", sorted((PRESETS_DIR / "recipes").glob("*gb.yaml")))
def test_recipes_fit_the_card_they_are_named_after(recipe: Path) -> None:
    gb = float(recipe.stem.rsplit("-", 1)[1][:-2])
    est = estimate(Draft.load(recipe), gb)  # a recipe names no data
    assert est.fits, f"{recipe.name}: {est.gpu_gb:.1f} GB on a {gb:g} GB card"


def test_label_column_sanity() -> None:
    assert label_warnings(["en", "zh"] * 50, "lang")[0][0] == "lang"
    assert label_warnings([f"id-{i}" for i in range(100)], "id")[0][0] == "ids"
    free = ["I loved this product a lot", "terrible, would not buy again", "it was fine I guess", "meh okay-ish"] * 25
    assert label_warnings(free, "comment")[0][0] == "free_text"
    assert label_warnings([str(i % 40) for i in range(400)], "score")[0][0] == "too_many"
    assert label_warnings(["positive", "negative", "neutral"] * 40, "label") == []


def test_settings_survive_a_new_page_and_the_dataset_list(ctx: AppContext) -> None:
    data = ctx.data_root / "reviews.jsonl"
    data.write_text("".join(json.dumps({"instruction": "x", "input": f"t{i}", "output": "pos" if i % 2 else "neg"})
                            + "\n" for i in range(60)), encoding="utf-8")
    (label, value), = dataset_choices(ctx, "en")
    assert value == str(data.resolve()) and label.startswith("reviews · 60 rows · sentiment")
    values, why = derive(ctx, "tiny-demo", "sentiment", "best", value, forms.config_to_values(Draft()))
    cfg = forms.values_to_config(values)
    assert cfg.dataset == value and cfg.num_train_epochs == 20 and cfg.finetuning_type == "full"
    save_state(ctx, forms.config_to_values(cfg.replace(learning_rate=0.003)),
               {"task": "sentiment", "budget": "best", "gpu_mem": 24})
    again, choices, _ = restore(ctx)
    assert forms.values_to_config(again).learning_rate == 0.003 and choices["budget"] == "best"
    assert choices["gpu_mem"] == 24.0  # the card memory planned for survives a reload
    assert RunConfig.load(ctx.workspace / "settings.yaml").dataset == value  # the CLI takes the same file


def test_a_fresh_workspace_starts_from_derived_settings(ctx: AppContext) -> None:
    values, choices, why = restore(ctx)
    cfg = forms.values_to_draft(values)
    assert cfg.finetuning_type == "full" and cfg.val_size > 0 and "full fine-tuning" in why


def _fake_run(root: Path, name: str, losses: list[float], acc: float, lr: float) -> Path:
    from studio.runs.run_dir import RunDir
    run = RunDir(root / name).ensure()
    RunConfig(dataset="d.jsonl", learning_rate=lr, finetuning_type="full", val_size=0.1).save(run.config)
    for i, loss in enumerate(losses, 1):
        run.append_event({"type": "progress", "step": i, "loss": loss})
    run.write_status("finished", step=len(losses), total_steps=len(losses), final_loss=losses[-1], started=1.0,
                     ended=31.0)
    (run.path / "studio_accuracy.json").write_text(json.dumps({"accuracy": acc, "n": 43}))
    return run.path


def test_runs_view_lists_cli_runs_and_compares_two(ctx: AppContext) -> None:
    """Runs in workspace/runs (as the CLI quick start writes them) show with accuracy; two overlay on one plot."""
    from studio.ui.runs_tab import compare, run_table, table_rows
    a = _fake_run(ctx.runs_root, "quick", [2.0, 1.0], 0.70, 0.002)
    b = _fake_run(ctx.runs_root, "best", [2.0, 1.5, 0.5], 0.81, 0.001)
    runs = run_table(ctx)
    rows = {r[0]: r for r in table_rows(runs, "en")}
    assert rows["quick"][5] == "70.0%" and rows["best"][5] == "81.0%" and rows["best"][1] == "Finished"
    fig, cards = compare(ctx, [str(a), str(b)])
    lines = [ln for ln in fig.axes[0].get_lines()]
    assert sorted(len(ln.get_xdata()) for ln in lines) == [2, 3]
    acc_row = next(ln for ln in cards.splitlines() if ln.startswith("| accuracy (held-out rows)"))
    assert sorted(c.strip() for c in acc_row.split("|")[2:-1]) == ["70.0%", "81.0%"]  # side by side


def test_a_one_point_loss_curve_is_drawn() -> None:
    from studio.runs.plots import loss_figure
    fig = loss_figure([{"type": "progress", "step": 1, "loss": 2.0}])
    raw = fig.axes[0].get_lines()[0]
    assert len(raw.get_xdata()) == 1 and raw.get_marker() == "o"


def test_page_log_leaves_library_noise_to_the_log_file() -> None:
    from studio.ui.train_tab import page_log
    tail = ("[2026-12-02 20:00:00,000] [WARNING] [real_accelerator.py:213] Setting accelerator to CPU\n"
            '{"type": "progress", "step": 3}\nstep 3/240 loss 1.23\nmissing keys [\'lm_head.weight\']\n')
    assert page_log(tail) == "step 3/240 loss 1.23"


def test_settings_are_per_login_and_a_stale_page_does_not_overwrite(tmp_path: Path) -> None:
    """Each login keeps its own form; a page loaded before the last save is refused."""
    from studio.app.settings import settings_folder, settings_version
    ctx = AppContext.create(tmp_path / "ws")
    mine = forms.config_to_values(RunConfig(dataset="mine.jsonl"))
    theirs = forms.config_to_values(RunConfig(dataset="data/sample_reviews.jsonl"))
    choices = {"task": "sentiment", "budget": "balanced"}
    assert save_state(ctx, mine, choices, settings_version(ctx, "me"), user="me") == 1
    assert save_state(ctx, theirs, choices, settings_version(ctx, "mate"), user="mate") == 1
    assert dict(zip(forms.FIELD_NAMES, restore(ctx, "me")[0]))["dataset"] == "mine.jsonl"
    assert settings_folder(ctx, "me") != settings_folder(ctx, "mate") != settings_folder(ctx, None)
    assert settings_folder(ctx, "../evil").parent == ctx.workspace / "users"
    stale = settings_version(ctx, "me")  # a second page of the same login, opened now
    assert save_state(ctx, mine, {**choices, "budget": "best"}, stale, user="me") == 2  # the first page saves
    assert save_state(ctx, theirs, choices, stale, user="me") is None  # the older page is refused
    assert dict(zip(forms.FIELD_NAMES, restore(ctx, "me")[0]))["dataset"] == "mine.jsonl"


def test_a_login_without_settings_starts_from_the_studios_own_and_from_a_persons_data(tmp_path: Path) -> None:
    """A studio restarted with logins: a login with no settings of its own starts from the settings the studio had
    before (its owner's plan, not tiny-demo), and saves its first change in its own folder; with none at all, the
    derived plan starts on the newest dataset a person converted, not on the studio's own feedback datasets."""
    import json
    import os
    from studio.data.registry import register_dataset
    ctx = AppContext.create(tmp_path / "ws")
    rows = [{"instruction": "Sentiment?", "input": f"t{i}", "output": "positive" if i % 2 else "negative"}
            for i in range(20)]
    for name, source in (("news", "news.csv"), ("news_feedback_replay", None)):
        path = ctx.data_root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        register_dataset(ctx.data_root, name, path, rows, task="sentiment", source=source)
    os.utime(ctx.data_root / "news_feedback_replay.jsonl", (2e9, 2e9))  # the studio's own is the newest file
    fresh = dict(zip(forms.FIELD_NAMES, restore(ctx, "viewer")[0]))
    assert fresh["dataset"].endswith("news.jsonl")
    plan = forms.config_to_values(RunConfig(model_name_or_path="gemma3-270m", dataset="news.jsonl", lora_rank=16))
    assert save_state(ctx, plan, {"task": "sentiment", "budget": "balanced"}, 0) == 1  # before logins: the workspace's
    kept = dict(zip(forms.FIELD_NAMES, restore(ctx, "ann")[0]))
    assert (kept["model_name_or_path"], kept["dataset"], kept["lora_rank"]) == ("gemma3-270m", "news.jsonl", 16)
    assert save_state(ctx, plan, {"task": "sentiment", "budget": "best"}, settings_version(ctx, "ann"), user="ann")
    assert (ctx.workspace / "users" / "ann" / "settings.yaml").is_file()


def test_model_list_says_which_models_need_a_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hub models are marked; built-in ones are not; offline says they cannot be had."""
    from studio.app.model_list import model_choices

    def hardware() -> Hardware:
        return Hardware(gpu_gb=None, ram_gb=16.0, disk_gb=100.0)
    from studio.app import model_download
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(model_download, "hub_reachable", lambda: False)
    labels = dict((v, lbl) for lbl, v in model_choices(hardware(), 100, "sentiment", "en"))
    assert "download" not in labels["tiny-demo"] and "download" not in labels["gemma3-270m"]
    hub = [v for v, lbl in labels.items() if v not in ("tiny-demo", "smollm2-135m-instruct", "gemma3-270m")]
    assert hub and all(re.search(r"downloads about \d+ GB from the Hugging Face hub first \(the hub does not answer "
                                 "from here", labels[v]) for v in hub)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    labels = dict((v, lbl) for lbl, v in model_choices(hardware(), 100, "sentiment", "en"))
    assert all("not on this machine" in labels[v] for v in hub)


def test_small_data_still_makes_enough_updates_per_pass() -> None:
    """The plan lowers the update size so every pass makes at least MIN_UPDATES_PER_PASS updates: 64 rows in
    updates of 16 rows made 5 optimizer steps and a worse held-out loss than 8 steps of 8."""
    from studio.autoconfig import EFFECTIVE_BATCH, MIN_UPDATES_PER_PASS
    for rows in (20, 64, 130, 400, 5000):
        changes, reasons = suggest_settings("smollm2-135m-instruct", rows, "sentiment", CPU)
        update = changes["per_device_train_batch_size"] * changes["gradient_accumulation_steps"]
        train = rows - round(rows * changes["val_size"]) if changes["val_size"] < 1 else rows - changes["val_size"]
        assert update <= EFFECTIVE_BATCH
        assert train // update >= MIN_UPDATES_PER_PASS or update == changes["per_device_train_batch_size"], rows
        if update < EFFECTIVE_BATCH:
            assert any(r.code == "small_data" for r in reasons), rows
    assert suggest_settings("smollm2-135m-instruct", 5000, "sentiment", CPU)[0]["gradient_accumulation_steps"] * \
        suggest_settings("smollm2-135m-instruct", 5000, "sentiment", CPU)[0]["per_device_train_batch_size"] == 16


def test_cpu_plans_use_the_smaller_rank_and_say_why() -> None:
    cpu, reasons = suggest_settings("gemma3-270m", 400, "sentiment", CPU)
    card = suggest_settings("qwen2.5-7b", 400, "instruction", Hardware(80, 256, 500))[0]
    assert cpu["lora_rank"] == 8 and card["lora_rank"] == 16
    assert any(r.code == "cpu_rank" for r in reasons)
