"""Prompt templates: how an (instruction, input) pair becomes the text the model sees.

The engine, the evaluator and the playground all build prompts here, so training and
inference can never disagree.

A template called by a LLaMA-Factory name (default, alpaca, llama3, qwen, chatml, gemma)
renders exactly as LLaMA-Factory 0.9.x renders it (``src/llamafactory/data/template.py``):
the same prefix (BOS), system block, default system prompt, turn markers and end of answer.
The studio's own "### Instruction / ### Response" format is called ``studio``. ``auto``
uses the tokenizer's own chat template (``apply_chat_template``) and falls back to ``studio``
when the tokenizer has none (tiny-demo).

Placeholders: ``{content}`` is the message; ``{bos}`` / ``{eos}`` are the tokenizer's BOS / EOS
text (HF tokenizers turn special-token text back into the single id when encoding, so a
rendered string tokenizes to the ids LLaMA-Factory builds slot by slot).
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from ..errors import StudioError
from ..notices import Notice
from .template_budget import install


@dataclass(frozen=True)
class Template:
    name: str
    user: str                      # "...{content}..." up to where the answer starts
    assistant: str                 # "{content}..." the answer and what ends it
    system_fmt: str = "{content}"  # how a system prompt is written
    prefix: str = ""               # before everything (usually "{bos}")
    default_system: str = ""       # used when a row has no system prompt (LLaMA-Factory's default_system)
    system_in_user: bool = False   # the system text goes inside the first user turn (gemma; LF's Llama2Template)
    stop_word: str = ""            # replaces EOS in the answer (LLaMA-Factory's replace_eos / stop_words[0])
    bos_text: str = "<s>"
    eos_text: str = "</s>"

    # ---------------------------------------------------------------- rendering
    def _fill(self, text: str, content: str = "") -> str:
        eos = self.stop_word or self.eos_text
        return text.replace("{content}", "\0").replace("{bos}", self.bos_text).replace("{eos}", eos) \
            .replace("\0", content)

    def _head(self, system: str | None) -> tuple[str, str]:
        """(text before the first user turn, system text folded into the first user message)."""
        system = system or self.default_system
        head = self._fill(self.prefix)
        if not system:
            return head, ""
        if self.system_in_user:
            return head, self._fill(self.system_fmt, system)
        return head + self._fill(self.system_fmt, system), ""

    def prompt(self, instruction: str, input_text: str = "", system: str | None = None) -> str:
        """The text up to where the model's answer starts (LLaMA-Factory joins instruction and input with \\n)."""
        content = instruction if not input_text else f"{instruction}\n{input_text}" if instruction else input_text
        return self.chat_prompt(([{"role": "system", "content": system}] if system else [])
                                + [{"role": "user", "content": content}])

    def answer(self, output: str) -> str:
        """The answer as trained: the label, then the end-of-answer marker right after it."""
        return self._fill(self.assistant, output)

    @property
    def assistant_suffix(self) -> str:
        """What follows the answer text (the evaluator stops generation there)."""
        return self._fill(self.assistant.split("{content}", 1)[1])

    def stop_strings(self) -> list[str]:
        """Texts that end an answer when the model writes them: the end-of-answer marker and the turn markers
        around a user message (an untrained model that goes on writes the next turn: "### Response:" again and
        again until the token limit). Blank pieces are left out, a piece that is only a line break says nothing."""
        ends = [self.assistant_suffix, self.stop_word, self.eos_text]
        if "{content}" in self.user:
            ends += [line for part in self.user.split("{content}") for line in self._fill(part).splitlines()]
        out: list[str] = []
        for piece in ends:
            piece = (piece or "").strip()
            if len(piece) >= 2 and piece not in out:
                out.append(piece)
        return out

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        """Multi-turn prompt; the last message must be the user's."""
        sys_msgs = [m["content"] for m in messages if m.get("role") == "system"]
        text, fold = self._head(sys_msgs[0] if sys_msgs else None)
        for m in messages:
            if m.get("role") == "user":
                text += self._fill(self.user, fold + m["content"])
                fold = ""
            elif m.get("role") == "assistant":
                text += self.answer(m["content"])
        return text

    def turn_texts(self, messages: list[dict[str, str]]) -> list[tuple[str, str]] | None:
        """A conversation as [(prompt part, answer part)] per exchange, as LLaMA-Factory's ``encode_multiturn``
        splits it: joined, they are ``render(messages)``; the first prompt part carries the prefix and system.
        The messages alternate user/assistant (after an optional system message) and end with an answer."""
        sys_msgs = [m["content"] for m in messages if m.get("role") == "system"]
        head, fold = self._head(sys_msgs[0] if sys_msgs else None)
        pairs: list[tuple[str, str]] = []
        prompt = head
        for m in messages:
            if m.get("role") == "user":
                prompt += self._fill(self.user, fold + m["content"])
                fold = ""
            elif m.get("role") == "assistant":
                pairs.append((prompt, self.answer(m["content"])))
                prompt = ""
        return pairs

    def render(self, messages: list[dict[str, str]]) -> str:
        """A whole conversation, answers included (what LLaMA-Factory's encoder produces, as text)."""
        if messages and messages[-1].get("role") == "assistant":
            return self.chat_prompt(messages[:-1]) + self.answer(messages[-1]["content"])
        return self.chat_prompt(messages)


