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


@pytest.fixture(scope="module")
def tied_lora(tmp_path_factory):
    """A tied-embedding Llama (like SmolLM2) and a LoRA adapter on it with non-zero updates."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=True)
    base = LlamaForCausalLM(cfg).eval()
    root = tmp_path_factory.mktemp("tied")
    base.save_pretrained(root / "base")
    from tests.wordtok import word_tokenizer
    word_tokenizer("good bad fine").save_pretrained(root / "base")  # the export carries the base's tokenizer
    peft = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False))
    peft.save_pretrained(root / "adapter")
    cfg_file = root / "adapter" / "adapter_config.json"
    conf = json.loads(cfg_file.read_text())
    conf["base_model_name_or_path"] = str(root / "base")
    cfg_file.write_text(json.dumps(conf))
    return root, peft.eval()


@pytest.mark.parametrize("bits", [4, 8])
def test_quantized_export_keeps_tied_head_and_embeddings_out_of_quantization(tied_lora, tmp_path, bits):
    """The skip rule is written into the saved config (before: llm_int8_skip_modules was None, reload guessed)."""
    from transformers import AutoModelForCausalLM
    from studio.evaluation.quantize import quantize_export
    root, _ = tied_lora
    info = quantize_export(root / "base", tmp_path / "q", bits=bits)
    saved = json.loads((tmp_path / "q" / "config.json").read_text())["quantization_config"]
    assert saved["llm_int8_skip_modules"] == ["lm_head", "embed_tokens"] == info["skip_modules"]
    again = AutoModelForCausalLM.from_pretrained(tmp_path / "q", device_map={"": "cpu"})
    assert type(again.lm_head) is torch.nn.Linear and again.lm_head.weight.dtype == torch.float32
    assert type(again.model.layers[0].self_attn.q_proj).__name__ == ("Linear4bit" if bits == 4 else "Linear8bitLt")


def test_keep_adapter_quantizes_the_base_and_keeps_the_adapter_exact(tied_lora, tmp_path):
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM
    from studio.evaluation.quantize import quantize_export
    from studio.models.loading import load_for_inference
    root, peft = tied_lora
    info = quantize_export(root / "adapter", tmp_path / "q", bits=4, keep_adapter=True)
    assert info["kind"] == "quantized-4bit+adapter" and "load_adapter" in info["what"]
    saved, orig = (load_file(d / "adapter_model.safetensors") for d in (tmp_path / "q" / "adapter", root / "adapter"))
    assert saved.keys() == orig.keys() and all(torch.equal(saved[k], orig[k]) for k in orig)
    assert (tmp_path / "q" / "tokenizer.json").is_file()
    # plain transformers: the quantized base, then the adapter on it
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "q", device_map={"": "cpu"})
    assert type(model.model.layers[0].mlp.up_proj).__name__ == "Linear4bit"
    ids = torch.randint(0, 512, (1, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        bare = model(ids).logits
        model.load_adapter(str(tmp_path / "q" / "adapter"))
        tuned, full = model(ids).logits, peft(ids).logits
    assert not torch.allclose(bare, tuned, atol=1e-3), "the adapter changed nothing: it was not loaded"
    assert (tuned.argmax(-1) == full.argmax(-1)).float().mean().item() >= 0.75
    # the studio's own loader (eval CLI, Evaluate tab) attaches it too
    loaded, _, _ = load_for_inference(tmp_path / "q")
    assert hasattr(loaded, "disable_adapter")
    with torch.no_grad():
        mine = loaded(ids).logits
    # the two loads' logits differed by ~1e-3 (seen once); what the adapter adds is far larger
    assert (mine - tuned).abs().max() < (bare - tuned).abs().max() / 10


def test_keep_adapter_needs_an_adapter(fp32_model, tmp_path):
    from studio.evaluation.quantize import quantize_export
    folder, _ = fp32_model
    with pytest.raises(StudioError, match="holds no LoRA adapter"):
        quantize_export(folder, tmp_path / "q", bits=4, keep_adapter=True)


def test_cli_keep_adapter_without_quantize_is_a_plain_error(tmp_path):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "studio", "export", str(tmp_path), "--out", str(tmp_path / "o"),
                        "--keep-adapter"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--keep-adapter only applies with --quantize" in r.stderr + r.stdout
    assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()
