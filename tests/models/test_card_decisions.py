"""Decisions that only matter on a card, checked on a CPU.

No GPU here: the card's abilities are pretended (``DeviceCaps.detect`` patched to an emulated bf16 or fp16 card)
and ``from_pretrained`` is intercepted where a real load would need CUDA or bitsandbytes' card kernels, so what
is asserted is the *decision* (dtypes, device map), which is what goes wrong on a card.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from studio.config.run_config import Draft, RunConfig
from studio.models.precision import DeviceCaps, precision_plan

ROOT = Path(__file__).resolve().parents[2]
BF16_CARD = DeviceCaps(cuda=True, bf16=True)
FP16_CARD = DeviceCaps(cuda=True, bf16=False)


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory) -> Path:
    from studio.models.loading import build_tiny_llama, demo_texts
    from tests.conftest import make_review_rows
    return build_tiny_llama(tmp_path_factory.mktemp("cardbase") / "base", demo_texts(make_review_rows(60, seed=3)),
                            hidden=32, layers=1, heads=2, vocab_size=300)


def _pretend(monkeypatch, caps: DeviceCaps, cards: int = 1) -> None:
    """Pretend this machine has ``cards`` cards with ``caps``."""
    from studio.models import loading
    monkeypatch.setattr(DeviceCaps, "detect", classmethod(lambda cls: caps))
    monkeypatch.setattr(loading, "_card_count", lambda: cards if caps.cuda else 0)


def _intercept_load(monkeypatch) -> list[dict[str, Any]]:
    """Record from_pretrained's keyword arguments instead of loading (a 4-bit load on 'cuda' needs a card)."""
    import transformers
    seen: list[dict[str, Any]] = []

    def fake(path, **kwargs):
        seen.append(kwargs)
        return torch.nn.Linear(2, 2)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", staticmethod(fake))
    return seen


# ------------------------------------------------------------------ QLoRA compute dtype
@pytest.mark.parametrize("caps, want", [(BF16_CARD, torch.bfloat16), (FP16_CARD, torch.float16)])
def test_qlora_computes_in_the_plans_dtype_on_the_card(monkeypatch, base_dir, caps, want) -> None:
    from studio.models.loading import load_base
    _pretend(monkeypatch, caps)
    seen = _intercept_load(monkeypatch)
    cfg = Draft(model_name_or_path=str(base_dir), finetuning_type="lora", quantization_bit=4)  # precision auto
    load_base(cfg, "cuda")
    q = seen[-1]["quantization_config"]
    assert q.bnb_4bit_compute_dtype == want            # was fp16 on a bf16 card
    assert seen[-1]["dtype"] == want                   # the frozen base and autocast agree with it
    assert precision_plan(caps, cfg).autocast == {torch.bfloat16: "bf16", torch.float16: "fp16"}[want]


# ------------------------------------------------------------------ one card per rank
@pytest.mark.parametrize("local_rank, want", [(None, 0), ("0", 0), ("1", 1), ("3", 3)])
def test_quantized_model_goes_onto_the_card_of_its_local_rank(monkeypatch, base_dir, local_rank, want) -> None:
    from studio.models import loading
    _pretend(monkeypatch, BF16_CARD, cards=4)
    seen = _intercept_load(monkeypatch)
    if local_rank is None:
        monkeypatch.delenv("LOCAL_RANK", raising=False)
    else:
        monkeypatch.setenv("LOCAL_RANK", local_rank)
        monkeypatch.setenv("RANK", str(int(local_rank) + 8))   # global rank on a second node: not the card index
    loading.load_base(Draft(model_name_or_path=str(base_dir), finetuning_type="lora", quantization_bit=4), "cuda")
    assert seen[-1]["device_map"] == {"": want}
    monkeypatch.setenv("LOCAL_RANK", "2")
    loading.load_base(Draft(model_name_or_path=str(base_dir), finetuning_type="lora", quantization_bit=4), "cpu")
    assert seen[-1]["device_map"] == {"": "cpu"}      # a CPU run has no card index