_ALPACA_SYSTEM = ("Below is an instruction that describes a task. Write a response that appropriately "
                  "completes the request.\n\n")
_CHATML = dict(user="<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n",
               assistant="{content}<|im_end|>\n", system_fmt="<|im_start|>system\n{content}<|im_end|>\n",
               stop_word="<|im_end|>")

TEMPLATES: dict[str, Template] = {
    # the studio's own format (was called 'default' before; tiny-demo is trained with it)
    "studio": Template("studio", "### Instruction:\n{content}\n\n### Response:\n", "{content}{eos}",
                       system_fmt="", prefix="{bos}"),
    # --- LLaMA-Factory's templates, slot for slot ---
    "default": Template("default", "Human: {content}{eos}\nAssistant:", "{content}{eos}\n",
                        system_fmt="System: {content}{eos}\n"),
    "alpaca": Template("alpaca", "### Instruction:\n{content}\n\n### Response:\n", "{content}{eos}\n\n",
                       default_system=_ALPACA_SYSTEM),
    "llama3": Template("llama3", "<|start_header_id|>user<|end_header_id|>\n\n{content}<|eot_id|>"
                       "<|start_header_id|>assistant<|end_header_id|>\n\n", "{content}<|eot_id|>",
                       system_fmt="<|start_header_id|>system<|end_header_id|>\n\n{content}<|eot_id|>",
                       prefix="{bos}", stop_word="<|eot_id|>", bos_text="<|begin_of_text|>",
                       eos_text="<|end_of_text|>"),
    "qwen": Template("qwen", default_system="You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
                     eos_text="<|endoftext|>", **_CHATML),
    "chatml": Template("chatml", eos_text="<|endoftext|>", **_CHATML),
    "gemma": Template("gemma", "<start_of_turn>user\n{content}<end_of_turn>\n<start_of_turn>model\n",
                      "{content}<end_of_turn>\n", system_fmt="{content}\n\n", prefix="{bos}", system_in_user=True,
                      stop_word="<end_of_turn>", bos_text="<bos>", eos_text="<eos>"),
}
TEMPLATES["llama2"] = Template("llama2", "{bos}[INST] {content} [/INST]", "{content}{eos}",
                               system_fmt="<<SYS>>\n{content}\n<</SYS>>\n\n", system_in_user=True)
TEMPLATES["empty"] = Template("empty", "{content}", "{content}")  # LLaMA-Factory's: no markers, no EOS
TEMPLATES["qwen2"] = dataclasses.replace(TEMPLATES["qwen"], name="qwen2")  # studio alias of the chatml family
# LLaMA-Factory 0.9.5's qwen3_nothink (its SFT examples' template): chatml slots, stop word <|im_end|>, no default system
TEMPLATES["qwen3_nothink"] = dataclasses.replace(TEMPLATES["chatml"], name="qwen3_nothink")
# --- more of LLaMA-Factory 0.9.5's templates whose slots the fields above express exactly ---
# the two built-in real models' own LF templates (smollm2 adds SmolLM's default system prompt)
TEMPLATES["smollm"] = dataclasses.replace(TEMPLATES["chatml"], name="smollm")
TEMPLATES["smollm2"] = dataclasses.replace(
    TEMPLATES["chatml"], name="smollm2",
    default_system="You are a helpful AI assistant named SmolLM, trained by Hugging Face.")
