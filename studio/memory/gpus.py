"""The cards the fit panel offers to plan for: memory, vendor and what the studio's plan does there.

NVIDIA cards run the CUDA build of torch; AMD cards the ROCm build (torch.version.hip set, the same
``torch.cuda`` API, device "cuda"). bf16 per card is what the precision plan assumes when it plans for a card it
is not running on (studio/models/precision.py decides for the card present). docs/GPU.md has the install lines.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_gb: float      # what torch reports as total memory is a little less (driver reserve)
    vendor: str           # "nvidia" or "amd"
    bf16: bool
    arch: str = ""        # AMD: the gfx target (torch.cuda.get_device_properties().gcnArchName)


GPUS: tuple[Gpu, ...] = (
    Gpu("NVIDIA RTX 3090 / 4090", 24, "nvidia", True),
    Gpu("NVIDIA L40S", 48, "nvidia", True),
    Gpu("NVIDIA A100 40 GB", 40, "nvidia", True),
    Gpu("NVIDIA A100 / H100 80 GB", 80, "nvidia", True),
    Gpu("NVIDIA H200", 141, "nvidia", True),
    Gpu("AMD Instinct MI300X", 192, "amd", True, "gfx942"),
    Gpu("AMD Instinct MI250X GCD", 64, "amd", True, "gfx90a"),   # one die of two (GCDs) of 64 GB: torch sees two devices
    Gpu("AMD Instinct MI210", 64, "amd", True, "gfx90a"),
    Gpu("AMD Radeon PRO W7900", 48, "amd", True, "gfx1100"),
    Gpu("AMD Radeon RX 7900 XTX", 24, "amd", True, "gfx1100"),
)


def _label(g: Gpu) -> str:
    return f"{g.name} — {g.memory_gb:g} GB"


def gpu_choices() -> list[str]:
    """The page's card list: names with memory (proper names and numbers: the same in every page language)."""
    return [_label(g) for g in GPUS]


def gpu_memory(name: object) -> float | None:
    """The memory of a listed card, by name or list label; None for anything else (a value from the browser is
    not trusted)."""
    return next((g.memory_gb for g in GPUS if name in (g.name, _label(g))), None)
