"""Turn a GGUF file into a normal Hugging Face model folder, once, and reuse it.

Why a prepared folder instead of loading the GGUF on every run: transformers reads GGUF by
dequantizing every tensor to fp32 (seconds to tens of seconds), and the model it returns carries a
GGUF ``quantization_config`` that refuses ``save_pretrained`` and confuses PEFT/Trainer. Rebuilding
the model from its config without that entry, loading the dequantized state dict and tying the
weights gives an ordinary fp32 folder that every other part of the studio (training, adapters,
evaluation, export) already knows how to load.

The folder holds ``studio_gguf.json``; its ``source_key`` (the GGUF's size + mtime, or a package
version for the built-in models) says whether the folder still matches its source.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import mmap
import os
import re
import shutil
import struct
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import StudioError
from .load_lock import LOAD_LOCK
from .progress import Progress, Step

MARKER = "studio_gguf.json"


def source_key(path: str | Path) -> str:
    """A cheap fingerprint of a file (size + mtime): a changed GGUF is prepared again."""
    st = Path(path).stat()
    return hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]


def folder_name(gguf_path: str | Path) -> str:
    """``<stem>-<key>``: a plain folder name, different for different files with the same name."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(gguf_path).stem).strip("-.") or "model"
    return f"{stem[:80]}-{source_key(gguf_path)[:8]}"


def is_prepared(folder: str | Path, key: str) -> bool:
    """True when ``folder`` was prepared from the source with this ``key`` and holds weights."""
    marker = Path(folder) / MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return data.get("source_key") == key and (Path(folder) / "config.json").exists()


# Why our own walker before gguf.GGUFReader sees a file: the library reader trusts every count in the header (it
# builds one Python object per declared array item before it asks whether the file holds them), so a 96-byte file
# that declares 2^50 items loops for hours while memory grows. Here each count and length is checked against the
# bytes left in the file (and a hard limit) before any loop or allocation; only a header that passes reaches the
# library (and transformers, which uses it).
MAX_TENSORS = 100_000  # the largest published models hold a few thousand
MAX_KV = 10_000  # real files hold tens
MAX_KEY_BYTES = 65_535  # the GGUF spec's own limit for key names
MAX_STRING_BYTES = 64 << 20  # chat templates are kilobytes
MAX_ARRAY_ITEMS = 1 << 24  # vocabularies are ~10^5 tokens
MAX_NESTING = 3
MAX_DIMS = 8  # ggml uses 4
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# the errors of reading a string of the header: (too short, declared too long, not UTF-8 text)
_KEY_NAME = ("model.gguf_short_key_name", "model.gguf_long_key_name", "model.gguf_not_text_key_name")
_TENSOR_NAME = ("model.gguf_short_tensor_name", "model.gguf_long_tensor_name", "model.gguf_not_text_tensor_name")
_STRING_VALUE = ("model.gguf_short_string", "model.gguf_long_string", "model.gguf_not_text_string")


@dataclass(frozen=True)
class Array:
    """An array value of a GGUF header, kept as its item type and length only."""
    item_type: int
    count: int


@dataclass
class GGUFHeader:
    """What a bounded walk of a GGUF header found (no tensor data read)."""
    version: int
    metadata: dict[str, Any] = field(default_factory=dict)  # scalars, strings, Array(...)
    tensors: dict[str, tuple[tuple[int, ...], int]] = field(default_factory=dict)  # name -> (shape, ggml type)

    @property
    def architecture(self) -> str:
        arch = self.metadata.get("general.architecture")
        return arch if isinstance(arch, str) else ""

    @property
    def n_elements(self) -> int:
        total = 0
        for shape, _ in self.tensors.values():
            n = 1
            for d in shape:
                n *= d
            total += n
        return total


