"""Evaluate's measured columns: the before/after scorecard's latency and model memory, full vs quantized on the
same rows (real loads, real bitsandbytes quantization of a tiny trained run), and the CLI's JSON of both."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.evaluation import inference
from studio.evaluation.compare import compare_full_quantized, exports
from studio.evaluation.footprint import model_bytes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wide_run(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A full fine-tune of a 64-wide tiny Llama: bitsandbytes' CPU 4-bit kernels need rows of >= 64 values
    (its block size), which the 32-wide evalkit models do not have."""
    import torch
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    from studio.models.loading import build_tiny_llama, demo_texts
    root = tmp_path_factory.mktemp("wide")
    rows = [json.loads(line) for line in Path(runs["data"]).read_text().splitlines()]
    base = build_tiny_llama(root / "base", demo_texts(rows + runs["heldout"]), hidden=64, layers=2, heads=4,
                            vocab_size=400, intermediate=128, seed=0, init_std=0.1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_training(RunConfig(model_name_or_path=str(base), dataset=str(runs["data"]), output_dir=str(root / "run"),
                               finetuning_type="full", max_steps=30, learning_rate=1e-2, per_device_train_batch_size=16,
                               val_size=0.2, logging_steps=10, save_steps=1000, plot_loss=False, seed=0))
    finally:
        torch.set_num_threads(threads)
    return root / "run"


def test_model_bytes_counts_each_tensor_once_and_can_leave_adapters_out(runs: dict) -> None:
    loaded = inference.get_model(str(runs["lora"]))
    model = loaded.model
    every = {id(p): p for p in model.parameters()}
    lora = sum(p.numel() * p.element_size() for n, p in model.named_parameters() if "lora_" in n)
    assert lora > 0
    with_adapters, without = model_bytes(model), model_bytes(model, adapters=False)
    assert with_adapters - without == lora
    params = sum(p.numel() * p.element_size() for p in every.values())
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    assert params <= with_adapters <= params + buffers


def test_scorecard_has_latency_and_memory_for_both_sides(runs: dict) -> None:
    card = inference.scorecard(str(runs["lora"]), str(runs["heldout_file"]), "score")
    for side in ("base", "tuned"):
        assert card[side]["latency_ms_per_row"] > 0 and card[side]["n"] == 30
    # same object with adapters off: the base is the fine-tuned model minus its LoRA weights
    assert 0 < card["base"]["memory_bytes"] < card["tuned"]["memory_bytes"]
    full = inference.scorecard(str(runs["full"]), str(runs["heldout_file"]), "score")
    assert full["base"]["memory_bytes"] == full["tuned"]["memory_bytes"]  # same architecture, loaded separately


@pytest.mark.parametrize("bits", [4, 8])
def test_full_vs_quantized_on_the_same_rows(runs: dict, wide_run: Path, tmp_path: Path, bits: int) -> None:
    res = compare_full_quantized(wide_run, bits, runs["heldout"], work_dir=tmp_path)
    full, quant = res["full"], res["quantized"]
    assert full["n"] == quant["n"] == len(runs["heldout"]) == res["n"]
    assert quant["memory_bytes"] < full["memory_bytes"]
    assert f"{bits}-bit" in quant["weights"] and "float32" in full["weights"]
    assert full["latency_ms_per_row"] > 0 and quant["latency_ms_per_row"] > 0
    assert res["delta"]["memory_bytes"] == quant["memory_bytes"] - full["memory_bytes"]
    assert not list(tmp_path.iterdir()), "the on-the-fly quantized copy must be removed"


def test_full_vs_a_quantized_export_folder_and_plain_errors(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation.export import export_model
    from studio.evaluation.quantize import quantize_export
    quantize_export(runs["lora"], tmp_path / "exports" / "lora-q8", bits=8)  # 8-bit works at width 32
    export_model(runs["lora"], tmp_path / "exports" / "lora-merged", merge=True)
    assert [p for _, p in exports(tmp_path / "exports", quantized=True)] == [str(tmp_path / "exports" / "lora-q8")]
    assert [p for _, p in exports(tmp_path / "exports", quantized=False)] == \
        [str(tmp_path / "exports" / "lora-merged")]
    res = compare_full_quantized(tmp_path / "exports" / "lora-merged", tmp_path / "exports" / "lora-q8",
                                 runs["heldout"][:12])
    assert res["n"] == 12 and res["quantized"]["bits"] == 8
    assert res["quantized"]["memory_bytes"] < res["full"]["memory_bytes"]
    with pytest.raises(StudioError, match="'lora-merged' is not a 4-bit or 8-bit export"):
        compare_full_quantized(runs["full"], tmp_path / "exports" / "lora-merged", runs["heldout"][:4])
    with pytest.raises(StudioError, match="'lora-q8' is already quantized"):
        compare_full_quantized(tmp_path / "exports" / "lora-q8", 4, runs["heldout"][:4])


def _cli(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "studio", "eval", *args, "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_cli_compare_base_and_compare_quantized_json(runs: dict, wide_run: Path) -> None:
    out = _cli("--model", str(runs["lora"]), "--data", str(runs["heldout_file"]), "--compare-base")
    for side in (out, out["base"]):
        assert side["memory_bytes"] > 0 and side["latency_ms_per_row"] > 0
    assert out["base"]["memory_bytes"] < out["memory_bytes"]
    q = _cli("--model", str(wide_run), "--data", str(runs["heldout_file"]), "--compare-quantized", "4")
    assert q["task"] == "compare-quantized" and q["full"]["n"] == q["quantized"]["n"] == 30
    assert q["quantized"]["memory_bytes"] < q["full"]["memory_bytes"]


def test_evaluate_tab_panel_shows_the_measured_table(runs: dict, wide_run: Path) -> None:
    from studio.ui.eval_compare import on_compare_quantized, quant_choices
    from studio.ui.evaluate_tab import on_scorecard
    text = on_compare_quantized(str(wide_run), "", "8", lambda: runs["heldout"][:6], "score")
    assert "Same 6 rows" in text and "8-bit base" in text
    for row in ("| accuracy |", "| macro-F1 |", "| latency per answer (ms) |", "| model memory (MB) |"):
        assert row in text
    card = on_scorecard(str(runs["lora"]), "upload", str(runs["heldout_file"]), "score", 0, lang="zh")
    assert "| 每个回答的延迟（毫秒） |" in card and "| 模型内存（MB） |" in card
    full, quant = quant_choices(runs["root"] / "no-exports")
    assert [v for _, v in full] == [""] and [v for _, v in quant] == ["4", "8"]
