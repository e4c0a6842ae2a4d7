#!/usr/bin/env bash
# Wheels that the lent H200 lacks (it has torch 2.11+cu130, transformers 5.17, peft 0.21, accelerate 1.15, pandas and
# matplotlib, and no network), downloaded here into bench/wheels/ (git-ignored; it travels with the working tree):
#   bash bench/gpu_wheels.sh        # then: bash bench/gpu_check.sh installs them with pip --no-index --no-deps
# bitsandbytes (~41 MiB): the 8-bit optimizer and QLoRA cases of tests/test_gpu.py. liger-kernel (~1 MiB): the fused
# linear cross-entropy arm of bench/gpu_toggles.py (its triton dependency ships with the CUDA torch). pytest and its
# pure-Python dependencies (~2 MiB): in case the card's Python has no test runner. Not carried: deepspeed (its
# sections are skipped there), flash-attn (no wheel on the registry; its toggle is reported as not measured),
# gradio and datasets (no section needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=bench/wheels
mkdir -p "$DEST"
WHEELS=(bitsandbytes==0.50.2 liger-kernel==0.8.5 pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 pygments==2.21.0)
"${PYTHON:-python3}" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d "$DEST" "${WHEELS[@]}"
ls -l "$DEST"
du -sh "$DEST"
