"""What the demo page of one finished run shows of it, read once on the server when the demo starts: its task
(labels or chat), labels, base model, method, template and a few held-out example rows. The page itself is
studio/ui/demo.py; nothing here takes a path from a browser (the run is resolved by ``find_finished_run`` first).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..autoconfig import guess_task
from ..config.run_config import trained_config
from ..errors import StudioError
from ..evaluation.evaluate import answer_rows
from ..evaluation.metrics import label_set, normalize
from ..runs.run_dir import RunDir
from . import versions

EXAMPLES = 6           # held-out rows shown as examples (spread over the labels)


@dataclass
class DemoRun:
    """What the page shows of a run, read once on the server when the demo starts."""
    path: str
    name: str
    task: Literal["labels", "chat"]
    model: str
    method: str
    template: str
    labels: list[str] = field(default_factory=list)
    examples: list[dict[str, str]] = field(default_factory=list)
    like: dict[str, str] | None = None  # one held-out row: where a typed text goes (input or instruction)


def describe_run(run_path: str | Path) -> DemoRun:
    """The run's task, labels and example rows, from its config and its recorded held-out split.

    Labels when the held-out answers are a few labels (the rule the Settings page uses, ``guess_task``),
    else a chat. A run that kept no held-out rows is judged by its training rows and gets no examples.
    """
    run = RunDir(run_path)
    cfg = trained_config(run.config)
    rows, kept = answer_rows(run.path)
    held_out = rows if kept else []
    labels: list[str] = []
    if rows and guess_task(rows) == "sentiment":
        try:
            labels = label_set([str(r.get("output", "")) for r in rows])
        except StudioError:
            labels = []
    task: Literal["labels", "chat"] = "labels" if labels else "chat"
    model = Path(str(cfg.model_name_or_path)).name  # a local base's folder name, not the server's path to it
    like = {k: str(rows[0].get(k, "")) for k in ("instruction", "input")} if rows else None
    return DemoRun(str(run.path), run.path.name, task, model, cfg.finetuning_type, str(cfg.template), labels,
                   pick_examples(held_out, labels) if labels else [], like)


def pick_examples(rows: list[dict[str, str]], labels: list[str], k: int = EXAMPLES) -> list[dict[str, str]]:
    """Up to ``k`` held-out rows, taking the labels in turn, so every label has an example."""
    by_label: dict[str, list[dict[str, str]]] = {normalize(lab): [] for lab in labels}
    for r in rows:
        if (r.get("input") or r.get("instruction")) and normalize(r.get("output", "")) in by_label:
            by_label[normalize(r.get("output", ""))].append(r)
    picked: list[dict[str, str]] = []
    while len(picked) < k and any(by_label.values()):
        for group in by_label.values():
            if group and len(picked) < k:
                picked.append(group.pop(0))
    return picked


class LiveDemoRun:
    """The run a demo page answers with now: its line's live version (studio/app/versions.py), read from the
    workspace's database at each request, so an owner's promote or rollback reaches the page without a restart.
    Reads as a DemoRun (attributes of the live one); a line nobody promoted anything in is the run the demo was
    started for."""

    def __init__(self, base: DemoRun, store: Any):
        self.base, self.store = base, store
        self._described: dict[str, DemoRun] = {base.path: base}

    def now(self) -> DemoRun:
        if self.store is None:
            return self.base
        runs_root = Path(self.base.path).parent
        line = versions.line_of(runs_root, self.base.name)
        if not self.store.version_history(line, limit=1):
            return self.base
        path = str(runs_root / versions.live(self.store, runs_root, line))
        if path not in self._described:
            self._described[path] = describe_run(path)
        return self._described[path]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.now(), name)
