"""Templates called by LLaMA-Factory names render exactly as LLaMA-Factory 0.9.x renders them.

Expected strings are written from LLaMA-Factory's register_template slots (src/llamafactory/data/template.py):
prefix + system + user, then the assistant slot ({"bos_token"}/{"eos_token"} = the tokenizer's text).
"""
from __future__ import annotations

import pytest

from studio.data.templates import get_template
from studio.data.tokenize import IGNORE_INDEX, encode_example
from tests.wordtok import word_tokenizer

CONV = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"}]
ALPACA_SYS = "Below is an instruction that describes a task. Write a response that appropriately completes the request.\n\n"
QWEN_SYS = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

EXPECTED = {
    # name: (bos, eos, rendering with a system prompt, prompt without one)
    "default": ("<s>", "</s>", "System: Be brief.</s>\nHuman: Hi</s>\nAssistant:Hello</s>\n", "Human: Hi</s>\nAssistant:"),
    "alpaca": ("<s>", "</s>", "Be brief.### Instruction:\nHi\n\n### Response:\nHello</s>\n\n",
               ALPACA_SYS + "### Instruction:\nHi\n\n### Response:\n"),
    "llama3": ("<|begin_of_text|>", "<|end_of_text|>",
               "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
               "\n\nHello<|eot_id|>",
               "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    "qwen": ("<|endoftext|>", "<|endoftext|>",
             "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
             "Hello<|im_end|>\n",
             f"<|im_start|>system\n{QWEN_SYS}<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
    "chatml": ("<s>", "</s>",
               "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
               "Hello<|im_end|>\n", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
    # LLaMA-Factory 0.9.5's own SFT examples use it (train_lora/qwen3_lora_sft.yaml): chatml, no default system
    "qwen3_nothink": ("<|endoftext|>", "<|im_end|>",
                      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
                      "Hello<|im_end|>\n", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
    "llama2": ("<s>", "</s>", "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello</s>", "<s>[INST] Hi [/INST]"),
    "empty": ("<s>", "</s>", "Be brief.HiHello", "Hi"),
    "gemma": ("<bos>", "<eos>",
              "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n",
              "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"),
    # the built-in real models' own LLaMA-Factory templates, and more of its common ones. Checked against
    # LLaMA-Factory 0.9.5's encoder itself (encode_multiturn, 2 turns, with and without a system prompt)
    "smollm2": ("<|im_start|>", "<|im_end|>",
                "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
                "Hello<|im_end|>\n",
                "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face.<|im_end|>\n"
                "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
    "gemma3": ("<bos>", "<eos>",
               "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n",
               "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"),
    "phi4": ("<|endoftext|>", "<|endoftext|>",
             "<|im_start|>system<|im_sep|>Be brief.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|>"
             "<|im_start|>assistant<|im_sep|>Hello<|im_end|>",
             "<|im_start|>user<|im_sep|>Hi<|im_end|><|im_start|>assistant<|im_sep|>"),
    "mistral": ("<s>", "</s>", "<s>[INST] Be brief.\n\nHi[/INST] Hello</s>", "<s>[INST] Hi[/INST]"),
    "deepseek3": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>",
                  "<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hi<｜Assistant｜>Hello<｜end▁of▁sentence｜>",
                  "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>"),
    "vicuna": ("<s>", "</s>", "Be brief.USER: Hi ASSISTANT:Hello</s>",
               "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
               "detailed, and polite answers to the user's questions.USER: Hi ASSISTANT:"),
}


def _tok(bos: str, eos: str):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    core = Tokenizer(models.WordLevel({bos: 0, eos: 1, "[UNK]": 2}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=bos, eos_token=eos, unk_token="[UNK]")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_llamafactory_names_render_as_llamafactory(name: str) -> None:
    bos, eos, full, prompt = EXPECTED[name]
    tpl = get_template(name, _tok(bos, eos))
    assert tpl.render(CONV) == full
    assert tpl.prompt("Hi") == prompt


def test_llama3_without_a_tokenizer_still_opens_with_begin_of_text() -> None:
    assert get_template("llama3").prompt("Hi").startswith("<|begin_of_text|><|start_header_id|>user")
    assert get_template("qwen2").render(CONV) == EXPECTED["qwen"][2]


def test_the_answer_ends_where_the_label_ends() -> None:
    tok = word_tokenizer("### Instruction: Response: classify this great positive")
    f = encode_example(tok, get_template("studio", tok), {"instruction": "classify this", "input": "great",
                                                          "output": "positive"}, cutoff_len=64)
    answer = [t for t, label in zip(tok.convert_ids_to_tokens(f["input_ids"]), f["labels"]) if label != IGNORE_INDEX]
    assert answer == ["positive", "</s>"]  # EOS right after the label: no "\n\n" the model would learn to emit
    assert get_template("studio").answer("positive") == "positive</s>"
    # alpaca: LLaMA-Factory's slot is {{content}}, EOS, "\n\n": EOS still comes right after the label
    assert get_template("alpaca").answer("positive") == "positive</s>\n\n"


def test_auto_uses_the_tokenizers_chat_template_and_falls_back_to_studio() -> None:
    chat = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}"
    tok = word_tokenizer("hi", chat)
    assert get_template("auto", tok).prompt("hi") == "[user] hi [assistant] "
    plain = word_tokenizer("hi")
    assert get_template("auto", plain).prompt("hi") == get_template("studio", plain).prompt("hi")


def test_a_named_template_that_differs_from_the_models_own_is_reported() -> None:
    from studio.data.templates import chat_template_mismatch
    chatml = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
              "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    tok = word_tokenizer("hi", chatml)
    assert chat_template_mismatch("chatml", tok) is None  # the built-in renders as the model's own
    assert "differently from this model's own chat template" in chat_template_mismatch("llama3", tok)
    assert chat_template_mismatch("auto", tok) is None and chat_template_mismatch("llama3", word_tokenizer("hi")) is None


QWEN3_CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
              "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n\n</think>\n\n{% endif %}")


def test_llamafactory_names_the_studio_does_not_render_use_the_models_own_chat_template() -> None:
    """LLaMA-Factory's own files name templates such as qwen3 (reasoning blocks): they load and train with the
    model's chat template, the run log says so, and a model without one gets a plain error."""
    from studio.data.templates import llamafactory_fallback_notice
    from studio.errors import StudioError
    tok = word_tokenizer("hi", QWEN3_CHAT)
    for name in ("qwen3", "Qwen3_5", "glm4", "deepseekr1"):
        assert get_template(name, tok).prompt("hi") == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" \
            "<think>\n\n</think>\n\n"
        assert "uses the model's own chat template" in llamafactory_fallback_notice(name, tok)
    assert llamafactory_fallback_notice("qwen", tok) is None  # built in: rendered slot by slot, no notice
    with pytest.raises(StudioError) as err:
        get_template("qwen3", word_tokenizer("hi"))
    assert err.value.what == ("template 'qwen3' is one of LLaMA-Factory's that the studio serves with the model's "
                                 "own chat template, and this model has none")
    assert err.value.fix.startswith("choose a built-in template: studio, default, alpaca")


def test_template_typos_are_refused_with_the_nearest_name() -> None:
    from studio.config.run_config import Draft, RunConfig
    from studio.errors import StudioError
    assert RunConfig(template="qwen3", dataset="d.jsonl").validate() == []  # LLaMA-Factory's name: as written
    problems = Draft(template="smolm2", dataset="d.jsonl").validate()
    assert len(problems) == 1 and problems[0].startswith("template 'smolm2' is not known here: did you mean 'smollm2'?")
    with pytest.raises(StudioError) as err:
        get_template("lama3")
    assert err.value.fix.startswith("did you mean 'llama3'? Built-in templates: auto, studio")
