"""Prompt token ids for evaluation, tokenized once per (rows, tokenizer, template) and reused.

Why: a before/after scorecard scores the same rows twice (base, then tuned), and the Evaluate tab checks the same
held-out rows again after every run; tokenizing is pure Python per row. Here all prompts go to the fast tokenizer
in one batched call (what ``encode_examples`` does for training: identical ids to one ``encode`` per row), and the
result is kept under a content key like the training token cache's (the rendered prompt texts, so the template
and rows are in it, + the tokenizer's definition), in memory and, when a folder is given, on disk next to the
training entries (``<runs>/.token_cache``, ``studio.data.cache.cached_features``).
"""
from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

from ..data.cache import cached_features, tokenizer_fingerprint
from ..data.templates import Template
from .limits import cut, fit_ids

KEEP = 8  # prompt lists kept in memory (one per row set x tokenizer x template)
_memo: "OrderedDict[str, list[list[int]]]" = OrderedDict()
_tok_keys: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()
stats = {"hits": 0, "misses": 0}


def _tokenizer_key(tokenizer: Any) -> str:
    """The tokenizer's fingerprint, computed once per tokenizer object (a 262k vocabulary takes ~1 s to hash)."""
    try:
        key = _tok_keys.get(tokenizer)
    except TypeError:   # not weak-referenceable
        return tokenizer_fingerprint(tokenizer)
    if key is None:
        key = tokenizer_fingerprint(tokenizer)
        _tok_keys[tokenizer] = key
    return key


def prompt_token_ids(tokenizer: Any, template: Template, rows: Sequence[dict[str, str]],
                     folder: str | Path | None = None, max_tokens: int | None = None) -> list[list[int]]:
    """``prompt_ids`` of every row (instruction, input), from the cache when these rows were tokenized before.

    Bounded before it is read (limits.py): each text is cut to MAX_PROMPT_CHARS characters before it is templated
    and tokenized, and with ``max_tokens`` (the model's context less the answer) each row's ids are fitted to it,
    so one long cell costs one context, not its length."""
    texts = [template.prompt(cut(r.get("instruction", "")), cut(r.get("input", ""))) for r in rows]
    if max_tokens:
        return [fit_ids(ids, max_tokens) for ids in prompt_token_ids_of(tokenizer, texts, folder)]
    return prompt_token_ids_of(tokenizer, texts, folder)


def prompt_token_ids_of(tokenizer: Any, texts: list[str], folder: str | Path | None = None) -> list[list[int]]:
    """The token ids of rendered prompt texts, cached under their content and the tokenizer."""
    h = hashlib.sha256(b"eval-prompt-1")
    h.update(_tokenizer_key(tokenizer).encode())
    h.update(json.dumps(texts, ensure_ascii=False).encode())
    key = "prompt-" + h.hexdigest()[:32]
    with _lock:
        if key in _memo:
            _memo.move_to_end(key)
            stats["hits"] += 1
            return _memo[key]

    def build() -> tuple[list[dict], dict]:
        ids = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
        return [{"input_ids": list(x), "labels": list(x)} for x in ids], {}

    feats, _, hit = cached_features(Path(folder) if folder else None, key, build)
    out = [f["input_ids"] for f in feats]
    with _lock:
        stats["hits" if hit else "misses"] += 1
        _memo[key] = out
        while len(_memo) > KEEP:
            _memo.popitem(last=False)
    return out