def test_more_ranks_than_cards_is_a_plain_error(monkeypatch, base_dir) -> None:
    from studio.errors import StudioError
    from studio.models import loading
    _pretend(monkeypatch, BF16_CARD, cards=2)
    _intercept_load(monkeypatch)
    monkeypatch.setenv("LOCAL_RANK", "2")
    with pytest.raises(StudioError, match="nproc"):
        loading.load_base(Draft(model_name_or_path=str(base_dir), finetuning_type="lora", quantization_bit=4),
                          "cuda")


def test_qlora_with_zero2_on_several_processes_is_valid_and_zero3_is_refused() -> None:
    """ZeRO-2 leaves the 4-bit base whole on every rank (only the LoRA states are partitioned): it works once
    each rank loads onto its own card. ZeRO-3 would shard the 4-bit weights, which needs bnb_4bit_quant_storage
    set to the compute dtype; the studio does not set it, so it refuses that combination."""
    ok = Draft(finetuning_type="lora", quantization_bit=4, deepspeed="z2", nproc=2).validate()
    assert not [p for p in ok if "quantization" in p or "nproc" in p], ok
    z3 = Draft(finetuning_type="lora", quantization_bit=4, deepspeed="z3", nproc=2).validate()
    assert any("ZeRO-3" in p and "bnb_4bit_quant_storage" in p for p in z3), z3


# ------------------------------------------------------------------ one precision decision
_CAPS_BUILDERS = re.compile(r"\bDeviceCaps\s*\(|\bDeviceCaps\s*\.\s*detect\b|\.resolved_precision\s*\(")


def _caps_builders(path: Path) -> list[str]:
    """Calls that build device capabilities or re-resolve precision in one source file."""
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            text = ast.unparse(node.func)
            if text.split(".")[-1] == "DeviceCaps" or text.endswith("DeviceCaps.detect") or \
                    text.endswith(".resolved_precision"):
                found.append(f"{name}:{node.lineno}: {text}(...)")
        elif isinstance(node, ast.Attribute) and node.attr == "detect" and \
                ast.unparse(node.value).split(".")[-1] == "DeviceCaps":
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")   # passed on, not called
    return found


def test_only_precision_py_builds_device_capabilities() -> None:
    """studio/models/precision.py is the one place that knows what a card can do and what that means for dtypes
    (device_caps + precision_plan); everything else is handed the plan. The regex catches what ast misses
    (a call inside a string passed to exec, or code in a comment a reader would copy)."""
    allowed = {ROOT / "studio" / "models" / "precision.py", ROOT / "studio" / "config" / "run_config.py"}
    sources = [p for folder in ("studio", "bench") for p in (ROOT / folder).rglob("*.py")] + [ROOT / "launch.py"]
    bad = [hit for p in sources if p.is_file() and p not in allowed for hit in _caps_builders(p)]
    bad += [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sources if p.is_file() and p not in allowed
            for m in _CAPS_BUILDERS.finditer(p.read_text(encoding="utf-8"))
            if not any(str(p.relative_to(ROOT)) in b for b in bad)]
    assert bad == []


def test_the_guard_sees_each_way_of_building_caps(tmp_path) -> None:
    for line in ("caps = DeviceCaps(cuda=True)", "caps = precision.DeviceCaps.detect()",
                 "f = DeviceCaps.detect", "p = cfg.resolved_precision('cuda')"):
        src = tmp_path / "m.py"
        src.write_text(line + "\n", encoding="utf-8")
        assert _caps_builders(src) and _CAPS_BUILDERS.search(line), line
    (tmp_path / "m.py").write_text("plan = precision_plan(device_caps('cuda'), cfg)\n", encoding="utf-8")
    assert not _caps_builders(tmp_path / "m.py")


