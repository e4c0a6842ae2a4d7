#!/usr/bin/env bash
# One call on a lent GPU that cannot come back empty (issues 11, 16, 24, 37, 48). It prints first, word for word,
# what to prepare here and the device call to make; then it checks its setup and stops there if anything is missing
# (the sections would only fail one by one); then each section runs under a cap that ends before the call's limit.
# Everything lands in $OUT as it happens, so a call cut short still returns every finished row:
#   gpu_check_summary.md  rewritten after every section: the software in words, the sections, rows and ratios
#   gpu_check.log         every section's output, streamed      rows.txt     every `row:` / `ratio:` line, streamed
#   gpu_8b.json           bench/gpu_8b.py's results, rewritten after every arm
#   gpu_check.json        the setup facts and the other sections' JSON, merged after every section
#   bash bench/gpu_check.sh --limit 540     # on the card: 540 = the timeout_s given to the device call
#   bash bench/gpu_check.sh --dry-run       # on a CPU: every section's CPU fallback, < 2 minutes, same files
# On a card the default is the 8B/70B section (it fills the call); GPU_CHECK_ONLY="precision_memory offload_oom
# real_lora kernel_toggles" names the earlier ones instead (REAL_LORA_ARGS, EIGHT_B_ARGS pass flags). Exit status:
# 0 every section passed, 1 one did not, 2 stopped at setup.
set -uo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
DRY=0 LIMIT=540
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --limit) LIMIT=$2; shift ;;
        *) echo "usage: bash bench/gpu_check.sh [--dry-run] [--limit SECONDS]" >&2; exit 2 ;;
    esac
    shift
