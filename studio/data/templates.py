"""Prompt templates: how an (instruction, input) pair becomes the text the model sees.

The engine, the evaluator and the playground all build prompts here, so training and
inference can never disagree. 'auto' uses the tokenizer's own chat template.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import StudioError


@dataclass(frozen=True)
class Template:
    name: str
    system: str  # text put before the first user turn ("" for none)
    user: str    # format string with {content}
    assistant_prefix: str  # put right after the user turn; the answer follows
    assistant_suffix: str  # ends the answer (the model learns to stop here)

    def prompt(self, instruction: str, input_text: str = "", system: str | None = None) -> str:
        """The text up to where the model's answer starts."""
        content = instruction if not input_text else f"{instruction}\n{input_text}" if instruction else input_text
        head = self.system.format(system=system) if (system and "{system}" in self.system) else (
            self.system if "{system}" not in self.system else "")
        return head + self.user.format(content=content) + self.assistant_prefix

    def answer(self, output: str) -> str:
        return output + self.assistant_suffix

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        """Multi-turn prompt for the chat demo; the last message must be the user's."""
        text = ""
        sys_msgs = [m["content"] for m in messages if m.get("role") == "system"]
        if sys_msgs and "{system}" in self.system:
            text += self.system.format(system=sys_msgs[0])
        elif "{system}" not in self.system:
            text += self.system
        for m in messages:
            if m.get("role") == "user":
                text += self.user.format(content=m["content"]) + self.assistant_prefix
            elif m.get("role") == "assistant":
                text += self.answer(m["content"])
        return text


TEMPLATES: dict[str, Template] = {
    "default": Template("default", "", "### Instruction:\n{content}\n\n", "### Response:\n", "\n\n"),
    "alpaca": Template("alpaca", "Below is an instruction that describes a task. Write a response that "
                       "appropriately completes the request.\n\n", "### Instruction:\n{content}\n\n",
                       "### Response:\n", "\n\n"),
    "llama3": Template("llama3", "<|begin_of_text|>{system}", "<|start_header_id|>user<|end_header_id|>\n\n{content}<|eot_id|>",
                       "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>"),
    "qwen": Template("qwen", "<|im_start|>system\n{system}<|im_end|>\n", "<|im_start|>user\n{content}<|im_end|>\n",
                     "<|im_start|>assistant\n", "<|im_end|>\n"),
    "chatml": Template("chatml", "", "<|im_start|>user\n{content}<|im_end|>\n", "<|im_start|>assistant\n",
                       "<|im_end|>\n"),
}


class ChatTemplate(Template):
    """Wraps a tokenizer's own ``chat_template`` (template: auto)."""

    def __init__(self, tokenizer: Any):
        object.__setattr__(self, "_tok", tokenizer)
        object.__setattr__(self, "name", "auto")
        object.__setattr__(self, "system", "")
        object.__setattr__(self, "user", "{content}")
        object.__setattr__(self, "assistant_prefix", "")
        eos = tokenizer.eos_token or ""
        object.__setattr__(self, "assistant_suffix", eos)

    def prompt(self, instruction: str, input_text: str = "", system: str | None = None) -> str:
        content = instruction if not input_text else f"{instruction}\n{input_text}"
        msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": content}]
        return self.chat_prompt(msgs)

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        return self._tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def get_template(name: str, tokenizer: Any = None) -> Template:
    """Look a template up by name; 'auto' = the tokenizer's chat template, else 'default'.

    Raises:
        StudioError: unknown template name.
    """
    key = (name or "default").lower()
    if key == "auto":
        if tokenizer is not None and getattr(tokenizer, "chat_template", None):
            return ChatTemplate(tokenizer)
        return TEMPLATES["default"]
    if key not in TEMPLATES:
        raise StudioError(f"Unknown template '{name}'",
                          f"use one of: auto, {', '.join(TEMPLATES)}", code="template")
    return TEMPLATES[key]
