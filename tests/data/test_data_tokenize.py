"""Label masking: the loss falls exactly on the answer tokens (+ EOS), truncation keeps the answer."""
from __future__ import annotations

import pytest

from studio.data.templates import get_template
from studio.data.tokenize import IGNORE_INDEX, encode_example, example_prompt, prompt_ids
from tests.wordtok import word_tokenizer

WORDS = "### Instruction: Response: classify this great bad positive negative very hi hello more sure user assistant"
ROW = {"instruction": "classify this", "input": "great", "output": "positive"}
CHAT = ("{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}assistant {% endif %}")


def _tokens(tok, ids: list[int]) -> list[str]:
    return tok.convert_ids_to_tokens(ids)


def test_default_template_masks_the_prompt() -> None:
    tok = word_tokenizer(WORDS)
    f = encode_example(tok, get_template("studio"), ROW, cutoff_len=64)
    assert _tokens(tok, f["input_ids"]) == ["<s>", "###", "Instruction:", "classify", "this", "great", "###",
                                            "Response:", "positive", "</s>"]
    loss_at = [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX]
    assert loss_at == [8, 9]  # the answer and EOS, nothing else
    assert [f["labels"][i] for i in loss_at] == f["input_ids"][8:]
    assert f["attention_mask"] == [1] * 10 and f["truncated"] is False
    assert prompt_ids(tok, get_template("studio"), "classify this", "great") == f["input_ids"][:8]


def test_train_on_prompt_puts_loss_everywhere() -> None:
    tok = word_tokenizer(WORDS)
    f = encode_example(tok, get_template("studio"), ROW, cutoff_len=64, train_on_prompt=True)
    assert f["labels"] == f["input_ids"]


def test_truncation_keeps_bos_the_prompt_end_and_the_answer() -> None:
    tok = word_tokenizer(WORDS)
    row = {"instruction": "classify this " + "very " * 20, "input": "", "output": "positive"}
    f = encode_example(tok, get_template("studio"), row, cutoff_len=8)
    assert f["truncated"] is True
    assert _tokens(tok, f["input_ids"]) == ["<s>", "very", "very", "very", "###", "Response:", "positive", "</s>"]
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [6, 7]


def test_long_answer_gets_half_the_budget() -> None:
    tok = word_tokenizer(WORDS)
    row = {"instruction": "classify this", "input": "", "output": "very " * 30}
    f = encode_example(tok, get_template("studio"), row, cutoff_len=10)
    assert _tokens(tok, f["input_ids"]) == ["<s>", "classify", "this", "###", "Response:"] + ["very"] * 5
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [5, 6, 7, 8, 9]


def test_auto_template_ends_with_one_eos() -> None:
    # the answer text of the tokenizer's chat template already ends with EOS; a second one was appended before
    tok = word_tokenizer(WORDS, CHAT)
    f = encode_example(tok, get_template("auto", tok), ROW, cutoff_len=64)
    assert _tokens(tok, f["input_ids"]) == ["user", "classify", "this", "great", "assistant", "positive", "</s>"]
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [5, 6]


