"""A real pretrained model, offline: SmolLM2-135M-Instruct from its pip package is prepared once, LoRA-trained
for a few steps, reloaded as base + adapter, and chatted with through its own chat template.

Sized for CI on 2 cores: 6 rows, cutoff 48 tokens, batch 2, 3 steps. The prepared folder (538 MB) is built once
per session into a temporary model cache.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.conftest import INSTRUCTION, write_jsonl
from tests.helpers import losses
from studio.models import zoo
from studio.config.run_config import RunConfig
from studio.runs.run_dir import RunDir

pytestmark = pytest.mark.integration
SMOL = "smollm2-135m-instruct"


@pytest.fixture(scope="session")
def smol_cache(tmp_path_factory: pytest.TempPathFactory):
    """The model cache with SmolLM2 prepared in it (the env var points the engine's resolution there)."""
    cache = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(zoo.CACHE_ENV, str(cache))
        stages: list[float] = []
        folder = zoo.ensure_prepared(SMOL, progress=lambda f, m: stages.append(f))
        assert stages[0] == 0.0 and stages[-1] == 1.0
        yield cache, folder


def test_builtin_name_prepares_once_into_the_cache(smol_cache):
    cache, folder = smol_cache
    assert folder == cache / SMOL and (folder / "model.safetensors").stat().st_size > 500e6
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "llama" and config["num_hidden_layers"] == 30 and config["hidden_size"] == 576
    assert "quantization_config" not in config
    said: list[str] = []
    assert zoo.ensure_prepared(SMOL, progress=lambda f, m: said.append(m)) == folder
    assert said == [], "the second use must not locate or convert the GGUF again"


@pytest.fixture(scope="session")
def smol_run(smol_cache, tmp_path_factory: pytest.TempPathFactory) -> RunConfig:
    from studio.engine.run import run_training
    tmp = tmp_path_factory.mktemp("smol-run")
    rows = [{"instruction": INSTRUCTION, "input": text, "output": "positive"} for text in
            ("The kettle is great.", "I love these shoes.", "Works well, very happy.", "Excellent book.",
             "Very good headset.", "The phone is great, honestly.")]
    data = write_jsonl(tmp / "rows.jsonl", rows)
    cfg = RunConfig(model_name_or_path=SMOL, dataset=str(data), output_dir=str(tmp / "run"), finetuning_type="lora",
                    lora_rank=8, lora_alpha=16, template="auto", cutoff_len=48, per_device_train_batch_size=2,
                    max_steps=3, learning_rate=5e-3, logging_steps=1, save_steps=1000,
                    lr_scheduler_type="constant", plot_loss=False, seed=0)
    summary = run_training(cfg)
    assert summary["state"] == "finished" and summary["step"] == 3
    return cfg


def test_lora_on_smollm2_lowers_the_loss(smol_run):
    ls = losses(Path(smol_run.output_dir))
    assert len(ls) == 3, ls
    assert ls[-1] < ls[0] * 0.7, f"loss did not fall: {ls}"


def test_adapter_reloads_on_the_prepared_base(smol_run, smol_cache):
    from peft import PeftModel
    from studio.models.loading import load_for_inference
    _, folder = smol_cache
    run = RunDir(smol_run.output_dir)
    adapter_cfg = json.loads((run.adapter / "adapter_config.json").read_text())
    assert Path(adapter_cfg["base_model_name_or_path"]) == folder
    model, tok, cfg = load_for_inference(run.path)
    assert isinstance(model, PeftModel) and cfg is not None and cfg.model_name_or_path == SMOL
    ids = torch.tensor([tok.encode("The kettle is great.")])
    with torch.no_grad():
        tuned = model(ids).logits
        with model.disable_adapter():
            base = model(ids).logits
    assert not torch.allclose(tuned, base), "the reloaded adapter must change the model's output"


def test_chat_uses_the_models_chat_template_and_answers_in_text(smol_run, monkeypatch):
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import chat, generate
    from studio.models.loading import load_for_inference
    model, tok, cfg = load_for_inference(smol_run.output_dir)
    template = get_template(cfg.template, tok)  # what the playground and chat use for this run (inference.load)
    rendered: list[str] = []
    real = tok.apply_chat_template

    def spy(messages, *a, **kw):
        out = real(messages, *a, **kw)
        rendered.append(out)
        return out
    monkeypatch.setattr(tok, "apply_chat_template", spy)
    answer = chat(model, tok, template, [], "Name one colour of the sky.", max_new_tokens=12,
                  temperature=0.0)
    assert rendered and "<|im_start|>user\nName one colour of the sky.<|im_end|>" in rendered[-1]
    assert rendered[-1].endswith("<|im_start|>assistant\n")
    assert isinstance(answer, str) and answer.strip() and answer.replace("\n", " ").isprintable(), repr(answer)
    assert "<|im_" not in answer  # the end-of-turn marker is cut, not shown
    text = generate(model, tok, template, "Say hello.", max_new_tokens=8)
    assert isinstance(text, str) and text.strip() and text.replace("\n", " ").isprintable(), repr(text)
