"""Evaluation speed: label scores from a shared prompt's KV cache equal the naive per-label scores,
each prompt runs through the model once, generation is batched, prompts are tokenized once, rows/s is reported."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.data.templates import get_template
from studio.data.tokenize import prompt_ids
from studio.evaluation import evaluate as ev
from studio.evaluation.generation import generate_batch
from studio.evaluation.label_scoring import label_logprobs, label_logprobs_concat, label_logprobs_naive
from studio.evaluation.prompts import prompt_token_ids, stats
from tests.evalkit import spread_out_tiny_model
from tests.conftest import make_review_rows

LABELS = ["positive", "negative", "mixed feelings overall"]   # answers of 2-3 and many tokens


@pytest.fixture(scope="module")
def model_tok(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return spread_out_tiny_model(tmp_path_factory.mktemp("ls"))


def _inputs(tok, n: int, seed: int):
    template = get_template("default")
    rows = make_review_rows(n, seed=seed)
    answers = [tok.encode(template.answer(lab), add_special_tokens=False) for lab in LABELS]
    prompts = [prompt_ids(tok, template, r["instruction"], r["input"]) for r in rows]
    return template, rows, prompts, answers


def _maxdiff(a, b) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_cached_scores_equal_naive_scores(model_tok, attn: str) -> None:
    model, tok = model_tok
    model.config._attn_implementation = attn
    try:
        _, _, prompts, answers = _inputs(tok, 10, seed=4)
        assert len({len(p) for p in prompts}) > 2 and len({len(a) for a in answers}) > 1  # really left-padded
        cached = label_logprobs(model, prompts, answers, tok.pad_token_id)
        naive = label_logprobs_naive(model, prompts, answers, tok.pad_token_id)
        assert _maxdiff(cached, naive) < 1e-4, (cached, naive)
        assert _maxdiff(label_logprobs_concat(model, prompts, answers, tok.pad_token_id), naive) < 1e-4
        assert len({round(s[0] - s[1], 3) for s in cached}) > 3   # the scores differ between rows
    finally:
        model.config._attn_implementation = "sdpa"


def test_cached_scores_through_a_lora_model(model_tok) -> None:
    from peft import LoraConfig, get_peft_model
    model, tok = model_tok
    peft_model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    try:
        _, _, prompts, answers = _inputs(tok, 6, seed=7)
        assert _maxdiff(label_logprobs(peft_model, prompts, answers, tok.pad_token_id),
                        label_logprobs_naive(peft_model, prompts, answers, tok.pad_token_id)) < 1e-4
    finally:
        peft_model.unload()


def test_each_prompt_runs_through_the_model_once(model_tok) -> None:
    """Tokens through the first decoder layer: prompts once + labels' tokens, not prompt x labels."""
    model, tok = model_tok
    _, _, prompts, answers = _inputs(tok, 8, seed=5)
    seen: list[int] = []
    layer = model.model.layers[0]
    handle = layer.register_forward_pre_hook(lambda _m, args, kwargs=None: seen.append(int(args[0].shape[0] *
                                                                                        args[0].shape[1])))
    try:
        label_logprobs(model, prompts, answers, tok.pad_token_id)
        cached = sum(seen)
        seen.clear()
        label_logprobs_naive(model, prompts, answers, tok.pad_token_id)
        naive = sum(seen)
    finally:
        handle.remove()
    width = max(len(p) for p in prompts)
    assert cached == len(prompts) * width + len(prompts) * len(answers) * (max(len(a) for a in answers) - 1)
    assert naive >= len(answers) * sum(len(p) for p in prompts) and cached < naive


def test_sentiment_eval_reports_rows_per_second_and_reuses_prompt_tokens(model_tok) -> None:
    model, tok = model_tok
    template, rows, prompts, _ = _inputs(tok, 12, seed=6)
    rows = [{**r, "output": "positive" if i % 2 else "negative"} for i, r in enumerate(rows)]
    before = dict(stats)
    first = ev.sentiment_eval(model, tok, template, rows, labels=["positive", "negative"])
    second = ev.sentiment_eval(model, tok, template, rows, labels=["positive", "negative"])
    assert stats["misses"] == before["misses"] + 1 and stats["hits"] == before["hits"] + 1
    assert prompt_token_ids(tok, template, rows) == prompts   # the batched call gives prompt_ids' tokens
    assert first["rows_per_s"] > 0 and abs(first["rows_per_s"] * first["latency_ms_per_row"] - 1000) < 1e-6
    assert first["accuracy"] == second["accuracy"]


def test_prompt_tokens_cached_on_disk(model_tok, tmp_path: Path) -> None:
    from studio.evaluation import prompts as pr
    _, tok = model_tok
    template, rows, expected, _ = _inputs(tok, 5, seed=11)
    assert prompt_token_ids(tok, template, rows, folder=tmp_path) == expected
    assert len(list(tmp_path.glob("prompt-*.npz"))) == 1
    pr._memo.clear()
    hits = stats["hits"]
    assert prompt_token_ids(tok, template, rows, folder=tmp_path) == expected
    assert stats["hits"] == hits + 1


