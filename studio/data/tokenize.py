"""Tokenization with label masking: the loss falls only on the answer tokens.

Label ``-100`` marks positions the loss ignores (the prompt, unless
``train_on_prompt``). Truncation keeps the answer whenever it can, because a row
whose answer is cut off teaches nothing.
"""
from __future__ import annotations

from typing import Any

from .templates import Template

IGNORE_INDEX = -100


def example_prompt(template: Template, example: dict[str, Any]) -> str:
    """The prompt text of a row; earlier turns in ``history`` (LLaMA-Factory's [[user, assistant], ...])
    are rendered as real chat turns, exactly as the chat playground renders them."""
    history = example.get("history") or []
    if not history:
        return template.prompt(example.get("instruction", ""), example.get("input", ""), example.get("system"))
    messages = [{"role": "system", "content": example["system"]}] if example.get("system") else []
    for user, assistant in history:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    instruction, input_text = example.get("instruction", ""), example.get("input", "")
    content = f"{instruction}\n{input_text}" if instruction and input_text else instruction or input_text
    return template.chat_prompt(messages + [{"role": "user", "content": content}])


def _bos_kept(tokenizer: Any, template: Template, ids: list[int]) -> int:
    """1 when the prompt opens with the template's BOS (truncation keeps it), else 0."""
    bos = getattr(tokenizer, "bos_token_id", None)
    return int(bool(ids) and bos is not None and ids[0] == bos and template.prefix.startswith("{bos}"))


def encode_example(tokenizer: Any, template: Template, example: dict[str, str], cutoff_len: int,
                   train_on_prompt: bool = False) -> dict[str, Any]:
    """One alpaca row -> input_ids, attention_mask, labels, and whether it was truncated.

    The template's answer already ends the turn (EOS or its end-of-turn marker, right after the label,
    as LLaMA-Factory's assistant slots do), so nothing is appended here.
    """
    prompt = example_prompt(template, example)
    answer = template.answer(example.get("output", ""))
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
    answer_ids = tokenizer.encode(answer, add_special_tokens=False)
    n_bos = _bos_kept(tokenizer, template, prompt_ids)
    truncated = len(prompt_ids) + len(answer_ids) > cutoff_len
    if truncated:
        # keep the answer (up to half the budget), cut the prompt from its start side
        keep_answer = min(len(answer_ids), max(cutoff_len // 2, cutoff_len - len(prompt_ids)))
        answer_ids = answer_ids[:keep_answer]
        keep_prompt = cutoff_len - len(answer_ids)
        prompt_ids = prompt_ids[:n_bos] + prompt_ids[len(prompt_ids) - (keep_prompt - n_bos):] \
            if keep_prompt > n_bos else prompt_ids[:keep_prompt]
    input_ids = prompt_ids + answer_ids
    labels = (list(prompt_ids) if train_on_prompt else [IGNORE_INDEX] * len(prompt_ids)) + list(answer_ids)
    return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels,
            "truncated": truncated}


def prompt_ids(tokenizer: Any, template: Template, instruction: str, input_text: str = "") -> list[int]:
    """Token ids of the inference prompt, built exactly as in training (BOS comes from the template's prefix)."""
    return tokenizer.encode(template.prompt(instruction, input_text), add_special_tokens=False)
