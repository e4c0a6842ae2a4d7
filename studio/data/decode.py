"""A text export's bytes -> text: the size limit, the binary sniff and the encoding detection.

Shop back-offices in China export GBK/GB18030 and Excel adds a UTF-8 BOM, so the encoding is
detected, not assumed; a file that mixes encodings or holds NUL bytes is refused naming the lines.
This runs in front of every text reader (pandas gets decoded text, never a guess of its own).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import StudioError
from .limits import refuse_mixed_encodings

DEFAULT_MAX_MB = 50.0
OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # an old Excel (.xls) file: an OLE2 compound document
_LATIN_GUESSES = {"cp1250", "cp1252", "latin_1", "iso8859_1", "iso8859_2", "iso8859_15", "mac_roman",
                  "mac_latin2"}


def check_size(path: Path, max_mb: float = DEFAULT_MAX_MB) -> int:
    """The file's size in bytes, after checking it exists and is under the limit.

    Raises:
        StudioError: missing file, a folder, or a file over ``max_mb``.
    """
    if not path.exists():
        raise StudioError.of("data.missing_file", file=path)
    if not path.is_file():
        raise StudioError.of("data.not_a_file", file=path)
    size = path.stat().st_size
    if max_mb and size > max_mb * 1024 * 1024:
        raise StudioError.of("data.too_large", file=path.name, mb=size / 1024 / 1024, limit=max_mb,
                             need=int(size / 1024 / 1024) + 1)
    return size


def _looks_like_chinese(text: str) -> bool:
    """True when the non-ASCII characters are mostly CJK: a GB18030 decode that makes sense."""
    non_ascii = [c for c in text if ord(c) > 127]
    if not non_ascii:
        return True
    cjk = sum(1 for c in non_ascii if "\u4e00" <= c <= "\u9fff" or "\u3000" <= c <= "\u303f"
              or "\uff00" <= c <= "\uffef" or "\u2000" <= c <= "\u206f")
    return cjk / len(non_ascii) >= 0.8


def detect_encoding(raw: bytes) -> str:
    """Pick the encoding of a text export: BOMs, then UTF-8, then GB18030 (a superset of GBK), then a guess.

    GB18030 is tried before the statistical guess because short Chinese exports are often
    mis-guessed (as Big5 or a Latin code page) by detectors.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        raw.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        if _looks_like_chinese(raw.decode("gb18030")):
            return "gb18030"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # start-up: charset_normalizer, 0.014 s at import; only a guess needs it
    best = from_bytes(raw).best()
    guess = best.encoding if best is not None else None
    # short Western exports are often guessed as a neighbouring Latin code page; Excel writes cp1252
    if guess is None or guess in _LATIN_GUESSES:
        try:
            raw.decode("cp1252")
            return "cp1252"
        except UnicodeDecodeError:
            pass
    return guess or "latin-1"


def is_binary(raw: bytes) -> bool:
    """NUL bytes never appear in UTF-8/GBK text (UTF-16 is caught by its BOM first)."""
    sample = raw[:8192]
    return b"\x00" in sample and not sample.startswith((b"\xff\xfe", b"\xfe\xff"))


def _binary_error(path: Path, raw: bytes) -> StudioError:
    if raw.startswith(b"PK\x03\x04"):
        code = "data.binary_zip"
    elif raw.startswith(OLE_MAGIC):
        code = "data.binary_xls"
    elif raw.startswith(b"PAR1"):
        code = "data.binary_parquet"
    else:
        code = "data.binary"
    return StudioError.of(code, file=path.name, stem=path.stem)


def read_text(path: Path, encoding: str = "auto", max_mb: float = DEFAULT_MAX_MB) -> tuple[str, str]:
    """Decode a text file -> (text, encoding used).

    Raises:
        StudioError: missing, too large, empty, binary, or not decodable with the given encoding.
    """
    path = Path(path)
    check_size(path, max_mb)
    raw = path.read_bytes()
    if not raw.strip():
        raise StudioError.of("data.empty_file", file=path.name)
    if is_binary(raw):
        raise _binary_error(path, raw)
    auto = encoding in ("", "auto", None)
    if auto:
        refuse_mixed_encodings(path, raw)
    enc = detect_encoding(raw) if auto else encoding
    try:
        text = raw.decode(enc)
    except LookupError:
        raise StudioError.of("data.unknown_encoding", encoding=encoding) from None
    except UnicodeDecodeError as exc:
        raise StudioError.of("data.bad_encoding", file=path.name, encoding=enc, pos=exc.start) from None
    nul = text.find("\x00")
    if nul >= 0:  # past the first 8 KB the binary sniff cannot see it; NUL is never part of text data
        raise StudioError.of("data.nul_byte", file=path.name, line=text.count(chr(10), 0, nul) + 1)
    return text.lstrip("\ufeff"), enc
