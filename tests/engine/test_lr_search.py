"""The learning-rate search: short trials scored on the held-out rows, the winner trains the run, the page is told."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

try:
    from genkit import build_generation_run
except ImportError:  # tests/ as a package
    from tests.genkit import build_generation_run

THINGS = ["bag", "chair", "watch", "phone", "book", "kettle", "lamp", "desk", "cup", "shoe", "coat", "pen"]


@pytest.mark.integration
def test_the_winner_of_the_trials_trains_the_run(tmp_path: Path) -> None:
    from studio.runs.run_dir import RunDir
    gen = build_generation_run(tmp_path / "search", things=THINGS, learning_rate=0.01, max_steps=30,
                               learning_rate_search="0.0003,0.003,0.03", search_steps=10)
    run = RunDir(gen["run"])
    status = run.read_status()
    search = status["lr_search"]
    trials = {t["learning_rate"]: t for t in search["trials"]}
    assert sorted(trials) == [0.0003, 0.003, 0.03] and search["metric"] == "answer_loss" and search["steps"] == 10
    best = min(trials.values(), key=lambda t: t["score"])
    assert search["winner"] == best["learning_rate"] and search["why"] == "score"
    # 10 steps at 3e-4 teach a random 32-wide model nearly nothing: the trials differ, the search has a choice
    assert trials[0.0003]["score"] > best["score"] + 0.1
    events = [json.loads(x) for x in run.log.read_text(encoding="utf-8").splitlines()]
    rates = {e["learning_rate"] for e in events if e["type"] == "progress" and e.get("learning_rate")}
    assert rates == {best["learning_rate"]}   # the constant schedule logs the rate the run trained with
    said = [e for e in events if e["type"] == "notice" and e.get("code", "").startswith("lr_search")]
    assert said and f"{best['learning_rate']:g}" in said[0]["message"]
    for rate in trials:  # each trial kept its numbers, not its weights
        trial = RunDir(run.path / "search" / f"lr-{rate:g}")
        assert trial.read_status()["state"] == "finished" and not trial.checkpoints.exists()
        assert not trial.model.exists()


@pytest.mark.integration
def test_abort_during_a_trial_stops_it_at_its_next_step_and_the_run_ends_stopped(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch
                                                                                 ) -> None:
    """Abort while a trial trains (the run's STOP flag, as the runner writes it): the trial stops at its next step,
    no other trial starts, the run ends stopped by who asked; before, the trial trained on until the runner's SIGTERM
    30 s later (the team browser test waited for it)."""
    from studio.engine import callbacks
    from studio.runs.run_dir import RunDir
    real = callbacks.EventCallback.on_step_end

    def abort_at_step_2(self, args, state, control, **kw):  # noqa: ANN001, ANN202 - Trainer's callback signature
        if state.global_step == 2 and self.run.path.parent.name == "search":
            RunDir(self.run.path.parent.parent).stop_flag.write_text("bob", encoding="utf-8")
        return real(self, args, state, control, **kw)

    monkeypatch.setattr(callbacks.EventCallback, "on_step_end", abort_at_step_2)
    gen = build_generation_run(tmp_path / "abort", things=THINGS, learning_rate=0.01, max_steps=30,
                               learning_rate_search="0.0003,0.003,0.03", search_steps=20)
    run = RunDir(gen["run"])
    status = run.read_status()
    assert status["state"] == "aborted" and status["step"] == 0, status
    assert status["reason_parts"] == [{"code": "stopped_by_at_step", "values": {"who": "bob", "step": 0}}], status
    trials = sorted(p.name for p in (run.path / "search").glob("lr-*"))
    assert trials == ["lr-0.0003"], trials
    assert RunDir(run.path / "search" / "lr-0.0003").read_status()["step"] == 2


def test_ties_go_to_the_lower_loss_then_to_the_configured_rate() -> None:
    from studio.engine.lr_search import Trial, _better
    a, b = Trial(1e-4, "accuracy", 0.9, 0.30, 10, 1.0), Trial(5e-4, "accuracy", 0.9, 0.25, 10, 1.0)
    assert _better(b, a, True, 2e-4) and not _better(a, b, True, 2e-4)
    c, d = Trial(1e-4, "accuracy", 0.9, None, 10, 1.0), Trial(1e-3, "accuracy", 0.9, None, 10, 1.0)
    assert _better(c, d, True, 2e-4)
    assert _better(Trial(1e-3, "answer_loss", 0.2, 0.2, 10, 1.0), Trial(1e-4, "answer_loss", 0.3, 0.3, 10, 1.0),
                   False, 2e-4)


def test_trial_steps_default_to_a_sixth_of_the_run() -> None:
    from studio.config.run_config import Draft
    from studio.config.search import trial_steps
    assert trial_steps(Draft(), 120) == 20
    assert trial_steps(Draft(), 30) == 10
    assert trial_steps(Draft(search_steps=7), 120) == 7
    assert trial_steps(Draft(), 6) == 6
