"""Tokenization with label masking: the loss falls only on the answer tokens.

Label ``-100`` marks positions the loss ignores (the prompt, unless
``train_on_prompt``). Truncation keeps the answer whenever it can, because a row
whose answer is cut off teaches nothing.

Multi-turn rows (``history``): by default every assistant reply carries loss and every
user turn is -100, as LLaMA-Factory does with ``mask_history: false`` (its default): the
conversation is split into (prompt part, answer part) per exchange, each tokenized on its
own, and truncated turn by turn with LLaMA-Factory's ``infer_seqlen`` budget. With
``mask_history: true`` only the last reply carries loss (earlier turns are context).
"""
from __future__ import annotations

from typing import Any

from .templates import Template

IGNORE_INDEX = -100


def special_texts(tokenizer: Any) -> tuple[str, ...]:
    """The texts ``tokenizer`` turns into control ids wherever they appear (its special tokens)."""
    found = set(getattr(tokenizer, "all_special_tokens", None) or [])
    for added in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values():
        if getattr(added, "special", False) and getattr(added, "content", ""):
            found.add(added.content)
    return tuple(t for t in found if t)


def answer_as_text(tokenizer: Any, template: Template, output: str, specials: tuple[str, ...]) -> list[int] | None:
    """The ids of ``template.answer(output)`` with ``output`` read as text: a ``<|im_end|>`` or ``<start_of_turn>``
    a person typed in an answer (a teammate's correction) stays those characters, never the control id that would end
    the turn or open a new one in training. The template's own markers around it stay control ids. None when
    ``output`` holds no special text (then the usual tokenization is exactly this, and is used)."""
    if not any(t in output for t in specials):
        return None
    before, _, after = template.assistant.partition("{content}")
    ids = tokenizer(template._fill(before) + output, add_special_tokens=False,
                    split_special_tokens=True)["input_ids"]
    return list(ids) + (list(tokenizer(template._fill(after), add_special_tokens=False)["input_ids"]) if after
                        else [])


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


def example_messages(example: dict[str, Any]) -> list[dict[str, str]]:
    """The row as a whole conversation: system, the ``history`` exchanges, the last user turn and answer."""
    messages = [{"role": "system", "content": example["system"]}] if example.get("system") else []
    for user, assistant in example.get("history") or []:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    instruction, input_text = example.get("instruction", ""), example.get("input", "")
    content = f"{instruction}\n{input_text}" if instruction and input_text else instruction or input_text
    return messages + [{"role": "user", "content": content}, {"role": "assistant", "content": example.get("output", "")}]


def encode_example(tokenizer: Any, template: Template, example: dict[str, str], cutoff_len: int,
                   train_on_prompt: bool = False, mask_history: bool = False) -> dict[str, Any]:
    """One alpaca row -> input_ids, attention_mask, labels, and whether it was truncated.

    The template's answer already ends the turn (EOS or its end-of-turn marker, right after the label,
    as LLaMA-Factory's assistant slots do), so nothing is appended here.
    """
    return encode_examples(tokenizer, template, [example], cutoff_len, train_on_prompt, mask_history=mask_history)[0]


def encode_examples(tokenizer: Any, template: Template, examples: list[dict[str, str]], cutoff_len: int,
                    train_on_prompt: bool = False, batch: int = 2000, mask_history: bool = False
                    ) -> list[dict[str, Any]]:
    """``encode_example`` for many rows at once: identical output, tokenized in batches.

    Why: one ``encode`` call per string crosses into the Rust tokenizer 2x per row; a batched call
    crosses once per ``batch`` rows and lets the fast tokenizer use every core (50k-row files).
    A multi-turn row whose template cannot split its turns (``turn_texts`` is None) is encoded with the
    last reply only; ``history_masked`` marks it so the run can say so.
    """
    out: list[dict[str, Any]] = []
    specials = special_texts(tokenizer)
    for start in range(0, len(examples), batch):
        part = examples[start:start + batch]
        turns = [None if mask_history or not e.get("history") else template.turn_texts(example_messages(e))
                 for e in part]
        texts: list[str] = []
        for e, t in zip(part, turns):
            texts += [s for pair in t for s in pair] if t else \
                [example_prompt(template, e), template.answer(e.get("output", ""))]
        ids = iter(tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else [])
        for e, t in zip(part, turns):
            if t:
                pairs = [(list(next(ids)), list(next(ids))) for _ in t]
                out.append(_assemble_turns(pairs, cutoff_len, train_on_prompt))
            else:
                p, a = list(next(ids)), list(next(ids))
                a = answer_as_text(tokenizer, template, str(e.get("output", "")), specials) or a
                f = _assemble(tokenizer, template, p, a, cutoff_len, train_on_prompt)
                if e.get("history") and not mask_history:
                    f["history_masked"] = True
                out.append(f)
    return out


def infer_seqlen(source_len: int, target_len: int, cutoff_len: int) -> tuple[int, int]:
    """LLaMA-Factory's budget for one exchange (``data/processor/processor_utils.py``), so a multi-turn row
    is cut where LLaMA-Factory cuts it: a short answer is kept whole, else both shrink in proportion."""
    if target_len * 2 < cutoff_len:
        max_target_len = cutoff_len
    elif source_len * 2 < cutoff_len:
        max_target_len = cutoff_len - source_len
    else:
        max_target_len = int(cutoff_len * (target_len / (source_len + target_len)))
    new_target_len = min(max_target_len, target_len)
    new_source_len = min(max(cutoff_len - new_target_len, 0), source_len)
    return new_source_len, new_target_len


def _assemble_turns(pairs: list[tuple[list[int], list[int]]], cutoff_len: int, train_on_prompt: bool
                    ) -> dict[str, Any]:
    """Exchanges in order, each answer labelled, each prompt part -100; later turns are cut first."""
    input_ids: list[int] = []
    labels: list[int] = []
    for source, target in pairs:
        if len(input_ids) >= cutoff_len:
            break
        s_len, t_len = infer_seqlen(len(source), len(target), cutoff_len - len(input_ids))
        source, target = source[:s_len], target[:t_len]
        input_ids += source + target
        labels += (source if train_on_prompt else [IGNORE_INDEX] * len(source)) + target
    truncated = sum(len(s) + len(t) for s, t in pairs) > cutoff_len
    return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels,
            "truncated": truncated}


def _assemble(tokenizer: Any, template: Template, prompt_ids: list[int], answer_ids: list[int], cutoff_len: int,
              train_on_prompt: bool) -> dict[str, Any]:
    """Prompt and answer token ids -> truncation that keeps the answer, label masking."""
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
