"""GPU kernel toggles, one card, ~2 minutes: python bench/gpu_toggles.py [--allow-missing] [--device cpu --tiny]

The same training step (full fine-tuning, bf16 weights, AdamW, a random Llama with hidden 1024, 4 layers,
a 128,256-token vocabulary, 8 rows x 1024 tokens, loss on every token) timed with

1. attention: ``attn_implementation="sdpa"`` vs ``"flash_attention_2"`` (needs the flash-attn package);
2. loss: the studio's chunked fused cross-entropy (studio/engine/loss.py, ``selective_causal_lm_loss``) vs Liger's
   fused linear cross-entropy (``liger_kernel.transformers.LigerFusedLinearCrossEntropyLoss``, needs liger-kernel),
   both on the decoder's hidden states and the same LM head.

Arms alternate A B B A after a warm-up; reported: tokens/s (CUDA-synchronised wall time), peak CUDA memory, the
loss of both arms on the same batch, and the ratios. A missing piece (no CUDA, flash-attn or liger-kernel not
installed) is an error with the install line, not a silent skip; ``--allow-missing`` runs what is there, names
the rest NOT MEASURED, and exits 1 only when no comparison ran. ``--device cpu --tiny`` checks the script's own
logic on a CPU (tiny shapes, sdpa and
the studio loss against a plain cross-entropy; numbers meaningless).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPE = {"hidden": 1024, "layers": 4, "heads": 16, "vocab": 128256, "intermediate": 2816, "rows": 8, "seq": 1024}
TINY = {"hidden": 64, "layers": 2, "heads": 4, "vocab": 1000, "intermediate": 128, "rows": 2, "seq": 64}


def build(shape: dict[str, int], attn: str, device: str, dtype: Any) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=shape["vocab"], hidden_size=shape["hidden"], intermediate_size=shape["intermediate"],
                      num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
                      num_key_value_heads=shape["heads"], max_position_embeddings=shape["seq"],
                      tie_word_embeddings=False, attn_implementation=attn)
    model = LlamaForCausalLM(cfg).to(device=device, dtype=dtype)
    model.config.use_cache = False
    return model.train()


def batch(shape: dict[str, int], device: str) -> dict[str, Any]:
    import torch
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, shape["vocab"], (shape["rows"], shape["seq"]), generator=g)
    return {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device), "labels": ids.to(device)}


def liger_loss(model: Any, inputs: dict[str, Any]) -> Any:
    from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss
    hidden = model.model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).last_hidden_state
    h = hidden[:, :-1].reshape(-1, hidden.shape[-1])
    y = inputs["labels"][:, 1:].reshape(-1)
    return LigerFusedLinearCrossEntropyLoss(reduction="mean")(model.lm_head.weight, h, y)


def studio_loss(model: Any, inputs: dict[str, Any]) -> Any:
    from studio.engine.loss import selective_causal_lm_loss
    return selective_causal_lm_loss(model, inputs)


def time_arms(arms: dict[str, tuple[Any, Callable[[Any, dict], Any]]], inputs: dict[str, Any], steps: int,
              device: str) -> dict[str, dict[str, float]]:
    """A B B A ... over ``steps`` rounds after one warm-up step each; per arm: tokens/s, peak GiB, loss."""
    import torch
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-5) for k, (m, _) in arms.items()}
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def step(name: str) -> tuple[float, float, float]:
        model, loss_fn = arms[name]
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        sync()
        t = time.perf_counter()
        loss = loss_fn(model, inputs)
        loss.backward()
        opts[name].step()
        opts[name].zero_grad(set_to_none=True)
        sync()
        peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else float("nan")
        return time.perf_counter() - t, peak, float(loss.detach())

    firsts = {name: step(name) for name in arms}   # warm-up (kernels, autotuning); its loss: same weights and batch
    times: dict[str, list[tuple[float, float, float]]] = {k: [] for k in arms}
    names = list(arms)
    for i in range(steps):
        for name in (names if i % 2 == 0 else names[::-1]):
            times[name].append(step(name))
    tokens = inputs["input_ids"].numel()
    return {k: {"tok_s": tokens / statistics.median(t[0] for t in v), "peak_gib": max(t[1] for t in v),
                "first_loss": firsts[k][2]} for k, v in times.items()}


def report(title: str, res: dict[str, dict[str, float]], base: str, other: str) -> None:
    print(f"\n{title}")
    print("| arm | tokens/s | peak CUDA GiB | loss (first step) |")
    print("|---|---:|---:|---:|")
    for k, r in res.items():
        print(f"| {k} | {r['tok_s']:,.0f} | {r['peak_gib']:.2f} | {r['first_loss']:.4f} |")
    print(f"ratio {other} / {base}: tokens/s {res[other]['tok_s'] / res[base]['tok_s']:.3f}, peak memory "
          f"{res[other]['peak_gib'] / res[base]['peak_gib']:.3f}; loss difference "
          f"{abs(res[other]['first_loss'] - res[base]['first_loss']):.2e}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (a CPU check of the script itself)")
    ap.add_argument("--allow-missing", action="store_true",
                    help="run the toggles that are installed and name the others as not measured; exit 1 only when "
                         "no comparison ran")
    a = ap.parse_args(argv)
    import importlib.util
    import torch
    missing = []
    if a.device == "cuda" and not torch.cuda.is_available():
        print("ERROR: no CUDA device (torch.cuda.is_available() is False); this bench needs the GPU", file=sys.stderr)
        return 2
    if importlib.util.find_spec("flash_attn") is None:
        missing.append("flash-attn (pip install flash-attn --no-build-isolation): the flash_attention_2 toggle")
    if importlib.util.find_spec("liger_kernel") is None:
        missing.append("liger-kernel (pip install liger-kernel): the Liger fused linear cross-entropy toggle")
    if a.device != "cuda":   # neither kernel runs on a CPU
        missing.append("(CPU run: the flash-attn and Liger arms need CUDA)")
    for m in missing:
        print(f"{'NOT MEASURED' if a.allow_missing else 'ERROR'}: missing {m}", file=sys.stderr)
    if missing and not a.allow_missing:
        return 1
    ran = 0
    shape = TINY if a.tiny else SHAPE
    dtype = torch.bfloat16 if a.device == "cuda" else torch.float32
    inputs = batch(shape, a.device)
    print(f"device {torch.cuda.get_device_name() if a.device == 'cuda' else 'cpu'}; torch {torch.__version__}; "
          f"shape {shape}; dtype {dtype}; {a.steps} timed steps per arm, ABBA")
    can_gpu = a.device == "cuda"
    # 1. attention kernels, both with the studio's loss
    if can_gpu and importlib.util.find_spec("flash_attn") is not None:
        arms = {"sdpa": (build(shape, "sdpa", a.device, dtype), studio_loss),
                "flash_attention_2": (build(shape, "flash_attention_2", a.device, dtype), studio_loss)}
        report("attention: sdpa vs flash_attention_2 (studio loss)", time_arms(arms, inputs, a.steps, a.device),
               "sdpa", "flash_attention_2")
        del arms
        ran += 1
    # 2. loss kernels, both on sdpa
    if can_gpu and importlib.util.find_spec("liger_kernel") is not None:
        arms = {"studio-chunked-ce": (build(shape, "sdpa", a.device, dtype), studio_loss),
                "liger-flce": (build(shape, "sdpa", a.device, dtype), liger_loss)}
        report("loss: studio chunked CE vs Liger fused linear CE (sdpa)", time_arms(arms, inputs, a.steps, a.device),
               "studio-chunked-ce", "liger-flce")
        del arms
        ran += 1
    if not can_gpu:   # the script's own logic on a CPU: the studio loss against the model's own loss
        arms = {"model-loss": (build(shape, "sdpa", a.device, dtype), lambda m, x: m(**x).loss),
                "studio-chunked-ce": (build(shape, "sdpa", a.device, dtype), studio_loss)}
        report("CPU check: model's own loss vs studio chunked CE", time_arms(arms, inputs, a.steps, a.device),
               "model-loss", "studio-chunked-ce")
        ran += 1
    if missing:
        print("NOT MEASURED: " + "; ".join(missing), file=sys.stderr)
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())