class _Walk:
    def __init__(self, buf: Any, size: int, name: str):
        self.buf, self.size, self.name, self.pos, self.order = buf, size, name, 0, "<"

    def refuse(self, code: str, **values: Any) -> StudioError:
        """The file is no readable GGUF, for the reason ``code`` (a model.gguf_* entry of
        studio/words/model_errors.py) with its ``values``."""
        return StudioError.of(code, name=self.name, **values)

    # ``short``: the code of a file too short for what is read (model.gguf_short_<part>: the part of the header it
    # belongs to), ``key`` the key or tensor it is of
    def need(self, n: int, short: str, key: str = "") -> None:
        left = self.size - self.pos
        if n > left:
            raise self.refuse(short, key=key, n=n, pos=self.pos, left=left)

    def unpack(self, fmt: str, short: str, key: str = "") -> Any:
        n = struct.calcsize(fmt)
        self.need(n, short, key)
        value = struct.unpack_from(self.order + fmt, self.buf, self.pos)[0]
        self.pos += n
        return value

    def string(self, limit: int, codes: tuple[str, str, str], key: str = "") -> str:
        """A length-prefixed string; ``codes``: its (too short, too long, not text) errors (_KEY_NAME, ...)."""
        short, long, not_text = codes
        n = self.unpack("Q", short, key)
        if n > limit or n > self.size - self.pos:
            raise self.refuse(long, key=key, n=n, pos=self.pos - 8, left=self.size - self.pos, limit=limit)
        raw = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.refuse(not_text, key=key, pos=self.pos - n) from None

    def value(self, vtype: int, key: str, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype], "model.gguf_short_value", key)
        if vtype == _STRING:
            return self.string(MAX_STRING_BYTES, _STRING_VALUE, key)
        if vtype != _ARRAY:
            raise self.refuse("model.gguf_value_type", key=key, vtype=vtype)
        if depth >= MAX_NESTING:
            raise self.refuse("model.gguf_nested", key=key, limit=MAX_NESTING)
        item, count = self.unpack("I", "model.gguf_short_array", key), self.unpack("Q", "model.gguf_short_array", key)
        smallest = {_STRING: 8, _ARRAY: 12}.get(item, struct.calcsize(_SCALARS.get(item, "B")))
        if item not in _SCALARS and item not in (_STRING, _ARRAY):
            raise self.refuse("model.gguf_item_type", key=key, item=item)
        if count > MAX_ARRAY_ITEMS or count * smallest > self.size - self.pos:
            raise self.refuse("model.gguf_array_count", key=key, count=count, left=self.size - self.pos,
                              limit=MAX_ARRAY_ITEMS)
        if item in _SCALARS:  # fixed size: skip without a loop
            self.pos += count * smallest
        else:
            for _ in range(count):
                self.value(item, key, depth + 1)
        return Array(item, count)

    def header(self) -> GGUFHeader:
        self.need(24, "model.gguf_short_header")
        if bytes(self.buf[:4]) != b"GGUF":
            raise self.refuse("model.gguf_magic")
        self.pos = 4
        version = self.unpack("I", "model.gguf_short_version")
        if version & 0xFFFF == 0:  # written on a big-endian machine (the library's own test)
            self.order, version = ">", struct.unpack_from(">I", self.buf, 4)[0]
        if version not in (2, 3):
            raise self.refuse("model.gguf_version", version=version)
        n_tensors = self.unpack("Q", "model.gguf_short_tensor_count")
        n_kv = self.unpack("Q", "model.gguf_short_kv_count")
        left = self.size - self.pos
        if n_kv > MAX_KV or n_kv * 13 > left:  # a key/value takes at least 13 bytes
            raise self.refuse("model.gguf_kv_count", n=n_kv, limit=MAX_KV, left=left)
        if n_tensors > MAX_TENSORS or n_tensors * 24 > left:  # a tensor description takes at least 24 bytes
            raise self.refuse("model.gguf_tensor_count", n=n_tensors, limit=MAX_TENSORS, left=left)
        head = GGUFHeader(version)
        for _ in range(n_kv):
            key = self.string(MAX_KEY_BYTES, _KEY_NAME)
            if key in head.metadata:
                raise self.refuse("model.gguf_key_twice", key=key)
            head.metadata[key] = self.value(self.unpack("I", "model.gguf_short_type", key), key)
        align = head.metadata.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise self.refuse("model.gguf_alignment", align=repr(align))
        offsets = []
        for _ in range(n_tensors):
            name = self.string(MAX_KEY_BYTES, _TENSOR_NAME)
            n_dims = self.unpack("I", "model.gguf_short_shape", name)
            if n_dims > MAX_DIMS:
                raise self.refuse("model.gguf_dims", tensor=name, n=n_dims, limit=MAX_DIMS)
            shape = tuple(self.unpack("Q", "model.gguf_short_shape", name) for _ in range(n_dims))
            gtype = self.unpack("I", "model.gguf_short_type", name)
            offset = self.unpack("Q", "model.gguf_short_offset", name)
            if name in head.tensors:
                raise self.refuse("model.gguf_tensor_twice", tensor=name)
            head.tensors[name] = (shape, gtype)
            offsets.append((name, shape, gtype, offset))
        data_start = -(-self.pos // align) * align
        for name, shape, gtype, offset in offsets:  # each tensor's bytes lie inside the file
            nbytes = _tensor_bytes(shape, gtype)
            if nbytes is None:
                raise self.refuse("model.gguf_ggml_type", tensor=name, gtype=gtype)
            if nbytes < 0:
                raise self.refuse("model.gguf_blocks", tensor=name, shape=str(list(shape)), gtype=gtype)
            end = data_start + offset + nbytes
            if offset % align or end > self.size:
                raise self.refuse("model.gguf_tensor_bytes", tensor=name, shape=str(list(shape)), end=end,
                                  size=self.size)
        return head


def _tensor_bytes(shape: tuple[int, ...], gtype: int) -> int | None:
    # start-up: gguf, 0.13 s at import (numpy); only a GGUF's work needs it
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    try:
        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(gtype)]
    except (ValueError, KeyError):
        return None
    n = 1
    for d in shape:
        n *= d
    if shape and shape[0] % block:
        return -1
    return n // block * type_size


