"""How much of a LoRA update survives quantizing the merged weights (why merged NF4 exports lose accuracy).

For every layer a LoRA run adapted: W is the base weight, D = scale * B @ A the adapter's update. Quantizing the
merged weight keeps Q(W + D) - Q(W) of the update; this prints, over all adapted layers, the norm of what is kept
relative to ||D|| (1.0 = all of it), the cosine between kept and intended update, the share of weights whose
quantized value changed at all, and ||D|| against the quantization error ||Q(W) - W||. NF4 uses bitsandbytes'
own quantizer (blocksize 64, as ``BitsAndBytesConfig`` does); 8-bit is LLM.int8's row-wise absmax int8.

    python bench/lora_delta_quantization.py --run runs/ref/smollm2-lora
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def nf4(w):
    import bitsandbytes.functional as F
    q, state = F.quantize_4bit(w.contiguous(), blocksize=64, quant_type="nf4")
    return F.dequantize_4bit(q, state)


def int8_rowwise(w):
    import torch
    scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127
    return torch.round(w / scale).clamp(-127, 127) * scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="LoRA run folder (its final adapter, else its last checkpoint)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch
    from safetensors.torch import load_file
    from studio.models.loading import resolve_base_path
    from studio.runs.run_dir import RunDir
    torch.set_num_threads(args.threads)
    adapter = RunDir(args.run).final_model() or RunDir(args.run).last_checkpoint()
    print(f"adapter: {adapter}")
    conf = json.loads((adapter / "adapter_config.json").read_text())
    scale = conf["lora_alpha"] / conf["r"]
    lora = load_file(adapter / "adapter_model.safetensors")
    base = load_file(Path(resolve_base_path(args.run)) / "model.safetensors")
    sums = {k: {"kept": 0.0, "dot": 0.0, "d": 0.0, "qerr": 0.0, "changed": 0, "n": 0} for k in ("nf4", "int8")}
    layers = 0
    for key, a in lora.items():
        if ".lora_A." not in key:
            continue
        b = lora[key.replace(".lora_A.", ".lora_B.")]
        name = key.split("base_model.model.", 1)[-1].replace(".lora_A.weight", ".weight")
        w = base[name].float()
        d = scale * (b.float() @ a.float())
        layers += 1
        for kind, q in (("nf4", nf4), ("int8", int8_rowwise)):
            qw, qm = q(w), q(w + d)
            kept = qm - qw
            s = sums[kind]
            s["kept"] += float(kept.pow(2).sum())
            s["dot"] += float((kept * d).sum())
            s["d"] += float(d.pow(2).sum())
            s["qerr"] += float((qw - w).pow(2).sum())
            s["changed"] += int((qm != qw).sum())
            s["n"] += w.numel()
    print(f"{layers} adapted layers, LoRA r={conf['r']} alpha={conf['lora_alpha']}")
    print("| quantization | kept update / intended (norm) | cosine(kept, intended) | weights changed by merge | "
          "||update|| / ||quantization error|| |")
    print("|---|---|---|---|---|")
    for kind, s in sums.items():
        kept, d = s["kept"] ** 0.5, s["d"] ** 0.5
        print(f"| {kind} | {kept / d:.2f} | {s['dot'] / (kept * d + 1e-30):.2f} | "
              f"{s['changed'] / s['n']:.1%} | {d / s['qerr'] ** 0.5:.2f} |")


if __name__ == "__main__":
    main()
