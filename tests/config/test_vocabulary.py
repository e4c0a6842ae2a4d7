"""One vocabulary of names: optimizers, schedulers and DeepSpeed plans live in
studio/config/vocabulary.py; RunConfig, the estimator and the CLI read them from there."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from studio.config import vocabulary
from studio.config.run_config import Draft
from studio.memory.estimator import estimate

STUDIO = Path(__file__).resolve().parents[2] / "studio"
OWNER = STUDIO / "config" / "vocabulary.py"


def _accepted_by_runconfig() -> list[str]:
    names = list(vocabulary.OPTIMIZERS) + list(vocabulary.OPTIMIZER_ALIASES)
    return [n for n in names if not any("optim" in p for p in Draft(optim=n).validate())]


def test_runconfig_accepts_every_transformers_optimizer_and_the_adamw_alias() -> None:
    accepted = _accepted_by_runconfig()
    assert set(vocabulary.OPTIMIZERS) <= set(accepted)
    assert "adamw" in accepted
    assert Draft(optim="adamw").optim == "adamw_torch"     # the alias is what transformers calls it
    assert Draft.from_dict({"optim": "adamw"}).optim == "adamw_torch"
    assert any("optim 'adamx'" in p for p in Draft(optim="adamx").validate())


@pytest.mark.parametrize("name", sorted(set(vocabulary.OPTIMIZERS) | set(vocabulary.OPTIMIZER_ALIASES)))
def test_every_accepted_optimizer_gets_an_estimate(name: str) -> None:
    cfg = Draft(optim=name, finetuning_type="full")
    if any("optim" in p for p in cfg.validate()):
        pytest.skip("not accepted by RunConfig")
    est = estimate(cfg, gpu_mem_gb=24)
    assert est.gpu_gb > 0


def test_state_bytes_follow_the_optimizer_kind() -> None:
    b = vocabulary.optimizer_state_bytes
    assert b("adamw_torch") == b("adamw") == b("adamw_torch_fused") == b("paged_adamw_32bit") == 8
    assert b("adamw_8bit") == b("paged_adamw_8bit") == b("adamw_bnb_8bit") == 2
    assert b("lion_32bit") == b("paged_lion_32bit") == 4 and b("lion_8bit") == b("paged_lion_8bit") == 1
    assert b("sgd") == 0 and b("adafactor") < 1
    assert b("adamw_torch", param_bytes=2) == 4          # pure_bf16: states in the parameter's dtype
    full = lambda o: estimate(Draft(optim=o, finetuning_type="full"), 24).breakdown["optimizer"]
    assert full("paged_adamw_32bit") == pytest.approx(full("adamw_torch")) == pytest.approx(4 * full("adamw_8bit"))
    assert full("lion_8bit") == pytest.approx(full("adamw_8bit") / 2)


def test_schedulers_and_deepspeed_plans_come_from_the_vocabulary() -> None:
    from studio.config import checks, deepspeed, lf_keys
    from studio.memory import estimator
    assert checks.DEEPSPEED_SHORTCUTS is vocabulary.DEEPSPEED_SHORTCUTS
    assert estimator.DEEPSPEED_PLANS is vocabulary.DEEPSPEED_SHORTCUTS
    assert set(vocabulary.DEEPSPEED_FILES) == set(vocabulary.DEEPSPEED_SHORTCUTS) - {"none"}
    from studio.workspace import PRESETS_DIR
    files = {p: str(PRESETS_DIR / "deepspeed" / f) for p, f in vocabulary.DEEPSPEED_FILES.items()}
    assert {p: deepspeed.deepspeed_plan(f) for p, f in files.items()} == {p: p for p in files}  # each preset decodes
    # to its own plan
    assert lf_keys.OPTIMIZERS is vocabulary.OPTIMIZERS and lf_keys.LR_SCHEDULERS is vocabulary.LR_SCHEDULERS
    assert "z3-nvme" in " ".join(Draft(deepspeed="z9").validate())


def test_cli_estimate_takes_every_accepted_optimizer() -> None:
    import argparse
    from studio.cli import estimate as cli
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    for name in ("adamw", "adamw_torch_fused", "paged_adamw_32bit", "lion_8bit"):
        args = parser.parse_args(["--model", "tiny-demo", "--method", "full", "--optim", name])
        assert cli.run_estimate(args).gpu_gb > 0


def test_installed_transformers_names_match_the_vocabulary() -> None:
    training_args = pytest.importorskip("transformers.training_args")
    from transformers.trainer_utils import SchedulerType
    assert list(vocabulary.OPTIMIZERS) == [o.value for o in training_args.OptimizerNames]
    assert list(vocabulary.LR_SCHEDULERS) == [s.value for s in SchedulerType]


def _literal_strings(node: ast.AST) -> set[str]:
    elts = node.keys if isinstance(node, ast.Dict) else node.elts
    return {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def second_lists(root: Path = STUDIO) -> list[str]:
    """Literal collections that restate a name list the vocabulary owns."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.resolve() == OWNER.resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                s = _literal_strings(node)
                if {"z2", "z3"} <= s or {"adamw_torch", "adafactor"} <= s or {"adamw", "adafactor"} <= s or \
                        {"auto", "fp32", "bf16"} <= s:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_no_second_list_of_names_outside_the_vocabulary(tmp_path: Path) -> None:
    assert second_lists() == []
    (tmp_path / "x.py").write_text('PLANS = ("none", "z2", "z3")\nOPT = {"adamw_torch": 1, "adafactor": 2}\n'
                                   'P = Literal["auto", "fp32", "bf16", "fp16"]\n')
    assert len(second_lists(tmp_path)) == 3     # the scan itself sees all three kinds
