"""Load base models and tokenizers (local folder, hub id, or the built-in demo), add LoRA/quantization.

The built-in ``tiny-demo`` is a small Llama-architecture model with random weights and a
byte-level BPE tokenizer trained on the run's own training text. It knows nothing at the
start; it exists so a newcomer can see a whole fine-tuning run learn on a laptop CPU.
It is built once per run into ``<run>/base_model`` so the run folder is self-contained
(evaluation compares against that same untrained base).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

from ..config.run_config import DEMO_MODEL, Draft, RunConfig, trained_config
from ..data.templates import get_template
from ..errors import StudioError
from ..runs.run_dir import RunDir
from ..safe_files import refuse_links_out
from .kernels import training_attention
from .load_lock import LOAD_LOCK  # re-exported: every loader takes this one lock
from .precision import Dtype, PrecisionPlan, device_caps, inference_dtype, precision_plan, torch_dtype
from .progress import Progress, print_step

SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<pad>"]
DEMO_MARKER = "studio_demo.json"

# Sized so a few thousand reviews train in minutes on 2 CPU cores. Measured (see the tuning report): one layer of
# width 64 generalises better than 2x128 on the 384-row sample (which a bigger model just memorises); init_std 0.1
# shortens the plateau where it has learned the answer format but not yet the label; per-character Chinese units
# let reviews share characters like 好/差 instead of rare whole-phrase tokens.
DEMO_DEFAULTS: dict[str, Any] = {"hidden": 64, "layers": 1, "heads": 4, "vocab_size": 3000, "intermediate": 128,
                                 "init_std": 0.1, "han_chars": True}


def build_tiny_llama(out_dir: str | Path, texts: Iterable[str], *, hidden: int = 128, layers: int = 2,
                     heads: int = 4, vocab_size: int = 3000, intermediate: int | None = None,
                     max_position: int = 1024, seed: int = 42, init_std: float = 0.02,
                     han_chars: bool = False, dropout: float = 0.0) -> Path:
    """Build a random-init LlamaForCausalLM and a BPE tokenizer trained on ``texts``; save both.

    Why train the tokenizer on the run's text: a hub tokenizer cannot be downloaded here, and a
    small vocabulary fitted to the data keeps the demo model tiny and fast.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    # start-up: tokenizers, 0.02 s at import; `studio train --help` loads this module
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    texts = [t for t in texts if t]
    if not texts:
        raise StudioError.of("model.demo_no_text")
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    # han_chars: every Chinese character is its own unit, so '不好' and '很好' share '好' (no spaces to split on
    # otherwise, and byte-level BPE would glue whole phrases into rare tokens). Lossless: decoding is unchanged.
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"\p{Han}"), "isolated"), byte_level]) \
        if han_chars else byte_level
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                     eos_token="</s>", pad_token="<pad>")
    hf_tok.padding_side = "right"
    config = LlamaConfig(vocab_size=len(hf_tok), hidden_size=hidden, intermediate_size=intermediate or hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=max_position, tie_word_embeddings=True,
                         bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
                         pad_token_id=hf_tok.pad_token_id, initializer_range=init_std,
                         attention_dropout=dropout)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    tmp = out.with_name(out.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(tmp)
    hf_tok.save_pretrained(tmp)
    (tmp / DEMO_MARKER).write_text(json.dumps({
        "what": "Fine-Tune Studio built-in demo model: random-init Llama architecture, tokenizer trained on the "
                "run's training text. Not a pretrained language model.",
        "hidden": hidden, "layers": layers, "heads": heads, "vocab_size": len(hf_tok), "seed": seed,
        "n_params": sum(p.numel() for p in model.parameters())}, indent=1), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return out


def demo_texts(rows: list[dict[str, Any]], template_name: str = "auto") -> list[str]:
    """Text the demo tokenizer is trained on: the prompts and answers exactly as training shows them."""
    tpl = get_template(template_name)  # 'auto' without a tokenizer = the studio's own format
    return [tpl.prompt(r.get("instruction", ""), r.get("input", "")) + tpl.answer(r.get("output", "")) for r in rows]


def resolve_base_path(cfg_or_run: Draft | str | Path, progress: Progress | None = None) -> str:
    """The base model a run starts from: ``<run>/base_model`` for tiny-demo, else the configured path/id
    (a built-in model or a GGUF prepared first, each step reported to ``progress``)."""
    if isinstance(cfg_or_run, Draft):  # a RunConfig, or a Draft a Python caller built
        cfg = cfg_or_run
    else:
        run = RunDir(cfg_or_run)
        if not run.config.exists():
            raise StudioError.of("model.not_run_folder", folder=str(cfg_or_run))
        cfg = trained_config(run.config)
    if cfg.model_name_or_path == DEMO_MODEL:
        return str(RunDir(cfg.output_dir).base_model)
    return resolve_model_source(cfg.model_name_or_path, progress)


def resolve_model_source(name_or_path: str, progress: Progress | None = None) -> str:
    """A loadable folder for a built-in name (``smollm2-135m-instruct``) or a local ``.gguf`` file, prepared
    once into the model cache (``studio.models.zoo.cache_dir()``); any other name or path is returned unchanged.

    Raises:
        StudioError: the built-in model's package is missing, or the GGUF cannot be read.
    """
    from . import zoo  # start-up: 0.024 s at import (package metadata); `studio train --help` loads this module
    name = name_or_path.strip()
    if zoo.is_builtin(name) and name != DEMO_MODEL:
        return str(zoo.ensure_prepared(name, progress=progress or print_step))
    if name.lower().endswith(".gguf"):
        p = Path(name).expanduser()
        if not p.is_file():
            raise StudioError.of("model.gguf_missing", path=name)
        from .gguf_import import prepare_gguf  # start-up: 0.008 s at import; `studio train --help` loads this module
        return str(prepare_gguf(p, zoo.cache_dir(), progress=progress or print_step))
    return name_or_path




def check_model_source(name_or_path: str) -> None:
    """Fail early, in plain words, for a model path that cannot be loaded.

    Raises:
        StudioError: a local-looking path that does not exist, or a folder without config.json.
    """
    from . import zoo  # start-up: as in resolve_model_source
    if name_or_path == DEMO_MODEL or zoo.is_builtin(name_or_path):
        return
    p = Path(name_or_path).expanduser()
    looks_local = p.is_absolute() or name_or_path.startswith((".", "~")) or name_or_path.count("/") != 1
    if p.exists():
        if p.is_dir() and not (p / "config.json").exists() and not (p / "adapter_config.json").exists():
            raise StudioError.of("model.folder_no_config", path=name_or_path)
        if (p / "config.json").exists():
            _check_config_json(p / "config.json")
        return
    if looks_local:
        raise StudioError.of("model.path_missing", path=name_or_path)


def _check_config_json(path: Path) -> None:
    """A broken or unknown config.json gets a plain message instead of a library traceback."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise StudioError.of("model.config_json_invalid_at", path=str(path), line=exc.lineno,
                                 column=exc.colno) from None
        raise StudioError.of("model.config_json_invalid", path=str(path)) from None
    if not isinstance(data, dict) or "model_type" not in data:
        raise StudioError.of("model.config_no_type", path=str(path))
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import CONFIG_MAPPING
    if data["model_type"] not in CONFIG_MAPPING and "auto_map" not in data:
        raise StudioError.of("model.type_unknown", model_type=str(data["model_type"]), path=str(path))


TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "spiece.model")


def load_tokenizer(path: str, trust_remote_code: bool = False) -> Any:
    """The tokenizer of a model folder or hub id.

    Raises:
        StudioError: a local folder with no tokenizer files, or one the library cannot read (the library's own message advised installing sentencepiece for a folder that has none).
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AutoTokenizer
    local = Path(str(path)).expanduser()
    if local.is_dir() and not any((local / f).is_file() for f in TOKENIZER_FILES):
        raise StudioError.of("model.no_tokenizer", path=str(path), files=list(TOKENIZER_FILES))
    try:
        tok = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        if not local.is_dir():
            raise
        raise StudioError.of("model.tokenizer_unreadable", path=str(path), error=type(exc).__name__,
                             detail=str(exc)[:200]) from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token or tok.unk_token
    return tok


def _card_count() -> int:
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    return torch.cuda.device_count()


def _device_map(device: str) -> dict[str, Any]:
    """Where a quantized model is loaded: this process's own card under torchrun (LOCAL_RANK, the index on this
    node; RANK counts across nodes), so several processes never all land on card 0.

    Raises:
        StudioError: more processes on this node than cards.
    """
    if device != "cuda":
        return {"": device}
    index = int(os.environ.get("LOCAL_RANK", "0") or 0)
    cards = _card_count()
    if index >= cards:
        raise StudioError.of("model.nproc_over_cards", index=index, cards=cards)
    return {"": index}




def _load_causal_lm(path: str, cfg: RunConfig | None, device: str, plan: PrecisionPlan | None = None,
                    dtype: Dtype | None = None) -> Any:
    """``from_pretrained`` with the run's precision plan: weights in its load dtype (or ``dtype``), a 4-bit base
    computing in its compute dtype (the autocast dtype, so bitsandbytes and autocast agree)."""
    # every load passes here: a base folder moved or deleted since a run was trained gets the studio's words,
    # not the hub client's "Repo id must be in the form ..." (it takes a missing absolute path for a hub id)
    check_model_source(str(path))
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    kwargs: dict[str, Any] = {"trust_remote_code": bool(cfg and cfg.trust_remote_code)}
    if cfg is not None and plan is None and (dtype is None or cfg.quantization_bit):
        plan = precision_plan(device_caps(device), cfg)
    # the precision plan decides: fp32 master weights for full fine-tuning unless pure_bf16 (see precision.py)
    kwargs["dtype"] = torch_dtype(dtype or (plan.load_dtype if plan else "fp32"))
    if cfg and cfg.quantization_bit:
        assert plan is not None
        if cfg.quantization_bit == 4:
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type=cfg.quantization_type,
                bnb_4bit_use_double_quant=cfg.double_quantization,
                bnb_4bit_compute_dtype=torch_dtype(plan.compute_dtype))
        else:
            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
        kwargs["device_map"] = _device_map(device)
    attention = training_attention(device) if cfg is not None else None
    try:
        with LOAD_LOCK:
            if attention:
                try:
                    return AutoModelForCausalLM.from_pretrained(path, attn_implementation=attention, **kwargs)
                except (ValueError, ImportError):   # an architecture without FlashAttention-2: the default
                    pass
            return AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except OSError as exc:
        raise StudioError.of("model.load_failed", path=str(path), detail=str(exc).splitlines()[0]) from None
    except ValueError as exc:
        raise StudioError.of("model.config_unreadable", path=str(path), detail=str(exc).splitlines()[0]) from None


def load_base(cfg: RunConfig, device: str = "cpu", plan: PrecisionPlan | None = None,
              progress: Progress | None = None) -> tuple[Any, Any]:
    """Load the base model + tokenizer a run trains, with quantization when asked (no adapters yet).

    ``plan`` is the run's precision plan (made once in engine/run.py); without one it is made for ``device``.
    ``progress`` hears each step of a model's preparation (by default a line on stdout).

    Raises:
        StudioError: the model cannot be found or read.
    """
    path = resolve_base_path(cfg, progress)
    if cfg.model_name_or_path != DEMO_MODEL:
        check_model_source(path)
    elif not Path(path).exists():
        raise StudioError.of("model.demo_not_built")
    try:
        tok = load_tokenizer(path, cfg.trust_remote_code)
    except (OSError, ValueError) as exc:
        raise StudioError.of("model.tokenizer_load", path=str(path), detail=str(exc).splitlines()[0]) from None
    model = _load_causal_lm(path, cfg, device, plan)
    return model, tok


def _continue_adapter(model: Any, cfg: RunConfig) -> Any:
    """The adapter of an earlier run, trainable again (its rank and targets are its own).

    Raises:
        StudioError: the folder holds no adapter.
    """
    # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
    from peft import PeftModel
    folder = Path(str(cfg.adapter_name_or_path))
    if not (folder / "adapter_config.json").is_file():
        raise StudioError.of("model.no_adapter", folder=str(folder))
    with LOAD_LOCK:  # transformers swaps module globals while it loads (load_lock.py)
        model = PeftModel.from_pretrained(model, str(folder), is_trainable=True)
    if cfg.gradient_checkpointing:
        model.enable_input_require_grads()
    return model


def apply_method(model: Any, cfg: RunConfig, device: str = "cpu", plan: PrecisionPlan | None = None) -> Any:
    """Make the right parameters trainable: LoRA adapters, the last layers (freeze), or everything.

    ``plan`` (else the plan for ``device``) decides freeze's upcast: its trainable layers get fp32 master weights
    under mixed precision while the frozen bulk stays 16-bit.
    """
    if cfg.finetuning_type == "lora":
        # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
        from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
        if cfg.quantization_bit:
            # checkpointing is the engine's (engine/run.enable_checkpointing, before this): peft's own switch would
            # re-enable it with empty kwargs, dropping activation offload and use_reentrant=False
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        if cfg.adapter_name_or_path:
            return _continue_adapter(model, cfg)
        targets: Any = "all-linear" if cfg.lora_target.strip() in ("all", "") else [
            t.strip() for t in cfg.lora_target.split(",") if t.strip()]
        lcfg = LoraConfig(**cfg.lora_kwargs(), target_modules=targets, task_type="CAUSAL_LM")
        try:
            model = get_peft_model(model, lcfg)
        except ValueError as exc:
            raise StudioError.of("model.lora_target", target=cfg.lora_target,
                                 detail=str(exc).splitlines()[0]) from None
        if cfg.gradient_checkpointing:
            model.enable_input_require_grads()
        return model
    if cfg.finetuning_type == "freeze":
        layers = decoder_layers(model)
        n = min(cfg.freeze_trainable_layers, len(layers))
        for p in model.parameters():
            p.requires_grad_(False)
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        upcast = (plan or precision_plan(device_caps(device), cfg)).trainable_dtype == "fp32"
        for layer in layers[len(layers) - n:]:
            for p in layer.parameters():
                p.requires_grad_(True)
                if upcast and p.dtype != torch.float32:
                    p.data = p.data.float()
        if cfg.gradient_checkpointing:
            model.enable_input_require_grads()
    return model


def decoder_layers(model: Any) -> list[Any]:
    """The repeated transformer blocks (model.model.layers for Llama/Qwen/Mistral)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    for attr in ("model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers"):
        obj = base
        try:
            for part in attr.split("."):
                obj = getattr(obj, part)
            return list(obj)
        except AttributeError:
            continue
    raise StudioError.of("model.layers_unknown")


def place_on_card(model: Any) -> Any:
    """The one rule for serving placement: a model loaded on the CPU goes to the GPU when there is one; one that
    accelerate placed (``hf_device_map``: quantized, offloaded) or that is already on a card stays where it is.
    Used by every inference path (evaluation/inference.py, evaluation/compare.py)."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    if torch.cuda.is_available() and not getattr(model, "hf_device_map", None) \
            and next(model.parameters()).device.type == "cpu":
        model.to("cuda")
    return model


def load_for_inference(path: str | Path, device: str = "cpu", quantized: bool = True
                       ) -> tuple[Any, Any, RunConfig | None]:
    """Model + tokenizer + run config for evaluation: a run folder, a model folder or an adapter folder.

    A QLoRA run's adapter goes onto its base quantized exactly as in training (the adapter learned to correct
    that base, so that is the model that was trained); ``quantized=False`` loads the 16-bit base instead (export
    merges into it). ``describe_weights`` says which one a loaded model is. Weights are loaded in the dtype the
    run computed in on this card (precision.inference_dtype: bf16 for a full run trained under bf16 autocast,
    not its fp32 master copy); on a CPU in fp32.

    Raises:
        StudioError: nothing loadable at ``path``.
    """
    p = Path(path)
    cfg: RunConfig | None = None
    refuse_links_out(p, "run folder" if RunDir(p).config.exists() else "model folder")  # before a library reads it
    if RunDir(p).config.exists():
        run = RunDir(p)
        cfg = trained_config(run.config)
        final = run.final_model()
        if final is None:
            last = run.last_checkpoint()
            if last is None:
                raise StudioError.of("model.run_untrained", run=str(p))
            final = last
        p = final
    dtype = inference_dtype(device_caps(device), cfg)
    if (p / "adapter_config.json").exists():
        # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
        from peft import PeftModel
        base_path = json.loads((p / "adapter_config.json").read_text())["base_model_name_or_path"]
        if cfg is not None:
            base_path = resolve_base_path(cfg)
        tok_src = p if (p / "tokenizer_config.json").exists() else Path(base_path)
        tok = load_tokenizer(str(tok_src))
        base_cfg = cfg if cfg is None or quantized else cfg.replace(quantization_bit=None)
        # a quantized base is loaded exactly as training loaded it (its plan); a 16-bit one in the serving dtype
        base = _load_causal_lm(base_path, base_cfg, device,
                               dtype=None if base_cfg is not None and base_cfg.quantization_bit else dtype)
        with LOAD_LOCK:
            model = PeftModel.from_pretrained(base, str(p))
    elif (p / "config.json").exists():
        _check_config_json(p / "config.json")  # a broken file: a plain message, not transformers' OSError
        tok = load_tokenizer(str(p))
        model = _load_causal_lm(str(p), None, device, dtype=dtype)
        if (p / "adapter" / "adapter_config.json").is_file():  # a quantized base + its adapter (quantize.py)
            # start-up: peft, 8 s at import (torch, transformers); only an adapter's work needs it
            from peft import PeftModel
            with LOAD_LOCK:
                model = PeftModel.from_pretrained(model, str(p / "adapter"))
    else:
        check_model_source(str(p))
        tok = load_tokenizer(str(p))
        model = _load_causal_lm(str(p), None, device, dtype=dtype)
    model.eval()
    return model, tok, cfg


def describe_weights(model: Any) -> str:
    """Plain words for what a loaded model computes with, e.g. '4-bit nf4 base (as trained) + LoRA adapter'."""
    names = {type(m).__name__ for m in model.modules()}
    adapter = " + LoRA adapter" if hasattr(model, "peft_config") else ""
    qc = getattr(getattr(model, "config", None), "quantization_config", None)
    qc = qc.to_dict() if hasattr(qc, "to_dict") else (qc or {})
    if "Linear4bit" in names:
        return f"4-bit {qc.get('bnb_4bit_quant_type', '')} base (as trained){adapter}".replace("  ", " ")
    if "Linear8bitLt" in names:
        return f"8-bit base (as trained){adapter}"
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    return f"{dtype} weights{adapter}"