TEMPLATES["gemma3"] = dataclasses.replace(TEMPLATES["gemma"], name="gemma3")
TEMPLATES["yi"] = dataclasses.replace(TEMPLATES["chatml"], name="yi")
TEMPLATES["phi"] = Template("phi", "<|user|>\n{content}<|end|>\n<|assistant|>\n", "{content}<|end|>\n",
                            system_fmt="<|system|>\n{content}<|end|>\n", stop_word="<|end|>")
TEMPLATES["phi4"] = Template("phi4", "<|im_start|>user<|im_sep|>{content}<|im_end|><|im_start|>assistant<|im_sep|>",
                             "{content}<|im_end|>", system_fmt="<|im_start|>system<|im_sep|>{content}<|im_end|>",
                             stop_word="<|im_end|>")
TEMPLATES["mistral"] = Template("mistral", "[INST] {content}[/INST]", " {content}{eos}", system_fmt="{content}\n\n",
                                prefix="{bos}", system_in_user=True)
TEMPLATES["deepseek"] = Template("deepseek", "User: {content}\n\nAssistant:", "{content}{eos}",
                                 system_fmt="{content}\n\n", prefix="{bos}")
TEMPLATES["deepseek3"] = Template("deepseek3", "<｜User｜>{content}<｜Assistant｜>", "{content}{eos}", prefix="{bos}")
TEMPLATES["vicuna"] = Template(
    "vicuna", "USER: {content} ASSISTANT:", "{content}{eos}",
    default_system="A chat between a curious user and an artificial intelligence assistant. "
                   "The assistant gives helpful, detailed, and polite answers to the user's questions.")
TEMPLATE_NAMES = ["auto", *TEMPLATES]

# LLaMA-Factory 0.9.5's other template names (src/llamafactory/data/template.py). Their slots need what the
# fields above cannot say (reasoning blocks, tool and image slots, an extra EOS): a file that names one trains
# with the model's own chat template, as template: auto, and the run log says so; a model without a chat
# template of its own gets a clear error. Why not refuse: LLaMA-Factory's own YAML files use these names.
LLAMAFACTORY_ONLY = frozenset("""
aeva bailing bailing_v2 breeze chatglm3 chatml_de cohere cpm4 dbrx deepseekcoder deepseekr1 dots_ocr ernie
ernie_nothink ernie_vl exaone falcon falcon_h1 fewshot gemma2 gemma3n gemma4 gemma4n glm4 glm4_moe glm4v glm4_5v
glm_ocr glm4_7 glmz1 gpt_oss granite3 granite3_vision granite4 hy3 hunyuan hunyuan_small index intern2 intern_vl
intern_s1 keye_vl kimi_vl lfm2 lfm2_vl llama2_zh llama4 llava llava_next llava_next_llama3 llava_next_mistral
llava_next_qwen llava_next_video llava_next_video_mistral llava_next_video_yi llava_next_yi mimo mimo_v2 mimo_vl
minicpm_o minicpm_v minicpm_v_4_6 minimax1 minimax2 ministral ministral3 mistral_small mllama moonlight olmo
openchat openchat-3.6 opencoder paligemma paligemma_chat phi_small phi4_mini pixtral qwen2_audio qwen2_omni
qwen2_vl qwen3 qwen3_5 qwen3_5_nothink qwen3_6 qwen3_omni qwen3_omni_nothink qwen3_vl qwen3_vl_nothink sailor
seed_coder seed_oss solar starchat telechat2 video_llava xuanyuan yi_vl youtu youtu_vl yuan zephyr
""".split())


def known_template(name: str) -> bool:
    """A name a config may use: built in, 'auto', or one of LLaMA-Factory's (served by the model's own)."""
    key = (name or "auto").lower()
    return key in TEMPLATE_NAMES or key in LLAMAFACTORY_ONLY


