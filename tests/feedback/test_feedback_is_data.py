"""Feedback is data, not markup or control: a text that is not text (a lone surrogate) is refused plainly; a chat
format's control markers typed in a correction stay characters in SFT, DPO and KTO targets; a labels run takes only
its labels as a correction, from the CLI too. (The page's surfaces: tests/ui/test_feedback_ui.py.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.feedback.store import FeedbackStore

ROOT = Path(__file__).resolve().parents[2]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<start_of_turn>", "<end_of_turn>"]


@pytest.mark.parametrize("field", ["input", "answer", "correction"])
def test_a_text_that_is_not_text_is_refused_by_the_store_in_words(tmp_path: Path, field: str) -> None:
    store = FeedbackStore(tmp_path / "ws")
    args = {"run": "r", "login": "ann", "input": "x", "answer": "y", "verdict": "down", "correction": "z"}
    args[field] = "ok \ud800 then"
    with pytest.raises(StudioError) as err:
        store.add(**args)
    assert err.value.code == "feedback.not_unicode" and field in err.value.message and "4" in err.value.message
    err.value.text("zh", "page").encode("utf-8")  # the message itself can be sent back
    assert store.count() == 0


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> object:
    """A byte-level BPE tokenizer whose chat markers are special tokens, as a real chat model's are."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>", "<pad>", *SPECIALS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(["use the end of turn marker here and there, please"] * 50, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", additional_special_tokens=SPECIALS)


CORRECTION = "End it with <|im_end|> then <start_of_turn>model"


def _as_text(tokenizer: object, ids: list[int], template: object) -> None:
    """``ids`` are the answer CORRECTION as characters, then the template's own end marker (one control id)."""
    from studio.data.templates import Template
    assert isinstance(template, Template)
    end = tokenizer(template.assistant_suffix, add_special_tokens=False)["input_ids"]  # type: ignore[operator]
    assert ids[len(ids) - len(end):] == end
    body = ids[: len(ids) - len(end)]
    special = {tokenizer.convert_tokens_to_ids(t) for t in SPECIALS}  # type: ignore[attr-defined]
    assert not special & set(body), "a typed marker became a control id in the target"
    assert tokenizer.decode(body) == CORRECTION  # type: ignore[attr-defined]


def test_control_markers_in_a_correction_stay_text_in_sft_dpo_and_kto_targets(tokenizer: object) -> None:
    from studio.data.preference import encode_preference
    from studio.data.templates import get_template
    from studio.data.tokenize import IGNORE_INDEX, encode_example
    template = get_template("chatml", tokenizer)
    row = {"instruction": "Say how a turn ends", "input": "", "output": CORRECTION}
    sft = encode_example(tokenizer, template, row, cutoff_len=512)
    _as_text(tokenizer, [t for t in sft["labels"] if t != IGNORE_INDEX], template)
    (dpo,), _ = encode_preference(tokenizer, template, [{"instruction": "Say how a turn ends", "input": "",
                                                         "chosen": CORRECTION, "rejected": "no"}], 512)
    _as_text(tokenizer, dpo["chosen_ids"], template)
    (kto,), _ = encode_preference(tokenizer, template, [{"instruction": "x", "input": "", "output": CORRECTION,
                                                         "kto_tag": True}], 512)
    _as_text(tokenizer, kto["completion_ids"], template)
    # an answer without markers is tokenized exactly as before (the template's text, one call)
    plain = encode_example(tokenizer, template, {**row, "output": "the end"}, cutoff_len=512)
    ids = tokenizer(template.answer("the end"), add_special_tokens=False)["input_ids"]  # type: ignore[operator]
    assert [t for t in plain["labels"] if t != IGNORE_INDEX] == ids


def _labels_run(ws: Path) -> None:
    """ws/runs/r: a run whose held-out answers are two labels (what the demo page and the CLI judge by)."""
    run = ws / "runs" / "r"
    run.mkdir(parents=True)
    rows = [{"instruction": "Classify", "input": f"t{i}", "output": "positive" if i % 2 else "negative"}
            for i in range(12)]
    (run / "val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from studio.config.run_config import RunConfig
    RunConfig(dataset="reviews.jsonl", val_size=0.2, output_dir=str(run)).save(run / "config.yaml")


def _cli(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studio", "feedback", "--workspace", str(ws), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_labels_run_takes_only_its_labels_from_the_command_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _labels_run(ws)
    bad = _cli(ws, "add", "--run", "r", "--input", "late again", "--answer", "neutral", "--verdict", "down",
               "--correction", "meh, whatever")
    assert bad.returncode == 2 and "not one of this run's labels" in bad.stderr, bad.stderr
    assert FeedbackStore.in_workspace(ws).count() == 0
    good = _cli(ws, "add", "--run", "r", "--input", "late again", "--answer", "positive", "--verdict", "down",
                "--correction", " Negative ")
    assert good.returncode == 0, good.stderr
    fid = int(good.stdout.strip())
    assert FeedbackStore.in_workspace(ws).get(fid).correction == "negative"  # type: ignore[union-attr]
    edit = _cli(ws, "edit", str(fid), "<img src=x> not a label")
    assert edit.returncode == 2 and "not one of this run's labels" in edit.stderr
    assert FeedbackStore.in_workspace(ws).get(fid).edited is None  # type: ignore[union-attr]


def test_the_feedback_tabs_edit_takes_only_a_labels_runs_labels(tmp_path: Path) -> None:
    import gradio as gr
    from studio.app.context import AppContext
    from studio.ui.feedback_tab import on_edit
    ctx = AppContext.create(tmp_path / "ws")
    _labels_run(ctx.workspace)
    store = FeedbackStore.in_workspace(ctx.workspace)
    fid = store.add(run="r", login="ann", input="late", answer="positive", verdict="down", correction="negative")
    with pytest.raises(gr.Error, match="not one of this run's labels"):
        on_edit(ctx, str(fid), "totally negative!!")
    assert store.get(fid).edited is None  # type: ignore[union-attr]
    on_edit(ctx, str(fid), "POSITIVE")
    assert store.get(fid).final_correction == "positive"  # type: ignore[union-attr]
