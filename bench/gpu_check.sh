#!/usr/bin/env bash
# One-GPU check for issues 11 and 16, in about 10 minutes on one card (section limits: 270 s + 180 s + 150 s + start-up):
#   bash bench/gpu_check.sh            # results in $OUT when set, else bench/gpu_results/
# Sections are independent; each appends to $OUT and a failing section does not stop the next.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/bench/gpu_results}"
mkdir -p "$OUT"
export OUT HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONPATH="$PWD"
if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
status=0
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "no nvidia-smi"
  python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
} | tee "$OUT/device.txt"

# --- precision/memory ---
# CUDA peak of each method against the estimator, bf16 mixed precision on the card (tests/test_gpu.py writes
# $OUT/gpu_memory.json: peak allocated/reserved, estimate, ratio, tokens/s per method).
echo "== precision/memory"
timeout 270 python -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider --junitxml="$OUT/precision_memory.xml" \
    2>&1 | tee "$OUT/precision_memory.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# --- offload/OOM ---
# Layer-wise offload on the real card (at most K layers' weights resident, exact gradients, pinned host copies, an
# engine run far below the whole model) and recovery from a real allocator OOM under a per-process memory cap
# (tests/test_gpu_offload.py writes $OUT/offload_oom.json). About a minute on one card.
echo "== offload/OOM"
timeout 180 python -m pytest -q -m gpu tests/test_gpu_offload.py -p no:cacheprovider --junitxml="$OUT/offload_oom.xml" \
    2>&1 | tee "$OUT/offload_oom.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# --- kernel toggles (issue 16) ---
# sdpa vs flash_attention_2, and the studio's chunked CE vs Liger's fused linear CE, on a 128k-vocabulary Llama,
# bf16, 8 x 1024 tokens (bench/gpu_toggles.py prints tokens/s, peak memory and the ratios). flash-attn or
# liger-kernel missing is an error (exit 1, with the pip line), never a silent skip.
echo "== kernel toggles"
for pkg in flash_attn liger_kernel; do
    python -c "import $pkg" 2>/dev/null || echo "ERROR: python package $pkg is not installed: its toggle cannot be measured" \
        | tee -a "$OUT/toggles.log"
done
timeout 150 python bench/gpu_toggles.py --allow-missing 2>&1 | tee -a "$OUT/toggles.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# --- throughput ---
# tokens/s per method from the runs above (6 steps each, first step's warm-up included: a rough table)
echo "== throughput"
python - <<'PY' | tee "$OUT/throughput.md"
import json, os
from pathlib import Path
path = Path(os.environ["OUT"]) / "gpu_memory.json"
rows = json.loads(path.read_text()) if path.exists() else {}
print("| method | tokens/s | CUDA peak GB | estimate GB | peak / estimate (tensors) |")
print("|---|---:|---:|---:|---:|")
for name, r in rows.items():
    print(f"| {name} | {r.get('tokens_per_s')} | {r['peak_allocated_gb']:.2f} | {r['estimate_gb']:.2f} | {r['ratio']:.2f} |")
if not rows:
    print("| (no results: the precision/memory section did not run) | | | | |")
PY

exit $status
