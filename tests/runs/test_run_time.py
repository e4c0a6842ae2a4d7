"""The run-time estimate before Start comes from this machine, the runs done here, the rows
chosen, the time budget, the preparation still to do and the load; the engine records what the next estimate
learns from. The accuracy on the real models is measured by bench/estimate_accuracy.py (docs/BENCHMARKS.md)."""
from __future__ import annotations

import json
import time

import pytest

from studio.autoconfig import Hardware
from studio.config.run_config import Draft, RunConfig
from studio.memory.cards import load_card
from studio.runs import run_time

CARD = load_card("smollm2-135m-instruct")
ROWS = [{"instruction": "Classify the review", "input": "good film " * (i % 7 + 1), "output": "positive"}
        for i in range(200)]
FLOPS = 1e11


def _cfg(**kw) -> Draft:
    base = dict(model_name_or_path="smollm2-135m-instruct", finetuning_type="lora", num_train_epochs=2.0,
                val_size=0.1, cutoff_len=256, per_device_train_batch_size=8)
    base.update(kw)
    return Draft(**base)


def _past(root, name, **kw):
    t = time.time() - 3600
    st = dict(state="finished", device="cpu", model="smollm2-135m-instruct", finetuning_type="lora",
              started=t, train_started=t + 12.0, train_seconds=100.0, ended=t + 12.0 + 100.0 + 3.0,
              train_tokens=20_000, others_load=0.0)
    st.update(kw)
    (root / name).mkdir(parents=True)
    (root / name / "status.json").write_text(json.dumps(st))


def test_history_sets_the_speed_start_and_tail(tmp_path):
    """A finished run here of the same model and method: its tokens per second, its start-up and its tail."""
    _past(tmp_path, "a")
    cfg = _cfg()
    work = run_time.run_work(cfg, ROWS)
    est = run_time.estimate(cfg, ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert est.source == "history" and est.runs == 1
    assert est.tokens_per_s == pytest.approx(200.0)
    assert est.parts["train"] == pytest.approx(work.train_tokens / 200.0, rel=1e-2)
    assert est.parts["start"] == pytest.approx(12.0 + run_time.PROCESS_S) and est.parts["save"] == pytest.approx(3.0)
    assert est.seconds == pytest.approx(sum(est.parts.values()), rel=1e-3)


def test_history_ignores_other_models_methods_devices_and_unfinished_runs(tmp_path):
    _past(tmp_path, "other-model", model="gemma3-270m", train_tokens=1)
    _past(tmp_path, "full", finetuning_type="full", train_tokens=1)
    _past(tmp_path, "card", device="cuda", train_tokens=1)
    _past(tmp_path, "failed", state="failed", train_tokens=1)
    _past(tmp_path, "old-record", train_tokens=None)   # a run from before the engine recorded tokens
    est = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert est.source == "measured" and est.runs == 0


def test_newest_runs_count_and_their_median(tmp_path):
    for i, tokens in enumerate([10_000, 20_000, 30_000, 1]):   # the oldest (1 token/100 s) is past HISTORY_RUNS
        _past(tmp_path, f"r{i}", train_tokens=tokens, ended=time.time() - 10 * i)
    est = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert est.runs == run_time.HISTORY_RUNS == 3 and est.tokens_per_s == pytest.approx(200.0)


def test_load_now_and_then(tmp_path, monkeypatch):
    """Two busy cores on a 2-core machine: the run takes one thread (free_threads) and shares a core with them; a
    past run measured under load counts as faster."""
    monkeypatch.setattr(run_time, "cores", lambda: 2)
    one = 2 ** run_time.THREAD_SCALING   # one thread instead of two, alone on its core
    assert run_time.slowdown(0.0, 2) == 1.0 and run_time.slowdown(2.0, 2) == 2.0
    assert run_time.slowdown(0.5, 1) == pytest.approx(one) and run_time.slowdown(1.0) == pytest.approx(one)
    assert run_time.slowdown(2.0) == pytest.approx(one * 1.5)   # 3 threads on 2 cores
    _past(tmp_path, "a")
    idle = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    busy = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=2.0, flops=FLOPS)
    assert busy.slowdown == round(one * 1.5, 2)
    assert busy.parts["train"] == pytest.approx(one * 1.5 * idle.parts["train"], rel=1e-2)
    _past(tmp_path, "one-thread", threads=1, others_load=1.0, ended=time.time() + 5)   # took one core's speed
    assert run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0,
                             flops=FLOPS).tokens_per_s == pytest.approx(200.0 * (1 + one) / 2, rel=1e-3)   # median
    (tmp_path / "one-thread" / "status.json").unlink()
    _past(tmp_path, "b", others_load=2.0, ended=time.time())
    _past(tmp_path, "c", others_load=2.0, ended=time.time() - 1)
    faster = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert faster.tokens_per_s == pytest.approx(400.0)   # the median of 200, 400, 400


