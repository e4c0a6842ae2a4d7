#!/usr/bin/env bash
# One-shot check on a lent GPU (issues 11, 16, 24, 37): one command, done inside 9 minutes, and exactly two files in
# $OUT: gpu_check.tar.gz (every log, junit xml and json) and gpu_check_summary.md (what ran, how long, the tables).
#   bash bench/gpu_wheels.sh              # here, once: the wheels the card's Python lacks, into bench/wheels/
#   bash bench/gpu_assets.sh              # here, once: the built-in models' configs, tokenizers, review rows
#   bash bench/gpu_check.sh               # on the card (bench/wheels/ and bench/gpu_assets/ are git-ignored: the
#                                         # device run must carry both)
#   bash bench/gpu_check.sh --dry-run     # on a CPU: every section's CPU fallback, same caps, same two files
# Sections are independent, each under its own `timeout` (and never past the overall deadline); a failing section
# does not stop the next. By default one section runs: eight_b (bench/gpu_8b.py: Llama-3.1-8B-shape LoRA and
# QLoRA, studio vs the library-savvy script, 70B-shape QLoRA built layer by layer, 8B ZeRO-3 offload), sized to
# fill the call (EIGHT_B_CAP, EIGHT_B_ARGS="--steps N"). GPU_CHECK_ONLY="precision_memory real_lora" runs the
# named earlier sections instead (a follow-up run inside the same lease); REAL_LORA_ARGS / REAL_LORA_CAP pass flags and a cap to the real_lora section. Exit status: 0 when every section passed, 1 otherwise (the files are written either way).
set -uo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
DEADLINE=${GPU_CHECK_DEADLINE:-520}     # seconds from start; a last kill (5 s) and the two files fit in 9 minutes
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
OUT="${OUT:-$PWD/bench/gpu_results}"
mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")"   # sections write here; only the tarball goes to $OUT
SITE="$WORK/site"
if [ -z "${PYTHON:-}" ] && [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
PY="${PYTHON:-python}"
# carried wheels first, then the repository, then whatever PYTHONPATH already held (appended, never replaced)
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
SUMMARY="$WORK/summary.md"
status=0
: > "$WORK/sections.tsv"

left() { echo $(( DEADLINE - (SECONDS - START) )); }

# section NAME CAP COMMAND...: runs COMMAND under min(CAP, time left), output to $WORK/NAME.log
section() {
    local name=$1 cap=$2; shift 2
    # by default the 8B/70B section alone fills the call; the earlier sections run when named
    if [[ " setup throughput ${GPU_CHECK_ONLY:-eight_b} " != *" $name "* ]]; then
        printf '%s\tnot selected (GPU_CHECK_ONLY)\t0\t%s\n' "$name" "$cap" >> "$WORK/sections.tsv"; return
    fi
    local budget; budget=$(left)
    [ "$cap" -lt "$budget" ] || cap=$budget
    if [ "$cap" -le 5 ]; then
        printf '%s\tskipped (no time left)\t0\t0\n' "$name" >> "$WORK/sections.tsv"; status=1; return
    fi
    echo "== $name (cap ${cap} s)"
    local t0=$SECONDS rc
    timeout -k 5 "$cap" "$@" > "$WORK/$name.log" 2>&1
    rc=$?
    tail -n 5 "$WORK/$name.log"
    local verdict=ok
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then verdict="timed out"; elif [ "$rc" -ne 0 ]; then verdict="failed (rc $rc)"; fi
    [ "$verdict" = ok ] || status=1
    printf '%s\t%s\t%s\t%s\n' "$name" "$verdict" "$(( SECONDS - t0 ))" "$cap" >> "$WORK/sections.tsv"
}

# --- setup: device facts and the carried wheels (pip --no-index: nothing is downloaded on the card) ---
setup() {
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "no nvidia-smi"
    if ls bench/wheels/*.whl >/dev/null 2>&1; then
        "$PY" -m pip install --no-index --no-deps --quiet --target "$SITE" bench/wheels/*.whl || return 1
        ls "$SITE"
    else
        echo "no bench/wheels/*.whl (run bash bench/gpu_wheels.sh first): bitsandbytes and liger-kernel cases will fail"
    fi
    "$PY" - <<'PY'
import importlib, torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
for name in ("transformers", "peft", "accelerate", "bitsandbytes", "liger_kernel", "pytest", "deepspeed", "flash_attn"):
    try:
        mod = importlib.import_module(name)
        print(name, getattr(mod, "__version__", "?"), getattr(mod, "__file__", ""))
    except Exception as exc:  # a missing or broken package is a fact to report, not a reason to stop
        print(name, "MISSING:", type(exc).__name__, str(exc)[:200])
PY
}
export -f setup
export PY SITE
section setup 30 bash -c setup
cp "$WORK/setup.log" "$WORK/device.txt"

PYTEST=("$PY" -m pytest -q -p no:cacheprovider -o addopts= -W ignore)
# Llama-3.1-8B-shape LoRA and QLoRA, studio vs the library-savvy script, the 70B-shape QLoRA built layer by layer
# and the 8B ZeRO-3 offload row (bench/gpu_8b.py; writes gpu_8b.json, its table is in the summary)
if [ "$DRY" = 1 ]; then
    section eight_b 170 "$PY" bench/gpu_8b.py --dry-run --json "$WORK/gpu_8b.json"   # ~50 s on an idle 2-core box
else
    section eight_b "${EIGHT_B_CAP:-470}" "$PY" bench/gpu_8b.py --json "$WORK/gpu_8b.json" ${EIGHT_B_ARGS:-}
fi
if [ "$DRY" = 1 ]; then
    # CPU fallbacks: the card tests must at least import and collect with these versions; the emulated-card
    # offload/OOM tests run the same offloader and recovery code; the toggles script runs its tiny CPU check.
    section precision_memory 150 "${PYTEST[@]}" -m gpu tests/engine/test_gpu.py tests/engine/test_gpu_offload.py \
        --collect-only
    section offload_oom 90 "${PYTEST[@]}" -m "not gpu and not integration" \
        tests/engine/test_offload.py tests/engine/test_oom.py \
        --junitxml="$WORK/offload_oom.xml"
    section real_lora 120 "$PY" bench/gpu_real_lora.py --assets bench/gpu_assets --device cpu --rows 16 \
        --models smollm2-135m-instruct --json "$WORK/real_lora.json"
    section kernel_toggles 70 "$PY" bench/gpu_toggles.py --device cpu --tiny --steps 2 --allow-missing
else
    # CUDA peak of each method against the estimator and bf16 mixed precision (writes gpu_memory.json)
    section precision_memory 150 env OUT="$WORK" "${PYTEST[@]}" -m gpu tests/engine/test_gpu.py \
        --junitxml="$WORK/precision_memory.xml"
    # layer-wise offload on the card (K layers resident, exact gradients, pinned host copies, engine peak) and a
    # real allocator OOM recovered under a per-process memory cap (writes offload_oom.json)
    section offload_oom 90 env OUT="$WORK" "${PYTEST[@]}" -m gpu tests/engine/test_gpu_offload.py \
        --junitxml="$WORK/offload_oom.xml"
    # LoRA tokens/s and CUDA peak of SmolLM2-135M and Gemma-3-270M shapes (random weights from their configs):
    # the studio's recipe vs plain Trainer + group_by_length vs + logits_to_keep (writes real_lora.json)
    section real_lora "${REAL_LORA_CAP:-120}" "$PY" bench/gpu_real_lora.py --assets bench/gpu_assets \
        --json "$WORK/real_lora.json" ${REAL_LORA_ARGS:-}
    # sdpa vs flash_attention_2 (no flash-attn wheel exists: reported as not measured) and the studio's chunked
    # cross-entropy vs Liger's fused linear cross-entropy; a missing toggle is named NOT MEASURED
    section kernel_toggles 70 "$PY" bench/gpu_toggles.py --allow-missing
fi

# --- throughput: tokens/s and peaks per method from the precision/memory section ---
section throughput 10 "$PY" - "$WORK" <<'PY'
import json, sys
from pathlib import Path
path = Path(sys.argv[1]) / "gpu_memory.json"
rows = json.loads(path.read_text()) if path.exists() else {}
print("| method | tokens/s | CUDA peak GB | estimate GB | peak / estimate (tensors) |")
print("|---|---:|---:|---:|---:|")
for name, r in rows.items():
    print(f"| {name} | {r.get('tokens_per_s')} | {r['peak_allocated_gb']:.2f} | {r['estimate_gb']:.2f} | {r['ratio']:.2f} |")
if not rows:
    print("| (no results: the precision/memory section did not measure on a card) | | | | |")
PY

# --- the two files ---
{
    echo "# gpu_check $( [ "$DRY" = 1 ] && echo '--dry-run (CPU fallbacks)' ) — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo '```'; cat "$WORK/device.txt"; echo '```'
    echo
    echo "| section | verdict | seconds | cap |"
    echo "|---|---|---:|---:|"
    while IFS=$'\t' read -r n v s c; do echo "| $n | $v | $s | $c |"; done < "$WORK/sections.tsv"
    echo
    cat "$WORK/throughput.log"
    for f in offload_oom.json; do [ -f "$WORK/$f" ] && { echo; echo "## $f"; echo '```'; cat "$WORK/$f"; echo '```'; }; done
    [ -f "$WORK/eight_b.log" ] && { echo; echo "## 8B / 70B (bench/gpu_8b.py)"; echo '```';
        grep -E '^\||^row: |not measured|no CUDA' "$WORK/eight_b.log" | tail -n 30; echo '```'; }
    for n in precision_memory offload_oom real_lora kernel_toggles; do
        [ -f "$WORK/$n.log" ] && { echo; echo "## $n (last lines)"; echo '```'; tail -n 25 "$WORK/$n.log"; echo '```'; }
    done
    echo
    echo "total: $(( SECONDS - START )) s; exit status $status"
} > "$SUMMARY"
rm -rf "$SITE"
tar -czf "$OUT/gpu_check.tar.gz" -C "$WORK" --exclude=./summary.md . && cp "$SUMMARY" "$OUT/gpu_check_summary.md"
rm -rf "$WORK"
echo "wrote $OUT/gpu_check.tar.gz and $OUT/gpu_check_summary.md in $(( SECONDS - START )) s (status $status)"
exit $status
