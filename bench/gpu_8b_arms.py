"""The arms of bench/gpu_8b.py, each run in a fresh child process on a card (in this process on the CPU dry run).

* ``folder``: the random-weight model folders (drawn on the card, so the parent never touches CUDA memory).
* ``warm``: both 8B arms for a few steps on a one-layer model of the 8B widths, so Triton's disk cache holds
  Liger's kernels before either timed arm starts.
* ``studio``: ``studio.engine.run_training``, the whole engine (its kernels, batching and precision plans).
* ``savvy``: Trainer + peft + SDPA + checkpointing + Liger (``use_liger_kernel``) where liger-kernel imports, else
  transformers' ``logits_to_keep`` mask; it trains the studio arm's batches (the same rows in every step, in the
  same order), so the ratio compares steps, not batch choices.
* ``layerwise``: the 70B-shape QLoRA through the studio's engine, its base built layer by layer in place of the
  load (no 70B checkpoint fits the lent machine's disk or time).
* ``zero3``: a full fine-tune under DeepSpeed ZeRO-3 with CPU offload through the engine.
Every arm reports bench/gpu_probe.py's counts: real tokens and rows counted in the training step, seconds from the
end of the warm-up steps.
"""
from __future__ import annotations

import importlib.util
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

SHAPES = {
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=8192),
    "70b": dict(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
                num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=8192),
    "3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
               num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=8192,
               tie_word_embeddings=True),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512, rope_theta=10000.0, max_position_embeddings=512),
}
# the studio's own architecture cards for the estimate beside each measured peak
ESTIMATOR_MODEL = {"8b": "meta-llama/Meta-Llama-3-8B-Instruct", "70b": "meta-llama/Meta-Llama-3-70B-Instruct",
                   "3b": "meta-llama/Llama-3.2-3B-Instruct"}
SPECIAL = ("<pad>", "<s>", "</s>", "<unk>")   # ids 0-3; words t4 ... t<vocab-1>


def cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def peak_gib() -> float | None:
    import torch
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def llama_config(shape: str, layers: int | None = None) -> Any:
    from transformers import LlamaConfig
    dims = {**SHAPES[shape], **({"num_hidden_layers": layers} if layers else {})}
    dims.setdefault("tie_word_embeddings", False)
    return LlamaConfig(**dims, bos_token_id=1, eos_token_id=2, pad_token_id=0)


def word_tokenizer(vocab_size: int) -> Any:
    """One token per word t<id> (whitespace split): rows keep the lengths they were drawn with. Template words the
    vocabulary lacks become <unk> (id 3), never <pad>, so a real token is never mistaken for padding."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {**{s: i for i, s in enumerate(SPECIAL)}, **{f"t{i}": i for i in range(len(SPECIAL), vocab_size)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def folder_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """Each of ``spec["folders"]`` ({path, shape, layers, weights}): config + tokenizer, and random 16-bit weights
    drawn on the card (fp32 on the CPU) where ``weights``. A child on a card: its CUDA memory ends with it."""
    import torch
    from transformers import AutoModelForCausalLM
    t0 = time.perf_counter()
    device = "cuda" if cuda() else "cpu"
    for f in spec["folders"]:
        cfg = llama_config(f["shape"], f.get("layers"))
        dest = Path(f["path"])
        word_tokenizer(cfg.vocab_size).save_pretrained(dest)
        if not f.get("weights"):
            cfg.save_pretrained(dest)
            continue
        torch.manual_seed(0)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16 if device == "cuda" else torch.float32)
        model.save_pretrained(dest)
        del model
    return {"build_s": time.perf_counter() - t0}


def _studio_config(spec: dict[str, Any], **over: Any) -> Any:
    from studio.config.run_config import RunConfig
    fields = dict(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                  finetuning_type="lora", lora_rank=16, lora_alpha=32, lora_target="all",
                  quantization_bit=spec.get("quant"), cutoff_len=spec["cutoff"], template="studio",
                  per_device_train_batch_size=spec["batch"], max_steps=spec["steps"], val_size=0, seed=0,
                  gradient_checkpointing=True, save_steps=10**6, logging_steps=spec["steps"], plot_loss=False,
                  learning_rate=1e-4)
    return RunConfig(**{**fields, **over})


def _estimate(cfg: Any, shape: str | None) -> float | None:
    """The studio's estimate of this plan's card peak on the real architecture of ``shape`` (GB = GiB)."""
    if shape not in ESTIMATOR_MODEL:
        return None
    from studio.memory.estimator import estimate
    return estimate(cfg.replace(model_name_or_path=ESTIMATOR_MODEL[shape])).gpu_gb


def _engine_run(cfg: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """run_training with the probe on the engine's trainer; the probe's counts, the engine's own token count."""
    from bench.gpu_probe import StepProbe, probing
    from studio.engine import run_training
    from studio.engine.studio_trainer import StudioTrainer
    probe = StepProbe(spec["warmup"])
    t0 = time.perf_counter()
    with probing(StudioTrainer, probe):
        summary = run_training(cfg)
    return {**probe.result(), "wall_s": time.perf_counter() - t0, "engine_tokens": summary["train_tokens"],
            "steps": summary["step"], "peak_gib": peak_gib(), "estimate_gib": _estimate(cfg, spec.get("shape"))}


def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    return _engine_run(_studio_config(spec), spec)


def liger_usable() -> bool:
    return cuda() and importlib.util.find_spec("liger_kernel") is not None


def savvy_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """What a knowledgeable user writes with the same libraries; trains ``spec["batches"]`` (feature indices per
    step, the studio arm's) when given, else Trainer's own length-grouped batches."""
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from torch.utils.data import DataLoader
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments
    from bench.gpu_probe import StepProbe
    from bench.common import plain_pad_collate
    from bench.real_throughput import savvy_collate
    on_card, liger = cuda(), liger_usable()
    t0 = time.perf_counter()
    compute = torch.bfloat16 if on_card else torch.float32
    kw: dict[str, Any] = {"dtype": compute, "attn_implementation": "sdpa"}
    if spec.get("quant"):
        kw["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                       bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=compute)
        kw["device_map"] = {"": 0 if on_card else "cpu"}
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], **kw)
    if spec.get("quant"):
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True,
                                                gradient_checkpointing_kwargs={"use_reentrant": False})
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))
    feats = [json.loads(x) for x in Path(spec["features"]).read_text(encoding="utf-8").splitlines() if x]
    pad = model.config.pad_token_id or 0
    # Liger's fused loss needs the labels; without it, logits only where an answer token is predicted
    collate = plain_pad_collate(pad) if liger else savvy_collate(pad)
    batches = spec.get("batches")

    class Replay(Trainer):
        def get_train_dataloader(self) -> Any:
            if not batches:
                return super().get_train_dataloader()
            loader = DataLoader(self.train_dataset, batch_sampler=batches, collate_fn=self.data_collator,
                                num_workers=self.args.dataloader_num_workers,
                                pin_memory=self.args.dataloader_pin_memory and on_card)
            return self.accelerator.prepare(loader)

    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             max_steps=spec["steps"], learning_rate=1e-4, bf16=on_card, use_cpu=not on_card, seed=0,
                             gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": False},
                             train_sampling_strategy="group_by_length", use_liger_kernel=liger, report_to=[],
                             save_strategy="no", logging_steps=spec["steps"], disable_tqdm=True,
                             remove_unused_columns=False, dataloader_num_workers=2 if on_card else 0)
    trainer = Replay(model=model, args=args, train_dataset=feats, data_collator=collate)
    probe = StepProbe(spec["warmup"])
    probe.attach(trainer)
    trainer.train()
    return {**probe.result(), "wall_s": time.perf_counter() - t0, "steps": trainer.state.global_step,
            "peak_gib": peak_gib(), "liger": liger, "replayed": bool(batches)}


@contextmanager
def layerwise_base(shape: str) -> Iterator[None]:
    """The engine's ``loading.load_base`` returns the layer-by-layer QLoRA base of ``shape`` (bench/gpu_layerwise.py)
    and the folder's tokenizer; everything after the load is the engine's own."""
    import torch
    from bench.gpu_layerwise import build_layerwise_qlora
    from studio.models import loading
    real = loading.load_base

    def load_base(cfg: Any, device: str = "cpu", *_rest: Any, **_kw: Any) -> tuple[Any, Any]:
        # the engine passes more (plan, progress) as it grows; the stand-in needs only these two
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        model = build_layerwise_qlora(llama_config(shape), device, dtype)
        return model, loading.load_tokenizer(cfg.model_name_or_path)

    loading.load_base = load_base
    try:
        yield
    finally:
        loading.load_base = real


def layerwise_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec["build"]``: the shape built (tiny on the dry run); ``spec["shape"]``: the one the estimate is for."""
    with layerwise_base(spec["build"]):
        return _engine_run(_studio_config(spec, quantization_bit=4), spec)


@contextmanager
def no_op_builds() -> Iterator[None]:
    """The CPU fallback only: DeepSpeed compiles its shared-memory all-reduce for the CPU accelerator on first use
    (minutes in a fresh environment), which a CPU check of this script is not about; a card builds none of it."""
    ds_torch = importlib.import_module("deepspeed.comm.torch")   # ``import a.b.torch as x`` binds torch itself
    real = ds_torch.build_shm_op
    ds_torch.build_shm_op = lambda: None
    try:
        yield
    finally:
        ds_torch.build_shm_op = real


def zero3_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """A full fine-tune under ZeRO-3 with CPU offload (``spec["deepspeed"]``: the preset, or on the CPU dry run the
    preset plus torch's AdamW on the host, so no CPU-Adam op is compiled)."""
    cfg = _studio_config(spec, finetuning_type="full", deepspeed=spec["deepspeed"], optim="adamw_torch",
                         learning_rate=1e-5, gradient_checkpointing=True)
    if cuda():
        return _engine_run(cfg, spec)
    with no_op_builds():
        return _engine_run(cfg, spec)


def warm_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """Both 8B arms a few steps on the one-layer model: Liger's Triton kernels compiled into the disk cache."""
    t0 = time.perf_counter()
    studio_arm({**spec, "out": spec["out"] + "-studio"})
    savvy_arm({**spec, "out": spec["out"] + "-savvy", "batches": None})
    return {"warm_s": time.perf_counter() - t0, "liger": liger_usable()}


ARMS = {"folder": folder_arm, "warm": warm_arm, "studio": studio_arm, "savvy": savvy_arm, "layerwise": layerwise_arm,
        "zero3": zero3_arm}