def test_measured_speed_follows_the_machine_and_the_method():
    """No history: twice the matmul speed halves the training; full fine-tuning does more work per token."""
    slow = run_time.estimate(_cfg(), ROWS, card=CARD, load=0.0, flops=FLOPS)
    fast = run_time.estimate(_cfg(), ROWS, card=CARD, load=0.0, flops=2 * FLOPS)
    assert slow.source == "measured"
    assert slow.parts["train"] == pytest.approx(2 * fast.parts["train"], rel=0.05)
    full = run_time.estimate(_cfg(finetuning_type="full"), ROWS, card=CARD, load=0.0, flops=FLOPS)
    assert full.parts["train"] > 1.3 * slow.parts["train"] and full.parts["save"] > slow.parts["save"]


def test_the_work_is_the_rows_passes_and_held_out_share():
    cfg = _cfg(num_train_epochs=1.0)
    one = run_time.run_work(cfg, ROWS)
    two = run_time.run_work(_cfg(num_train_epochs=2.0), ROWS)
    assert two.train_tokens == pytest.approx(2 * one.train_tokens, rel=1e-3)
    none_held = run_time.run_work(_cfg(num_train_epochs=1.0, val_size=0.0), ROWS)
    assert none_held.val_tokens == 0 and none_held.train_tokens > one.train_tokens
    capped = run_time.run_work(_cfg(max_steps=5), ROWS)
    assert capped.train_tokens == pytest.approx(5 * 8 * capped.mean_len, rel=1e-3)


def test_tokens_are_counted_as_the_engine_tokenizes(tiny_model_dir, sample_reviews_jsonl):
    """With the model's tokenizer the count is the engine's own (prepare_data), not a characters rule."""
    from transformers import AutoTokenizer
    from studio.data.dataset import load_rows
    from studio.engine.run import prepare_data
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    rows = load_rows(str(sample_reviews_jsonl))
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl), val_size=0.1,
                    num_train_epochs=1.0, cutoff_len=64, template="default")
    train, _val, _ = prepare_data(cfg, tok, rows)
    work = run_time.run_work(cfg, rows, tok, sample=len(rows))
    assert work.train_tokens == pytest.approx(sum(len(f["input_ids"]) for f in train), rel=0.02)


def test_preparation_still_to_do_is_part_of_the_time():
    cfg = _cfg()
    ready = run_time.estimate(cfg, ROWS, card=CARD, load=0.0, flops=FLOPS)
    fresh = run_time.estimate(cfg, ROWS, card=CARD, load=0.0, flops=FLOPS, prepare_cpu_s=28.0)
    assert ready.parts["prepare"] == 0 and fresh.seconds == pytest.approx(ready.seconds + fresh.parts["prepare"])
    assert fresh.parts["prepare"] >= 28.0 / run_time.cores()


def test_the_budget_changes_the_model_lists_time(monkeypatch):
    """The Model list's "about N here" is the plan the page derives for the chosen budget."""
    from studio.app.run_estimate import placeholder_rows, plan_seconds
    monkeypatch.setattr(run_time, "machine_flops", lambda: FLOPS)
    hw = Hardware(gpu_gb=None, ram_gb=16.0, disk_gb=100.0)
    rows = placeholder_rows("sentiment", 400)
    times = [plan_seconds("smollm2-135m-instruct", "sentiment", b, rows, hw) for b in ("quick", "balanced", "best")]
    assert times[0] < times[1] < times[2]
    assert plan_seconds("smollm2-135m-instruct", "instruction", "balanced", placeholder_rows("instruction", 400),
                        hw) > times[1]