def test_history_is_rendered_as_chat_turns_and_masked() -> None:
    tok = word_tokenizer(WORDS, CHAT)
    row = {"instruction": "more", "input": "", "output": "sure", "history": [["hi", "hello"]]}
    tpl = get_template("auto", tok)
    assert example_prompt(tpl, row) == tpl.chat_prompt([{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": "hello"},
                                                        {"role": "user", "content": "more"}])
    f = encode_example(tok, tpl, row, cutoff_len=64, mask_history=True)
    assert _tokens(tok, f["input_ids"]) == ["user", "hi", "assistant", "hello", "user", "more", "assistant",
                                            "sure", "</s>"]
    # mask_history: only the last reply carries loss: earlier replies are context
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [7, 8]
    # default (LLaMA-Factory's mask_history: false): this chat template ends a reply without EOS, so the earlier
    # reply's target is its bare content; the same tokens, two replies labelled
    every = encode_example(tok, tpl, row, cutoff_len=64)
    assert every["input_ids"] == f["input_ids"]
    assert [i for i, label in enumerate(every["labels"]) if label != IGNORE_INDEX] == [3, 7, 8]
    plain = encode_example(tok, get_template("studio"), row, cutoff_len=64)
    assert _tokens(tok, plain["input_ids"])[:5] == ["<s>", "###", "Instruction:", "hi", "###"]


THREE_TURNS = {"instruction": "bye", "input": "", "output": "ok", "history": [["hi", "hello"], ["more", "sure"]]}


def _chatml_tokenizer():
    tok = word_tokenizer(WORDS + " ok bye")
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    return tok


@pytest.mark.parametrize("name, tokens, loss_at", [
    ("studio", ["<s>", "###", "Instruction:", "hi", "###", "Response:", "hello", "</s>",
                "###", "Instruction:", "more", "###", "Response:", "sure", "</s>",
                "###", "Instruction:", "bye", "###", "Response:", "ok", "</s>"], [6, 7, 13, 14, 20, 21]),
    ("chatml", ["<|im_start|>", "user", "hi", "<|im_end|>", "<|im_start|>", "assistant", "hello", "<|im_end|>",
                "<|im_start|>", "user", "more", "<|im_end|>", "<|im_start|>", "assistant", "sure", "<|im_end|>",
                "<|im_start|>", "user", "bye", "<|im_end|>", "<|im_start|>", "assistant", "ok", "<|im_end|>"],
     [6, 7, 14, 15, 22, 23]),
])
def test_every_assistant_turn_carries_loss_and_mask_history_keeps_the_last(name, tokens, loss_at) -> None:
    """LLaMA-Factory's default (mask_history: false): each reply + its end marker is labelled, every user turn
    (and the template's markers around it) is -100; mask_history: true labels only the last reply."""
    tok = _chatml_tokenizer()
    tpl = get_template(name, tok)
    f = encode_example(tok, tpl, THREE_TURNS, cutoff_len=64)
    assert _tokens(tok, f["input_ids"]) == tokens
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == loss_at
    assert all(f["labels"][i] == f["input_ids"][i] for i in loss_at) and f["truncated"] is False
    last = encode_example(tok, tpl, THREE_TURNS, cutoff_len=64, mask_history=True)
    assert last["input_ids"] == f["input_ids"]
    assert [i for i, label in enumerate(last["labels"]) if label != IGNORE_INDEX] == loss_at[-2:]


def test_multi_turn_truncation_cuts_later_turns_first() -> None:
    """LLaMA-Factory's infer_seqlen budget, turn by turn: the first exchange whole, the second's prompt part cut,
    the third dropped."""
    tok = _chatml_tokenizer()
    f = encode_example(tok, get_template("studio", tok), THREE_TURNS, cutoff_len=10)
    assert _tokens(tok, f["input_ids"]) == ["<s>", "###", "Instruction:", "hi", "###", "Response:", "hello", "</s>",
                                            "###", "Instruction:"]
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [6, 7] and f["truncated"]


def test_a_chat_template_whose_turns_cannot_be_split_keeps_the_last_reply_and_says_so() -> None:
    # renders an earlier reply differently from how the answer is trained (upper-cased here): its span is unknown
    shout = ("{% for m in messages %}{{ m['role'] }} {{ m['content'] | upper if m['role'] == 'assistant' "
             "else m['content'] }} {% endfor %}{% if add_generation_prompt %}assistant {% endif %}")
    tok = word_tokenizer(WORDS + " HELLO SURE ok bye", shout)
    f = encode_example(tok, get_template("auto", tok), THREE_TURNS, cutoff_len=64)
    assert f["history_masked"] is True
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [len(f["labels"]) - 2,
                                                                                 len(f["labels"]) - 1]
