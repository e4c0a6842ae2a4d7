#!/usr/bin/env bash
# Wheels that the lent H200 lacks (it has torch 2.11+cu130, transformers 5.17, peft 0.21, accelerate 1.15, pandas and
# matplotlib, and no network), downloaded here into bench/wheels/ (git-ignored; it travels with the working tree):
#   bash bench/gpu_wheels.sh        # then bash bench/gpu_check.sh installs them (pip --no-index --no-deps --no-compile)
#                                   # and stops at setup if any is missing or does not import
# bitsandbytes: the 8-bit optimizer and QLoRA cases of tests/engine/test_gpu.py; its 41 MiB wheel is cut to the CUDA 13
# libraries the card's torch uses (about 4 MiB: the CUDA 11/12, ROCm and XPU builds are dropped, with their RECORD
# lines). transformers 5.24.0 (13 MiB): the version requirements.txt pins, so the card runs the stack users install
# (the card's own 5.17 lacks the 2-D logits_to_keep the library-savvy baseline uses, and keeps a failed attempt's
# activations alive after an OOM, docs/BENCHMARKS.md "GPU"). liger-kernel (~1 MiB): the fused linear cross-entropy
# arm of bench/gpu_toggles.py (its triton ships with the CUDA torch). Not carried: pytest (the card has it),
# deepspeed (PyPI ships only its source, whose CPU-Adam op compiles on first use: the ZeRO-3 row says so),
# flash-attn (no wheel on the registry; its toggle is reported as not measured), gradio and datasets (no section
# needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=bench/wheels
mkdir -p "$DEST"
rm -f "$DEST"/*.whl
WHEELS=(bitsandbytes==0.50.2 liger-kernel==0.8.5 transformers==5.24.0)
"${PYTHON:-python3}" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d "$DEST" "${WHEELS[@]}"
# the card's torch is built for CUDA 13.0: keep bitsandbytes' CPU and CUDA 13 libraries, drop the rest
"${PYTHON:-python3}" - "$DEST"/bitsandbytes-*.whl <<'PY'
import re, shutil, sys, zipfile
path = sys.argv[1]
drop = re.compile(r"bitsandbytes/libbitsandbytes_(cuda1[12]\d|rocm\d+|xpu\d+)\.so$")
with zipfile.ZipFile(path) as src, zipfile.ZipFile(path + ".new", "w", zipfile.ZIP_DEFLATED) as dst:
    for info in src.infolist():
        if drop.search(info.filename):
            continue
        data = src.read(info)
        if info.filename.endswith(".dist-info/RECORD"):
            data = b"".join(l + b"\n" for l in data.splitlines() if l and not drop.search(l.split(b",")[0].decode()))
        dst.writestr(info, data)
shutil.move(path + ".new", path)
PY
ls -l "$DEST"
du -sh "$DEST"
