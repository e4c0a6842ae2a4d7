"""The run folder: the contract between the job runner, the engine and the UI.

    runs/<id>/
      config.yaml          the RunConfig that made the run (re-run it with the CLI)
      status.json          state: running | finished | aborted | failed, reason, pid, timestamps
      trainer_log.jsonl    one JSON event per line (progress, log, eval, notice, end)
      stdout.log           the child process's output
      base_model/          tiny-demo only: the locally built base model + tokenizer
      checkpoints/checkpoint-<step>/   resumable states (written to a temp name, then renamed)
      adapter/ | model/    the final LoRA adapter or full model
      loss.png             loss curve (raw + smoothed, eval)
      val.jsonl            the held-out validation rows (what Evaluate checks by default)
      train_keys.txt       one fingerprint per training prompt (the leakage check of Evaluate)
      improved_from.json   a run improved from another with feedback: that run, the method, the feedback rows
      STOP                 present = a graceful stop was requested

This module is the only one that knows these names.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import StudioError
from ..safe_files import open_append
from ..workspace import atomic_write_text, confine, is_inside
from .reasons import Reason, reason_fields


@dataclass(frozen=True)
class RunDir:
    path: Path

    def __init__(self, path: str | Path):
        object.__setattr__(self, "path", Path(path))

    # layout
    @property
    def config(self) -> Path: return self.path / "config.yaml"
    @property
    def status_file(self) -> Path: return self.path / "status.json"
    @property
    def log(self) -> Path: return self.path / "trainer_log.jsonl"
    @property
    def stdout(self) -> Path: return self.path / "stdout.log"
    @property
    def base_model(self) -> Path: return self.path / "base_model"
    @property
    def checkpoints(self) -> Path: return self.path / "checkpoints"
    @property
    def adapter(self) -> Path: return self.path / "adapter"
    @property
    def model(self) -> Path: return self.path / "model"
    @property
    def val_data(self) -> Path: return self.path / "val.jsonl"
    @property
    def train_keys(self) -> Path: return self.path / "train_keys.txt"
    @property
    def lineage(self) -> Path: return self.path / "improved_from.json"
    @property
    def check_set(self) -> Path: return self.path / "check_set.jsonl"  # an improving run's frozen check rows
    @property
    def verdict(self) -> Path: return self.path / "verdict.json"  # its before / after on them (the gate)
    @property
    def loss_plot(self) -> Path: return self.path / "loss.png"
    @property
    def stop_flag(self) -> Path: return self.path / "STOP"

    def own(self, path: Path) -> bool:
        """True when ``path`` (a file of this run) is no link leading out of the run folder: only such a file is
        read or shown (a planted link could name any file of the machine)."""
        return not path.is_symlink() or is_inside(path, self.path)

    def stopped_by(self) -> str:
        """Who asked for the stop, as the STOP flag names them; "" when it names nobody."""
        try:
            return self.stop_flag.read_text(encoding="utf-8").strip()[:80] if self.own(self.stop_flag) else ""
        except OSError:
            return ""

    def ensure(self) -> "RunDir":
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    # status
    def read_status(self) -> dict[str, Any]:
        """status.json; an unreadable one is kept aside (studio/state_files.py) and the state rebuilt from what
        the run recorded elsewhere (its end event, its final model), so a finished run stays finished."""
        # start-up: state_files needs yaml, 0.02 s at import; `studio webui --help` and `feedback --help` load us
        from ..state_files import problems, read_state
        status = read_state(self.status_file, kind="json", expect=dict)
        if status is not None or not self.path.is_dir():
            return status or {}
        lost = [q for q in problems() if q.file == self.status_file]
        if not lost:
            return {}
        return self._rebuild_status(lost[-1].kept_as)

    def _rebuild_status(self, kept_as: Path | None) -> dict[str, Any]:
        """The state a run's log and folder prove (its 'end' event, else 'finished' with a final model, else
        'failed'); timestamps only where an event recorded them. Written back, so the page reads it next time."""
        events = self.events()
        end = next((e for e in reversed(events) if e.get("type") == "end"), None)
        steps = [e.get("step") for e in events if isinstance(e.get("step"), int)]
        state = str(end.get("state")) if end and end.get("state") else (
            "finished" if self.final_model() is not None else "failed")
        reason = Reason.of("status_rebuilt_kept", name=kept_as.name) if kept_as else Reason.of("status_rebuilt")
        status: dict[str, Any] = {"state": state, "step": max(steps) if steps else None, **reason_fields(reason)}
        times = [e["time"] for e in events if isinstance(e.get("time"), (int, float))]
        if times:
            status.update(started=min(times), ended=max(times) if end else None)
        try:
            atomic_write_text(self.status_file, json.dumps(status, ensure_ascii=False, indent=1))
        except OSError:
            pass  # a read-only run folder: the rebuilt state is still shown
        return status

    def write_status(self, state: str, **extra: Any) -> dict[str, Any]:
        status = self.read_status()
        status.update(extra)
        status["state"] = state
        status["updated"] = time.time()
        atomic_write_text(self.status_file, json.dumps(status, ensure_ascii=False, indent=1))
        return status

    # events
    def append_event(self, event: dict[str, Any]) -> None:
        event.setdefault("time", time.time())
        with open_append(self.log) as fh:  # never through a link planted in the run folder
            fh.write((json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))
            fh.flush()

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        """Events from line ``start`` on; a partly written last line is skipped."""
        if not self.log.exists() or not self.own(self.log):
            return []
        out = []
        with open(self.log, encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if i < start:
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError:
                    break
        return out

    # checkpoints
    def checkpoint_list(self) -> list[Path]:
        """Complete checkpoints, oldest first (temp folders of an interrupted save are ignored)."""
        if not self.checkpoints.is_dir():
            return []
        found = []
        for p in self.checkpoints.iterdir():
            m = re.fullmatch(r"checkpoint-(\d+)", p.name)
            if m and p.is_dir() and (p / "trainer_state.json").exists():
                found.append((int(m.group(1)), p))
        return [p for _, p in sorted(found)]

    def last_checkpoint(self) -> Path | None:
        cps = self.checkpoint_list()
        return cps[-1] if cps else None

    def final_model(self) -> Path | None:
        for p in (self.adapter, self.model):
            if p.is_dir() and any(p.iterdir()):
                return p
        return None


def list_runs(root: str | Path) -> Iterator[RunDir]:
    """Run folders under ``root``, newest first."""
    root = Path(root)
    if not root.is_dir():
        return iter(())
    # a run folder is never a link: one in the runs folder could name any folder of the machine
    runs = [RunDir(p) for p in root.iterdir() if not p.is_symlink() and (p / "config.yaml").exists()]
    return iter(sorted(runs, key=lambda r: r.config.stat().st_mtime, reverse=True))


def find_finished_run(runs_root: str | Path, run: str | Path) -> RunDir:
    """The finished run ``run`` names (a folder name in ``runs_root``, or a path to one), for the demo page.

    A relative name is looked up in ``runs_root`` first, then from the current folder; either way the folder
    must be a run directly inside ``runs_root`` (what the Evaluate tab lists), so a command cannot point the
    demo at any other folder of the machine.

    Raises:
        StudioError: the name points outside ``runs_root``, is not a run folder, or the run has no final model.
    """
    root = Path(runs_root).expanduser().resolve()
    text = str(run).strip()
    candidates = [Path(text)] if Path(text).is_absolute() else [root / text, Path.cwd() / text]
    given = next((c for c in candidates if c.exists()), candidates[0])
    try:
        path = confine(given, [root])
    except StudioError:  # confine's fix names --data-root, which a demo does not take
        raise StudioError.of("run.demo_outside", text=text, root=root) from None
    if path.parent != root or not (path / "config.yaml").is_file():
        names = [r.path.name for r in list_runs(root)][:5]
        if names:
            raise StudioError.of("run.demo_not_run", text=text, root=root, names=names)
        raise StudioError.of("run.demo_no_runs", text=text, root=root)
    found = RunDir(path)
    if found.read_status().get("state") != "finished" or found.final_model() is None:
        raise StudioError.of("run.demo_unfinished", name=path.name)
    return found
