"""The padding collator is transformers' DataCollatorForSeq2Seq: right padding whatever side the tokenizer pads on,
labels padded with -100, lengths rounded up to a multiple of 8 on a GPU."""
from __future__ import annotations

import torch
from transformers import DataCollatorForSeq2Seq

from studio.config.run_config import RunConfig
from studio.engine.arguments import make_collator
from tests.wordtok import id_tokenizer

ROWS = [{"input_ids": [5, 6, 7], "attention_mask": [1, 1, 1], "labels": [-100, 6, 7]},
        {"input_ids": [9], "attention_mask": [1], "labels": [9]}]


def _left_tokenizer():  # type: ignore[no-untyped-def]
    tok = id_tokenizer(16, pad_id=2)
    tok.padding_side = "left"  # as some chat models ship it, for batched generation
    return tok


def test_plain_library_collator_would_pad_left() -> None:
    """Why the studio's collator pads on a copy set to 'right': the library follows the tokenizer's side."""
    out = DataCollatorForSeq2Seq(_left_tokenizer(), return_tensors="pt")(ROWS)
    assert out["input_ids"].tolist()[1] == [2, 2, 9]


def test_collator_pads_right_with_minus_100_labels_and_keeps_the_tokenizer() -> None:
    tok = _left_tokenizer()
    out = make_collator(RunConfig(dataset="d.jsonl"), None, tok, "cpu")(ROWS)
    assert out["input_ids"].tolist() == [[5, 6, 7], [9, 2, 2]]
    assert out["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert out["labels"].tolist() == [[-100, 6, 7], [9, -100, -100]]
    assert {str(v.dtype) for v in out.values() if torch.is_tensor(v)} == {"torch.int64"}
    # the counts the step needs, made here on the host (tests/engine/test_step_sync.py)
    assert (out["studio_tokens"], out["studio_items"], out["studio_loss_index"].tolist()) == (4, 2, [0, 1])
    assert tok.padding_side == "left"  # generation elsewhere still pads on the tokenizer's side


def test_collator_rounds_up_to_a_multiple_of_8_on_a_gpu() -> None:
    out = make_collator(RunConfig(dataset="d.jsonl"), None, _left_tokenizer(), "cuda")(ROWS)
    assert out["input_ids"].tolist() == [[5, 6, 7] + [2] * 5, [9] + [2] * 7]
    assert out["attention_mask"].tolist() == [[1, 1, 1] + [0] * 5, [1] + [0] * 7]
    assert out["labels"].tolist() == [[-100, 6, 7] + [-100] * 5, [9] + [-100] * 7]
