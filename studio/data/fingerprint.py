"""One fingerprint per prompt, so Evaluate can tell when a checked row was also a training row (leakage).

Why a normalised hash and not the raw text: a spreadsheet row re-exported with other spacing, full-width
characters (NFKC) or other capitals is the same review for the model; the run folder keeps only the
fingerprints (16 hex digits each, ``RunDir.train_keys``), never the training text itself.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any, Iterable

_SPACE = re.compile(r"\s+")


def _norm(text: Any) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", "" if text is None else str(text))).strip().casefold()


def prompt_key(row: dict[str, Any]) -> str:
    """The fingerprint of a row's prompt (instruction + input; the answer is not part of it)."""
    text = _norm(row.get("instruction")) + "\x1f" + _norm(row.get("input"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def keys_text(rows: Iterable[dict[str, Any]]) -> str:
    """The file body of ``train_keys.txt``: sorted unique fingerprints, one per line."""
    return "".join(k + "\n" for k in sorted({prompt_key(r) for r in rows}))
