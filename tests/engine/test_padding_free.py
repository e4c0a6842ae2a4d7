"""No padding on a card: rows go padding-free (flattened, ``position_ids`` restarting per example) where the
attention kernel runs them without a mask (FlashAttention varlen, flex attention), token-budget batches elsewhere
on a card, the configured batching on a CPU (engine/batching.card_batching).

The flattened batch must train on the same loss as the padded one. FlashAttention needs a card, so the equality is
checked on the CPU through transformers' own path for flattened rows with SDPA and eager attention (it builds the
block-diagonal mask from the restarting positions), with the exact collators a card run would use.
"""
from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from studio.config.run_config import RunConfig
from studio.engine.arguments import make_collator
from studio.engine.batching import HOST_KEYS, card_batching
from studio.engine.loss import selective_causal_lm_loss
from tests.wordtok import id_tokenizer


def test_the_card_plan_by_attention_kernel() -> None:
    assert card_batching("cuda", "flash_attention_2", packing=False) == "padding_free"
    assert card_batching("cuda", "flash_attention_3", packing=False) == "padding_free"
    assert card_batching("cuda", "flex_attention", packing=False) == "padding_free"
    assert card_batching("cuda", "sdpa", packing=False) == "token_budget"
    assert card_batching("cuda", "eager", packing=False) == "token_budget"
    assert card_batching("cpu", "flash_attention_2", packing=False) == "as_configured"
    assert card_batching("cuda", "flash_attention_2", packing=True) == "as_configured"


def _features(n: int, seed: int = 0) -> list[dict]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        length = int(torch.randint(5, 20, (1,), generator=g))
        ids = torch.randint(3, 60, (length,), generator=g).tolist()
        prompt = length // 2
        out.append({"input_ids": ids, "attention_mask": [1] * length,
                    "labels": [-100] * prompt + ids[prompt:]})
    return out


def _model_input(batch: dict) -> dict:
    return {k: v for k, v in batch.items() if k not in HOST_KEYS}


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_padding_free_batches_train_on_the_padded_loss(attention, tiny_model_dir) -> None:
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, attn_implementation=attention)
    model.config.use_cache = False
    tok = id_tokenizer(64)
    feats = _features(6)
    cfg = RunConfig(dataset="d.jsonl")
    padded = make_collator(cfg, model, tok, "cuda")(feats)              # a card's padded batch (multiple of 8)
    flat = make_collator(cfg, model, tok, "cuda", padding_free=True)(feats)
    assert flat["input_ids"].shape[0] == 1 and "attention_mask" not in flat
    assert flat["input_ids"].numel() == sum(len(f["input_ids"]) for f in feats) < padded["input_ids"].numel()
    assert flat["studio_items"] == padded["studio_items"] and flat["studio_tokens"] == padded["studio_tokens"]
    with torch.no_grad():
        ref = model(**_model_input(padded)).loss
        got = model(**_model_input(flat)).loss
        # the studio's own head on both, through the host-made loss positions
        mine_padded = selective_causal_lm_loss(model, _model_input(padded), loss_index=padded["studio_loss_index"])
        mine_flat = selective_causal_lm_loss(model, _model_input(flat), loss_index=flat["studio_loss_index"])
    assert torch.isfinite(ref)
    assert got == pytest.approx(float(ref), rel=1e-5, abs=1e-6)
    assert float(mine_flat) == pytest.approx(float(ref), rel=1e-5, abs=1e-6)
    assert float(mine_padded) == pytest.approx(float(ref), rel=1e-5, abs=1e-6)


def test_a_plain_flattened_row_without_restarting_positions_would_differ(tiny_model_dir) -> None:
    """The check can fail: the same flattened tokens with positions running on (attention crossing examples)
    give another loss."""
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, attn_implementation="sdpa")
    model.config.use_cache = False
    tok, feats = id_tokenizer(64), _features(6)
    cfg = RunConfig(dataset="d.jsonl")
    padded = make_collator(cfg, model, tok, "cuda")(feats)
    flat = _model_input(make_collator(cfg, model, tok, "cuda", padding_free=True)(feats))
    flat.pop("position_ids")
    with torch.no_grad():
        assert abs(float(model(**flat).loss) - float(model(**_model_input(padded)).loss)) > 1e-4
