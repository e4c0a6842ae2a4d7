"""Resume a ZeRO checkpoint on a different number of processes (2 nodes -> 1 card, 1 -> 2, ...).

DeepSpeed refuses to load ZeRO optimizer shards saved by a different data-parallel world size
("Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is not currently
supported"). Its own answer is the universal checkpoint: ``deepspeed.checkpoint.ds_to_universal``
merges the shards per parameter, and ``"checkpoint": {"load_universal": true}`` re-slices them at load.
This module detects the mismatch and runs that conversion once, on global rank 0.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ..errors import StudioError


def saved_world_size(checkpoint: Path) -> int | None:
    """Data-parallel ranks that wrote ``checkpoint`` (None: not a DeepSpeed checkpoint)."""
    tag_file = checkpoint / "latest"
    if not tag_file.is_file():
        return None
    step_dir = checkpoint / tag_file.read_text(encoding="utf-8").strip()
    shards = list(step_dir.glob("*optim_states.pt"))
    return len(shards) or None


def prepare_universal(checkpoint: Path | None, world_size: int, is_main: bool, wait_s: float = 900) -> bool:
    """True when ``checkpoint`` must be loaded as a universal checkpoint (it is made here if missing).

    Raises:
        StudioError: the conversion failed, or another rank's conversion did not appear in time.
    """
    if checkpoint is None:
        return False
    saved = saved_world_size(checkpoint)
    if saved is None or saved == world_size:
        return False
    tag = (checkpoint / "latest").read_text(encoding="utf-8").strip()
    universal = checkpoint / f"{tag}_universal"
    marker = checkpoint / "latest_universal"  # written last by ds_to_universal: the conversion is whole
    if is_main and not marker.is_file():
        # start-up: DeepSpeed, 2.7 s at import; only a DeepSpeed run needs it
        from deepspeed.checkpoint import ds_to_universal
        args = argparse.Namespace(input_folder=str(checkpoint / tag), output_folder=str(universal),
                                  num_extract_workers=1, num_merge_workers=1, keep_temp_folder=False,
                                  strict=True, inject_missing_state=False)
        try:
            ds_to_universal.main(args)
        except Exception as exc:  # noqa: BLE001 - a library failure becomes a plain reason
            raise StudioError.of("engine.reshard", checkpoint=checkpoint, saved=saved, world_size=world_size,
                                 detail=str(exc)) from None
    deadline = time.time() + wait_s
    while not marker.is_file():
        if time.time() > deadline:
            raise StudioError.of("engine.reshard_wait", rank=os.environ.get("RANK"), wait_s=wait_s,
                                 checkpoint=checkpoint)
        time.sleep(0.5)
    return True
