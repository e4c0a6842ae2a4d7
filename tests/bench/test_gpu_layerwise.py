"""The 70B row's base is built one linear layer at a time (bench/gpu_layerwise.py): each weight drawn, quantized to
NF4, freed, before the next. Every weight the model trains with must be the one drawn: a ``to_empty()`` after the
quantization swapped the NF4 weights for uninitialised memory (the row then timed a model of garbage)."""
from __future__ import annotations

import torch
from transformers import LlamaConfig

from bench.gpu_layerwise import build_layerwise_qlora, decoder_linears, draw_weight

TINY = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=512, max_position_embeddings=512, tie_word_embeddings=False)


def test_every_quantized_weight_is_the_one_drawn() -> None:
    import bitsandbytes.functional as bnbf
    model = build_layerwise_qlora(TINY, "cpu", torch.float32)
    linears = decoder_linears(model)
    assert len(linears) == 7 * TINY.num_hidden_layers
    for i, (_, _, q) in enumerate(linears):
        w = draw_weight(i, (q.out_features, q.in_features), "cpu", torch.float32)
        got = bnbf.dequantize_4bit(q.weight.data, q.weight.quant_state).float()
        cos = torch.nn.functional.cosine_similarity(got.flatten(), w.flatten(), dim=0)
        assert cos > 0.98, f"linear {i}: the NF4 weight is not the one drawn (cosine {cos:.3f})"


def test_nothing_is_left_uninitialised_or_on_meta() -> None:
    model = build_layerwise_qlora(TINY, "cpu", torch.float32)
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        assert t.device.type == "cpu", name
        if t.dtype.is_floating_point:
            assert torch.isfinite(t).all(), name
    norms = [p for n, p in model.named_parameters() if "norm" in n]
    assert norms and all(bool((p == 1).all()) for p in norms)
    assert 0.01 < float(model.model.embed_tokens.weight.std()) < 0.03
    ids = torch.randint(3, 500, (1, 16))
    loss = model(input_ids=ids, labels=ids).loss
    assert torch.isfinite(loss) and abs(float(loss) - torch.log(torch.tensor(512.0))) < 1.0