def read_header(gguf_path: str | Path) -> GGUFHeader:
    """Walk a GGUF header with every count bounded by the file size (no tensor data read, nothing trusted).

    Raises:
        StudioError: the file is missing, not GGUF, cut short, or declares more than it holds.
    """
    p = Path(gguf_path)
    if not p.is_file():
        raise StudioError.of("model.gguf_missing", path=str(p))
    size = p.stat().st_size
    walk = _Walk(b"", size, p.name)
    if size < 24:
        raise walk.refuse("model.gguf_tiny", size=size)
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        walk.buf = buf
        return walk.header()


def gguf_architecture(gguf_path: str | Path) -> str:
    """``general.architecture`` of a GGUF file (a bounded walk of the header only).

    Raises:
        StudioError: the file is missing, not a GGUF file, or its header does not hold together.
    """
    head = read_header(gguf_path)
    if not head.architecture:
        raise _Walk(b"", 0, Path(gguf_path).name).refuse("model.gguf_no_arch")
    return head.architecture


def check_coverage(head: GGUFHeader, name: str) -> None:
    """Refuse a GGUF whose tensors cannot be the model its metadata describes (transformers would fill the gap
    with random weights and call it a model).

    Raises:
        StudioError: no tensors, no token embedding, or a block that ``<arch>.block_count`` implies is missing.
    """
    arch = head.architecture

    def refuse(code: str, **values: Any) -> StudioError:  # a model.gguf_* code whose what names the file and model
        return StudioError.of(code, name=name, arch=arch, **values)
    if not head.tensors:
        raise refuse("model.gguf_no_tensors")
    if not any(t.startswith("token_embd.") for t in head.tensors):
        raise refuse("model.gguf_no_embedding")
    blocks = head.metadata.get(f"{arch}.block_count")
    if not isinstance(blocks, int) or blocks <= 0:
        raise refuse("model.gguf_no_block_count")
    present = {int(m.group(1)) for t in head.tensors if (m := re.match(r"blk\.(\d+)\.", t))}
    missing = [i for i in range(blocks) if i not in present]
    if len(missing) > 1:
        raise refuse("model.gguf_blocks_missing", block=missing[0], blocks=blocks, missing=len(missing))
    if missing:
        raise refuse("model.gguf_block_missing", block=missing[0], blocks=blocks)


