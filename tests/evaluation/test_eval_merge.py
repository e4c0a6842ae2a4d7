"""Scoring a LoRA run with its adapter merged into the weights: the same scores within fp32
rounding, the same labels, no adapter matmuls while scoring, the weights given back afterwards, and the base side of
a before/after check still the true base (adapter off, nothing merged)."""
from __future__ import annotations

import pytest
import torch

from studio.data.templates import get_template
from studio.evaluation import evaluate as ev
from studio.evaluation.label_scoring import label_logprobs, shared_prefix_len
from studio.evaluation.prompts import prompt_token_ids
from tests.conftest import make_review_rows
from tests.evalkit import spread_out_tiny_model

LABELS = ["positive", "negative"]
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


@pytest.fixture()
def lora(tmp_path_factory: pytest.TempPathFactory):
    """A tiny Llama with a LoRA adapter on every projection whose B is not zero (so the adapter changes scores)."""
    from peft import LoraConfig, get_peft_model
    model, tok = spread_out_tiny_model(tmp_path_factory.mktemp("merge"))
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=TARGETS,
                                                  init_lora_weights=False)).eval()
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.2)
    template = get_template("default")
    data = [{**r, "output": LABELS[i % 2]} for i, r in enumerate(make_review_rows(12, seed=9))]
    return peft_model, tok, template, data


def _reference(model, tok, template, rows) -> list[list[float]]:
    """Label log-probs the unmerged way: the scorer's own batch, straight through the adapter's extra matmuls."""
    prompts = prompt_token_ids(tok, template, rows)
    answers = [tok.encode(template.answer(lab), add_special_tokens=False) for lab in LABELS]
    return label_logprobs(model, prompts, answers, tok.pad_token_id, shared=shared_prefix_len(prompts))


def _adapter_calls(model) -> list[int]:
    """A counter of forwards through any lora_A module (zero when the adapter is merged or off)."""
    calls = [0]
    for name, m in model.named_modules():
        if name.endswith("lora_A.default"):
            m.register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    return calls


def _weights(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "base_layer" in n}


def test_merged_scores_equal_unmerged_scores_and_skip_the_adapter(lora) -> None:
    model, tok, template, rows = lora
    unmerged = _reference(model, tok, template, rows)
    before = _weights(model)
    calls = _adapter_calls(model)
    merged = ev._score_labels(model, tok, template, rows, LABELS)
    assert calls[0] == 0, "the adapter ran unmerged while scoring"
    assert max(abs(a - b) for ra, rb in zip(merged, unmerged) for a, b in zip(ra, rb)) < 1e-4
    assert [max(range(2), key=s.__getitem__) for s in merged] == [max(range(2), key=s.__getitem__) for s in unmerged]
    assert len({round(s[0] - s[1], 3) for s in merged}) > 3          # rows really score differently
    # given back: unmerged again (the adapter runs), the weights within one fp32 rounding of what they were
    after = _weights(model)
    assert all(torch.allclose(before[n], after[n], rtol=0, atol=1e-6) for n in before)
    assert not any(getattr(m, "merged", False) for m in model.modules())
    _reference(model, tok, template, rows)
    assert calls[0] > 0


def test_base_side_scores_the_true_base_and_accuracy_is_unchanged(lora) -> None:
    model, tok, template, rows = lora
    with model.disable_adapter():
        base_ref = _reference(model, tok, template, rows)
    tuned_ref = _reference(model, tok, template, rows)
    assert max(abs(a - b) for ra, rb in zip(base_ref, tuned_ref) for a, b in zip(ra, rb)) > 1e-2  # adapter matters
    weights = _weights(model)
    calls = _adapter_calls(model)
    with ev.base_model_context(model):
        base = ev._score_labels(model, tok, template, rows, LABELS)
    assert calls[0] == 0 and all(torch.equal(weights[n], p) for n, p in _weights(model).items())  # nothing merged
    assert max(abs(a - b) for ra, rb in zip(base, base_ref) for a, b in zip(ra, rb)) < 1e-4
    card = ev.compare_loaded(model, tok, template, rows, mode="score", labels=LABELS)
    acc = lambda scores: sum(LABELS[max(range(2), key=s.__getitem__)] == r["output"]  # noqa: E731
                             for s, r in zip(scores, rows)) / len(rows)
    assert card["tuned"]["accuracy"] == acc(tuned_ref) and card["base"]["accuracy"] == acc(base_ref)


def test_half_precision_weights_are_not_merged(lora) -> None:
    """A bf16 sum W + sBA is rounded to bf16: not the function that was trained, and not given back exactly."""
    model, tok, template, rows = lora
    model.to(torch.bfloat16)
    weights = _weights(model)
    calls = _adapter_calls(model)
    ev._score_labels(model, tok, template, rows, LABELS)
    assert calls[0] > 0 and all(torch.equal(weights[n], p) for n, p in _weights(model).items())
