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
# the missing pieces (the folder's, then libaio) -> the error's code (studio/words/run_errors.py words each)
NVME_CODES = {("no_path",): "engine.nvme_no_path", ("unwritable",): "engine.nvme_unwritable",
              ("low_space",): "engine.nvme_low_space", ("libaio",): "engine.nvme_libaio",
              ("no_path", "libaio"): "engine.nvme_no_path_and_libaio",
              ("unwritable", "libaio"): "engine.nvme_unwritable_and_libaio",
              ("low_space", "libaio"): "engine.nvme_low_space_and_libaio"}


def with_nvme_path(ds: dict[str, Any], nvme_path: str) -> dict[str, Any]:
    """A copy of ``ds`` whose nvme offload sections point at ``nvme_path`` (absolute)."""
    out = copy.deepcopy(ds)
    zero = out.get("zero_optimization", {})
    for key in ("offload_param", "offload_optimizer"):
        section = zero.get(key)
        if isinstance(section, dict) and section.get("device") == "nvme":
            section["nvme_path"] = str(Path(nvme_path).expanduser().resolve())
    return out


def async_io_missing() -> bool:
    """DeepSpeed's own verdict on its async_io op (libaio): True when it cannot be built/loaded here."""
    # start-up: DeepSpeed, 2.7 s at import; only a DeepSpeed run needs it
    from deepspeed.ops.op_builder import AsyncIOBuilder
    return not AsyncIOBuilder().is_compatible(verbose=False)


def check_nvme_ready(nvme_path: str | None, *, need_gb: float = MIN_FREE_GB) -> None:
    """Every prerequisite of disk offload at once: the folder, its free space, and async_io (libaio).

    Raises:
        StudioError: code engine.nvme_* (NVME_CODES), naming each missing piece and its fix.
    """
    missing: list[str] = []
    values: dict[str, Any] = {}
    if not (nvme_path or "").strip():
        missing.append("no_path")
    else:
        folder = Path(nvme_path).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".studio_write_test"
            probe.write_bytes(b"0")
            probe.unlink()
        except OSError as exc:
            missing.append("unwritable")
            values.update(folder=folder, detail=exc.strerror or str(exc))
        else:
            free = shutil.disk_usage(folder).free / 1024 ** 3
            if free < need_gb:
                missing.append("low_space")
                values.update(folder=folder, free=free, need=need_gb)
    if async_io_missing():
        missing.append("libaio")
    if missing:
        code = NVME_CODES[tuple(missing)]
        raise StudioError.of(code, **values)


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