def supported_architectures() -> list[str]:
    """The GGUF architectures this version of transformers can turn into a model."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
    return sorted(a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer"))


def prepare_gguf(gguf_path: str | Path, cache_dir: str | Path, *, name: str | None = None,
                 key: str | None = None, progress: Progress | None = None) -> Path:
    """A normal model folder ``cache_dir/<name>`` made from ``gguf_path`` (once; later calls return it).

    Args:
        name: folder name (default ``folder_name(gguf_path)``).
        key: what identifies the source (default ``source_key(gguf_path)``).
        progress: called with (fraction 0..1, message) at each stage.

    Raises:
        StudioError: missing file, unreadable GGUF, or an architecture transformers cannot read.
    """
    say = progress or (lambda f, m: None)
    src = Path(gguf_path)
    key = key or source_key(src)
    out = Path(cache_dir) / (name or folder_name(src))
    if is_prepared(out, key):
        say(1.0, Step.of("using", path=out))
        return out
    arch = gguf_architecture(src)
    known = supported_architectures()
    if arch not in known:
        raise StudioError.of("model.gguf_arch", file=src.name, arch=arch, known=list(known))
    started = time.time()
    head = read_header(src)
    check_coverage(head, src.name)
    # one parse of the file serves the coverage check, the config, the tokenizer and the weights
    with _parse_once():
        say(0.02, Step.of("checking", file=src.name))
        n_params, config = _check_weights_cover_model(src, head)
        _check_room(src.name, n_params, Path(cache_dir))
        # The cache is shared by every workspace and process of this user (zoo.cache_dir): one prepares, the others
        # wait for it and then use its folder instead of deleting it under a run that already reads it.
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        with open(Path(cache_dir) / f".{out.name}.lock", "a+b") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say(0.01, Step.of("waiting", name=out.name))
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if is_prepared(out, key):
                    say(1.0, Step.of("using", path=out))
                    return out
                return _prepare_locked(src, out, key, say, Path(cache_dir), arch, n_params, config, started)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _prepare_locked(src: Path, out: Path, key: str, say: Any, cache_dir: Path, arch: str, n_params: int,
                    config: Any, started: float) -> Path:
    """The heavy part of prepare_gguf (dequantize, rebuild, save), run while holding the cache's file lock."""
    say(0.05, Step.of("tokenizer", file=src.name))
    model, tok = _load_gguf(src, say, config)
    say(0.75, Step.of("rebuild"))
    plain = _plain_copy(model)
    del model
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        say(0.85, Step.of("saving", path=out))
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / MARKER).write_text(json.dumps({
            "what": "Prepared by Fine-Tune Studio from a GGUF file (dequantized to fp32).",
            "source": str(src), "source_key": key, "architecture": arch,
            "n_params": sum(p.numel() for p in plain.parameters()),
            "seconds": round(time.time() - started, 1)}, indent=1), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(1.0, Step.of("done", name=out.name, s=time.time() - started))
    return out


def free_ram_bytes() -> int | None:
    """Memory available to a new allocation (psutil, else /proc/meminfo); None when unknown."""
    try:
        import psutil  # optional: a machine without it reads /proc/meminfo (the except)
        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def free_disk_bytes(path: str | Path) -> int | None:
    """Free bytes on the file system that holds ``path`` (or its nearest existing parent); None when unknown."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return None
    return st.f_bavail * st.f_frsize


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:,.0f} MB"


def _check_room(name: str, n_params: int, cache_dir: Path) -> None:
    """Refuse before preparation when this machine cannot hold it.

    The fp32 model exists up to three times while it is converted (the dequantized tensors, transformers' model,
    the plain copy); the prepared folder holds it once. 256 MB / 16 MB cover the runtime and tokenizer files.
    """
    ram_need, disk_need = 3 * 4 * n_params + (256 << 20), 4 * n_params + (16 << 20)
    ram = free_ram_bytes()
    if ram is not None and ram < ram_need:
        raise StudioError.of("model.prepare_memory", name=name, need=_size(ram_need), params=n_params,
                             have=_size(ram))
    disk = free_disk_bytes(cache_dir)
    if disk is not None and disk < disk_need:
        raise StudioError.of("model.prepare_disk", name=name, need=_size(disk_need), folder=str(cache_dir),
                             have=_size(disk))


@contextmanager
def _parse_once() -> Iterator[None]:
    """Within a preparation, every ``gguf.GGUFReader`` of one file is the same parsed reader.

    Why: transformers parses the whole GGUF header anew for the config, for the tokenizer (twice) and for the
    weights; for Gemma 3's 262k-token vocabulary one parse is 7.5 CPU-seconds (gguf's reader builds Python objects
    for every token), about half of a first use. transformers imports ``GGUFReader`` from ``gguf`` inside its
    functions, so the library's own code path runs unchanged, only on a reader parsed once. The reader is read-only
    (a memory map), and a reader is reused only for the same file unchanged (path, size and modification time), so
    another thread reading another GGUF meanwhile gets its own.
    """
    # start-up: gguf, 0.13 s at import (numpy); only a GGUF's work needs it
    import gguf
    real = gguf.GGUFReader
    readers: dict[tuple, Any] = {}

    def reader(path: Any, mode: str = "r") -> Any:
        st = os.stat(path)
        key = (str(Path(path).resolve()), mode, st.st_size, st.st_mtime_ns)
        if key not in readers:
            readers[key] = real(path, mode)
        return readers[key]
    gguf.GGUFReader = reader  # type: ignore[assignment]
    try:
        yield
    finally:
        gguf.GGUFReader = real  # type: ignore[assignment]


def _check_weights_cover_model(src: Path, head: GGUFHeader, least: float = 0.97) -> tuple[int, Any]:
    """(parameter count, config) of the model the GGUF's metadata describes, built on the meta device (no
    memory); refuses when the file's tensors hold clearly fewer weights than that model has. The config is handed
    to the real load, which would otherwise parse the file once more for it (seconds for a 262k-token vocabulary).

    Raises:
        StudioError: transformers cannot build a config from the file, or the tensors fall short.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    try:
        config = AutoConfig.from_pretrained(str(src.parent), gguf_file=src.name)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except (ValueError, KeyError, OSError, RuntimeError, TypeError) as exc:
        raise StudioError.of("model.gguf_load", file=src.name,
                             detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    n_params = sum(p.numel() for p in model.parameters())
    have = head.n_elements
    if have < least * n_params:
        raise StudioError.of("model.gguf_weights_short", name=src.name, arch=head.architecture, have=have,
                             n_params=n_params)
    return max(n_params, have), config


def _load_gguf(src: Path, say: Progress, config: Any = None) -> tuple[Any, Any]:
    """Model (dequantized, fp32) and tokenizer from a GGUF file via transformers' own reader."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    folder, file = str(src.parent), src.name
    try:
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=file)
        say(0.2, Step.of("dequant", file=file))
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=file, dtype=torch.float32, config=config)
    except (ValueError, KeyError, OSError, RuntimeError, TypeError) as exc:
        raise StudioError.of("model.gguf_load", file=file,
                             detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return model, tok


def _plain_copy(model: Any) -> Any:
    """The same weights in a model without the GGUF quantization_config (so it can be saved)."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import AutoModelForCausalLM
    config = model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers.initialization import no_init_weights

    # no random initialisation: every weight is overwritten just below (the check after it says so), and drawing
    # 268M random numbers for Gemma cost ~5 CPU-seconds of a first use; no_init_weights swaps module-global
    # functions, so it runs under the models' load lock like every from_pretrained
    with LOAD_LOCK, no_init_weights():
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    tied = {k for k in missing if "lm_head" in k} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise StudioError.of("model.gguf_mismatch", missing=str(sorted(set(missing) - tied)[:3]),
                             unexpected=str(sorted(unexpected)[:3]))
    plain.tie_weights()
    return plain
