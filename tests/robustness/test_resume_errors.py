"""Group 'faults': a tampered or truncated checkpoint on resume is a plain 'what / fix' error
naming the checkpoint, not the loader's SafetensorError / UnpicklingError text."""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.harness import api, expect, record


def _safetensor_error() -> Exception:
    from safetensors import SafetensorError
    return SafetensorError("Error while deserializing header: HeaderTooLarge")


LOADER_ERRORS = [
    ("tampered safetensors", _safetensor_error),
    ("truncated optimizer.pt", lambda: pickle.UnpicklingError("invalid load key, '\\x00'.")),
    ("truncated zip checkpoint", lambda: RuntimeError("PytorchStreamReader failed reading zip archive: failed "
                                                      "finding central directory")),
    ("checkpoint of another shape", lambda: EOFError("Ran out of input")),
]


class _Trainer:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def train(self, resume_from_checkpoint: str | None = None) -> Any:
        raise self.exc


@pytest.mark.parametrize("name, make", LOADER_ERRORS, ids=[c[0] for c in LOADER_ERRORS])
def test_broken_checkpoint_on_resume(tmp_path: Path, name: str, make: Any) -> None:
    from studio.engine.run import train_or_resume
    ckpt = tmp_path / "checkpoint-20"
    ckpt.mkdir()
    outcome, detail = api(lambda: train_or_resume(_Trainer(make()), ckpt))
    record("faults", "python", "resume from a " + name, outcome, detail)
    expect(outcome, detail, "clear", "checkpoint-20")
    assert "new run" in detail


def test_a_training_error_after_resume_is_not_blamed_on_the_checkpoint(tmp_path: Path) -> None:
    from studio.engine.run import train_or_resume
    with pytest.raises(ZeroDivisionError):
        train_or_resume(_Trainer(ZeroDivisionError("a bug")), tmp_path / "checkpoint-1")
