"""The thread rule for work on a loaded model (runs/cpu_threads.py): one thread per core others leave free, for a
training run, `studio eval` and every computation the page's server makes on a model (evaluation.inference.hold_model)."""
from __future__ import annotations

import ast
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from studio.evaluation import inference
from studio.runs import run_time

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_cores_one_busy(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(run_time, "cores", lambda: 2)
    monkeypatch.setattr(inference, "others_load", lambda: 1.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _loaded() -> SimpleNamespace:
    return SimpleNamespace(lock=threading.Lock())


def test_a_page_computation_uses_the_cores_others_leave_free_and_gives_them_back(two_cores_one_busy) -> None:
    loaded = _loaded()
    with inference.hold_model(loaded):
        assert torch.get_num_threads() == 1
        assert loaded.lock.locked()
    assert torch.get_num_threads() == 2 and not loaded.lock.locked()


def test_overlapping_computations_give_the_process_its_own_count_back(two_cores_one_busy) -> None:
    """Two checks on two models overlap in the server: the first to end must not restore the count while the second
    computes, and the second must not "restore" the first one's reduced count."""
    a, b = inference.hold_model(_loaded()), inference.hold_model(_loaded())
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert torch.get_num_threads() == 1
    b.__exit__(None, None, None)
    assert torch.get_num_threads() == 2


def test_a_computation_that_fails_gives_the_lock_and_threads_back(two_cores_one_busy) -> None:
    loaded = _loaded()
    with pytest.raises(ValueError):
        with inference.hold_model(loaded):
            raise ValueError("boom")
    assert torch.get_num_threads() == 2 and not loaded.lock.locked()


def test_every_computation_on_a_loaded_model_goes_through_hold_model() -> None:
    """The class rule: no code in studio/ takes a loaded model's lock itself (``with x.lock`` or
    ``x.lock.acquire``), which would compute with every thread beside others' work. Only hold_model does."""
    offenders = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == "hold_model"
                   for n in ast.walk(c)}
        for node in ast.walk(tree):
            if id(node) in allowed:
                continue
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    e = item.context_expr
                    if isinstance(e, ast.Attribute) and e.attr == "lock":
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if (isinstance(node, ast.Attribute) and node.attr == "acquire" and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "lock"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders
