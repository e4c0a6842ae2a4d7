"""8B and 70B shapes on one lent card: python bench/gpu_8b.py --json OUT.json [--dry-run]

Sections (each arm a fresh child process, so every CUDA peak is that arm's own):

* ``lora`` / ``qlora``: Llama-3.1-8B shape (hidden 4096, 32 layers, GQA 32/8, vocabulary 128,256), random bf16
  weights made on the card, rows of 512-2048 tokens with the answer half carrying loss, LoRA r 16 on every linear
  layer (QLoRA: the base in 4-bit NF4). Arms: ``studio`` (studio.engine.run_training: its kernel, batching and
  precision plans) and ``savvy``, the library-savvy script a knowledgeable user writes: Trainer + SDPA +
  gradient checkpointing + ``group_by_length`` + ``use_liger_kernel`` (its fused linear cross-entropy; where
  liger-kernel is missing the row says so and the savvy arm runs with transformers' loss). tokens/s (non-pad
  training tokens / wall seconds of ``Trainer.train``), the CUDA peak, and the studio estimator's prediction of
  the studio plan's peak beside it.
* ``qlora70b``: Llama-3-70B shape QLoRA 4-bit, built layer by layer on the card (each linear layer's random bf16
  weight is drawn on the card and quantized before the next is drawn, so neither host RAM nor card memory ever
  holds the bf16 model): fits or not, peak, tokens/s of a few steps.
* ``zero3``: an 8B full fine-tune with DeepSpeed ZeRO-3 CPU offload, when DeepSpeed imports and the estimator
  says this host's RAM holds the offloaded states; else one row saying why.

Token ids are random (the Llama-3 tokenizer is not carried to the card): the speed and memory are those of the
shape, the loss means nothing. ``--dry-run`` runs every section's code on the CPU with tiny shapes (< 2 minutes;
tests/bench/test_bench.py); its numbers mean nothing. No number from this script is quoted anywhere until it has run on
a card.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import run_as_child, run_child, table, write_jsonl  # noqa: E402

SHAPES = {
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=8192),
    "70b": dict(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
                num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=8192),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512, rope_theta=10000.0, max_position_embeddings=512),
}
ESTIMATOR_MODEL = {"8b": "meta-llama/Meta-Llama-3-8B-Instruct", "70b": "meta-llama/Meta-Llama-3-70B-Instruct"}


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def _peak_gib() -> float | None:
    import torch
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def _config(shape: str) -> Any:
    from transformers import LlamaConfig
    return LlamaConfig(**SHAPES[shape], bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)


def make_rows(n: int, lo: int, hi: int, vocab: int, seed: int = 0) -> list[dict[str, str]]:
    """Instruction rows of word tokens t<id> (one token each under the id tokenizer): half prompt, half answer."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        length = rng.randint(lo, hi)
        words = [f"t{rng.randrange(3, vocab)}" for _ in range(length)]
        rows.append({"instruction": " ".join(words[: length // 2]), "input": "", "output": " ".join(words[length // 2:])})
    return rows


def word_tokenizer(vocab_size: int) -> Any:
    """One token per word t<id> (whitespace split), <pad> 0, <s> 1, </s> 2: rows keep the lengths they were drawn
    with, whatever template text surrounds them (template words the vocabulary lacks become <pad>, id 0)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, **{f"t{i}": i for i in range(3, vocab_size)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   unk_token="<pad>")


def model_folder(shape: str, dest: Path) -> Path:
    """Random bf16 weights drawn on the card (fp32 on the CPU dry run) + an id tokenizer, saved for the engine."""
    import torch
    from transformers import AutoModelForCausalLM
    cfg = _config(shape)
    device = "cuda" if _cuda() else "cpu"
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16 if device == "cuda" else torch.float32)
    model.save_pretrained(dest)
    del model
    word_tokenizer(cfg.vocab_size).save_pretrained(dest)
    return dest


def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.memory.estimator import estimate
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="lora", lora_rank=16, lora_alpha=32, lora_target="all",
                    quantization_bit=spec.get("quant"), cutoff_len=spec["cutoff"], template="studio",
                    per_device_train_batch_size=spec["batch"], max_steps=spec["steps"], val_size=0,
                    save_steps=10**6, logging_steps=spec["steps"], plot_loss=False, learning_rate=1e-4)
    t0 = time.perf_counter()
    summary = run_training(cfg)
    wall = time.perf_counter() - t0
    est = None
    if spec.get("estimator_model"):
        est = estimate(cfg.replace(model_name_or_path=spec["estimator_model"])).gpu_gb
    return {"train_s": summary["train_seconds"], "wall_s": wall, "tokens": summary["train_tokens"],
            "steps": summary["step"], "peak_gib": _peak_gib(), "estimate_gib": est}


def savvy_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """Trainer + peft + SDPA + checkpointing + group_by_length + use_liger_kernel (where it imports)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import (AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, DataCollatorForSeq2Seq,
                              Trainer, TrainingArguments)
    cuda = _cuda()
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    kw: dict[str, Any] = {"dtype": torch.bfloat16 if cuda else torch.float32, "attn_implementation": "sdpa"}
    if spec.get("quant"):
        kw["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                       bnb_4bit_use_double_quant=True,
                                                       bnb_4bit_compute_dtype=torch.bfloat16 if cuda else torch.float32)
        kw["device_map"] = {"": 0 if cuda else "cpu"}
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], **kw)
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))
    feats, tokens = [], 0
    for line in Path(spec["data"]).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        p, a = tok(r["instruction"])["input_ids"], tok(" " + r["output"])["input_ids"] + [tok.eos_token_id]
        ids = (p + a)[: spec["cutoff"]]
        feats.append({"input_ids": ids, "attention_mask": [1] * len(ids),
                      "labels": ([-100] * len(p) + a)[: spec["cutoff"]]})
    liger = cuda and importlib.util.find_spec("liger_kernel") is not None
    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             max_steps=spec["steps"], learning_rate=1e-4, bf16=cuda, use_cpu=not cuda,
                             gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": False},
                             train_sampling_strategy="group_by_length", use_liger_kernel=liger, report_to=[],
                             save_strategy="no", logging_steps=spec["steps"], disable_tqdm=True,
                             remove_unused_columns=False)
    seen = {"tokens": 0}
    collate = DataCollatorForSeq2Seq(tok, label_pad_token_id=-100, pad_to_multiple_of=8 if cuda else None)

    def counting(batch: list[dict]) -> Any:   # on the host, before the batch moves: no sync added to the arm
        seen["tokens"] += sum(len(f["input_ids"]) for f in batch)
        return collate(batch)
    trainer = Trainer(model=model, args=args, train_dataset=feats, data_collator=counting)
    t0 = time.perf_counter()
    trainer.train()
    if cuda:
        torch.cuda.synchronize()
    return {"train_s": time.perf_counter() - t0, "tokens": seen["tokens"], "steps": trainer.state.global_step,
            "peak_gib": _peak_gib(), "liger": liger}


def qlora_layerwise_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """A QLoRA model built one linear layer at a time on the card: bf16 draw, NF4 quantize, next."""
    import bitsandbytes as bnb
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaForCausalLM
    cuda = _cuda()
    device = "cuda" if cuda else "cpu"
    dtype = torch.bfloat16 if cuda else torch.float32
    cfg = _config(spec["shape"])
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg)
    t_build = time.perf_counter()
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name, lin in list(parent.named_children()):
                if not isinstance(lin, torch.nn.Linear):
                    continue
                q = bnb.nn.Linear4bit(lin.in_features, lin.out_features, bias=False, compute_dtype=dtype,
                                      quant_type="nf4", device="meta")
                w = torch.randn(lin.out_features, lin.in_features, dtype=dtype, device=device) * 0.02
                q.weight = bnb.nn.Params4bit(w.cpu() if not cuda else w, requires_grad=False, quant_type="nf4")
                q = q.to(device)   # quantizes here; the bf16 draw is freed with ``w``
                del w
                setattr(parent, name, q)
    # the rest (embeddings, norms, head, rotary buffers) in the compute dtype on the card
    model.to_empty(device=device)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dtype in (torch.float32, torch.bfloat16, torch.float16) and p.dim() > 0 and "weight" in n:
                if "norm" in n:
                    p.fill_(1.0)
                elif not isinstance(p, bnb.nn.Params4bit):
                    p.normal_(0, 0.02)
        pass
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    with torch.device(device):   # to_empty left the rotary buffer empty: a fresh one
        model.model.rotary_emb = LlamaRotaryEmbedding(config=cfg)
    model.model.embed_tokens.to(dtype), model.lm_head.to(dtype), model.model.norm.to(dtype)
    build_s = time.perf_counter() - t_build
    model.config.use_cache = False
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    g = torch.Generator(device="cpu").manual_seed(0)
    tokens, steps, t0 = 0, spec["steps"], None
    for step in range(steps + 1):   # step 0 warms up (kernels, allocator) and is not timed
        if step == 1:
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        n = int(torch.randint(spec["lo"], spec["hi"] + 1, (1,), generator=g))
        ids = torch.randint(3, cfg.vocab_size, (1, n), generator=g).to(device)
        with torch.autocast(device, dtype=dtype, enabled=cuda):
            loss = model(input_ids=ids, labels=ids, logits_to_keep=0).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += n if step else 0
    if cuda:
        torch.cuda.synchronize()
    return {"train_s": time.perf_counter() - t0, "tokens": tokens, "steps": steps, "peak_gib": _peak_gib(),
            "build_s": build_s, "final_loss": float(loss)}


def zero3_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    cfg = RunConfig(model_name_or_path=spec["model_dir"], dataset=spec["data"], output_dir=spec["out"],
                    finetuning_type="full", deepspeed="z3-offload", cutoff_len=spec["cutoff"], template="studio",
                    per_device_train_batch_size=spec["batch"], max_steps=spec["steps"], val_size=0,
                    save_steps=10**6, logging_steps=spec["steps"], plot_loss=False, learning_rate=1e-5,
                    optim="adamw_torch")
    summary = run_training(cfg)
    return {"train_s": summary["train_seconds"], "tokens": summary["train_tokens"], "steps": summary["step"],
            "peak_gib": _peak_gib()}


ARMS = {"studio": studio_arm, "savvy": savvy_arm, "qlora70b": qlora_layerwise_arm, "zero3": zero3_arm}


def child(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return ARMS[name](spec)


def _row(section: str, arm: str, r: dict[str, Any] | None, why: str = "") -> list[Any]:
    if r is None:
        row: list[Any] = [section, arm, "-", "-", "-", "-", why]
    else:
        tok_s = r["tokens"] / r["train_s"] if r.get("train_s") else 0.0
        peak = f"{r['peak_gib']:.2f}" if r.get("peak_gib") is not None else "-"
        est = f"{r['estimate_gib']:.2f}" if r.get("estimate_gib") is not None else "-"
        row = [section, arm, r["steps"], round(tok_s), peak, est, why]
    print("row: " + " | ".join(str(c) for c in row), flush=True)   # kept in the log if a cap ends the run
    return row


def host_ram_gib() -> float:
    import os
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU: every section's code path")
    ap.add_argument("--sections", nargs="+", default=["lora", "qlora", "qlora70b", "zero3"])
    ap.add_argument("--steps", type=int, default=10, help="optimizer steps per 8B arm (70B: at most 4)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if run_as_child(a, child):
        return 0
    if not a.dry_run and not _cuda():
        print("no CUDA/ROCm card: use --dry-run on a CPU", file=sys.stderr)
        return 1
    dry = a.dry_run
    shape, lo, hi, batch = ("tiny", 16, 64, 2) if dry else ("8b", 512, 2048, 4)
    steps = 2 if dry else a.steps
    rows_out: list[list[Any]] = []
    results: dict[str, Any] = {"dry_run": dry, "shape": shape}
    threads = 1 if dry else 8

    def call(arm: str, spec: dict[str, Any]) -> dict[str, Any]:
        """On a card each arm is a fresh child (its CUDA peak is its own); the CPU dry run's numbers mean nothing,
        so its arms run in this process (no interpreter start and import per arm: the dry run stays short).
        Raises: RuntimeError as run_child does."""
        if not dry:
            return run_child(Path(__file__), arm, spec, threads=threads, timeout=1200)
        try:
            return ARMS[arm](spec)
        except Exception as exc:  # noqa: BLE001 - reported in the table like a failed child
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
    with tempfile.TemporaryDirectory(prefix="gpu_8b_") as tmp:
        root = Path(tmp)
        vocab = SHAPES[shape]["vocab_size"]
        data = write_jsonl(root / "rows.jsonl", make_rows(batch * steps * 2, lo, hi, vocab))
        base = {"data": str(data), "cutoff": hi + 16, "batch": batch, "steps": steps, "lo": lo, "hi": hi,
                "estimator_model": None if dry else ESTIMATOR_MODEL["8b"]}
        folder = None
        if {"lora", "qlora", "zero3"} & set(a.sections):
            folder = model_folder(shape, root / "model")
        for section, quant in (("lora", None), ("qlora", 4)):
            if section not in a.sections:
                continue
            for arm in ("studio", "savvy"):
                spec = {**base, "model_dir": str(folder), "quant": quant, "out": str(root / f"{section}-{arm}")}
                try:
                    r = call(arm, spec)
                    why = "" if arm != "savvy" or r.get("liger") else "liger-kernel not installed: without Liger"
                    rows_out.append(_row(section, arm, r, why))
                except RuntimeError as exc:
                    r = {"failed": str(exc)[-300:]}
                    rows_out.append(_row(section, arm, None, "failed: " + str(exc).splitlines()[-1][:120]))
                results[f"{section}/{arm}"] = r
        if "qlora70b" in a.sections:
            spec = {**base, "shape": shape if dry else "70b", "lo": lo, "hi": hi, "steps": min(steps, 4)}
            try:
                r = call("qlora70b", spec)
                rows_out.append(_row("qlora 70b (layer by layer)", "studio-built", r, f"built in {r['build_s']:.0f} s"))
            except RuntimeError as exc:
                r = {"failed": str(exc)[-300:]}
                oom = "OutOfMemoryError" in str(exc)
                rows_out.append(_row("qlora 70b (layer by layer)", "studio-built", None,
                                     "does not fit this card (CUDA out of memory)" if oom else
                                     "failed: " + str(exc).splitlines()[-1][:120]))
            results["qlora70b"] = r
        if "zero3" in a.sections:
            why = ""
            if importlib.util.find_spec("deepspeed") is None:
                why = "DeepSpeed is not installed on this machine"
            elif not dry:
                from studio.config.run_config import RunConfig
                from studio.memory.estimator import estimate
                need = estimate(RunConfig(model_name_or_path=ESTIMATOR_MODEL["8b"], finetuning_type="full",
                                                     deepspeed="z3-offload", cutoff_len=hi)).cpu_gb
                if need > 0.9 * host_ram_gib():
                    why = f"the estimate needs {need:.0f} GB of host RAM for the offloaded states; this host has " \
                          f"{host_ram_gib():.0f} GiB"
            if why:
                rows_out.append(_row("8b full ZeRO-3 offload", "studio", None, why))
                results["zero3"] = {"skipped": why}
            else:
                spec = {**base, "model_dir": str(folder), "out": str(root / "zero3"), "steps": min(steps, 4)}
                try:
                    r = run_child(Path(__file__), "zero3", spec, threads=threads, timeout=1200)
                    rows_out.append(_row("8b full ZeRO-3 offload", "studio", r))
                except RuntimeError as exc:
                    r = {"failed": str(exc)[-300:]}
                    rows_out.append(_row("8b full ZeRO-3 offload", "studio", None,
                                         "failed: " + str(exc).splitlines()[-1][:120]))
                results["zero3"] = r
    print(table(["section", "arm", "steps", "tokens/s", "CUDA peak GiB", "estimate GiB", "note"], rows_out))
    if dry:
        print("dry run on the CPU: tiny shapes, numbers mean nothing (not measured on a card)")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