def test_the_engine_records_what_the_next_estimate_learns_from(tmp_path, tiny_model_dir, sample_reviews_jsonl):
    """A finished run leaves its tokens, loop start, load and model in status.json; the next estimate of the same
    model reads them (source 'history')."""
    import torch
    from studio.engine import run_training
    runs = tmp_path / "runs"
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(runs / "r1"), finetuning_type="lora", cutoff_len=64, max_steps=4,
                    logging_steps=2, save_steps=1000, plot_loss=False, val_size=0.0)
    assert run_training(cfg)["state"] == "finished"
    st = json.loads((runs / "r1" / "status.json").read_text())
    assert st["model"] == str(tiny_model_dir) and st["finetuning_type"] == "lora"
    assert st["train_tokens"] > 0 and st["started"] < st["train_started"] < st["ended"]
    assert isinstance(st["others_load"], float) and 0 <= st["others_load"] <= run_time.cores()
    card = load_card(str(tiny_model_dir))
    est = run_time.estimate(cfg, [{"instruction": "a", "output": "b"}] * 10, card=card, runs_root=runs, load=0.0,
                            flops=FLOPS)
    assert est.source == "history" and est.runs == 1
    assert 1 <= st["threads"] <= torch.get_num_threads()
    idle_rate = st["train_tokens"] / st["train_seconds"] * run_time.slowdown(st["others_load"], st["threads"])
    assert est.tokens_per_s == pytest.approx(idle_rate, rel=0.02)


def test_machine_speed_is_measured_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []
    monkeypatch.setattr(run_time, "_measure_flops", lambda: calls.append(1) or 5e10)
    monkeypatch.setattr(run_time, "others_load", lambda **kw: 0.0)   # a quiet machine: the measurement is kept
    run_time.machine_flops.cache_clear()
    try:
        assert run_time.machine_flops() == 5e10
        run_time.machine_flops.cache_clear()
        assert run_time.machine_flops() == 5e10 and len(calls) == 1   # the second process reads the file
        assert run_time._machine_key() in json.loads(run_time._speed_file().read_text())
    finally:
        run_time.machine_flops.cache_clear()


def test_others_load_sees_a_busy_core(monkeypatch):
    """A process spinning on one core beside this one reads as about one core of others' work."""
    import subprocess
    import sys
    if run_time.cpu_busy() is None:
        pytest.skip("no /proc/stat here")
    spin = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 5: pass"])
    try:
        time.sleep(0.5)
        seen = run_time.others_load(window_s=1.0, keep_s=0.0)
    finally:
        spin.kill()
    assert 0.6 <= seen <= run_time.cores(), seen
    time.sleep(0.3)
    assert run_time.others_between((10.0, 0), (14.0, 0), 2.0, 3.0) == 0.5  # 4 busy CPU-s in 2 s, 3 of them ours


def test_machine_speed_measured_on_a_busy_machine_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(run_time, "_measure_flops", lambda: 5e10)
    monkeypatch.setattr(run_time, "others_load", lambda **kw: run_time.cores() * 1.0)
    run_time.machine_flops.cache_clear()
    try:
        assert run_time.machine_flops() == pytest.approx(5e10 * run_time.slowdown(run_time.cores() * 1.0,
                                                                                   run_time.cores()))
        assert not run_time._speed_file().exists()
    finally:
        run_time.machine_flops.cache_clear()


def _page(tmp_path, monkeypatch):
    from studio.app.context import AppContext
    monkeypatch.setattr(run_time, "machine_flops", lambda: FLOPS)
    monkeypatch.setattr(run_time, "others_load", lambda **kw: 0.0)
    ctx = AppContext.create(tmp_path / "ws")
    ctx.extra["hardware"] = Hardware(gpu_gb=None, ram_gb=64.0, disk_gb=1000.0)
    return ctx


def _rows_file(path, n):
    path.write_text("".join(json.dumps(r) + "\n" for r in (ROWS * 10)[:n]))
    return path


def test_the_settings_panel_says_how_long_in_the_pages_language(tmp_path, monkeypatch):
    from studio.ui import forms
    from studio.ui.settings_tab import on_change
    ctx = _page(tmp_path, monkeypatch)
    small = _rows_file(ctx.data_root / "small.jsonl", 100)
    big = _rows_file(ctx.data_root / "big.jsonl", 1000)
    for lang, words in (("en", "About "), ("zh", "在本机约")):
        ctx.lang = lang
        for data in (small, big):
            values = forms.config_to_values(RunConfig(model_name_or_path="smollm2-135m-instruct",
                                                      finetuning_type="lora", dataset=str(data)))
            panel, _ = on_change(ctx, values, 0, None)
            assert words in panel, panel
    from studio.app.run_estimate import estimate, rows_for
    cfg = Draft(model_name_or_path="smollm2-135m-instruct", finetuning_type="lora")
    t_small = estimate(ctx, cfg, rows_for(ctx, str(small), "sentiment")).parts["train"]
    t_big = estimate(ctx, cfg, rows_for(ctx, str(big), "sentiment")).parts["train"]
    assert t_big == pytest.approx(10 * t_small, rel=0.15)   # the chosen file's rows, not a guess


