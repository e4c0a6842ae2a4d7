#!/usr/bin/env bash
# LLaMA-Factory 0.9.5 in its own venv (outside the repo) for bench/real_throughput.py's lf / lf_neat arms:
#     bash bench/lf_venv.sh [VENV]        (default /work/lf-venv; idempotent: a working venv is left as it is)
# torch 2.13.0 (the CPU wheel; the studio venv's version, so the arms differ only in the trainer) is installed
# first, then llamafactory with torch pinned by a constraints file. With torch 2.13 there is no matching
# torchvision/torchaudio: torchvision is uninstalled (transformers then skips its image processors) and torchaudio
# becomes an empty stub package (llamafactory imports it at module load; audio is never used here).
set -euo pipefail
VENV="${1:-/work/lf-venv}"
PY="${PYTHON:-python3}"
check() { "$VENV/bin/python" -c "import torch, llamafactory; from llamafactory.train.tuner import run_exp; print('torch', torch.__version__, 'llamafactory', llamafactory.__version__)" 2>/dev/null; }
if [ -x "$VENV/bin/python" ] && check; then echo "LLaMA-Factory venv ready: $VENV"; exit 0; fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "torch==2.13.0"   # the CPU wheel here; elsewhere add --index-url .../whl/cpu
CONS="$(mktemp)"; trap 'rm -f "$CONS"' EXIT
echo "torch==2.13.0" > "$CONS"
"$VENV/bin/python" -m pip install -q -c "$CONS" "llamafactory==0.9.5"
"$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio 2>/dev/null || true
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$SITE/torchaudio"
echo '"""Empty stub: LLaMA-Factory imports torchaudio; no torchaudio matches torch 2.13 (bench/lf_venv.sh)."""' \
  > "$SITE/torchaudio/__init__.py"
check || { echo "LLaMA-Factory venv at $VENV does not import" >&2; "$VENV/bin/python" -c "import llamafactory.train.tuner"; exit 1; }
"$VENV/bin/llamafactory-cli" version 2>/dev/null | grep -i -m1 "llama" || true
echo "LLaMA-Factory venv ready: $VENV"