def test_batched_greedy_generation_equals_row_by_row(model_tok) -> None:
    model, tok = model_tok
    template, rows, prompts, _ = _inputs(tok, 7, seed=8)
    stops = ev._stop_strings(tok, template)
    batched = generate_batch(model, tok, prompts, 6, lambda t: ev._cut(t, stops), batch_rows=4)
    one_by_one = [str(ev.generate(model, tok, template, r["instruction"], r["input"], max_new_tokens=6))
                  for r in rows]
    assert batched == one_by_one
    assert len(set(batched)) > 1


def test_shared_prefix_len_leaves_each_prompt_a_token():
    from studio.evaluation.label_scoring import shared_prefix_len
    assert shared_prefix_len([[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2, 3, 4, 7]]) == 3
    assert shared_prefix_len([[1, 2], [1, 2, 3]]) == 1          # the shorter prompt keeps its last token
    assert shared_prefix_len([[1, 2, 3]]) == 0 and shared_prefix_len([[5, 1], [6, 1]]) == 0


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_scores_with_the_instruction_run_once_equal_naive_scores(model_tok, attn: str) -> None:
    """The rows' shared instruction runs once as a batch of one; padding between it and each row's own tokens
    changes nothing (positions skip it, the mask hides it); and far fewer tokens pass through the model."""
    from studio.evaluation.label_scoring import shared_prefix_len
    model, tok = model_tok
    model.config._attn_implementation = attn
    seen: list[int] = []
    handle = model.model.layers[0].register_forward_pre_hook(
        lambda _m, args, kwargs=None: seen.append(int(args[0].shape[0] * args[0].shape[1])))
    try:
        _, _, prompts, answers = _inputs(tok, 10, seed=4)
        shared = shared_prefix_len(prompts)
        assert shared >= 5 and len({len(p) for p in prompts}) > 2
        with_prefix = label_logprobs(model, prompts, answers, tok.pad_token_id, shared=shared)
        tokens_prefix = sum(seen)
        seen.clear()
        without = label_logprobs(model, prompts, answers, tok.pad_token_id)
        tokens_plain = sum(seen)
        naive = label_logprobs_naive(model, prompts, answers, tok.pad_token_id)
        assert _maxdiff(with_prefix, naive) < 1e-4 and _maxdiff(without, naive) < 1e-4
        width = max(len(p) for p in prompts)
        assert tokens_plain - tokens_prefix == len(prompts) * shared - shared and tokens_prefix < tokens_plain
        assert width > shared
    finally:
        handle.remove()
        model.config._attn_implementation = "sdpa"


@pytest.mark.parametrize("shared", [False, True])
def test_output_head_sees_contiguous_hidden_states(model_tok, shared: bool) -> None:
    """``logits_to_keep=1`` hands the head ``hidden[:, -1:, :]``, a strided view; torch's matmul of a strided 3-D
    input takes a batched path ~10x slower than a plain matrix product (1.6 s vs 0.17 s for 32 rows x Gemma's
    262k vocabulary, one thread). Every batch the scorer sends through the head must be contiguous."""
    from studio.evaluation.label_scoring import shared_prefix_len
    model, tok = model_tok
    _, _, prompts, answers = _inputs(tok, 9, seed=12)
    head = model.get_output_embeddings()
    seen: list[tuple[tuple[int, ...], bool]] = []
    plain = head.forward

    def forward(x, *args, **kwargs):
        seen.append((tuple(x.shape), x.is_contiguous()))
        return plain(x, *args, **kwargs)

    head.forward = forward
    try:
        scores = label_logprobs(model, prompts, answers, tok.pad_token_id,
                                shared=shared_prefix_len(prompts) if shared else 0)
    finally:
        del head.forward
    assert any(shape[0] == len(prompts) for shape, _ in seen), seen   # the prompts' batch went through the head
    assert all(ok for _, ok in seen), seen
    assert _maxdiff(scores, label_logprobs_naive(model, prompts, answers, tok.pad_token_id)) < 1e-4


def test_scores_of_sorted_batches_with_a_long_row_equal_naive_scores(model_tok) -> None:
    model, tok = model_tok
    template, rows, prompts, _ = _inputs(tok, 14, seed=13)
    rows = [{**r, "input": r["input"] * (1 + 5 * (i == 3))} for i, r in enumerate(rows)]   # one long row
    prompts = prompt_token_ids(tok, template, rows)
    answers = [tok.encode(template.answer(lab), add_special_tokens=False) for lab in LABELS]
    scores = ev._score_labels(model, tok, template, rows, LABELS, batch_rows=8)
    assert _maxdiff(scores, label_logprobs_naive(model, prompts, answers, tok.pad_token_id)) < 1e-4
