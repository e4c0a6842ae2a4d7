"""Layer-wise offload on an emulated card: at most K decoder layers on the card, exact gradients, and the whole
model never placed there (forward and backward, with and without gradient checkpointing, full and LoRA, with and
without the side-stream prefetch that a CUDA card runs, here through the emulated card's transfer seam)."""
from __future__ import annotations

import copy

import pytest
import torch

from studio.engine.offload import LayerwiseOffloader
from studio.models.loading import decoder_layers
from tests.emulated_card import EmulatedCard, OffCardCompute

LAYERS = 4


def _tiny(seed: int = 0, lora: bool = False) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=LAYERS,
                      num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False,
                      max_position_embeddings=64)
    model = LlamaForCausalLM(cfg)
    if lora:
        from peft import LoraConfig, get_peft_model
        # random B (not zeros), so the adapters' gradients are not trivially zero
        model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear",
                                                 init_lora_weights=False, task_type="CAUSAL_LM"))
    return model


def _batches(n: int = 2, rows: int = 3, length: int = 12) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 64, (rows, length), generator=g) for _ in range(n)]


def _train_pass(model: torch.nn.Module, batches: list[torch.Tensor], device: torch.device | str = "cpu") -> float:
    model.train()
    total = 0.0
    for ids in batches:
        ids = ids.to(device)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        total += float(loss)
    return total


def _nbytes(params) -> int:
    return sum(p.numel() * p.element_size() for p in params)


def _grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}


@pytest.mark.parametrize("prefetch", [False, True], ids=["sync", "prefetch"])
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
@pytest.mark.parametrize("checkpointing", [True, False], ids=["ckpt", "no-ckpt"])
def test_offloaded_forward_backward_is_exact_and_keeps_k_layers(checkpointing, lora, prefetch):
    model = _tiny(lora=lora)
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    reference = copy.deepcopy(model)
    ref_loss = _train_pass(reference, _batches())
    ref_grads = _grads(reference)

    total = _nbytes(model.parameters()) + _nbytes(model.buffers())  # buffers: rotary inv_freq
    layers = decoder_layers(model)
    per_layer = _nbytes(layers[0].parameters())
    with EmulatedCard() as card:
        transfers = card.transfers() if prefetch else None
        offloader = LayerwiseOffloader(model, card.device, transfers=transfers)
        k = getattr(offloader, "max_resident", 1)
        assert k == (2 if prefetch else 1)
        card.watch(model, layers)
        outside = card.resident_bytes
        assert outside == total - LAYERS * per_layer  # embeddings, final norm and head live on the card
        loss = _train_pass(model, _batches(), card.device)
        assert card.checks > 0
        if prefetch:  # the side-stream path ran: copies in flight, each waited for before its layer computed
            assert card.prefetched >= 2 * (LAYERS - 1) and transfers.waits >= card.prefetched - 2
        # each layer visits once in forward and at most once in backward (a recompute prefetching i+1 would not)
        assert offloader.moves_in <= 2 * LAYERS * len(_batches()), offloader.moves_in
        # at no moment, forward or backward (recompute included), were more than K layers on the card
        assert card.max_layers_resident <= k
        batch = max(_nbytes([ids]) for ids in _batches())  # the input ids visit the card too
        assert card.peak_bytes <= outside + k * per_layer + batch < total
        # after backward every layer is home (host RAM) with its gradient, where the optimizer steps it
        assert card.layers_resident() == 0
        for layer in layers:
            for p in layer.parameters():
                assert not card.is_resident(p) and p.numel() > 0
                assert p.grad is None or not card.is_resident(p.grad)
        assert loss == pytest.approx(ref_loss, abs=1e-5)
        grads = _grads(model)
        assert grads.keys() == ref_grads.keys()
        for name, g in grads.items():
            torch.testing.assert_close(g.to("cpu"), ref_grads[name], atol=1e-5, rtol=0, msg=lambda m: f"{name}: {m}")

        # the optimizer step runs where the offloaded parameters' states live: host RAM
        # (SGD with momentum: its update is linear in the gradient, so float noise is not amplified as Adam's
        # first step g/|g| would amplify it for near-zero gradients)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5, momentum=0.9)
        ref_opt = torch.optim.SGD([p for p in reference.parameters() if p.requires_grad], lr=0.5, momentum=0.9)
        opt.step()
        ref_opt.step()
        for layer in layers:
            for p in layer.parameters():
                if p.requires_grad:
                    assert not card.is_resident(opt.state[p]["momentum_buffer"])
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(p.detach().to("cpu"), q.detach(), atol=1e-5, rtol=0, msg=lambda m: f"{name}: {m}")
        offloader.remove()


def test_emulated_card_catches_weights_left_in_host_ram():
    """The harness can fail: a layer computed with host weights is refused, and resident bytes are counted."""
    model = _tiny()
    with EmulatedCard() as card:
        card.watch(model, decoder_layers(model))
        assert card.resident_bytes == 0
        model.to(card.device)
        assert card.layers_resident() == LAYERS
        assert card.resident_bytes == _nbytes(model.parameters()) + _nbytes(model.buffers())
        model.model.layers[1].to("cpu")
        with pytest.raises(OffCardCompute, match=r"^model.layers.1.input_layernorm ran its forward with weight in host RAM"):
            model(input_ids=_batches(1)[0])