done
MARGIN=45                               # the last summary, a section's kill (5 s) and the return of the files
DEADLINE=$(( LIMIT - MARGIN ))
CARRY="bench/wheels bench/gpu_assets"  # git-ignored: built here, carried with the checkout
OUT="${OUT:-$PWD/bench/gpu_results}"
mkdir -p "$OUT"
rm -f "$OUT"/gpu_check_summary.md "$OUT"/gpu_check.log "$OUT"/rows.txt "$OUT"/gpu_8b.json "$OUT"/gpu_check.json
: > "$OUT/gpu_check.log"; : > "$OUT/rows.txt"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")"
SITE=/tmp/gpu_check_site                # the carried wheels, installed (never into the card's own Python)
if [ -z "${PYTHON:-}" ] && [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
PY="${PYTHON:-python3}"
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
status=0 state="running"
: > "$WORK/sections.tsv"

instructions() {
    local sizes
    sizes=$(for p in $CARRY; do [ -d "$p" ] && du -sh "$p" | tr '\t' ' ' || echo "$p (missing here)"; done)
    cat <<EOF
== how to run this check on a lent card ==
1. Here, once, before the visit (both folders are git-ignored; they must be carried with the checkout):
     bash bench/gpu_wheels.sh    # bench/wheels/: transformers 5.24.0, bitsandbytes 0.50.2 (CUDA 13), liger-kernel 0.8.5
     bash bench/gpu_assets.sh    # bench/gpu_assets/: the built-in models' configs and tokenizers, 512 review rows
   now: $(echo "$sizes" | paste -sd ';' - | sed 's/;/; /g') (the device tool carries at most 8 paths, 64 MiB with the checkout)
2. One device call: command "bash bench/gpu_check.sh --limit 540", timeout_s 540, carry ["bench/wheels", "bench/gpu_assets"]
   (15 minutes of device time: 2-4 to start the machine, 9 for this call, the rest for one short follow-up call)
3. Read \$OUT/gpu_check_summary.md; rows.txt and gpu_check.log hold every line even if the call was cut short.
this run: limit ${LIMIT} s, sections end by ${DEADLINE} s; $( [ "$DRY" = 1 ] && echo "dry run on the CPU" || echo "on the card")
EOF
}

left() { echo $(( DEADLINE - (SECONDS - START) )); }

merge_json() {   # the setup facts and every section's JSON so far, in one file, written whole
    "$PY" - "$WORK" "$OUT/gpu_check.json" <<'PY'
import json, os, sys
from pathlib import Path
work, out = Path(sys.argv[1]), Path(sys.argv[2])
merged = {p.stem: json.loads(p.read_text()) for p in sorted(work.glob("*.json")) if p.stat().st_size}
tmp = out.with_suffix(".tmp")
tmp.write_text(json.dumps(merged, indent=1))
os.replace(tmp, out)
PY
}

summary() {   # rewritten after every section: what a cut-short call returns
    {
        echo "# gpu_check $( [ "$DRY" = 1 ] && echo '--dry-run (CPU fallbacks, nothing measured on a card)') — $(date -u +%Y-%m-%dT%H:%M:%SZ), ${state}"
        echo
        if [ -s "$WORK/versions.json" ]; then
            echo "Software: $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["words"])' "$WORK/versions.json")"
        else
            echo "Software: not known (the setup check did not finish)"
        fi
        echo
        echo "| section | verdict | seconds | cap |"
        echo "|---|---|---:|---:|"
        while IFS=$'\t' read -r n v s c; do echo "| $n | $v | $s | $c |"; done < "$WORK/sections.tsv"
        echo
        echo '```'; cat "$OUT/rows.txt"; echo '```'
        [ -f "$WORK/throughput.log" ] && { echo; cat "$WORK/throughput.log"; }
        for n in setup precision_memory offload_oom real_lora kernel_toggles; do
            [ -s "$WORK/$n.log" ] && { echo; echo "## $n (last lines)"; echo '```'; tail -n 15 "$WORK/$n.log"; echo '```'; }
        done
        echo
        echo "elapsed: $(( SECONDS - START )) s of ${LIMIT}; exit status so far $status"
    } > "$OUT/gpu_check_summary.md.tmp" && mv "$OUT/gpu_check_summary.md.tmp" "$OUT/gpu_check_summary.md"
}

# section NAME CAP COMMAND...: under min(CAP, time left); output streamed to the log, rows to rows.txt
section() {
    local name=$1 cap=$2; shift 2
    if [ "$DRY" = 0 ] && [[ " setup throughput ${GPU_CHECK_ONLY:-eight_b} " != *" $name "* ]]; then
        printf '%s\tnot selected (GPU_CHECK_ONLY)\t0\t%s\n' "$name" "$cap" >> "$WORK/sections.tsv"; return 0
    fi
    local budget; budget=$(left)
    [ "$cap" -lt "$budget" ] || cap=$budget
    if [ "$cap" -le 5 ]; then
        printf '%s\tskipped (no time left)\t0\t0\n' "$name" >> "$WORK/sections.tsv"; status=1; summary; return 1
    fi
    echo "== $name (cap ${cap} s, at $(( SECONDS - START )) s)" | tee -a "$OUT/gpu_check.log"
    local t0=$SECONDS rc verdict=ok
    timeout -k 5 "$cap" "$@" 2>&1 | tee -a "$OUT/gpu_check.log" "$WORK/$name.log" \
        | grep --line-buffered -E '^(row|ratio): ' >> "$OUT/rows.txt"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then verdict="timed out"; elif [ "$rc" -ne 0 ]; then verdict="failed (rc $rc)"; fi
    [ "$verdict" = ok ] || status=1
    printf '%s\t%s\t%s\t%s\n' "$name" "$verdict" "$(( SECONDS - t0 ))" "$cap" >> "$WORK/sections.tsv"
    merge_json; summary
    [ "$verdict" = ok ]
}

# --- setup: the carried wheels and assets, installed and checked; a failure stops the run here ---
setup() {
    if [ "$DRY" = 0 ]; then
        for p in $CARRY; do
            [ -d "$p" ] && [ -n "$(ls -A "$p")" ] || { echo "SETUP PROBLEM: $p is missing: build it here first (step 1 above) and carry it"; return 1; }
        done
        command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
        rm -rf "$SITE"
        # --no-compile: byte-compiling took 22-25 s of a 30 s cap on the last card; a killed install leaves a
        # broken package, so the install has its own generous cap and a failure stops the run
        timeout 120 "$PY" -m pip install --no-index --no-deps --no-compile --no-cache-dir --quiet --target "$SITE" \
            bench/wheels/*.whl || { echo "SETUP PROBLEM: installing bench/wheels/*.whl failed or took over 120 s"; return 1; }
    fi
    "$PY" bench/gpu_setup.py --site "$SITE" --json "$WORK/versions.json" $( [ "$DRY" = 1 ] && echo --dry-run )
}
export -f setup
export PY SITE DRY WORK CARRY
instructions | tee -a "$OUT/gpu_check.log"
summary
if ! section setup 150 bash -c 'set -o pipefail; setup'; then
    state="STOPPED AT SETUP: nothing else ran (see the setup lines)"; summary; rm -rf "$WORK"; exit 2
fi

PYTEST=("$PY" -m pytest -q -p no:cacheprovider -o addopts= -W ignore)
assets=bench/gpu_assets
if [ "$DRY" = 1 ] && [ ! -d "$assets" ]; then
    # the CPU fallback of real_lora needs SmolLM2's config and tokenizer: prepared (from its GGUF, ~25 s in a fresh
    # environment) on the other core while the sections before it run
    assets="$WORK/assets"
    ( bash bench/gpu_assets.sh "$assets" smollm2-135m-instruct > "$WORK/assets.out" 2>&1; echo $? > "$WORK/assets.rc" ) &
fi
# 70B-shape QLoRA through the engine, 8B LoRA/QLoRA studio vs savvy (ABBA, ratio), 3B ZeRO-3 offload (decided first)
if [ "$DRY" = 1 ]; then
    section eight_b 100 "$PY" bench/gpu_8b.py --dry-run --json "$OUT/gpu_8b.json" --deadline "$(( $(left) - 10 ))"
else
    section eight_b "$(( $(left) - 5 ))" "$PY" bench/gpu_8b.py --json "$OUT/gpu_8b.json" \
        --deadline "$(( $(left) - 15 ))" ${EIGHT_B_ARGS:-}
fi
if [ "$DRY" = 1 ]; then
    # the card tests must at least collect with these versions; the emulated-card offload/OOM tests run the same
    # offloader and recovery code; the real-model and toggle benches run their tiny CPU checks
    section precision_memory 60 "${PYTEST[@]}" -m gpu tests/engine/test_gpu.py tests/engine/test_gpu_offload.py \
        --collect-only
    # (one of each: the full emulated-card suites are CI's; these are the section's code paths, in seconds)
    section offload_oom 90 "${PYTEST[@]}" \
        "tests/engine/test_offload.py::test_offloaded_forward_backward_is_exact_and_keeps_k_layers[ckpt-full-prefetch]" \
        "tests/engine/test_oom.py::test_a_full_card_runs_out_of_memory_loading_a_layer_and_recovery_gives_it_back" \
        "tests/engine/test_oom.py::test_oom_in_the_middle_of_backward_with_layerwise_offload"
    if [ "$assets" != bench/gpu_assets ]; then   # started in the background after setup: wait for it here
        section gpu_assets 90 bash -c 'while [ ! -f "$1" ]; do sleep 1; done; cat "$2"; exit "$(cat "$1")"' _ \
            "$WORK/assets.rc" "$WORK/assets.out"
    fi
    # studio and savvy (plain is savvy's code without its collator): the CPU check of the script, two children
    section real_lora 90 "$PY" bench/gpu_real_lora.py --assets "$assets" --device cpu --rows 16 \
        --models smollm2-135m-instruct --arms studio savvy --json "$WORK/real_lora.json"
    section kernel_toggles 60 "$PY" bench/gpu_toggles.py --device cpu --tiny --steps 2 --allow-missing
else
    # CUDA peak of each method against the estimator and bf16 mixed precision (writes gpu_memory.json)
    section precision_memory 150 env OUT="$WORK" "${PYTEST[@]}" -m gpu tests/engine/test_gpu.py
    # layer-wise offload on the card and a real allocator OOM recovered (writes offload_oom.json)
    section offload_oom 90 env OUT="$WORK" "${PYTEST[@]}" -m gpu tests/engine/test_gpu_offload.py
    # LoRA tokens/s and CUDA peak of the built-in models' shapes: the recipe vs Trainer vs library-savvy
    section real_lora "${REAL_LORA_CAP:-120}" "$PY" bench/gpu_real_lora.py --assets bench/gpu_assets \
        --json "$WORK/real_lora.json" ${REAL_LORA_ARGS:-}
    # sdpa vs flash_attention_2 and the studio's chunked cross-entropy vs Liger's fused one
    section kernel_toggles 70 "$PY" bench/gpu_toggles.py --allow-missing
fi

# --- throughput: tokens/s and peaks per method from the precision/memory section ---
section throughput 20 "$PY" - "$WORK" <<'PY'
import json, sys
from pathlib import Path
path = Path(sys.argv[1]) / "gpu_memory.json"
rows = json.loads(path.read_text()) if path.exists() else {}
print("| method | tokens/s | CUDA peak GB | estimate GB | peak / estimate (tensors) |")
print("|---|---:|---:|---:|---:|")
for name, r in rows.items():
    print(f"| {name} | {r.get('tokens_per_s')} | {r['peak_allocated_gb']:.2f} | {r['estimate_gb']:.2f} | {r['ratio']:.2f} |")
if not rows:
    print("| (not measured on a card: the precision/memory section did not run there) | | | | |")
PY
state="done"; summary
rm -rf "$WORK" "$SITE"
echo "wrote $OUT/gpu_check_summary.md, gpu_check.log, rows.txt, gpu_8b.json, gpu_check.json in $(( SECONDS - START )) s (status $status)"
exit $status
