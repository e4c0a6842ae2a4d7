"""The playground fits a labels run, and generation ends where the template says an answer ends.

A tweet typed into Input of a sentiment run's playground got "The prompt is empty" (the demo page took the same
tweet), and an untrained model's answer repeated "### Response:" until the token limit.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from studio.data.templates import TEMPLATES, Template
from studio.evaluation import evaluate, inference


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_an_answer_ends_where_the_next_turn_starts(name: str) -> None:
    """Whatever the template, a model that goes on past its answer into a new turn (its user header, or the answer
    header again) is cut there."""
    tpl = TEMPLATES[name]
    if not tpl.user.replace("{content}", "").strip():
        pytest.skip("a template with no turn markers (the text alone) has nothing to stop at")
    stops = evaluate._stop_strings(type("Tok", (), {"eos_token": None})(), tpl)
    after = tpl.user.split("{content}")[-1]
    for going_on in (tpl._fill(tpl.user, "and another thing"), tpl._fill(after)):
        if not going_on.strip():
            continue
        text = "positive" + tpl.assistant_suffix.replace(tpl.stop_word or tpl.eos_text, "") + going_on * 3
        assert evaluate._cut(text, stops) == "positive", (name, text, stops)


def test_generation_itself_stops_at_the_templates_marker(runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the text shown: ``model.generate`` ends at the marker instead of running to max_new_tokens."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    model = AutoModelForCausalLM.from_pretrained(runs["base"])
    tok = AutoTokenizer.from_pretrained(runs["base"])
    plain = Template("plain", "Q: {content}\nA:", "{content}", system_fmt="")
    limit = 40
    free = evaluate.generate(model, tok, plain, "is the lamp great", max_new_tokens=limit)
    # an untrained model's ramble ("elelel… useless useless …"): its last word, first written early on, is the marker
    marker = free.split()[-1]
    assert len(marker) >= 2 and 0 < free.find(marker) < len(free) // 2, free
    counted: list[int] = []
    real = model.generate

    def counting(**kw: Any) -> Any:
        out = real(**kw)
        counted.append(out.shape[1] - kw["input_ids"].shape[1])
        return out

    monkeypatch.setattr(model, "generate", counting)
    marked = Template("marked", "Q: {content}\nA:", "{content}" + marker, system_fmt="")
    said = evaluate.generate(model, tok, marked, "is the lamp great", max_new_tokens=limit)
    assert said == free[:free.find(marker)].strip()
    assert counted and counted[-1] < limit, f"generated {counted} tokens, the marker came much earlier"


def test_a_labels_run_takes_a_bare_text_and_answers_with_a_label(runs: dict) -> None:
    from studio.ui import evaluate_tab as tab
    row = runs["heldout"][0]
    labels = sorted({r["output"] for r in runs["heldout"]})
    steps = list(tab.on_generate(str(runs["full"]), "", row["input"], 5, 0.0, 1.0, False, False))
    assert steps[-1][0] in labels, steps
    task = inference.label_task(str(runs["full"]))
    assert task is not None and sorted(task[0]) == labels
    probs = inference.label_probabilities(str(runs["full"]), [row["input"]], task[0], task[1])[0]
    assert steps[-1][0] == max(probs, key=lambda lab: probs[lab]) == row["output"]  # the demo page's answer
    tuned, base = list(tab.on_generate(str(runs["full"]), "", row["input"], 5, 0.0, 1.0, False, True))[-1]
    assert tuned in labels and base  # the base model writes its own answer beside it
    import gradio as gr
    with pytest.raises(gr.Error, match="The prompt is empty"):
        list(tab.on_generate(str(runs["full"]), " ", " ", 5, 0.0, 1.0, True, False))


def test_a_labels_run_without_held_out_rows_still_takes_a_bare_text(runs: dict, tmp_path: Path) -> None:
    """An improved run (or any run trained with Validation share 0) keeps no held-out rows: its training rows say
    it is a labels run, so the playground answers a bare text with a label instead of "The prompt is empty"."""
    import shutil
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    from studio.ui import evaluate_tab as tab
    run = RunDir(shutil.copytree(runs["full"], tmp_path / "no-held-out"))
    cfg = RunConfig.load(run.config)
    data = tmp_path / "train.jsonl"
    data.write_text(run.val_data.read_text(encoding="utf-8"), encoding="utf-8")
    run.val_data.unlink()
    RunConfig.from_dict({**cfg.to_dict(), "val_size": 0.0, "dataset": str(data), "output_dir": str(run.path)}).save(
        run.config)
    labels = sorted({r["output"] for r in runs["heldout"]})
    assert inference.label_task(str(run.path)) is not None
    steps = list(tab.on_generate(str(run.path), "", runs["heldout"][0]["input"], 5, 0.0, 1.0, False, False))
    assert steps[-1][0] in labels, steps
