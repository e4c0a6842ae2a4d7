"""What peft and Trainer already give, reached through LLaMA-Factory's key names (each checked in the library)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamafactory"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from studio.models.loading import build_tiny_llama
    texts = [f"### Instruction:\nsay {w}\n\n### Response:\n{w}" for w in ("yes", "no", "maybe", "sure")] * 5
    return build_tiny_llama(tmp_path_factory.mktemp("lf") / "tiny", texts, hidden=32, layers=1, heads=2,
                            vocab_size=300)


def _lora(tiny: Path, **kw) -> object:
    from studio.models.loading import apply_method, load_base
    cfg = RunConfig(model_name_or_path=str(tiny), dataset="d", lora_target="q_proj,v_proj",
                    gradient_checkpointing=False, **kw)
    model, _ = load_base(cfg, "cpu")
    return apply_method(model, cfg)


def test_dora_adds_magnitude_vectors(tiny: Path) -> None:
    names = [n for n, _ in _lora(tiny, use_dora=True).named_parameters()]
    assert any("lora_magnitude_vector" in n for n in names)
    assert not any("lora_magnitude_vector" in n for n, _ in _lora(tiny).named_parameters())


def test_rslora_scales_by_alpha_over_sqrt_rank(tiny: Path) -> None:
    layer = next(m for m in _lora(tiny, lora_rank=4, use_rslora=True).modules() if hasattr(m, "scaling")
                 and isinstance(m.scaling, dict) and m.scaling)
    assert layer.scaling["default"] == pytest.approx(8 / math.sqrt(4))  # alpha = 2 x rank = 8
    plain = next(m for m in _lora(tiny, lora_rank=4).modules() if hasattr(m, "scaling")
                 and isinstance(m.scaling, dict) and m.scaling)
    assert plain.scaling["default"] == pytest.approx(8 / 4)


def test_pissa_starts_adapters_from_principal_components(tiny: Path) -> None:
    import torch
    model = _lora(tiny, pissa_init=True)
    b = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert b and all(torch.count_nonzero(p) > 0 for p in b)  # default LoRA starts B at zero
    assert all(torch.count_nonzero(p) == 0 for n, p in _lora(tiny).named_parameters() if "lora_B" in n)


def test_loraplus_gives_b_matrices_a_larger_learning_rate(tiny: Path) -> None:
    from studio.engine.arguments import loraplus_optimizer
    cfg = RunConfig(dataset="d", learning_rate=1e-4, loraplus_lr_ratio=16.0)
    opt = loraplus_optimizer(cfg, _lora(tiny))
    assert sorted({g["lr"] for g in opt.param_groups if g["params"]}) == pytest.approx([1e-4, 1.6e-3])
    assert loraplus_optimizer(RunConfig(dataset="d"), _lora(tiny)) is None


def test_neftune_hook_is_registered_by_trainer(tiny: Path, tmp_path: Path) -> None:
    from transformers import Trainer
    from studio.engine.arguments import training_arguments
    from studio.runs.run_dir import RunDir
    model = _lora(tiny)
    args = training_arguments(RunConfig(dataset="d", neftune_noise_alpha=5.0), RunDir(tmp_path), "cpu", False)
    trainer = Trainer(model=model, args=args)
    assert trainer.neftune_noise_alpha == 5.0  # Trainer.train() activates the hook when this is set
    from transformers.integrations.neftune import activate_neftune
    activate_neftune(trainer.model, trainer.neftune_noise_alpha, trainer.accelerator)  # what train() calls
    emb = trainer.model.get_input_embeddings()
    assert emb.neftune_noise_alpha == 5.0 and emb._forward_hooks


@pytest.mark.integration
def test_an_official_example_trains_a_few_steps(tiny: Path, tmp_path: Path) -> None:
    """llama3_lora_sft.yaml as it is, with the model swapped for a local one and LLaMA-Factory's demo layout."""
    from studio.engine.run import run_training
    from studio.runs.run_dir import RunDir
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"instruction": f"say {w}", "input": "", "output": w} for w in ("yes", "no", "maybe", "sure")] * 4
    (data / "alpaca_en_demo.json").write_text(json.dumps(rows))
    conv = [{"conversations": [{"from": "human", "value": f"say {w}"}, {"from": "gpt", "value": w}]}
            for w in ("yes", "no")] * 4
    (data / "identity.json").write_text(json.dumps(conv))
    (data / "dataset_info.json").write_text(json.dumps({
        "alpaca_en_demo": {"file_name": "alpaca_en_demo.json"},
        "identity": {"file_name": "identity.json", "formatting": "sharegpt"}}))
    cfg = RunConfig.load(FIXTURES / "llama3_lora_extras.yaml", [
        f"model_name_or_path={tiny}", f"dataset_dir={data}", f"output_dir={tmp_path / 'run'}", "max_steps=3",
        "cutoff_len=64", "logging_steps=1", "save_steps=100", "pissa_init=false"])
    summary = run_training(cfg)
    assert summary["state"] == "finished" and summary["step"] == 3 and summary["train_rows"] == 24
    status = RunDir(tmp_path / "run").read_status()
    assert 0 < status["trainable_params"] < status["total_params"]
    events = (tmp_path / "run" / "trainer_log.jsonl").read_text()
    assert "lora_alpha not set: using 2 x lora_rank = 16" in events
    adapter = json.loads((tmp_path / "run" / "adapter" / "adapter_config.json").read_text())
    assert adapter["use_dora"] and adapter["use_rslora"] and adapter["lora_alpha"] == 16


def test_resume_from_checkpoint_key_reaches_the_resume_logic(tiny: Path, tmp_path: Path) -> None:
    from studio.engine.run import run_training
    from studio.errors import StudioError
    rows = tmp_path / "d.jsonl"
    rows.write_text(json.dumps({"instruction": "say yes", "input": "", "output": "yes"}) + "\n")
    cfg = RunConfig(model_name_or_path=str(tiny), dataset=str(rows), output_dir=str(tmp_path / "run"),
                    resume_from_checkpoint=str(tmp_path / "nope"), max_steps=1, gradient_checkpointing=False)
    with pytest.raises(StudioError, match="is not a complete checkpoint"):
        run_training(cfg)
