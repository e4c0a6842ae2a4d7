"""Logits only where the loss is: same loss and gradients as the model's full forward."""
from __future__ import annotations

import copy

import pytest
import torch

from studio.engine.loss import linear_cross_entropy_sum, reference_loss, selective_causal_lm_loss, split_causal_lm

TOL = 1e-5


def _llama(vocab: int = 97, tie: bool = False, seed: int = 0) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      tie_word_embeddings=tie, attn_implementation="sdpa")
    return LlamaForCausalLM(cfg).float()


def _batch(vocab: int = 97, seed: int = 1) -> dict[str, torch.Tensor]:
    """Two right-padded rows; the loss falls only on the last few (answer) tokens of each."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, vocab, (2, 12), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0
    labels = torch.full_like(ids, -100)
    labels[0, 8:12] = ids[0, 8:12]
    labels[1, 6:9] = ids[1, 6:9]
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def _grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad and p.grad is not None}


def _compare(model: torch.nn.Module, inputs: dict, num_items: int | None = None) -> None:
    ref_model = copy.deepcopy(model)
    ref = reference_loss(ref_model, inputs, num_items)
    ref.backward()
    mine = selective_causal_lm_loss(model, inputs, num_items)
    assert mine is not None
    mine.backward()
    assert abs(float(mine) - float(ref)) < TOL
    g_ref, g_mine = _grads(ref_model), _grads(model)
    assert g_ref.keys() == g_mine.keys() and g_ref
    for name in g_ref:
        assert torch.allclose(g_mine[name], g_ref[name], atol=TOL, rtol=1e-4), name


@pytest.mark.parametrize("tie", [False, True])
def test_full_finetune_loss_and_grads_equal_full_logits(tie: bool) -> None:
    _compare(_llama(tie=tie), _batch())


def test_num_items_in_batch_normalisation_matches() -> None:
    _compare(_llama(), _batch(), num_items=17)


def test_lora_with_gradient_checkpointing_matches() -> None:
    from peft import LoraConfig, get_peft_model
    model = _llama()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"))
    for n, p in model.named_parameters():  # non-zero B so the adapters' gradients are not trivially equal
        if "lora_B" in n:
            torch.nn.init.normal_(p, std=0.1)
    model.train()
    _compare(model, _batch())


def test_head_not_plain_linear_uses_chunked_checkpoint_path() -> None:
    """A LoRA-wrapped head (not nn.Linear) still gives the same loss and gradients, in chunks of 2 rows."""
    torch.manual_seed(0)
    h = torch.randn(7, 16, requires_grad=True)
    y = torch.randint(0, 50, (7,))
    head = torch.nn.Sequential(torch.nn.Linear(16, 50))
    ref = torch.nn.functional.cross_entropy(head(h), y, reduction="sum")
    gh_ref, gw_ref = torch.autograd.grad(ref, [h, head[0].weight])
    mine = linear_cross_entropy_sum(h, head, y, chunk_rows=2)
    gh, gw = torch.autograd.grad(mine, [h, head[0].weight])
    assert abs(float(mine) - float(ref)) < TOL
    assert torch.allclose(gh, gh_ref, atol=TOL) and torch.allclose(gw, gw_ref, atol=TOL)


@pytest.mark.parametrize("softcap", [None, 3.0])
def test_fused_chunks_equal_one_shot(softcap: float | None) -> None:
    torch.manual_seed(0)
    h = torch.randn(9, 16, requires_grad=True)
    head = torch.nn.Linear(16, 40, bias=True)
    y = torch.randint(0, 40, (9,))
    logits = head(h)
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    ref = torch.nn.functional.cross_entropy(logits, y, reduction="sum")
    refs = torch.autograd.grad(ref, [h, head.weight, head.bias])
    mine = linear_cross_entropy_sum(h, head, y, softcap=softcap, chunk_rows=4)
    mines = torch.autograd.grad(mine, [h, head.weight, head.bias])
    assert abs(float(mine) - float(ref)) < TOL
    for a, b in zip(mines, refs):
        assert torch.allclose(a, b, atol=TOL)


def test_model_with_logit_scale_is_not_split() -> None:
    model = _llama()
    model.config.logit_scale = 0.5
    assert split_causal_lm(model) is None


def test_estimator_knows_the_chunked_loss() -> None:
    """With selective_logits the estimate keeps one chunk of fp32 logits, not tokens x vocab (128k vocab here)."""
    from studio.config.run_config import Draft
    from studio.engine.loss import chunk_rows_for
    from studio.memory.estimator import estimate
    cfg = Draft(model_name_or_path="llama3-8b", finetuning_type="lora", cutoff_len=1024,
                    per_device_train_batch_size=1)
    lean, full = estimate(cfg), estimate(cfg.replace(selective_logits=False))
    vocab = 128256
    assert full.breakdown["logits"] == pytest.approx(12 * vocab * 1024 / 2**30, rel=1e-3)
    assert lean.breakdown["logits"] == pytest.approx(12 * vocab * chunk_rows_for(vocab) / 2**30, rel=1e-3)
    assert lean.gpu_gb < full.gpu_gb - 1.0


def _trainer(model: torch.nn.Module, tmp_path, notes: list) -> "object":
    from transformers import TrainingArguments
    from studio.engine.studio_trainer import StudioTrainer
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[], disable_tqdm=True)
    return StudioTrainer(model=model, args=args, train_dataset=[{"input_ids": [1]}], selective_logits=True,
                         notify=notes.append)


def test_trainer_keeps_selective_path_when_it_matches(tmp_path) -> None:
    model, notes = _llama(vocab=5000), []
    trainer = _trainer(model, tmp_path, notes)
    inputs = _batch(vocab=5000)
    loss = trainer.compute_loss(model, inputs)
    assert trainer.selective_logits and not notes
    assert abs(float(loss) - float(reference_loss(model, inputs))) < TOL


def test_trainer_falls_back_when_the_model_head_does_more(tmp_path) -> None:
    """A head that scales its logits inside forward (not in the config) is caught by the one-time check."""
    from transformers import LlamaForCausalLM

    class ScaledHead(LlamaForCausalLM):
        def forward(self, *args, labels=None, **kwargs):  # type: ignore[override]
            out = super().forward(*args, **kwargs)
            out.logits = out.logits * 2.0
            if labels is not None:
                out.loss = self.loss_function(out.logits, labels, self.config.vocab_size)
            return out

    base = _llama()
    model = ScaledHead(base.config)
    model.load_state_dict(base.state_dict())
    notes: list = []
    trainer = _trainer(model, tmp_path, notes)
    inputs = _batch()
    loss = trainer.compute_loss(model, inputs)
    assert not trainer.selective_logits and notes and "does not apply" in notes[0]
    assert abs(float(loss) - float(model(**inputs).loss)) < TOL