class ChatTemplate(Template):
    """Wraps a tokenizer's own ``chat_template`` (template: auto)."""

    def __init__(self, tokenizer: Any):
        eos = tokenizer.eos_token or ""
        for key, value in dict(name="auto", user="{content}", assistant="{content}" + eos, system_fmt="{content}",
                               prefix="", default_system="", system_in_user=False, stop_word="",
                               bos_text=tokenizer.bos_token or "", eos_text=eos).items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_tok", tokenizer)
        install()  # the model's own template is code it brought: it renders with a budget

    def _fill(self, text: str, content: str = "") -> str:
        # the tokenizer's own EOS text is literal here; only {content} is substituted
        return text.replace("{content}", content)

    def prompt(self, instruction: str, input_text: str = "", system: str | None = None) -> str:
        content = instruction if not input_text else f"{instruction}\n{input_text}" if instruction else input_text
        msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": content}]
        return self.chat_prompt(msgs)

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        return self._tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def turn_texts(self, messages: list[dict[str, str]]) -> list[tuple[str, str]] | None:
        """Split by rendering growing prefixes of the conversation. An earlier answer's target is
        ``answer(content)`` when the template renders it so (end-of-turn = EOS, as chatml models), else the bare
        content (the template's own end marker then opens the next prompt part, unlabelled); None when the
        renderings do not extend one another, so the answers' spans in the text cannot be known exactly."""
        spans = [(self.chat_prompt(messages[:j]), m["content"]) for j, m in enumerate(messages)
                 if m.get("role") == "assistant"]
        pairs: list[tuple[str, str]] = []
        done = ""
        for k, (prompt, content) in enumerate(spans):
            if not prompt.startswith(done):
                return None
            if k + 1 == len(spans):
                target: str | None = self.answer(content)
            else:
                target = next((t for t in (self.answer(content), content) if spans[k + 1][0].startswith(prompt + t)),
                              None)
                if target is None:
                    return None
            pairs.append((prompt[len(done):], target))
            done = prompt + target
        return pairs


def _bind(template: Template, tokenizer: Any) -> Template:
    """Use the tokenizer's own BOS/EOS text, as LLaMA-Factory's {"bos_token"}/{"eos_token"} slots do."""
    if tokenizer is None:
        return template
    changes = {}
    if getattr(tokenizer, "bos_token", None):
        changes["bos_text"] = tokenizer.bos_token
    elif "{bos}" in template.prefix:
        changes["bos_text"] = ""  # LLaMA-Factory skips the BOS slot when the tokenizer has none
    if getattr(tokenizer, "eos_token", None):
        changes["eos_text"] = tokenizer.eos_token
    return dataclasses.replace(template, **changes)


def get_template(name: str, tokenizer: Any = None) -> Template:
    """Look a template up by name; 'auto' = the tokenizer's chat template, else 'studio'.

    Raises:
        StudioError: unknown template name.
    """
    key = (name or "auto").lower()
    if key == "auto" or key in LLAMAFACTORY_ONLY:
        if _has_chat_template(tokenizer):
            return ChatTemplate(tokenizer)
        if key != "auto" and tokenizer is not None:
            raise StudioError.of("data.template_no_chat", name=name, names=TEMPLATE_NAMES[1:])
        return _bind(TEMPLATES["studio"], tokenizer)  # no tokenizer (a prompt preview) or none of its own
    if key not in TEMPLATES:
        guess = closest_template(name)
        if guess:
            raise StudioError.of("data.template_unknown_guess", name=name, guess=guess, names=TEMPLATE_NAMES)
        raise StudioError.of("data.template_unknown", name=name, names=TEMPLATE_NAMES)
    return _bind(TEMPLATES[key], tokenizer)


def _has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def closest_template(name: str) -> str | None:
    close = difflib.get_close_matches((name or "").lower(), [*TEMPLATE_NAMES, *sorted(LLAMAFACTORY_ONLY)], n=1)
    return close[0] if close else None


def llamafactory_fallback_notice(name: str, tokenizer: Any) -> Notice | None:
    """The run-log line for a LLaMA-Factory template name the studio serves with the model's own chat template."""
    if (name or "").lower() not in LLAMAFACTORY_ONLY or not _has_chat_template(tokenizer):
        return None
    return Notice.of("template_fallback", name=name)


def chat_template_mismatch(name: str, tokenizer: Any) -> Notice | None:
    """A notice when a named built-in renders a prompt differently from the model's own chat template.

    Named templates render as LLaMA-Factory renders them (so its files train the same here); 'auto' follows
    the tokenizer. When both exist and disagree, the run log says so instead of silently picking one.
    """
    if (name or "auto").lower() == "auto" or not _has_chat_template(tokenizer):
        return None
    try:
        own = ChatTemplate(tokenizer).prompt("Hi", system="S")
    except Exception:  # a chat template that cannot render this probe (e.g. it refuses system turns)
        return None
    if get_template(name, tokenizer).prompt("Hi", system="S") == own:
        return None
    return Notice.of("template_mismatch", name=name)
