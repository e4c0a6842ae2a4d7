"""The gate before an improved instruction run reaches teammates scores written answers by the generation check's
chrF (issue 50, item 4): the verdict is graded, says so in the page's language, and one rule decides it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from studio.app import verdict
from studio.app.improve_page import verdict_markdown
from studio.evaluation.check_scorers import FLIP_MARGIN, GenerationScorer, LabelScorer, scorer_for
from studio.feedback.store import FeedbackStore

try:
    from conftest import write_jsonl
except ImportError:  # tests/ as a package
    from tests.conftest import write_jsonl

WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "amber", "pearl", "lemon"]


@pytest.fixture(scope="module")
def instruction_run(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """A finished LoRA instruction run (answers are short sentences, not labels) with held-out rows."""
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    ws = tmp_path_factory.mktemp("gen_gate")
    rows = [{"instruction": "Describe the word in a short sentence.", "input": w,
             "output": f"Item {i}: {w} has {len(w)} letters."} for i, w in enumerate(WORDS * 8)]
    data = write_jsonl(ws / "train.jsonl", rows)
    cfg = RunConfig(model_name_or_path=str(tiny_model_dir), dataset=str(data), output_dir=str(ws / "runs" / "old"),
                    finetuning_type="lora", max_steps=3, per_device_train_batch_size=4, logging_steps=1,
                    plot_loss=False, cutoff_len=96, val_size=0.2, gradient_checkpointing=False)
    assert run_training(cfg)["state"] == "finished"
    return Path(cfg.output_dir)


def test_an_instruction_run_is_judged_by_chrf_and_a_run_against_itself_passes(instruction_run: Path,
                                                                            tmp_path: Path) -> None:
    scorer = scorer_for(str(instruction_run))
    assert isinstance(scorer, GenerationScorer) and scorer.graded and scorer.labels is None
    same = tmp_path / "runs" / "same"
    shutil.copytree(instruction_run, same)
    counts = verdict.freeze(instruction_run, same, FeedbackStore.in_workspace(tmp_path))
    assert counts["held_out"] > 0
    v = verdict.judge(same, instruction_run)
    assert v["scorer"] == "scorer.generation" and v["graded"] is True
    assert 0.0 <= v["before"]["accuracy"] <= 1.0 and v["before"] == v["after"]   # same weights, same answers
    assert v["flipped_right"] == v["flipped_wrong"] == 0
    assert v["gate"] == {"passed": True, "code": "gate.passed_graded", "n": v["n"],
                         "before": round(100 * v["before"]["accuracy"], 1),
                         "after": round(100 * v["after"]["accuracy"], 1)}
    # the score is the chrF of the run's own answer: the expected answer itself scores 1, another row's less
    row = verdict.check_rows(same)[0]
    assert scorer.score(row["output"], row) == pytest.approx(1.0)
    assert scorer.score("zzz", row) < 0.2
    zh = verdict_markdown(type("Ctx", (), {"lang": "zh"})(), v)
    assert "chrF" in zh and "生成检查" in zh and "scorer.generation" not in zh
    assert json.loads(json.dumps(verdict.stored(same))) == json.loads(json.dumps(v))


def _rows(n_held: int, n_fb: int) -> list[dict[str, str]]:
    return [{"from": "held_out"}] * n_held + [{"from": "feedback"}] * n_fb


def test_one_gate_rule_for_graded_scores() -> None:
    rows = _rows(50, 10)
    before = [0.5] * 60
    assert verdict._gate(rows, before, [0.5] * 60, graded=True)["code"] == "gate.passed_graded"
    worse = [0.5] * 59 + [0.45]   # a lower mean chrF on the whole set fails, as one more wrong row does
    g = verdict._gate(rows, before, worse, graded=True)
    assert (g["passed"], g["code"], g["before"], g["after"]) == (False, "gate.worse_graded", 50.0, 49.9)
    # better on the feedback rows, but the old run's own rows lose more than one row's worth: forgetting
    forgets = [0.47] * 50 + [1.0] * 10
    g = verdict._gate(rows, before, forgets, graded=True)
    assert (g["passed"], g["code"], g["n"]) == (False, "gate.forgets_graded", 50)
    assert verdict._gate(rows, before, [0.49] * 50 + [1.0] * 10, graded=True)["passed"]   # 0.5 row: within slack
    assert verdict._gate(rows, [0.0] * 60, [0.0] * 59 + [1.0])["code"] == "gate.passed"   # labels: unchanged


def test_a_graded_row_flips_only_when_it_moved_by_the_margin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Fixed:
        name, labels, graded = "scorer.generation", None, True

        def answers(self, run_path: str, rows: list) -> list[str]:
            return [("old" if run_path.endswith("old") else "new") + str(i) for i in range(len(rows))]

        def score(self, answer: str, row: dict) -> float:
            return row["s_old"] if answer.startswith("old") else row["s_new"]

    rows = [{"from": "held_out", "input": str(i), "output": "x", "s_old": 0.5, "s_new": 0.5 + d}
            for i, d in enumerate([FLIP_MARGIN / 2, -FLIP_MARGIN / 2, FLIP_MARGIN * 2, -FLIP_MARGIN * 3])]
    monkeypatch.setattr(verdict, "check_rows", lambda new_run: rows)
    (tmp_path / "new").mkdir()
    v = verdict.judge(tmp_path / "new", tmp_path / "old", scorer=Fixed())
    assert (v["flipped_right"], v["flipped_wrong"]) == (1, 1)
    assert [r["input"] for r in v["right_rows"] + v["wrong_rows"]] == ["2", "3"]


def test_a_labels_run_keeps_the_labels_scorer(tmp_path: Path) -> None:
    s = LabelScorer(["negative", "positive"], None)
    assert not s.graded and s.name == "scorer.labels"
