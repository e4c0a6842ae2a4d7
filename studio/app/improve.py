""""Improve this run", end to end for the CLI and the page: plan (what the feedback holds, which method), prepare
(datasets + config + lineage), and compare the old and the new run side by side.

Training itself is not here: the CLI trains in its own process as ``python -m studio train`` does, the page hands the
config to the run queue like every other Train button.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

from ..config.run_config import RunConfig
from ..data.dataset import load_rows
from ..errors import StudioError
from ..evaluation.compare import _free  # frees the card between the two runs (torch is imported there)
from ..evaluation.evaluate import _generate_rows, sentiment_eval, validation_rows
from ..evaluation.inference import label_task, load_model
from ..data.registry import forget_datasets, refuse_replacing
from ..runs.run_dir import RunDir
from ..workspace import atomic_write_text, plain_name, safe_name
from ..feedback.check_set import is_aside, split_accepted
from ..feedback.datasets import count_rows, dataset_names, make_datasets, remove_datasets, run_prompt_shape
from ..feedback.improve import improvement_config, pick_method, record_lineage
from ..feedback.store import Feedback, FeedbackStore
from . import verdict

def is_labels_run(run_path: str | Path) -> bool:
    """A run trained to answer with a few labels (the rule the demo page and the Evaluate tab use); evaluation/ is a layer above feedback/, so
    the page and the CLI ask it here and tell feedback.improve."""
    return label_task(str(run_path)) is not None


MAX_COMPARE_ROWS = 500  # rows per set scored by each run: the comparison must answer in minutes on a CPU


def workspace_run(workspace: str | Path, run: str) -> Path:
    """The folder of the run of ``workspace`` named ``run`` (it has its config.yaml).

    Raises:
        StudioError: not a plain name, or no such run.
    """
    name = safe_name(run, code="name.run")
    folder = Path(workspace) / "runs" / name
    if not RunDir(folder).config.is_file():
        raise StudioError.of("improve.no_run", name=name, folder=Path(workspace) / "runs")
    return folder


def plan(workspace: str | Path, run: str, method: str = "auto") -> dict[str, Any]:
    """What improving ``run`` would train on, from every accepted row of its feedback but those kept aside to judge
    it: {"corrections", "confirmed", "aside", "pairs", "skipped", "method", "warning"} (``method`` is None when the
    feedback cannot train with the method asked for, ``why`` then says so as a words code with its ``why_values``,
    rendered in the caller's language; ``warning`` a code said before a preference run on labels)."""
    folder = workspace_run(workspace, run)
    store = FeedbackStore.in_workspace(workspace)
    counts = count_rows(store, folder.name, run_prompt_shape(folder), rows=teaching_rows(store, folder.name),
                        confirmed=True)
    made = {k: {"rows": counts[k]} for k in ("sft", "ranking") if counts[k]}
    split = split_accepted(store, folder.name)
    fixes = sum(1 for r in split["teach"] if r.final_correction)
    out: dict[str, Any] = {"corrections": fixes, "pairs": counts["ranking"], "confirmed": len(split["teach"]) - fixes,
                           "aside": len(split["aside"]), "skipped": counts["skipped"], "method": None, "why": "",
                           "why_values": {}, "warning": None}
    if not made:
        out["why"] = "imp.no_corrections"
        return out
    labels_run = is_labels_run(folder)
    try:
        out["method"] = pick_method(made, method, labels_run)
    except StudioError as exc:
        out["why"], out["why_values"] = exc.code, dict(exc.values or {})
    if out["method"] == "dpo" and labels_run:
        out["warning"] = "imp.dpo_labels"  # said before it starts: SFT is the measured better choice here
    return out


def teaching_rows(store: FeedbackStore, run: str) -> Iterator[Feedback]:
    """``run``'s accepted feedback rows an improvement may learn from (streamed): all but those kept aside for its
    check set."""
    return (r for r in store.iter_rows(run=run, status="accepted") if not is_aside(r.input))


def _refuse_taken(data: Path, names: list[str]) -> None:
    """The datasets an Improve would make are new: one that exists (registered, or its file) is someone's.

    Raises:
        StudioError: improve.dataset_taken, naming the first.
    """
    for dataset in names:
        try:
            refuse_replacing(data, dataset, data / f"{dataset}.jsonl")
        except StudioError:
            raise StudioError.of("improve.dataset_taken", name=dataset, info=data / "dataset_info.json") from None


def prepare(workspace: str | Path, run: str, new: str | None = None, method: str = "auto",
            seed: int = 42) -> RunConfig:
    """Datasets from every accepted row of ``run``'s feedback (NEW_feedback...), the improving run's config into
    runs/NEW and its lineage file. Nothing trains yet. Everything that can be refused is checked before anything is
    written, and what was written is removed again if a later step fails: a refused Improve leaves nothing.

    Raises:
        StudioError: no such run, a NEW that exists or is not plain, a dataset of NEW's names that exists, no
            accepted correction, a run without an adapter, a method the feedback cannot train with.
    """
    folder = workspace_run(workspace, run)
    name = plain_name(new or f"{folder.name}-improved", code="name.new_run")
    out = Path(workspace) / "runs" / name
    if out.exists():
        raise StudioError.of("improve.run_exists", name=name)
    data = Path(workspace) / "data"
    store, like, labels_run = FeedbackStore.in_workspace(workspace), run_prompt_shape(folder), is_labels_run(folder)
    # the rows kept aside judge the result (studio/feedback/check_set.py); they never train it
    counts = count_rows(store, folder.name, like, rows=teaching_rows(store, folder.name), confirmed=True)
    if not any(counts[k] for k in ("sft", "ranking", "kto")):
        if counts["skipped"]:
            raise StudioError.of("feedback.nothing_accepted_conflicts", run=folder.name, skipped=counts["skipped"])
        raise StudioError.of("feedback.nothing_accepted", run=folder.name)
    if not counts["sft"]:  # 👍 / 👎 alone: nothing to train on
        raise StudioError.of("feedback.no_correction", run=folder.name)
    old = RunConfig.load(RunDir(folder).config)
    if old.finetuning_type != "lora" or not (RunDir(folder).adapter / "adapter_config.json").is_file():
        raise StudioError.of("feedback.no_adapter", run=folder.name)
    pick_method({"sft": 1, **({"ranking": 1} if counts["ranking"] else {})}, method, labels_run)
    base = f"{name}_feedback"
    _refuse_taken(data, [*dataset_names(base), f"{base}_replay"])
    made = make_datasets(store, folder.name, data, base, like=like, rows=teaching_rows(store, folder.name),
                         confirmed=True)
    try:
        # a RunConfig: its settings were checked as it was built (a refused one leaves nothing, below)
        cfg = improvement_config(folder, made, data, out, seed=seed, method=method, labels_run=labels_run)
        counts = plan(workspace, folder.name, method)
        cfg.lineage.update({k: counts[k] for k in ("corrections", "confirmed", "aside")})  # type: ignore[attr-defined]
        inherit_held_out(folder, out)
        cfg.lineage["check_set"] = verdict.freeze(folder, out, store)  # type: ignore[attr-defined]
        record_lineage(cfg)
    except BaseException:
        remove_datasets(data, made)
        forget_datasets(data, [f"{base}_replay"])
        if out.is_dir() and not RunDir(out).config.exists():  # the held-out rows and check set it was given
            shutil.rmtree(out, ignore_errors=True)
        raise
    return cfg


def inherit_held_out(old: Path, new: Path) -> None:
    """The improved run keeps its parent's held-out rows (val.jsonl), so it has an accuracy on the Runs tab, a
    label set for the demo page and the same rows to be compared on. (Its own config holds out nothing: every
    feedback row teaches.)"""
    src, dst = RunDir(old).val_data, RunDir(new).ensure().val_data
    if src.is_file() and RunDir(old).own(src):
        atomic_write_text(dst, src.read_text(encoding="utf-8"))


def discard(cfg: RunConfig) -> None:
    """Undo ``prepare`` for an improving run that was refused before it started (the queue said no): its datasets
    and its folder, which holds only what ``prepare`` wrote then (its lineage, held-out rows and check set)."""
    out = RunDir(cfg.output_dir)
    base = f"{out.path.name}_feedback"
    data = (getattr(cfg, "lineage", None) or {}).get("data_dir") or cfg.dataset_dir
    forget_datasets(data, [*dataset_names(base), f"{base}_replay"])
    if out.path.is_dir() and not out.config.exists():  # never started: only what prepare wrote (lineage, rows)
        shutil.rmtree(out.path, ignore_errors=True)


def lineage(run_path: str | Path) -> dict[str, Any] | None:
    """improved_from.json of a run, None when it was not made by "Improve this run" (or the file is unreadable)."""
    try:
        data = json.loads(RunDir(run_path).lineage.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("run") else None


def _rows(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{k: str(r.get(k, "")) for k in ("instruction", "input", "output")} for r in rows][:MAX_COMPARE_ROWS]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _score(path: Path, sets: dict[str, list[dict[str, str]]], labels: list[str] | None) -> dict[str, Any]:
    """One run's results on each set: the sentiment check for a labels run, else how many answers match."""
    loaded = load_model(path)
    out: dict[str, Any] = {}
    try:
        for key, rows in sets.items():
            if not rows:
                continue
            if labels:
                r = sentiment_eval(loaded.model, loaded.tokenizer, loaded.template, rows, labels, "score")
                out[key] = {k: r[k] for k in ("accuracy", "macro_f1", "per_class", "n", "skipped_rows")}
            else:
                answers = _generate_rows(loaded.model, loaded.tokenizer, loaded.template, rows, 128)
                hits = sum(_norm(a) == _norm(r["output"]) for a, r in zip(answers, rows))
                out[key] = {"accuracy": hits / len(rows), "n": len(rows)}
    finally:
        del loaded
        _free()
    return out


def compare(new_run: str | Path) -> dict[str, Any]:
    """The old and the improved run on the old run's held-out rows and on the feedback rows, side by side.

    Returns {"old_run", "new_run", "lineage", "labels", "sets": {"held_out"|"feedback": {"old", "new", "delta"}}};
    for a labels run each side has accuracy, macro-F1 and per-class P/R/F1 and the delta per-class F1 changes; for
    another run "accuracy" is the share of answers equal to the expected one (spaces and case aside).

    Raises:
        StudioError: the run was not made by "Improve this run", has not finished, or its old run is gone.
    """
    new = Path(new_run)
    info = lineage(new)
    if info is None:
        raise StudioError.of("improve.not_improved", name=new.name)
    if RunDir(new).final_model() is None:
        raise StudioError.of("improve.unfinished", name=new.name)
    old = new.parent / str(info["run"])
    if RunDir(old).final_model() is None:
        raise StudioError.of("improve.old_gone", name=old.name)
    sets: dict[str, list[dict[str, str]]] = {}
    try:
        sets["held_out"] = _rows(validation_rows(old))
    except StudioError:
        sets["held_out"] = []  # no split kept: the feedback rows alone
    if info.get("feedback_data"):
        sets["feedback"] = _rows(load_rows(str(info["feedback_data"]), str(info.get("data_dir") or "data")))
    if not any(sets.values()):
        raise StudioError.of("improve.no_rows")
    task = label_task(str(old))  # the labels the old run was trained to answer; None for a free-text run
    labels = task[0] if task else None
    before, after = _score(old, sets, labels), _score(new, sets, labels)
    out: dict[str, Any] = {"old_run": old.name, "new_run": new.name, "lineage": info, "labels": labels, "sets": {}}
    for key in sets:
        if key not in before:
            continue
        a, b = before[key], after[key]
        delta: dict[str, Any] = {"accuracy": b["accuracy"] - a["accuracy"]}
        if labels:
            delta["macro_f1"] = b["macro_f1"] - a["macro_f1"]
            delta["per_class"] = {lab: b["per_class"][lab]["f1"] - a["per_class"][lab]["f1"]
                                  for lab in a["per_class"] if lab in b["per_class"]}
        out["sets"][key] = {"old": a, "new": b, "delta": delta}
    return out