def test_a_dataset_path_from_the_browser_is_never_read(tmp_path, monkeypatch):
    """Only datasets the studio converted into its data folder are read for the estimate; a typed path (a file the
    server can read elsewhere) is refused by the page's path rule and never opened; the estimate itself gives such a
    name the placeholder rows."""
    from studio.ui import forms
    from studio.app import run_estimate
    from studio.ui.settings_tab import on_change
    ctx = _page(tmp_path, monkeypatch)
    outside = _rows_file(tmp_path / "secret.jsonl", 50)
    opened = []
    real = run_estimate._rows
    monkeypatch.setattr(run_estimate, "_rows", lambda *a: opened.append(a[0]) or real(*a))
    values = forms.config_to_values(RunConfig(model_name_or_path="smollm2-135m-instruct", finetuning_type="lora",
                                              dataset=str(outside)))
    panel, _ = on_change(ctx, values, 0, None)
    assert "is outside the folders this studio may use" in panel and opened == []
    assert run_estimate.rows_for(ctx, str(outside), "sentiment")[0].get(run_estimate.PLACEHOLDER)


def test_free_threads_one_per_core_others_leave():
    assert [run_time.free_threads(load, 2) for load in (0.0, 0.4, 0.6, 1.0, 1.7, 5.0)] == [2, 2, 1, 1, 1, 1]
    assert run_time.free_threads(3.2, 16) == 13 and run_time.free_threads(0.0, 1) == 1


def test_a_cpu_run_beside_a_busy_core_trains_with_the_free_cores(tmp_path, tiny_model_dir, sample_reviews_jsonl,
                                                                 monkeypatch):
    """Others' work measured from the run's start to its first step sets torch's threads for the loop (two threads
    beside one busy core of two trained SmolLM2 1.9x slower than one); the caller's threads come back after; a
    user's OMP_NUM_THREADS is left alone."""
    import torch
    from studio.engine import run_training
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(run_time, "cores", lambda: 4)
    seen = []
    real = run_time.others_between

    def others(*a, **k):   # the first call is the engine's thread decision: three of four cores busy elsewhere
        seen.append(1)
        return 3.0 if len(seen) == 1 else real(*a, **k)
    monkeypatch.setattr(run_time, "others_between", others)
    import studio.engine.run as engine_run
    in_loop = []
    real_loop = engine_run.train_or_resume
    monkeypatch.setattr(engine_run, "train_or_resume", lambda *a: in_loop.append(torch.get_num_threads()) or
                        real_loop(*a))
    given = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(sample_reviews_jsonl),
                        output_dir=str(tmp_path / "r1"), finetuning_type="lora", cutoff_len=64, max_steps=2,
                        logging_steps=1, save_steps=1000, plot_loss=False, val_size=0.0)
        assert run_training(cfg)["state"] == "finished"
        assert in_loop == [1] and json.loads((tmp_path / "r1" / "status.json").read_text())["threads"] == 1
        assert torch.get_num_threads() == 4
        monkeypatch.setenv("OMP_NUM_THREADS", "4")
        seen.clear()
        run_training(cfg.replace(output_dir=str(tmp_path / "r2")))
        assert in_loop[1:] == [4] and json.loads((tmp_path / "r2" / "status.json").read_text())["threads"] == 4
    finally:
        torch.set_num_threads(given)


def test_a_resumed_run_adds_its_parts() -> None:
    """Abort + Resume: the run's time is the first part and the resumed part together, on the Runs tab too."""
    from studio.runs.run_time import run_seconds, train_parts
    first = train_parts({}, 40.0, resumed=False)
    aborted = {"train_seconds": 40.0, **first}
    second = {"train_seconds": 25.0, **train_parts(aborted, 25.0, resumed=True)}
    assert second["train_parts"] == [40.0, 25.0] and run_seconds(second) == 65.0
    assert train_parts({"train_seconds": 40.0}, 25.0, resumed=True)["train_seconds_total"] == 65.0  # older status
    assert train_parts(aborted, 25.0, resumed=False)["train_parts"] == [25.0]  # a fresh start counts alone
    assert run_seconds({"started": 10.0, "ended": 70.0}) == 60.0 and run_seconds({}) is None


