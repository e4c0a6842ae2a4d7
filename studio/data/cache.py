"""Tokenize once: tokenized rows cached on disk, keyed by the rows' content and every tokenization setting.

Why: tokenizing is pure Python per row (template, truncation, label masking) and on a 50k-row
file it takes longer than loading the model; the second run on the same data with the same
tokenizer and settings should start training at once. Written here instead of ``datasets.map``'s
cache because that cache keys on the mapped function's pickled closure (which holds the
tokenizer object and changes with unrelated state) and stores Arrow tables we would convert back
to lists; here the key is explicit (``fingerprint``) and an entry is two flat int32 arrays.

Key = rows (content) + tokenizer (vocabulary, merges, special tokens, chat template) + template
name + cutoff_len + train_on_prompt + the source of the tokenization code itself, so an edit to
the template or tokenize code never reuses a stale entry. Entries are written to a temp name and
renamed (a crash never leaves half an entry); the oldest are removed beyond ``KEEP`` entries.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

CACHE_VERSION = "1"
KEEP = 8                     # entries kept per cache folder (each is ~8 bytes per token)
ENV_DIR = "STUDIO_TOKEN_CACHE"  # a folder, or "off" to disable the cache
_CODE = [Path(__file__).with_name(n) for n in ("tokenize.py", "templates.py")]


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """What decides token ids: the backend's full definition (fast tokenizers) or the vocabulary."""
    h = hashlib.sha256(type(tokenizer).__name__.encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        h.update(backend.to_str().encode())
    else:
        h.update(json.dumps(sorted(tokenizer.get_vocab().items())).encode())
    specials = [getattr(tokenizer, f"{n}_token_id", None) for n in ("bos", "eos", "pad", "unk")]
    h.update(json.dumps([specials, str(getattr(tokenizer, "chat_template", None))]).encode())
    return h.hexdigest()


def fingerprint(rows: list[dict[str, Any]], tokenizer: Any, settings: dict[str, Any]) -> str:
    h = hashlib.sha256(CACHE_VERSION.encode())
    for path in _CODE:
        if path.is_file():
            h.update(path.read_bytes())
    h.update(tokenizer_fingerprint(tokenizer).encode())
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    h.update(json.dumps(rows, ensure_ascii=False, sort_keys=True, default=str).encode())
    return h.hexdigest()[:32]


def cache_dir(default: Path) -> Path | None:
    value = os.environ.get(ENV_DIR, "")
    if value.lower() in ("off", "0", "false", "no"):
        return None
    return Path(value) if value else default


def cached_features(folder: Path | None, key: str, build: Callable[[], tuple[list[dict], dict]]
                    ) -> tuple[list[dict], dict, bool]:
    """(features, extra, hit): load the entry ``key`` or build it with ``build`` and store it.

    ``build`` returns features (dicts with input_ids and labels; attention_mask all ones) and a small
    JSON-able dict of extras (counts) stored next to them.
    """
    if folder is None:
        feats, extra = build()
        return feats, extra, False
    entry = folder / f"{key}.npz"
    if entry.is_file():
        try:
            feats, extra = _load(entry)
            os.utime(entry)  # most recently used
            return feats, extra, True
        except (OSError, ValueError, KeyError):
            entry.unlink(missing_ok=True)  # damaged: rebuild
    feats, extra = build()
    try:
        _store(folder, entry, feats, extra)
    except OSError:
        pass  # a read-only or full disk only costs the next run the tokenization
    return feats, extra, False


def _store(folder: Path, entry: Path, feats: list[dict], extra: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lengths = np.fromiter((len(f["input_ids"]) for f in feats), dtype=np.int64, count=len(feats))
    ids = np.fromiter((t for f in feats for t in f["input_ids"]), dtype=np.int32, count=int(lengths.sum()))
    labels = np.fromiter((t for f in feats for t in f["labels"]), dtype=np.int32, count=int(lengths.sum()))
    tmp = folder / f".{entry.stem}.{os.getpid()}.tmp.npz"
    with open(tmp, "wb") as fh:
        np.savez(fh, lengths=lengths, ids=ids, labels=labels, extra=np.array(json.dumps(extra)))
    os.replace(tmp, entry)
    entries = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-KEEP]:
        old.unlink(missing_ok=True)


def _load(entry: Path) -> tuple[list[dict], dict]:
    with np.load(entry) as z:
        lengths, ids, labels, extra = z["lengths"], z["ids"].tolist(), z["labels"].tolist(), str(z["extra"])
    feats, start = [], 0
    for n in lengths.tolist():
        feats.append({"input_ids": ids[start:start + n], "attention_mask": [1] * n, "labels": labels[start:start + n]})
        start += n
    return feats, json.loads(extra)