def test_the_plan_is_made_once_per_run(monkeypatch, tmp_path, base_dir, sample_reviews_jsonl) -> None:
    """Model load, the freeze upcast, TrainingArguments' autocast and status.json all take the one plan."""
    from studio.engine import run_training
    from studio.models import precision
    calls: list[str] = []
    real = precision.precision_plan

    def counting(caps, cfg):
        calls.append(cfg.finetuning_type)
        return real(caps, cfg)

    monkeypatch.setattr(precision, "precision_plan", counting)
    cfg = RunConfig(model_name_or_path=str(base_dir), dataset=str(sample_reviews_jsonl),
                    output_dir=str(tmp_path / "run"), finetuning_type="freeze", freeze_trainable_layers=1,
                    cutoff_len=32, per_device_train_batch_size=4, max_steps=1, logging_steps=1, save_steps=100,
                    plot_loss=False, val_size=0)
    assert run_training(cfg)["state"] == "finished"
    assert calls == ["freeze"]


def test_the_estimator_takes_the_plan() -> None:
    from studio.memory.estimator import estimate
    cfg = Draft(model_name_or_path="llama2-7b", finetuning_type="full", gradient_checkpointing=True,
                    cutoff_len=1024, per_device_train_batch_size=1)
    fp32_plan = precision_plan(BF16_CARD, cfg.replace(precision="fp32"))
    assert estimate(cfg, precision_plan=fp32_plan).plan["precision"] == "fp32"
    assert estimate(cfg).plan["precision"] == precision_plan(BF16_CARD, cfg).estimator_precision == "bf16"
    pure = cfg.replace(pure_bf16=True)
    assert estimate(pure).plan["precision"] == "pure_bf16"
    assert estimate(pure, device="cpu").plan["precision"] == "fp32"   # as the engine trains it there


def test_architecture_doc_names_the_one_place() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert re.search(r"studio/models/precision\.py`?[^\n]*one place", doc), "docs/ARCHITECTURE.md"


# ------------------------------------------------------------------ inference dtype
def _full_run(tmp_path: Path, base_dir: Path, **cfg_kw: Any) -> Path:
    """A finished full-fine-tuning run folder: config.yaml + model/ (the weights are the base's)."""
    import shutil
    from studio.runs.run_dir import RunDir
    run = RunDir(tmp_path / "run")
    run.path.mkdir(parents=True)
    shutil.copytree(base_dir, run.model)
    RunConfig(model_name_or_path=str(base_dir), dataset="d.jsonl", finetuning_type="full", output_dir=str(run.path),
              **cfg_kw
              ).save(run.config)
    return run.path


@pytest.mark.parametrize("caps, cfg_kw, device, want", [
    (BF16_CARD, {}, "cuda", torch.bfloat16),                        # auto on a bf16 card: the run's bf16
    (FP16_CARD, {}, "cuda", torch.float16),                         # auto on an fp16 card: fp16, as it trained
    (BF16_CARD, {"precision": "fp32"}, "cuda", torch.float32),      # trained in fp32: kept
    (BF16_CARD, {"pure_bf16": True}, "cuda", torch.bfloat16),
    (BF16_CARD, {}, "cpu", torch.float32),                          # a CPU serves fp32
    (DeviceCaps(cuda=False, bf16=True), {"precision": "bf16"}, "cpu", torch.float32),
])
def test_a_full_run_is_served_in_the_dtype_it_trained_with(monkeypatch, tmp_path, base_dir, caps, cfg_kw, device,
                                                           want) -> None:
    from studio.models.loading import load_for_inference
    _pretend(monkeypatch, caps)
    model, _, cfg = load_for_inference(_full_run(tmp_path, base_dir, **cfg_kw), device=device)
    assert cfg is not None and {p.dtype for p in model.parameters()} == {want}


