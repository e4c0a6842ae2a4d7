"""ZeRO-Infinity (DeepSpeed offload to NVMe): fill the user's folder into the plan, and check before Start.

Why a pre-flight: without libaio DeepSpeed fails deep inside engine setup, minutes into a large model's
load, with a compiler error about ``libaio.h``. The checks here take seconds and name the fix.
"""
from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import StudioError

MIN_FREE_GB = 1.0  # below this the swap files of even a small model do not fit
LIBAIO_FIX = ("install libaio and its headers (Debian/Ubuntu: sudo apt-get install libaio-dev; RHEL/Rocky: "
              "sudo dnf install libaio-devel), or choose the z3-offload plan (host RAM instead of disk)")


def with_nvme_path(ds: dict[str, Any], nvme_path: str) -> dict[str, Any]:
    """A copy of ``ds`` whose nvme offload sections point at ``nvme_path`` (absolute)."""
    out = copy.deepcopy(ds)
    zero = out.get("zero_optimization", {})
    for key in ("offload_param", "offload_optimizer"):
        section = zero.get(key)
        if isinstance(section, dict) and section.get("device") == "nvme":
            section["nvme_path"] = str(Path(nvme_path).expanduser().resolve())
    return out


def async_io_problem() -> str | None:
    """DeepSpeed's own verdict on its async_io op (libaio), or None when it can be built/loaded."""
    from deepspeed.ops.op_builder import AsyncIOBuilder
    builder = AsyncIOBuilder()
    if builder.is_compatible(verbose=False):
        return None
    return "DeepSpeed's async_io op cannot be built here: libaio (the .so and its headers) was not found"


def check_nvme_ready(nvme_path: str | None, *, need_gb: float = MIN_FREE_GB) -> None:
    """Every prerequisite of disk offload at once: the folder, its free space, and async_io (libaio).

    Raises:
        StudioError: code 'nvme', naming each missing piece and its fix.
    """
    problems, fixes = [], []
    if not (nvme_path or "").strip():
        problems.append("no offload_nvme_path is set")
        fixes.append("set offload_nvme_path to a folder on a fast local disk")
    else:
        folder = Path(nvme_path).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".studio_write_test"
            probe.write_bytes(b"0")
            probe.unlink()
        except OSError as exc:
            problems.append(f"the offload folder '{folder}' cannot be written ({exc.strerror or exc})")
            fixes.append("pick a folder you can write to on a local disk")
        else:
            free = shutil.disk_usage(folder).free / 1024 ** 3
            if free < need_gb:
                problems.append(f"the offload folder '{folder}' has {free:.1f} GB free, the plan needs "
                                f"about {need_gb:.1f} GB")
                fixes.append("free space there or pick a larger disk")
    aio = async_io_problem()
    if aio:
        problems.append(aio)
        fixes.append(LIBAIO_FIX)
    if problems:
        raise StudioError("Disk offload (z3-nvme) cannot start: " + "; ".join(problems),
                          "; ".join(fixes), code="nvme")


def disk_is_tmpfs(path: str) -> bool:
    """True when ``path`` is on a RAM disk (tmpfs): still faster than nothing, but it uses host RAM."""
    try:
        best, fstype = "", ""
        target = os.path.realpath(path)
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) > 2 and target.startswith(parts[1]) and len(parts[1]) > len(best):
                    best, fstype = parts[1], parts[2]
        return fstype == "tmpfs"
    except OSError:
        return False
