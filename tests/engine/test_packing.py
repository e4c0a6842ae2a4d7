"""Padding-free packing keeps examples isolated: packed loss == sum of one-by-one losses."""
from __future__ import annotations

import pytest
import torch

from studio.engine.batching import TokenBudgetBatchSampler
from studio.engine.loss import selective_causal_lm_loss
from studio.engine.packing import PackingCollator

TOL = 1e-5


def _llama(attn: str) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=61, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      use_cache=False)  # the engine turns the cache off when packing: a KV cache disables the
    cfg._attn_implementation = attn     # packed-sequence mask in transformers' mask builder
    return LlamaForCausalLM(cfg).eval()


def _examples() -> list[dict[str, list[int]]]:
    g = torch.Generator().manual_seed(3)
    out = []
    for n, answer in [(9, 2), (5, 3), (14, 4)]:
        ids = torch.randint(3, 61, (n,), generator=g).tolist()
        out.append({"input_ids": ids, "attention_mask": [1] * n, "labels": [-100] * (n - answer) + ids[n - answer:]})
    return out


def _one_by_one_sum(model: torch.nn.Module, feats: list[dict]) -> tuple[float, int]:
    total, count = 0.0, 0
    for f in feats:
        inputs = {k: torch.tensor([v]) for k, v in f.items()}
        n = sum(1 for x in f["labels"][1:] if x != -100)
        total += float(model(**inputs).loss) * n
        count += n
    return total, count


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_neat_packed_loss_equals_sum_of_separate_losses(attn: str) -> None:
    model, feats = _llama(attn), _examples()
    batch = PackingCollator(neat=True)(feats)
    assert batch["input_ids"].shape == (1, sum(len(f["input_ids"]) for f in feats)) and "attention_mask" not in batch
    total, count = _one_by_one_sum(model, feats)
    with torch.no_grad():
        packed = float(model(**batch, num_items_in_batch=count).loss) * count
        selective = float(selective_causal_lm_loss(model, batch, count)) * count
    assert abs(packed - total) < TOL * count
    assert abs(selective - total) < TOL * count


def test_plain_packing_lets_attention_cross_examples() -> None:
    """Without neat_packing positions run on across the row: the losses differ (that is what 'neat' fixes)."""
    model, feats = _llama("sdpa"), _examples()
    batch = PackingCollator(neat=False)(feats)
    assert "position_ids" not in batch
    total, count = _one_by_one_sum(model, feats)
    with torch.no_grad():
        packed = float(model(**batch, num_items_in_batch=count).loss) * count
    assert abs(packed - total) > 1e-3


def test_packed_sampler_budget_is_sum_of_lengths() -> None:
    lengths = [30, 10, 50, 20, 40, 5, 60, 25]
    sampler = TokenBudgetBatchSampler(lengths, max_tokens=80, seed=1, packed=True)
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in b) <= 80 for b in batches)
    padded = TokenBudgetBatchSampler(lengths, max_tokens=80, seed=1)
    assert all(len(b) * max(lengths[i] for i in b) <= 80 for b in padded)


def test_neat_packing_run_trains_end_to_end(tmp_path) -> None:
    """The product path: run_training with neat_packing + dynamic batching (packed token budget) finishes."""
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    from tests.conftest import make_review_rows, write_jsonl
    rows = make_review_rows(48, seed=8)
    model = build_tiny_llama(tmp_path / "m", demo_texts(rows), hidden=32, layers=1, heads=2, vocab_size=300)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    cfg = RunConfig(model_name_or_path=str(model), dataset=str(data), output_dir=str(tmp_path / "run"),
                    finetuning_type="full", cutoff_len=64, neat_packing=True, dynamic_batching=True,
                    max_tokens_per_batch=160, max_steps=4, logging_steps=1, save_steps=1000, learning_rate=3e-3,
                    plot_loss=False)
    summary = run_training(cfg)
    assert summary["state"] == "finished" and summary["step"] == 4
    assert summary["final_loss"] is not None and summary["final_loss"] == summary["final_loss"]
