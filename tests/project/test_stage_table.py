"""Every decision that depends on a run's stage reads the stage table (studio/stages.py), so adding a stage is a row
there and its own trainer, not edits in a dozen files (issue 51, item 4).

The scan reads every module of studio/ except the table and fails on a stage check: a comparison with a run's stage
(``cfg.stage == "dpo"``, ``cfg.stage not in (...)``, a variable named for a stage compared with a stage name), a
lookup keyed by it (``X[cfg.stage]``, ``X.get(cfg.stage)``) or a ``match`` on it. Reading a row
(``stage_of(cfg.stage).rows``) and passing the name on as a value (status.json, a message) are fine.
"""
from __future__ import annotations

import ast
from pathlib import Path

from studio.config.run_config import Draft, RunConfig
from studio.stages import STAGE_NAMES, STAGES, stage_of

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "studio" / "stages.py"


def _is_stage(node: ast.AST) -> bool:
    """A run's stage: ``<anything>.stage``."""
    return isinstance(node, ast.Attribute) and node.attr == "stage"


def _names_stage(node: ast.AST) -> bool:
    """A variable named for a stage (``stage``, ``run_stage``): a stage check when compared with a stage's name
    (a ZeRO stage compared with a number is not one). The table's own constants (``STAGE_NAMES``) are not."""
    return isinstance(node, ast.Name) and "stage" in node.id.lower() and not node.id.isupper()


def _stage_words(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in STAGE_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_stage_words(e) for e in node.elts)
    return False


def stage_checks(source: str) -> list[int]:
    """Lines of ``source`` that decide something by a run's stage outside the table."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_stage(s) for s in sides) or (any(_names_stage(s) for s in sides)
                                                    and any(_stage_words(s) for s in sides)):
                found.append(node.lineno)
        elif isinstance(node, ast.Subscript) and (_is_stage(node.slice) or _names_stage(node.slice)):
            found.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and (_is_stage(node.args[0]) or _names_stage(node.args[0]))):
            found.append(node.lineno)
        elif isinstance(node, ast.Match) and (_is_stage(node.subject) or _names_stage(node.subject)):
            found.append(node.lineno)
    return found


def test_the_scan_sees_each_form_of_a_stage_check() -> None:
    """The detector itself: each form is caught, reading the table is not (else the next test proves nothing)."""
    for bad in ('if cfg.stage == "sft": pass', 'x = cfg.stage != "sft"', 'x = self.cfg.stage in ("dpo", "kto")',
                'x = stage not in ("dpo", "kto")', 'x = {"dpo": 2}.get(cfg.stage, 1)', 'x = TABLE[cfg.stage]',
                'x = PER_ROW[stage]', 'match cfg.stage:\n    case "dpo": pass'):
        assert stage_checks(bad), bad
    for fine in ('x = stage_of(cfg.stage).rows == "kto"', 'x = dict(stage=cfg.stage)', 'x = stage >= 3',
                 'x = zero.get("stage", 0)', 'x = stage_of(cfg.stage).studio_trainer', 'x = Literal[STAGE_NAMES]'):
        assert not stage_checks(fine), fine


def test_no_stage_check_outside_the_stage_table() -> None:
    bad = [f"{f.relative_to(ROOT)}:{line}" for f in sorted((ROOT / "studio").rglob("*.py")) if f != TABLE
           for line in stage_checks(f.read_text(encoding="utf-8"))]
    assert bad == [], "decide by the stage's row of studio/stages.py (stage_of(cfg.stage)), not by its name: " + \
        ", ".join(bad)


def test_the_config_offers_the_tables_stages() -> None:
    """The page's and the YAML's choices of ``stage`` are the table's names, so a row added there is offered."""
    assert RunConfig.__dataclass_fields__["stage"].type is not None
    for name in STAGES:
        assert Draft(stage=name).stage == name and not [p for p in Draft(stage=name, dataset="d.jsonl").validate()
                                                            if "stage" in p]
    assert stage_of("no-such-stage") is STAGES["sft"]


def test_a_stage_keeps_the_sequences_per_forward_of_its_batch() -> None:
    """micro_batch: DPO halves an even batch and doubles accumulation (the same rows per optimizer step), keeps an
    odd one; SFT and KTO pass unchanged."""
    assert STAGES["dpo"].micro_batch(8, 1) == (4, 2) and STAGES["dpo"].micro_batch(3, 2) == (3, 2)
    assert STAGES["sft"].micro_batch(8, 3) == (8, 3) and STAGES["kto"].micro_batch(8, 3) == (8, 3)
    assert STAGES["dpo"].sequences_per_forward(8) == 8 and STAGES["dpo"].sequences_per_forward(3) == 6


def test_every_stage_names_a_trainer_that_exists_and_a_reward_the_page_words() -> None:
    """A row's ``trainer`` is a ``module:function`` the engine imports at a run's start: a typo would surface only
    then, so it is resolved here; each reward a stage offers is a choice of RunConfig's ``reward``; a row naming TRL's classes (``trl``) names
    classes TRL has."""
    import importlib
    import typing
    for stage in STAGES.values():
        module, _, name = stage.trainer.partition(":")
        assert callable(getattr(importlib.import_module(module), name, None)), stage.trainer
        if stage.trl:
            trl = importlib.import_module("trl")
            assert all(isinstance(getattr(trl, cls, None), type) for cls in stage.trl), stage.trl
    offered = typing.get_args(typing.get_type_hints(RunConfig)["reward"])
    assert {r for s in STAGES.values() for r in s.rewards} <= set(offered)
