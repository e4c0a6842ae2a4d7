"""Export: a merged LoRA reloads with plain transformers and predicts exactly like base + adapter."""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest


from studio.errors import StudioError



def _ids(runs: dict):
    import torch
    from studio.data.templates import get_template
    from studio.data.tokenize import prompt_ids
    from studio.models.loading import load_tokenizer
    tok = load_tokenizer(str(runs["lora"] / "adapter"))
    rows = runs["heldout"][:4]
    seqs = [prompt_ids(tok, get_template("studio"), r["instruction"], r["input"]) for r in rows]
    width = min(len(s) for s in seqs)
    return torch.tensor([s[:width] for s in seqs]), tok


def test_merged_export_matches_base_plus_adapter(runs: dict, tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import sentiment_eval
    from studio.evaluation.export import export_model

    out = tmp_path / "merged"
    info = export_model(runs["lora"], out, merge=True)
    assert info["kind"] == "merged" and info["path"] == str(out.resolve())
    assert (out / "model.safetensors").is_file() and not (out / "adapter_config.json").exists()
    assert json.loads((out / "studio_export.json").read_text())["base_model"] == str(runs["base"])
    assert not list(tmp_path.glob(".merged.tmp-*"))  # the temp folder was renamed, not left behind

    merged = AutoModelForCausalLM.from_pretrained(out).eval()
    base = AutoModelForCausalLM.from_pretrained(runs["base"])
    peft_model = PeftModel.from_pretrained(base, str(runs["lora"] / "adapter")).eval()
    ids, tok = _ids(runs)
    with torch.no_grad():
        a, b = merged(input_ids=ids).logits, peft_model(input_ids=ids).logits
        with peft_model.disable_adapter():
            plain = peft_model(input_ids=ids).logits
    assert torch.allclose(a, b, atol=1e-4)
    assert not torch.allclose(a, plain, atol=1e-3)  # the adapter really changed the model
    tpl = get_template("studio")
    r1 = sentiment_eval(merged, tok, tpl, runs["heldout"])
    r2 = sentiment_eval(peft_model, tok, tpl, runs["heldout"])
    assert r1["confusion"] == r2["confusion"] and r1["misclassified"] == r2["misclassified"]


def test_adapter_export_loads_with_peft_from_anywhere(runs: dict, tmp_path: Path) -> None:
    import torch
    from peft import AutoPeftModelForCausalLM
    from studio.evaluation.export import export_model
    out = tmp_path / "adapter"
    info = export_model(runs["lora"], out, merge=False)
    assert info["kind"] == "adapter"
    conf = json.loads((out / "adapter_config.json").read_text())
    assert conf["base_model_name_or_path"] == str(Path(runs["base"]).resolve())
    assert "training_args.bin" not in info["files"] and "tokenizer.json" in info["files"]
    model = AutoPeftModelForCausalLM.from_pretrained(str(out)).eval()
    ids, _ = _ids(runs)
    from studio.models.loading import load_for_inference
    ref, _, _ = load_for_inference(runs["lora"])
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, ref(input_ids=ids).logits, atol=1e-5)


def test_demo_run_adapter_export_carries_its_base(runs: dict, tmp_path: Path) -> None:
    """tiny-demo bases live inside the run folder, so the export must bring a copy along."""
    from peft import AutoPeftModelForCausalLM
    from studio.config.run_config import RunConfig
    from studio.evaluation.export import export_model
    from studio.runs.run_dir import RunDir
    run = tmp_path / "demo-run"
    shutil.copytree(runs["lora"], run)
    shutil.copytree(runs["base"], RunDir(run).base_model)
    RunConfig.load(RunDir(run).config).replace(model_name_or_path="tiny-demo", output_dir=str(run)).save(
        RunDir(run).config)
    out = tmp_path / "export"
    export_model(run, out, merge=False)
    shutil.rmtree(run)  # the export must not depend on the run folder any more
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == \
        str((out / "base_model").resolve())
    AutoPeftModelForCausalLM.from_pretrained(str(out))


def test_full_run_export_is_standalone(runs: dict, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM
    from studio.evaluation.export import export_model
    info = export_model(runs["full"], tmp_path / "full", merge=True)
    assert info["kind"] == "full"
    assert "README.md" in info["files"] and "config.json" in info["files"]
    AutoModelForCausalLM.from_pretrained(tmp_path / "full")


def test_refuses_to_overwrite_a_non_empty_folder(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation.export import export_model
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    for overwrite in (False, True):  # a folder the studio did not make is never deleted, even with overwrite
        with pytest.raises(StudioError) as e:
            export_model(runs["lora"], out, merge=False, overwrite=overwrite)
        assert e.value.message == (f"Export folder '{out}' already exists and was not made by an export. Fix: "
                                   "choose a new folder name; the studio only replaces its own earlier exports.")
    assert (out / "keep.txt").read_text() == "mine"
    export_model(runs["lora"], tmp_path / "mine", merge=False)
    with pytest.raises(StudioError, match="already exists"):
        export_model(runs["lora"], tmp_path / "mine", merge=False)
    export_model(runs["lora"], tmp_path / "mine", merge=False, overwrite=True)  # its own earlier export
    assert (tmp_path / "mine" / "adapter_model.safetensors").is_file()
    (tmp_path / "empty").mkdir()
    export_model(runs["lora"], tmp_path / "empty", merge=False)  # an empty folder is fine


def test_unfinished_run_and_cli(runs: dict, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from studio.cli import export as export_cli
    from studio.runs.run_dir import RunDir
    run = tmp_path / "unfinished"
    RunDir(run).ensure()
    shutil.copy(RunDir(runs["lora"]).config, RunDir(run).config)
    with pytest.raises(StudioError, match="has no finished model to export"):
        export_cli.main(argparse.Namespace(run=str(run), out=str(tmp_path / "x"), merge=True, overwrite=False))
    parser = argparse.ArgumentParser()
    export_cli.add_arguments(parser)
    args = parser.parse_args([str(runs["lora"]), "--out", str(tmp_path / "cli"), "--merge"])
    assert export_cli.main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Exported merged model to {(tmp_path / 'cli').resolve()}")
    assert (tmp_path / "cli" / "model.safetensors").is_file()
