"""Card memory is found on an AMD machine too: ``amd-smi`` (ROCm 6+) or ``rocm-smi`` (older ROCm) when there is no
``nvidia-smi``, without importing torch (the page asks). An MI250X is two GCDs; each tool and torch list each GCD
as its own 64 GB device, and that is the card a run trains on. The tools here are stand-ins printing the JSON
shapes the real ones print (rocm-smi's bytes as strings; amd-smi's size as {value, unit} or "N MB")."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from studio.memory.estimator import detect_gpu_mem_gb

GCD = 68702699520   # bytes rocm-smi reports for one MI250X GCD (64 GiB)


def _tool(folder: Path, name: str, stdout: str, rc: int = 0) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n/bin/cat <<'OUT'\n{stdout}\nOUT\nexit {rc}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))   # nothing else: no real nvidia-smi can answer
    return folder


ROCM_SMI = json.dumps({"card0": {"VRAM Total Memory (B)": str(GCD), "VRAM Total Used Memory (B)": "1048576"},
                       "card1": {"VRAM Total Memory (B)": str(GCD), "VRAM Total Used Memory (B)": "0"}})
AMD_SMI_NEW = json.dumps([{"gpu": 0, "vram": {"type": "HBM", "size": {"value": 65536, "unit": "MB"}}},
                          {"gpu": 1, "vram": {"type": "HBM", "size": {"value": 65536, "unit": "MB"}}}])
AMD_SMI_OLD = json.dumps([{"gpu": 0, "vram": {"vram_type": "HBM", "vram_size": "196592 MB"}}])


def test_rocm_smi_alone_gives_one_gcd(bin_dir) -> None:
    _tool(bin_dir, "rocm-smi", ROCM_SMI)
    assert detect_gpu_mem_gb() == pytest.approx(GCD / 2**30, abs=0.01)


@pytest.mark.parametrize("out,gb", [(AMD_SMI_NEW, 64.0), (AMD_SMI_OLD, 191.98)])
def test_amd_smi_is_asked_first_on_rocm(bin_dir, out, gb) -> None:
    _tool(bin_dir, "amd-smi", out)
    _tool(bin_dir, "rocm-smi", "not json", rc=1)
    assert detect_gpu_mem_gb() == pytest.approx(gb, abs=0.01)


def test_a_broken_tool_falls_through_to_the_next(bin_dir) -> None:
    _tool(bin_dir, "nvidia-smi", "NVIDIA-SMI has failed", rc=9)
    _tool(bin_dir, "amd-smi", "{}")
    _tool(bin_dir, "rocm-smi", ROCM_SMI)
    assert detect_gpu_mem_gb() == pytest.approx(GCD / 2**30, abs=0.01)


def test_nvidia_first_and_none_without_any_tool(bin_dir) -> None:
    assert detect_gpu_mem_gb() is None
    _tool(bin_dir, "nvidia-smi", "81559\n81559")
    _tool(bin_dir, "rocm-smi", ROCM_SMI)
    assert detect_gpu_mem_gb() == pytest.approx(81559 / 1024, abs=0.01)
    assert os.environ["PATH"] == str(bin_dir)
