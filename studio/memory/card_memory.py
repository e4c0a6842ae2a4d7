"""The memory of this machine's first card, asked of the vendor's tool (no torch import: the page asks at start).

NVIDIA: ``nvidia-smi``. AMD: ``amd-smi`` (ROCm 6 and later), else ``rocm-smi`` (older ROCm), so an AMD machine is
not taken for a card-less one. Each tool lists every GCD of a multi-die card (MI250X: two of 64 GB) as its own
device, as torch does, and a run trains on one of them, so the first device's memory is the answer. A tool that is
missing, fails or prints something unreadable hands over to the next.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any, Callable

MIB = 2**20
GIB = 2**30
_UNITS = {"b": 1, "kb": 2**10, "kib": 2**10, "mb": MIB, "mib": MIB, "gb": GIB, "gib": GIB}


def _run(exe: str, *args: str) -> str | None:
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _nvidia(out: str) -> float | None:
    first = out.split()
    return float(first[0]) * MIB / GIB if first else None   # MiB, one line per card


def _bytes(value: Any, unit: str = "mb") -> float | None:
    """A size as amd-smi writes it: {"value": 65536, "unit": "MB"}, "65536 MB", or a bare number in ``unit``.
    amd-smi's MB are MiB (the driver's VRAM size in 2**20 bytes)."""
    if isinstance(value, dict):
        return _bytes(value.get("value"), str(value.get("unit", unit)))
    if isinstance(value, (int, float)):
        return float(value) * _UNITS.get(unit.lower(), MIB)
    found = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", str(value))
    if not found:
        return None
    return float(found.group(1)) * _UNITS.get((found.group(2) or unit).lower(), MIB)


def _first_vram(data: Any) -> dict | None:
    """The first device's "vram" section, wherever this amd-smi version nests the device list."""
    if isinstance(data, dict):
        if isinstance(data.get("vram"), dict):
            return data["vram"]
        children = list(data.values())
    elif isinstance(data, list):
        children = data
    else:
        return None
    for child in children:
        found = _first_vram(child)
        if found is not None:
            return found
    return None


def _amd_smi(out: str) -> float | None:
    vram = _first_vram(json.loads(out))
    for key, value in (vram or {}).items():
        if "size" in key.lower():
            size = _bytes(value, "mb")
            return size / GIB if size else None
    return None


def _rocm_smi(out: str) -> float | None:
    for card in json.loads(out).values():   # {"card0": {"VRAM Total Memory (B)": "68702699520", ...}, ...}
        if isinstance(card, dict) and "VRAM Total Memory (B)" in card:
            return int(card["VRAM Total Memory (B)"]) / GIB
    return None


TOOLS: tuple[tuple[str, tuple[str, ...], Callable[[str], float | None]], ...] = (
    ("nvidia-smi", ("--query-gpu=memory.total", "--format=csv,noheader,nounits"), _nvidia),
    ("amd-smi", ("static", "--vram", "--json"), _amd_smi),
    ("rocm-smi", ("--showmeminfo", "vram", "--json"), _rocm_smi),
)


def detect_gpu_mem_gb() -> float | None:
    """Total memory of the first card (one GCD of a multi-die AMD card) in GB (GiB); None without a card."""
    for name, args, parse in TOOLS:
        exe = shutil.which(name)
        out = _run(exe, *args) if exe else None
        if not out:
            continue
        try:
            gb = parse(out)
        except (ValueError, TypeError, AttributeError, KeyError):   # another version's output: the next tool
            gb = None
        if gb:
            return gb
    return None