@pytest.mark.parametrize("caps, want", [(BF16_CARD, torch.bfloat16), (FP16_CARD, torch.float32)])
def test_a_plain_model_folder_is_served_in_bf16_where_the_card_has_it(monkeypatch, base_dir, caps, want) -> None:
    """No run config to say how it trained: bf16 where the card has it; fp16 could overflow a bf16-trained model."""
    from studio.models.loading import load_for_inference
    _pretend(monkeypatch, caps)
    model, _, cfg = load_for_inference(base_dir, device="cuda")
    assert cfg is None and {p.dtype for p in model.parameters()} == {want}
    model, _, _ = load_for_inference(base_dir, device="cpu")
    assert {p.dtype for p in model.parameters()} == {torch.float32}


# ------------------------------------------------------------------ the fused loss's GEMMs under autocast
_MATMULS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"}


def _matmul_dtypes(fn) -> list[tuple[str, tuple]]:
    """(op, input dtypes) of every matrix multiply ``fn`` runs, as the kernels see them (after autocast's casts)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[str, tuple]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__.rstrip("_")
            if name in _MATMULS:
                self.seen.append((func.overloadpacket.__name__,
                                  tuple(a.dtype for a in args if isinstance(a, torch.Tensor))))
            return func(*args, **(kwargs or {}))

    with Record() as rec:
        fn()
    return rec.seen


def test_fused_loss_runs_every_matmul_in_the_autocast_dtype() -> None:
    """On a card an fp32 GEMM has no tensor cores: the head's weight gradient (V x H x tokens) must run in bf16
    like the logits and the hidden-state gradient, and still accumulate over chunks in fp32."""
    from studio.engine.loss import linear_cross_entropy_sum
    torch.manual_seed(0)
    head = torch.nn.Linear(16, 50, bias=False)           # fp32 master weight, as mixed precision keeps it
    hidden = torch.randn(24, 16, requires_grad=True)
    targets = torch.randint(0, 50, (24,))

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = linear_cross_entropy_sum(hidden, head, targets, chunk_rows=8)
        loss.backward()

    seen = _matmul_dtypes(step)
    assert len(seen) >= 3 * 3, seen                     # logits, grad_h, grad_w for each of 3 chunks
    assert all(dtypes and set(dtypes) == {torch.bfloat16} for _, dtypes in seen), seen
    assert head.weight.grad.dtype == torch.float32 and hidden.grad.dtype == torch.float32
    # fp32 accumulation of bf16 products: close to the fp32 gradient, to bf16's precision
    ref_w = head.weight.detach().clone().requires_grad_(True)
    ref_h = hidden.detach().clone().requires_grad_(True)
    torch.nn.functional.cross_entropy(ref_h @ ref_w.t(), targets, reduction="sum").backward()
    assert torch.allclose(head.weight.grad, ref_w.grad, atol=3e-2, rtol=3e-2)


def test_fused_loss_under_pure_bf16_keeps_its_matmuls_in_bf16() -> None:
    """pure_bf16 (no autocast, bf16 weights): the weight-gradient GEMM is bf16 too, not an upcast fp32 one."""
    from studio.engine.loss import linear_cross_entropy_sum
    torch.manual_seed(0)
    head = torch.nn.Linear(16, 50, bias=False).to(torch.bfloat16)
    hidden = torch.randn(24, 16, dtype=torch.bfloat16, requires_grad=True)
    targets = torch.randint(0, 50, (24,))
    seen = _matmul_dtypes(lambda: linear_cross_entropy_sum(hidden, head, targets, chunk_rows=8).backward())
    assert len(seen) >= 9 and all(set(d) == {torch.bfloat16} for _, d in seen), seen
    assert head.weight.grad.dtype == torch.bfloat16


def test_the_config_layer_never_asks_the_card_itself() -> None:
    """RunConfig.resolved_precision must not ask torch for bf16 support when given no device: the card is asked in
    studio/models/precision.py device_caps only, and the config layer imports no torch."""
    src = (Path(__file__).resolve().parents[2] / "studio" / "config" / "run_config.py").read_text(encoding="utf-8")
    assert "import torch" not in src and "is_bf16_supported" not in src
    with pytest.raises(TypeError):
        Draft().resolved_precision()  # type: ignore[call-arg]
