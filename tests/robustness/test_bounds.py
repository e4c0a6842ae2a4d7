"""Every request is bounded before it is read: template render budget, cells, rows, tokens, turns.

Each case is one row of the "bounded requests" group; a case that takes more than a few seconds or accepts what
it must refuse fails here (``expect``), so the table in docs/ROBUSTNESS.md cannot hold a wrong verdict.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from studio.data import limits
from studio.errors import StudioError
from tests.robustness.harness import api, expect, record

GROUP = "bounded requests"
FAST_S = 5.0  # every refusal below must come at once, not after the work it refuses


def _tokenizer(chat_template: str) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {w: i for i, w in enumerate(["[UNK]", "<s>", "</s>", "hi", "there", "x"])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="[UNK]")
    tok.chat_template = chat_template
    return tok


NORMAL = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] | trim }}{{ eos_token }}"
          "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
HOSTILE = {
    "2e8 nested loop steps": "{% for i in range(100000) %}{% for j in range(2000) %}{% endfor %}{% endfor %}",
    "'x' * 1e9": "{{ 'x' * 1000000000 }}",
    "list * 1e9": "{{ ([1] * 1000000000) | length }}",
    "loops over a long string": "{% set s = 'x' * 50000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    "center(1e9)": "{{ 'x' | center(1000000000) }}",
    "ljust(1e9) method": "{{ 'x'.ljust(1000000000) }}",
    "doubling with ~": "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
                       "{% endfor %}{{ ns.s | length }}",
    "doubling in a set block": "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set t %}{{ ns.s }}"
                               "{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s | length }}",
    "replace blow-up": "{% set s = 'x' * 100000 %}{{ s.replace('x', s) | length }}",
    "join blow-up": "{% set s = 'x' * 100000 %}{{ ([s] * 10000) | join('') | length }}",
    "printf width": "{{ '%1000000000s' | format('x') }}",
    "format width": "{{ '{:>1000000000}'.format('x') }}",
    "huge power": "{{ (10 ** 100000000) | string | length }}",
    "recursive macro": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "writes 100 MB": "{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}",
}


def _render(template: str) -> str:
    from studio.data.templates import ChatTemplate
    return ChatTemplate(_tokenizer(template)).chat_prompt([{"role": "user", "content": "hi there"}])


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_chat_template_is_refused_fast(name: str) -> None:
    start = time.perf_counter()
    outcome, detail = api(lambda: _render(HOSTILE[name]))
    took = time.perf_counter() - start
    if took > FAST_S:
        outcome, detail = "survived", f"took {took:.1f} s: {detail}"
    record(GROUP, "python", f"chat template: {name}", outcome, detail)
    expect(outcome, detail, "clear", "chat template")


def test_a_normal_chat_template_renders_exactly_as_transformers_does() -> None:
    from studio.data.templates import ChatTemplate
    msgs = [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "x"}, {"role": "user", "content": "there"}]
    ours = ChatTemplate(_tokenizer(NORMAL)).chat_prompt(msgs)
    assert ours == "<s><|system|>be kind</s><|user|>hi there</s><|assistant|>x</s><|user|>there</s><|assistant|>"
    outcome, detail = api(lambda: ours, expect_error=False)
    record(GROUP, "python", "chat template: a normal one renders unchanged", outcome, detail)
    expect(outcome, detail, "ok")