def test_early_stop_shows_the_time_the_last_runs_saved(tmp_path):
    """Runs of this model that stopped early on a plateau used 60% and 80% of their planned steps: a run with an
    early-stop patience is estimated in full and the part it is likely to save is its median share (70%), given
    beside it; without a patience there is no saving to show."""
    _past(tmp_path, "a", kept_best={"steps": 60, "max_steps": 100, "patience": 3, "stopped_early": True})
    _past(tmp_path, "b", kept_best={"steps": 80, "max_steps": 100, "patience": 3, "stopped_early": True})
    est = run_time.estimate(_cfg(early_stopping_patience=3, load_best_model_at_end=True), ROWS, card=CARD,
                            runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert est.early_stop_share == pytest.approx(0.7)
    assert est.early_stop_saves_s == pytest.approx(est.parts["train"] * 0.3, rel=1e-3)
    plain = run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS)
    assert plain.early_stop_share is None and plain.early_stop_saves_s == 0.0
    assert plain.parts["train"] == pytest.approx(est.parts["train"])


def test_keeping_the_best_adds_a_checkpoint_per_evaluation(tmp_path):
    """No history: a run that keeps its best checkpoint saves one at every evaluation, and the estimate counts them."""
    keep = run_time.estimate(_cfg(load_best_model_at_end=True, eval_steps=2), ROWS, card=CARD, load=0.0,
                             flops=FLOPS)
    plain = run_time.estimate(_cfg(eval_steps=2), ROWS, card=CARD, load=0.0, flops=FLOPS)
    assert keep.parts["save"] > plain.parts["save"]


def test_the_learning_rate_search_is_in_the_estimate(tmp_path):
    """Three trials of a sixth of the run each (the best budget's search): about half a run more training, one
    more start-up and held-out check per trial, shown as its own part."""
    plain = run_time.estimate(_cfg(), ROWS, card=CARD, load=0.0, flops=FLOPS)
    searched = run_time.estimate(_cfg(learning_rate_search="1e-4,2e-4,5e-4"), ROWS, card=CARD, load=0.0,
                                 flops=FLOPS)
    steps = searched.steps
    share = 3 * max(10, -(-steps // 6)) / steps if steps > 10 else 3.0
    assert searched.parts["search"] >= plain.parts["train"] * min(share, 3.0) * 0.99
    assert searched.parts["search"] >= 3 * plain.parts["start"]
    assert searched.seconds == pytest.approx(plain.seconds + searched.parts["search"], rel=1e-3)
    assert "search" not in plain.parts or plain.parts["search"] == 0


def test_the_estimate_reads_each_stages_work_from_the_stage_table(tmp_path):
    """A row of DPO puts chosen and rejected through the model and its reference scores both; GRPO trains on four
    sampled answers per prompt after generating them: the estimate's training time follows the stage table's
    sequences per row, and a past run of another stage never sets this one's speed."""
    from studio.stages import STAGES
    sft = run_time.estimate(_cfg(), ROWS, card=CARD, load=0.0, flops=FLOPS)
    for name, stage in STAGES.items():
        if name == "sft":
            continue
        est = run_time.estimate(_cfg(stage=name), ROWS, card=CARD, load=0.0, flops=FLOPS)
        want = stage.sequences + stage.no_grad_sequences / 3
        assert est.parts["train"] - est.steps * run_time.STEP_S == pytest.approx(
            want * (sft.parts["train"] - sft.steps * run_time.STEP_S), rel=0.02), name
    _past(tmp_path, "an-sft-run")   # its speed is SFT's: a GRPO run here is not timed by it
    assert run_time.estimate(_cfg(stage="grpo"), ROWS, card=CARD, runs_root=tmp_path, load=0.0,
                             flops=FLOPS).source == "measured"
    assert run_time.estimate(_cfg(), ROWS, card=CARD, runs_root=tmp_path, load=0.0, flops=FLOPS).source == "history"


def test_others_work_is_never_more_than_every_core(monkeypatch):
    """Busy ticks and the wall clock are read a moment apart: what others did is at most every core's worth."""
    monkeypatch.setattr(run_time, "cores", lambda: 2)
    assert run_time.others_between((10.0, 0), (14.1, 0), 2.0, 0.0) == 2.0
