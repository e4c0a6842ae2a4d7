"""The estimator counts what the model itself holds: its skeleton built on the meta device.

Each architecture's config is built here at a small size (the code path is what matters; full-size configs cost
no memory on meta either), written as a model folder's config.json, and counted twice: by the estimator's card and,
independently, by accelerate's ``init_empty_weights`` + ``calculate_maximum_sizes`` (what ``accelerate
estimate-memory`` reports as the weights column). The hand-written cards (models not on disk) are checked against
the meta count of the config they stand for.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from studio.memory.cards import available_cards, card_config, card_from_hf_config, load_card  # noqa: E402
from studio.memory.estimator import GB, estimate  # noqa: E402
from studio.memory.meta_count import count_dict  # noqa: E402
from tests.helpers import plan  # noqa: E402

SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=1000)
CONFIGS = {
    "llama": dict(model_type="llama", **SMALL),
    "qwen2": dict(model_type="qwen2", **SMALL, tie_word_embeddings=True),
    "qwen3_moe": dict(model_type="qwen3_moe", **SMALL, moe_intermediate_size=32, num_experts=8,
                      num_experts_per_tok=2, head_dim=32),
    "mixtral": dict(model_type="mixtral", **SMALL, num_local_experts=4, num_experts_per_tok=2),
    "gemma3_text": dict(model_type="gemma3_text", **{**SMALL, "num_hidden_layers": 6, "num_key_value_heads": 1},
                        head_dim=32),
    "gpt2": dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, vocab_size=1000, bos_token_id=0,
                 eos_token_id=0),
    "phi3": dict(model_type="phi3", **SMALL, pad_token_id=0),
}


def _accelerate_count(cfg: dict) -> tuple[int, int, int]:
    """(parameters, fp32 bytes, routed-expert parameters) of the model, counted the way accelerate does."""
    from accelerate import init_empty_weights
    from accelerate.utils import calculate_maximum_sizes
    from transformers import AutoConfig, AutoModelForCausalLM
    data = dict(cfg)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(data.pop("model_type"), **data))
    # init_empty_weights re-registers every parameter, which unties a tied head; `accelerate estimate-memory`
    # (create_empty_model) does not re-tie, so it counts Gemma's 262k-row head twice. The engine's model is tied.
    model.tie_weights()
    experts = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    return sum(p.numel() for p in model.parameters()), calculate_maximum_sizes(model)[0], experts


@pytest.mark.parametrize("arch", sorted(CONFIGS))
def test_estimator_counts_what_the_skeleton_holds(arch: str, tmp_path: Path) -> None:
    cfg = CONFIGS[arch]
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    card = load_card(str(tmp_path))
    n, fp32_bytes, expert_params = _accelerate_count(cfg)
    assert card.exact is not None and card.n_params == pytest.approx(n, rel=0.005)
    # the weights column of a full fp32 plan is accelerate's total size
    est = estimate(plan(str(tmp_path), finetuning_type="full", precision="fp32", cutoff_len=8), card=card)
    assert est.breakdown["weights"] * GB == pytest.approx(fp32_bytes, rel=0.005)
    if "experts_per_token" in str(cfg) or "num_experts_per_tok" in cfg:
        e, k = card.experts, card.experts_per_token
        assert (e, k) == (cfg.get("num_local_experts") or cfg["num_experts"], cfg["num_experts_per_tok"])
        # weights count every expert; FLOPs / activations count the experts a token is routed to
        assert card.active_params == pytest.approx(n - expert_params * (e - k) / e, rel=0.005)
        assert card.act_intermediate == k * (cfg.get("moe_intermediate_size") or cfg["intermediate_size"])


def test_the_old_llama_formula_missed_moe_and_gpt2() -> None:
    """Why the meta count exists: the block formula alone is far off for these."""
    for arch in ("mixtral", "qwen3_moe", "gpt2"):
        exact = count_dict(CONFIGS[arch]).total
        assert abs(card_from_hf_config(CONFIGS[arch]).n_params / exact - 1) > 0.05, arch


def test_attention_layout_comes_from_the_config() -> None:
    gemma = count_dict(CONFIGS["gemma3_text"])
    assert (gemma.kv_heads, gemma.head_dim, gemma.sliding_layers, gemma.layers) == (1, 32, 5, 6)   # 5 local : 1 global
    assert gemma.sliding_window and gemma.head == 0                                                  # tied head
    qwen_moe = count_dict(CONFIGS["qwen3_moe"])
    assert (qwen_moe.experts, qwen_moe.experts_per_token, qwen_moe.expert_intermediate) == (8, 2, 32)


def test_moe_activations_follow_the_routed_experts(tmp_path: Path) -> None:
    cards = []
    for k in (1, 4):
        folder = tmp_path / f"k{k}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({**CONFIGS["mixtral"], "num_experts_per_tok": k}))
        cards.append(load_card(str(folder)))
    one, four = (estimate(plan(c.name, finetuning_type="full", cutoff_len=256, precision="fp32"), card=c)
                 for c in cards)
    assert one.breakdown["weights"] == four.breakdown["weights"]
    assert four.breakdown["activations"] > 1.5 * one.breakdown["activations"]


@pytest.mark.parametrize("name", [n for n in available_cards() if n != "tiny-demo"])
def test_every_card_agrees_with_the_meta_count_of_its_config(name: str) -> None:
    """Full-size configs: the card's formula (used while the model is not on disk) against the skeleton."""
    card = load_card(name)
    facts = count_dict(card_config(card))
    assert card.n_params == pytest.approx(facts.total, rel=0.005)
    assert card.layer_linear_params * card.num_layers == pytest.approx(facts.layer_linear, rel=0.005)  # 4-bit part
    assert card.active_params == pytest.approx(facts.active, rel=0.005)
    exact = card.__class__(**{**card.__dict__, "exact": facts})
    lora = plan(name, finetuning_type="lora", lora_rank=8, cutoff_len=8)
    weights = estimate(lora).breakdown["weights"]
    assert estimate(lora, card=exact).breakdown["weights"] == pytest.approx(weights, rel=0.005)


def test_the_demo_card_agrees_with_the_model_the_studio_builds() -> None:
    from studio.models.loading import DEMO_DEFAULTS as d
    card = load_card("tiny-demo")
    facts = count_dict(dict(model_type="llama", hidden_size=d["hidden"], intermediate_size=d["intermediate"],
                            num_hidden_layers=d["layers"], num_attention_heads=d["heads"], vocab_size=d["vocab_size"],
                            tie_word_embeddings=True))
    assert card.n_params == pytest.approx(facts.total, rel=0.005)
