"""The check's one pass (studio/evaluation/answer_pass.py) writes the answers one-row greedy ``generate`` writes and
gives the loss of the reference answers the plain way (full logits, log-softmax), also where a reference is the
model's own greedy answer (then no decoding step runs) and where only its start is."""
from __future__ import annotations

import pytest
import torch

from studio.data.templates import get_template
from studio.data.tokenize import prompt_ids
from studio.evaluation import evaluate as ev
from studio.evaluation.answer_pass import answers_and_loss
from studio.evaluation.generation import generate_batch
from tests.evalkit import spread_out_tiny_model
from tests.conftest import make_review_rows

NEW = 6


@pytest.fixture(scope="module")
def model_tok(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return spread_out_tiny_model(tmp_path_factory.mktemp("ap"))


def _one_by_one(model, tok, template, rows) -> list[str]:
    return [str(ev.generate(model, tok, template, r["instruction"], r["input"], max_new_tokens=NEW)) for r in rows]


def _greedy_ids(model, tok, prompt: list[int]) -> list[int]:
    ids = torch.tensor([prompt])
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW, do_sample=False,
                             pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, temperature=None,
                             top_p=None, top_k=None)
    return out[0, len(prompt):].tolist()


def _plain_nll(model, prompt: list[int], answer: list[int]) -> float:
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([prompt + answer])).logits[0].float(), dim=-1)
    return -sum(float(logp[len(prompt) - 1 + k, t]) for k, t in enumerate(answer))


def _case(model, tok, n: int, seed: int):
    template = get_template("default")
    rows = make_review_rows(n, seed=seed)
    prompts = [prompt_ids(tok, template, r["instruction"], r["input"]) for r in rows]
    answers = []
    for i, p in enumerate(prompts):
        own = _greedy_ids(model, tok, p)
        if i % 3 == 0:
            answers.append(own)                              # the model's own answer: no decoding step
        elif i % 3 == 1:
            answers.append(own[:2] + [(own[2] + 1) % 400] + own[3:])  # its start, then another token
        else:
            answers.append([(t * 7 + 3) % 400 for t in own[:4]])     # another answer
    return template, rows, prompts, answers


@pytest.mark.parametrize("batch_rows", [3, 16])
def test_one_pass_answers_and_loss_equal_generate_and_the_plain_loss(model_tok, batch_rows: int) -> None:
    model, tok = model_tok
    template, rows, prompts, answers = _case(model, tok, 9, seed=8)
    stops = ev._stop_strings(tok, template)
    texts, loss = answers_and_loss(model, tok, prompts, answers, NEW, lambda t: ev._cut(t, stops),
                                   batch_rows=batch_rows)
    assert texts == _one_by_one(model, tok, template, rows)
    assert texts == generate_batch(model, tok, prompts, NEW, lambda t: ev._cut(t, stops), batch_rows=4)
    assert len(set(texts)) > 1
    plain = [_plain_nll(model, p, a) / len(a) for p, a in zip(prompts, answers)]
    assert max(abs(x - y) for x, y in zip(loss.rows, plain)) < 1e-4
    assert loss.tokens == sum(map(len, answers))


def test_a_reference_ending_where_greedy_stops_is_the_answer(model_tok) -> None:
    """With the end token set to one the model writes, greedy answers stop there, and so do the one pass's."""
    model, tok = model_tok
    template, rows, prompts, answers = _case(model, tok, 6, seed=11)
    own = _greedy_ids(model, tok, prompts[0])
    saved = tok.eos_token
    tok.eos_token = tok.convert_ids_to_tokens(own[2])     # row 0's third greedy token ends an answer now
    try:
        answers[0] = own[:3]
        stops = ev._stop_strings(tok, template)
        texts, loss = answers_and_loss(model, tok, prompts, answers, NEW, lambda t: ev._cut(t, stops))
        assert texts == _one_by_one(model, tok, template, rows)
        assert abs(loss.rows[0] - _plain_nll(model, prompts[0], own[:3]) / 3) < 1e-4
    finally:
        tok.eos_token = saved


def test_one_pass_through_a_lora_model_merged(model_tok) -> None:
    from peft import LoraConfig, get_peft_model
    from studio.evaluation.lora_merge import merged_lora
    model, tok = model_tok
    peft_model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    try:
        template, rows, prompts, answers = _case(peft_model, tok, 6, seed=5)
        stops = ev._stop_strings(tok, template)
        with merged_lora(peft_model) as merged:
            texts, loss = answers_and_loss(peft_model, tok, prompts, answers, NEW, lambda t: ev._cut(t, stops))
        assert merged
        assert texts == _one_by_one(peft_model, tok, template, rows)
        plain = [_plain_nll(peft_model, p, a) / len(a) for p, a in zip(prompts, answers)]
        assert max(abs(x - y) for x, y in zip(loss.rows, plain)) < 1e-4
    finally:
        peft_model.unload()