def test_trainer_never_places_the_whole_model_on_the_card(tmp_path, monkeypatch):
    """Trainer (and accelerate) decide placement from hf_device_map: the offloaded model must stay where it is."""
    from transformers import TrainingArguments

    from studio.engine.batching import pad_collator
    from studio.engine.studio_trainer import StudioTrainer
    from tests.wordtok import id_tokenizer
    model = _tiny()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    rows = [r.tolist() for b in _batches(4) for r in b]
    data = [{"input_ids": r, "labels": r, "attention_mask": [1] * len(r)} for r in rows]
    total = _nbytes(model.parameters()) + _nbytes(model.buffers())
    layers = decoder_layers(model)
    with EmulatedCard() as card:
        _train_on_the_card(monkeypatch, card)
        offloader = LayerwiseOffloader(model, card.device)
        card.watch(model, layers)
        args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=3, max_steps=3, use_cpu=True,
                                 report_to=[], save_strategy="no", disable_tqdm=True, learning_rate=1e-2,
                                 logging_steps=1, lr_scheduler_type="constant")
        trainer = StudioTrainer(model=model, args=args, train_dataset=data,
                                data_collator=pad_collator(id_tokenizer(64)))
        budget = total - 2 * _nbytes(layers[0].parameters())  # at most 2 of the 4 layers may be there
        assert card.peak_bytes < budget, f"Trainer placed {card.peak_bytes} of {total} bytes on the card"
        trainer.train()
        assert card.peak_bytes < budget
        assert card.max_layers_resident <= getattr(offloader, "max_resident", 1)
        losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses)))
        assert not any(card.is_resident(p) for layer in layers for p in layer.parameters())


def _train_on_the_card(monkeypatch, card: EmulatedCard) -> None:
    """Make Trainer's and accelerate's placement steps target the emulated card (the rest of the loop stays on
    the CPU): Trainer._move_model_to_device gets the card as its device, and accelerate's prepare_model runs with
    the card as Accelerator.device. Both keep their own logic for deciding whether to move the model."""
    from accelerate import Accelerator
    from transformers import Trainer
    move, prepare, real_device = Trainer._move_model_to_device, Accelerator.prepare_model, Accelerator.device
    monkeypatch.setattr(Trainer, "_move_model_to_device", lambda self, model, device: move(self, model, card.device))

    def prepare_on_card(self, model, *args, **kwargs):
        monkeypatch.setattr(Accelerator, "device", property(lambda _: card.device))
        try:
            return prepare(self, model, *args, **kwargs)
        finally:
            monkeypatch.setattr(Accelerator, "device", real_device)
    monkeypatch.setattr(Accelerator, "prepare_model", prepare_on_card)


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_gradients_go_home_pinned_and_batched_per_layer_then_a_fused_adamw_steps_on_the_host(lora):
    """A layer's gradients go home through the transfer seam a card runs: into pinned host
    buffers (asynchronous DMA), with one wait per layer rather than a synchronous copy per parameter; the buffers
    are reused step after step; with gradient accumulation the second micro-batch adds into the first exactly.
    Then torch's fused AdamW (what the engine picks under layer-wise offload) steps the host parameters."""
    model = _tiny(lora=lora)
    reference = copy.deepcopy(model)
    batches = _batches(n=2)
    _train_pass(reference, batches)  # two micro-batches accumulate into one gradient
    ref_grads = _grads(reference)
    layers = decoder_layers(model)
    trainable_per_layer = sum(1 for p in layers[0].parameters() if p.requires_grad)
    with EmulatedCard() as card:
        transfers = card.transfers()
        offloader = LayerwiseOffloader(model, card.device, transfers=transfers)
        card.watch(model, layers)
        _train_pass(model, batches, card.device)
        # every card -> host gradient copy landed in pinned memory, one wait per layer visit that had gradients
        assert transfers.copies_home == 2 * LAYERS * trainable_per_layer, transfers.copies_home
        assert transfers.unpinned_copies == 0
        assert transfers.home_waits == 2 * LAYERS, transfers.home_waits  # not one per parameter
        for name, g in _grads(model).items():
            torch.testing.assert_close(g, ref_grads[name], atol=1e-5, rtol=0, msg=lambda m: f"{name}: {m}")
        for layer in layers:
            for p in layer.parameters():
                if p.requires_grad:
                    assert p.grad.untyped_storage().data_ptr() in transfers.pinned

        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3, fused=True)
        ref_opt = torch.optim.AdamW([p for p in reference.parameters() if p.requires_grad], lr=1e-3)
        opt.step()
        ref_opt.step()
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(p.detach().to("cpu"), q.detach(), atol=1e-4, rtol=0,
                                       msg=lambda m: f"{name}: {m}")
        opt.zero_grad(set_to_none=True)
        pinned_after_first_step = transfers.pinned_bytes
        _train_pass(model, batches, card.device)
        assert transfers.pinned_bytes == pinned_after_first_step  # buffers reused, not pinned again each step
        offloader.remove()


def test_layerwise_offload_steps_with_the_fused_adamw():
    """Torch's AdamW falls back to its per-tensor Python loop when parameters live on two devices unless asked
    for the fused kernel, which groups by device (CPU and CUDA kernels both exist in torch 2.13)."""
    from studio.config.run_config import Draft
    from studio.engine.arguments import _optimizer
    cfg = Draft(layerwise_offload=True, optim="adamw_torch")
    assert _optimizer(cfg, None) == "adamw_torch_fused"
    assert _optimizer(Draft(layerwise_offload=True, optim="adamw_8bit"), None) == "adamw_8bit"
