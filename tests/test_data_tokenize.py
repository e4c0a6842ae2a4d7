"""Label masking: the loss falls exactly on the answer tokens (+ EOS), truncation keeps the answer."""
from __future__ import annotations

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
    f = encode_example(tok, tpl, row, cutoff_len=64)
    assert _tokens(tok, f["input_ids"]) == ["user", "hi", "assistant", "hello", "user", "more", "assistant",
                                            "sure", "</s>"]
    # only the last reply carries loss: earlier replies are context
    assert [i for i, label in enumerate(f["labels"]) if label != IGNORE_INDEX] == [7, 8]
    plain = encode_example(tok, get_template("studio"), row, cutoff_len=64)
    assert _tokens(tok, plain["input_ids"])[:5] == ["<s>", "###", "Instruction:", "hi", "###"]
