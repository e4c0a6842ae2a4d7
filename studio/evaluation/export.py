"""Export a trained run as something other tools load without Fine-Tune Studio.

* ``merge=True`` on a LoRA run: the adapter is folded into the base weights (peft
  ``merge_and_unload``) and saved as a standalone model folder that
  ``AutoModelForCausalLM.from_pretrained`` loads. QLoRA adapters are merged into the
  unquantized base (what you would deploy), so outputs can differ slightly from the 4-bit model.
* ``merge=False`` on a LoRA run: the adapter folder, loadable with ``PeftModel.from_pretrained``
  (its ``base_model_name_or_path`` points at the base; the tiny demo base is copied along).
* full / freeze runs: the trained model folder is already standalone; it is copied.

Everything is written to a temp folder beside the target and renamed at the end, so an
interrupted export never leaves a half-written model that looks complete.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from ..config.run_config import DEMO_MODEL, Draft, trained_config
from ..errors import StudioError
from ..models.loading import load_for_inference, load_tokenizer, resolve_base_path
from ..runs.run_dir import RunDir
from ..safe_files import copytree, refuse_links_out

MARKER = "studio_export.json"


def _source(source: str | Path) -> tuple[Path, Draft | None]:
    """(folder holding the final adapter/model, run config or None) for a run or model folder."""
    p = Path(source)
    run = RunDir(p)
    # before anything reads it (a copy, a merge, GGUF, bitsandbytes): no link in it may lead out of the studio
    refuse_links_out(p, "run folder" if run.config.exists() else "model folder")
    if run.config.exists():
        final = run.final_model()
        if final is None:
            raise StudioError.of("export.unfinished", run=p)
        return final, trained_config(run.config)
    if (p / "adapter_config.json").exists() or (p / "config.json").exists():
        return p, None
    raise StudioError.of("export.nothing", path=p)


def _check_target(out: Path, overwrite: bool) -> None:
    """Refuse a target that is a file, or a non-empty folder unless it is an earlier export and
    ``overwrite`` is set: overwrite never deletes a folder the studio did not create."""
    if out.exists() and not out.is_dir():
        raise StudioError.of("export.target_file", path=out)
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise StudioError.of("export.exists_not_ours", path=out)
        if not overwrite:
            raise StudioError.of("export.exists", path=out)


def _size_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 2)


def publish(tmp: Path, out: Path, info: dict[str, Any], readme: str) -> None:
    """Finish an export written in ``tmp``: its marker and README, then one rename onto ``out`` (an earlier
    export there, or an empty folder, which ``_check_target`` allowed, is replaced). Shared by every export kind."""
    (tmp / MARKER).write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")
    (tmp / "README.md").write_text(readme, encoding="utf-8")
    if out.exists():
        shutil.rmtree(out) if (out / MARKER).is_file() else out.rmdir()
    os.replace(tmp, out)


def _readme(info: dict[str, Any]) -> str:
    how = {
        "merged": "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
                  "model = AutoModelForCausalLM.from_pretrained(PATH)\ntok = AutoTokenizer.from_pretrained(PATH)",
        "full": "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
                "model = AutoModelForCausalLM.from_pretrained(PATH)\ntok = AutoTokenizer.from_pretrained(PATH)",
        "adapter": "from peft import PeftModel\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
                   f"base = AutoModelForCausalLM.from_pretrained({info['base_model']!r})\n"
                   "model = PeftModel.from_pretrained(base, PATH)\ntok = AutoTokenizer.from_pretrained(PATH)",
    }[info["kind"]]
    return (f"# Fine-Tune Studio export ({info['kind']})\n\n{info['what']}\n\n"
            f"- base model: `{info['base_model']}`\n- method: {info['method']}\n"
            f"- prompt template: `{info['template']}` (build prompts the same way when you use it)\n"
            f"- source run: `{info['source']}`\n\n## Load it\n\n```python\n{how}\n```\n")


def export_model(source: str | Path, out_dir: str | Path, merge: bool = True, overwrite: bool = False) -> dict:
    """Export a run (or adapter/model folder) to ``out_dir``; returns what was written.

    Raises:
        StudioError: no finished model, the target is non-empty without ``overwrite``, or loading fails.
    """
    final, cfg = _source(source)
    out = Path(out_dir).expanduser().resolve()
    _check_target(out, overwrite)
    is_adapter = (final / "adapter_config.json").exists()
    kind = ("merged" if merge else "adapter") if is_adapter else "full"
    base = _base_of(final, cfg) if is_adapter else (cfg.model_name_or_path if cfg else str(final))
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        if kind == "merged":
            _write_merged(source, tmp)
        elif kind == "adapter":
            # training_args.bin is a pickle of trainer settings: useless to a user of the adapter
            copytree(final, tmp, skip=("training_args.bin",))
            base = _point_adapter_at_base(tmp, out, base, cfg)
        else:
            copytree(final, tmp, skip=("training_args.bin",))
        info = {"kind": kind, "what": {
            "merged": "A standalone model: the LoRA adapter merged into the base weights.",
            "adapter": "A LoRA adapter; load the base model, then this adapter on top.",
            "full": "A standalone model: every trained weight (full or freeze fine-tuning)."}[kind],
            "base_model": base, "method": cfg.method if cfg else ("lora" if is_adapter else "full"),
            "template": cfg.template if cfg else "auto", "source": str(Path(source).resolve()),
            "created": time.strftime("%Y-%m-%d %H:%M:%S")}
        if kind == "merged" and cfg is not None and cfg.quantization_bit:
            info["what"] += (f" The run trained the adapter on a {cfg.quantization_bit}-bit copy of the base; it is "
                             "merged here into the unquantized base weights, so answers can differ slightly from "
                             "the evaluation (which uses the quantized base, as trained).")
        publish(tmp, out, info, _readme(info))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {**info, "path": str(out), "size_mb": _size_mb(out),
            "files": sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file())}


def _base_of(adapter: Path, cfg: Draft | None) -> str:
    if cfg is not None:
        return resolve_base_path(cfg)
    return json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))["base_model_name_or_path"]


def _write_merged(source: str | Path, tmp: Path) -> None:
    """Load base + adapter, fold the adapter in, save safetensors + tokenizer."""
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    # "cuda" here only picks the training precision (bf16/fp16); the merge itself runs on the CPU
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # merged into the 16-bit base (merging into a 4-bit QLoRA base would re-quantize the sum); the README says so
    model, tok, _ = load_for_inference(source, device=device, quantized=False)
    merged = model.merge_and_unload()
    merged.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))


def _point_adapter_at_base(tmp: Path, out: Path, base: str, cfg: Draft | None) -> str:
    """Make the copied adapter's base_model_name_or_path loadable from anywhere.

    The tiny demo base lives inside the run folder, so it is copied along (it is small) and the
    adapter points at the copy; other local bases are pointed at by absolute path.
    """
    local = Path(base)
    if cfg is not None and cfg.model_name_or_path == DEMO_MODEL:
        copytree(base, tmp / "base_model")
        local, base = tmp / "base_model", str(out / "base_model")
    elif local.exists():
        base = str(local.resolve())
    conf_path = tmp / "adapter_config.json"
    conf = json.loads(conf_path.read_text(encoding="utf-8"))
    conf["base_model_name_or_path"] = base
    conf_path.write_text(json.dumps(conf, indent=2), encoding="utf-8")
    if not (tmp / "tokenizer_config.json").exists() and local.exists():
        load_tokenizer(str(local)).save_pretrained(str(tmp))
    return base
