"""QLoRA runs are evaluated on the base quantized as trained, and say so."""
from __future__ import annotations

import pytest
import torch

from studio.config.run_config import RunConfig
from studio.engine import run_training
from studio.runs.run_dir import RunDir


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory):
    """64 wide: bitsandbytes' CPU inference kernel packs 4-bit weights in blocks of 64 input features."""
    from studio.models.loading import build_tiny_llama, demo_texts
    from tests.conftest import make_review_rows
    return build_tiny_llama(tmp_path_factory.mktemp("qbase") / "base", demo_texts(make_review_rows(200, seed=8)),
                            hidden=64, layers=1, heads=4, intermediate=128, vocab_size=300, init_std=0.1)


@pytest.fixture(scope="module")
def qlora_run(tmp_path_factory, base_dir, sample_reviews_jsonl):
    out = tmp_path_factory.mktemp("qlora") / "run"
    cfg = RunConfig(model_name_or_path=str(base_dir), dataset=str(sample_reviews_jsonl), output_dir=str(out),
                    finetuning_type="lora", quantization_bit=4, cutoff_len=64, per_device_train_batch_size=8,
                    learning_rate=1e-2, max_steps=8, logging_steps=4, save_steps=1000, plot_loss=False)
    assert run_training(cfg)["state"] == "finished"
    return out


def _logits(model, tok) -> torch.Tensor:
    ids = tok("The kettle is great, really.", return_tensors="pt")
    with torch.no_grad():
        return model(**ids).logits.float()


def test_qlora_adapter_is_evaluated_on_the_4bit_base(qlora_run, base_dir) -> None:
    import bitsandbytes as bnb
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    from studio.models.loading import describe_weights, load_for_inference
    model, tok, cfg = load_for_inference(qlora_run)
    linears = [m for n, m in model.named_modules() if n.endswith("q_proj.base_layer")]
    assert linears and all(isinstance(m, bnb.nn.Linear4bit) for m in linears)
    assert describe_weights(model) == "4-bit nf4 base (as trained) + LoRA adapter"

    # the same numbers as the trained model: the 4-bit base + adapter, built by hand the way training built it
    q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                           bnb_4bit_compute_dtype=torch.float32)
    trained = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(
        base_dir, quantization_config=q, device_map={"": "cpu"}, dtype=torch.float32),
        str(RunDir(qlora_run).adapter)).eval()
    unquantized, _, _ = load_for_inference(qlora_run, quantized=False)
    assert describe_weights(unquantized) == "float32 weights + LoRA adapter"
    ours = _logits(model, tok)
    want = _logits(trained, tok)
    other = _logits(unquantized, tok)
    assert torch.allclose(ours, want, atol=1e-5)
    assert (ours - other).abs().max() > 1e-3   # the unquantized base is a different model


def test_scorecard_says_which_weights(qlora_run) -> None:
    from studio.evaluation.evaluate import compare_base_vs_tuned
    from tests.conftest import make_review_rows
    card = compare_base_vs_tuned(qlora_run, make_review_rows(6, seed=11))
    assert card["tuned"]["weights"] == "4-bit nf4 base (as trained) + LoRA adapter"


def test_a_model_folder_without_a_tokenizer_is_a_plain_error(tmp_path: Path) -> None:
    """`eval` on a folder with weights but no tokenizer is a plain error, not a traceback about sentencepiece."""
    import json as _json
    import pytest as _pytest
    from studio.errors import StudioError
    from studio.models.loading import load_tokenizer
    (tmp_path / "config.json").write_text(_json.dumps({"model_type": "llama"}))
    with _pytest.raises(StudioError, match="has no tokenizer"):
        load_tokenizer(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{not json")
    with _pytest.raises(StudioError, match="cannot be read"):
        load_tokenizer(str(tmp_path))
