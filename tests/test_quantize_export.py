"""Quantized export: a model saved as 4-bit NF4 / 8-bit reloads with plain transformers, smaller, same answers."""
from __future__ import annotations

import json

import pytest
import torch

from studio.errors import StudioError


@pytest.fixture(scope="module")
def fp32_model(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4)
    model = LlamaForCausalLM(cfg).eval()
    folder = tmp_path_factory.mktemp("fp32")
    model.save_pretrained(folder)
    return folder, model


@pytest.mark.parametrize("bits,layer", [(4, "Linear4bit"), (8, "Linear8bitLt")])
def test_quantized_export_reloads_with_plain_transformers(fp32_model, tmp_path, bits, layer):
    from transformers import AutoModelForCausalLM
    from studio.evaluation.quantize import quantize_export
    folder, model = fp32_model
    info = quantize_export(folder, tmp_path / "q", bits=bits)
    assert json.loads((tmp_path / "q" / "config.json").read_text())["quantization_config"]["load_in_%dbit" % bits]
    assert info["size_mb"] < info["source_size_mb"] * (0.45 if bits == 4 else 0.6)
    again = AutoModelForCausalLM.from_pretrained(tmp_path / "q", device_map={"": "cpu"})
    assert type(again.model.layers[0].mlp.up_proj).__name__ == layer
    ids = torch.randint(0, 512, (1, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, quant = model(ids).logits, again(ids).logits
    agree = (full.argmax(-1) == quant.argmax(-1)).float().mean().item()
    assert agree >= 0.75, f"quantized model disagrees with the fp32 one on {1 - agree:.0%} of positions"


def test_quantized_export_refuses_other_bit_widths_and_existing_targets(fp32_model, tmp_path):
    from studio.evaluation.quantize import quantize_export
    folder, _ = fp32_model
    with pytest.raises(StudioError, match="supports 4 or 8 bits, not 3"):
        quantize_export(folder, tmp_path / "q", bits=3)  # type: ignore[arg-type]
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    with pytest.raises(StudioError):
        quantize_export(folder, tmp_path / "taken", bits=4)
    assert (tmp_path / "taken" / "mine.txt").read_text() == "keep"
