"""Group 'bad configs and flags': YAML files, --set values and command-line flags people get wrong."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.config.run_config import RunConfig, load_yaml_dict, parse_overrides
from tests.robustness.harness import api, cli, expect, record

# (--set pairs, expect_error)
SETS: list[tuple[list[str], bool]] = [
    (["max_steps=.inf"], True), (["max_steps=.nan"], True), (["max_steps=0"], True), (["max_steps=-5"], True),
    (["max_steps=1e400"], True), (["max_steps=2.5"], True), (["max_steps=abc"], True),
    (["num_train_epochs=.inf", "max_steps=-1"], True), (["num_train_epochs=0"], True), (["num_train_epochs=-1"], True),
    (["val_size=.nan"], True), (["val_size=-0.1"], True), (["val_size=1.5"], True),
    (["learning_rate=.inf"], True), (["learning_rate=0"], True), (["learning_rate=5"], True),
    (["learning_rate=fast"], True), (["seed=-1"], True), (["seed=99999999999"], True),
    (["lora_dropout=5"], True), (["lora_dropout=-0.1"], True), (["lora_dropout=.nan"], True),
    (["lora_rank=0"], True), (["lora_alpha=-16"], True), (["cutoff_len=0"], True),
    (["per_device_train_batch_size=0"], True), (["gradient_accumulation_steps=-1"], True),
    (["max_samples=-1"], True), (["warmup_ratio=1"], True), (["warmup_ratio=.nan"], True),
    (["quantization_bit=3"], True), (["quantization_bit=4", "finetuning_type=full"], True),
    (["finetuning_type=qlora"], True), (["optim=adam"], True), (["precision=fp8"], True),
    (["bf16=true", "fp16=true"], True), (["deepspeed=z4"], True), (["deepspeed=z3", "layerwise_offload=true"], True),
    (["nproc=2"], True), (["nproc=0"], True), (["bf16=maybe"], True), (["learnig_rate=1e-4"], True),
    (["=5"], True), (["justakey"], True), (['output_dir="runs/a\\nb"'], True), (['dataset="d\\x00.jsonl"'], True),
    (["model_name_or_path="], True), (["dataset="], True),
    (["learning_rate=1e-4", "max_steps=10"], False), (["val_size=0.1"], False), (["val_size=20"], False),
    (["seed=0"], False), (["max_samples=none"], False), (["lora_dropout=0.05"], False),
]


@pytest.mark.parametrize("pairs, expect_error", SETS, ids=[" ".join(p) for p, _ in SETS])
def test_set_values(pairs: list[str], expect_error: bool) -> None:
    def load() -> RunConfig:
        base = {} if any(p.startswith("dataset=") for p in pairs) else {"dataset": "d.jsonl"}
        return RunConfig.from_dict({**base, **parse_overrides(pairs)})
    outcome, detail = api(load, expect_error)
    record("bad configs and flags", "python", "--set " + " ".join(pairs), outcome, detail)
    key = pairs[0].partition("=")[0] if "=" in pairs[0] and pairs[0][0] != "=" else ""
    expect(outcome, detail, "clear" if expect_error else "ok", key)  # a refusal names the field it is about


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
YAMLS: list[tuple[str, str, bool]] = [
    ("alias bomb (389 bytes)", ALIAS_BOMB, True),
    ("max_steps: .inf", "dataset: d.jsonl\nmax_steps: .inf\n", True),
    ("a list, not a mapping", "- a\n- b\n", True),
    ("bad indentation", "model_name_or_path: tiny-demo\n  learning_rate: 0.1\n", True),
    ("unknown key", "dataset: d.jsonl\nlearnig_rate: 0.1\n", True),
    ("python object tag", "dataset: !!python/object/apply:os.system ['true']\n", True),
    ("300 KB file", "dataset: " + "a" * 300_000 + "\n", True),
    ("not UTF-8", None, True),  # type: ignore[list-item]
    ("empty file (defaults)", "", True),
    ("tab indentation", "dataset:\td.jsonl\n\tmax_steps: 3\n", True),
    ("deepspeed a list", "dataset: d.jsonl\ndeepspeed: [1, 2]\n", True),
    ("valid small anchor", "dataset: d.jsonl\nx: &lr 0.001\n", True),  # unknown key x
    ("valid recipe", "dataset: d.jsonl\nmax_steps: 3\nlearning_rate: 1.0e-4\n", False),
]


@pytest.mark.parametrize("name, text, expect_error", YAMLS, ids=[y[0] for y in YAMLS])
def test_yaml_files(tmp_path: Path, name: str, text: str | None, expect_error: bool) -> None:
    p = tmp_path / "run.yaml"
    p.write_bytes(b"dataset: caf\xe9\n" if text is None else text.encode())
    outcome, detail = api(lambda: RunConfig.from_dict(load_yaml_dict(p)), expect_error)
    record("bad configs and flags", "python", "YAML: " + name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok")


CLI_FLAGS: list[tuple[str, list[str], bool]] = [
    ("train --set max_steps=.inf", ["train", "presets/recipes/tiny-demo-cpu.yaml", "--set", "max_steps=.inf",
                                     "--set", "dataset=x.jsonl"], True),
    ("train --set seed=-1", ["train", "presets/recipes/tiny-demo-cpu.yaml", "--set", "seed=-1",
                             "--set", "dataset=x.jsonl"], True),
    ("train missing config", ["train", "nope.yaml"], True),
    ("train --nproc abc", ["train", "presets/recipes/tiny-demo-cpu.yaml", "--nproc", "abc"], True),
    ("train unknown flag", ["train", "presets/recipes/tiny-demo-cpu.yaml", "--fast"], True),
    ("estimate --gpu-mem nan", ["estimate", "--model", "tiny-demo", "--gpu-mem", "nan"], True),
    ("estimate --gpu-mem -8", ["estimate", "--model", "tiny-demo", "--gpu-mem", "-8"], True),
    ("estimate --gpu-mem inf", ["estimate", "--model", "tiny-demo", "--gpu-mem", "inf"], True),
    ("estimate unknown model", ["estimate", "--model", "no-such-model-xyz"], True),
    ("estimate --seq-len 0", ["estimate", "--model", "tiny-demo", "--seq-len", "0"], True),
    ("estimate ok", ["estimate", "--model", "tiny-demo", "--gpu-mem", "8"], False),
    ("eval missing model", ["eval", "--model", "/nonexistent/run"], True),
    ("export missing run", ["export", "/nonexistent/run", "--out", "/tmp/studio-robustness-never"], True),
    ("no subcommand", [], True),
    ("unknown subcommand", ["fly"], True),
]


@pytest.mark.parametrize("name, argv, expect_error", CLI_FLAGS, ids=[c[0] for c in CLI_FLAGS])
def test_cli_flags(name: str, argv: list[str], expect_error: bool) -> None:
    outcome, detail = cli(*argv, expect_error=expect_error)
    record("bad configs and flags", "cli", name, outcome, detail)
    expect(outcome, detail, "clear" if expect_error else "ok")


LAUNCH: list[tuple[str, list[str]]] = [
    ("--max-upload-mb nan", ["--max-upload-mb", "nan"]), ("--max-upload-mb 0", ["--max-upload-mb", "0"]),
    ("--port 99999", ["--port", "99999"]), ("--port -1", ["--port", "-1"]), ("--port abc", ["--port", "abc"]),
    ("--share without auth", ["--share"]), ("--host 0.0.0.0 without auth", ["--host", "0.0.0.0"]),
    ("--auth without colon", ["--auth", "alice"]), ("--auth-file missing", ["--auth-file", "/nonexistent/f"]),
    ("--auth with --no-auth", ["--auth", "a:b", "--no-auth"]), ("--lang fr", ["--lang", "fr"]),
]


@pytest.mark.parametrize("name, argv", LAUNCH, ids=[c[0] for c in LAUNCH])
def test_launch_flags(tmp_path: Path, name: str, argv: list[str]) -> None:
    import subprocess
    import sys

    from tests.robustness.harness import ROOT
    # --port is checked before gradio is imported, the rest in argparse / parse_auth: all fast
    res = subprocess.run([sys.executable, str(ROOT / "launch.py"), "--workspace", str(tmp_path / "ws"), *argv],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    text = res.stdout + res.stderr
    if "Traceback" in text:
        outcome, detail = "crash", text[-300:]
    elif res.returncode == 2 and ("Error:" in res.stderr or "error:" in res.stderr):
        outcome, detail = "clear", res.stderr.strip().splitlines()[-1]
    else:
        outcome, detail = "survived", f"exit {res.returncode}: {text[-200:]}"
    record("bad configs and flags", "cli", "launch.py " + name, outcome, detail)
    expect(outcome, detail, "clear")
