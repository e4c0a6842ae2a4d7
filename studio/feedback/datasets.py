"""Feedback -> training data and exports, every accepted row of a run, streamed (never a list of all of them).

An owner's accepted rows become three datasets in the data folder, registered in dataset_info.json as the Data tab
registers its conversions (studio/data/registry.py ``register_dataset``):

* ``NAME``: instruction rows (alpaca): each correction is the answer to its input;
* ``NAME_pref``: ranking rows (``"ranking": true``): the correction chosen over the model's answer (stage dpo);
* ``NAME_kto``: single answers tagged good or bad: a 👍 answer good, a 👎 answer bad, a correction good (stage kto).

Agreement: two logins who corrected the same input differently disagree; such an input is reported as a conflict
and left out of every dataset until the owner resolves it (edits one correction to match, or drops one row), never
merged by a rule the owner did not choose. The conflicts are found in SQL (``FeedbackStore.conflict_keys``).

Why streamed: a run may hold hundreds of MB of feedback text; the rows go from the database to files a batch at a
time, so a dataset or an export of every row costs the memory of one batch (an earlier version read at most the
oldest 10,000 rows and dropped the rest without a word).
"""
from __future__ import annotations

import csv
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from ..data.cells import csv_safe
from ..data.convert import write_jsonl
from ..data.registry import forget_datasets, refuse_replacing, register_dataset
from ..errors import StudioError
from ..runs.run_dir import RunDir
from ..workspace import plain_name
from .store import Feedback, FeedbackStore, input_key

EXPORT_COLUMNS = ("id", "run", "login", "created", "source", "input", "answer", "verdict", "correction", "edited",
                  "status", "reviewer", "scores")
KINDS = (("sft", ""), ("ranking", "_pref"), ("kto", "_kto"))


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def run_prompt_shape(run_path: str | Path) -> dict[str, str] | None:
    """Where a typed text goes in the run's rows: {instruction, input} of its first held-out (else recorded) row.
    A labels run keeps its instruction and takes the text as input; a chat run takes the text as the instruction.
    The demo page and the Evaluate tab place a typed text the same way (the run's ``like`` row)."""
    val = RunDir(run_path).val_data
    try:
        with val.open(encoding="utf-8") as fh:  # the first row is all it needs: never the whole file
            first = next((json.loads(line) for line in fh if line.strip()), None)
    except (OSError, ValueError):
        first = None
    return {k: str(first.get(k, "")) for k in ("instruction", "input")} if isinstance(first, dict) else None


def _prompt(text: str, like: dict[str, str] | None) -> dict[str, str]:
    if like and like.get("input"):
        return {"instruction": like.get("instruction", ""), "input": text}
    return {"instruction": text, "input": ""}


def training_rows(rows: Iterable[Feedback], like: dict[str, str] | None, clash: set[str],
                  confirmed: bool = False) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """(kind, row) for each dataset row the accepted, conflict-free ``rows`` give; ("skipped", None) for an accepted
    row left out because its input is in ``clash`` (input keys teammates labelled differently, as the store's SQL
    finds them: ``FeedbackStore.conflict_keys``, where a 👍 can disagree with a correction). ``confirmed``: an
    accepted 👍 answer is an instruction row too (an improvement learns what teammates confirmed, not only what
    they corrected)."""
    for r in rows:
        if r.status != "accepted":
            continue
        if input_key(r.input) in clash:
            yield "skipped", None
            continue
        prompt = _prompt(r.input, like)
        fixed = r.final_correction
        if fixed and fixed.strip():
            yield "sft", {**prompt, "output": fixed}
            yield "kto", {**prompt, "output": fixed, "kto_tag": True}
            if r.answer.strip() and _norm(fixed) != _norm(r.answer):
                yield "ranking", {**prompt, "chosen": fixed, "rejected": r.answer}
        elif confirmed and r.verdict == "up" and r.answer.strip():
            yield "sft", {**prompt, "output": r.answer}
        if r.answer.strip() and not (fixed and _norm(fixed) == _norm(r.answer)):
            yield "kto", {**prompt, "output": r.answer, "kto_tag": r.verdict == "up"}


def count_rows(store: FeedbackStore, run: str, like: dict[str, str] | None, rows: Iterable[Feedback] | None = None,
               confirmed: bool = False) -> dict[str, int]:
    """How many rows of each kind ``run``'s accepted feedback gives (``rows``: the caller's choice of them, default
    every accepted row), and how many accepted rows conflicts leave out: {"sft", "ranking", "kto", "skipped"}."""
    counts = {"sft": 0, "ranking": 0, "kto": 0, "skipped": 0}
    chosen = store.iter_rows(run=run, status="accepted") if rows is None else rows
    for kind, _ in training_rows(chosen, like, store.conflict_keys(run), confirmed):
        counts[kind] += 1
    return counts


def dataset_names(name: str) -> list[str]:
    return [name + suffix for _, suffix in KINDS]


def _temp(folder: Path, name: str) -> tuple[IO[str], Path]:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    return os.fdopen(fd, "w", encoding="utf-8"), Path(tmp)


def make_datasets(store: FeedbackStore, run: str, dataset_dir: str | Path, name: str, *,
                  like: dict[str, str] | None = None, replace: bool = False, rows: Iterable[Feedback] | None = None,
                  confirmed: bool = False) -> dict[str, Any]:
    """Write and register NAME (instruction rows), NAME_pref (ranking) and NAME_kto from the accepted rows of
    ``run`` (``rows``: the caller's choice of them, such as Improve leaving out those kept aside; default every
    accepted row, streamed). A kind with no rows is not written. ``confirmed``: see ``training_rows``. Returns
    {kind: {"name", "path", "rows"}, "conflicts", "skipped"}.

    Raises:
        StudioError: a name that is not plain, a dataset that exists (without ``replace``), no accepted row.
    """
    name = plain_name(name, code="name.new_dataset")
    folder = Path(dataset_dir)
    folder.mkdir(parents=True, exist_ok=True)
    clash = store.conflict_keys(run)
    files = {kind: _temp(folder, name + suffix) for kind, suffix in KINDS}
    counts = {"sft": 0, "ranking": 0, "kto": 0, "skipped": 0}
    try:
        chosen = store.iter_rows(run=run, status="accepted") if rows is None else rows
        for kind, row in training_rows(chosen, like, clash, confirmed):
            counts[kind] += 1
            if row is not None:
                files[kind][0].write(json.dumps(row, ensure_ascii=False) + "\n")
        for fh, _ in files.values():
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        plan = [(kind, name + suffix) for kind, suffix in KINDS if counts[kind]]
        if not plan:
            if counts["skipped"]:
                raise StudioError.of("feedback.nothing_accepted_conflicts", run=run, skipped=counts["skipped"])
            raise StudioError.of("feedback.nothing_accepted", run=run)
        if not replace:
            for _, dataset in plan:
                refuse_replacing(folder, dataset, folder / f"{dataset}.jsonl")
        out: dict[str, Any] = {"conflicts": len(clash), "skipped": counts["skipped"]}
        for kind, dataset in plan:
            path = folder / f"{dataset}.jsonl"
            os.replace(files[kind][1], path)
            register_dataset(folder, dataset, path, None, kind=kind)
            out[kind] = {"name": dataset, "path": str(path), "rows": counts[kind]}
        return out
    finally:
        for fh, tmp in files.values():
            fh.close()
            tmp.unlink(missing_ok=True)


def remove_datasets(dataset_dir: str | Path, made: dict[str, Any]) -> None:
    """Undo ``make_datasets``: the datasets it registered and their files (a refused Improve leaves nothing)."""
    names = [made[kind]["name"] for kind, _ in KINDS if isinstance(made.get(kind), dict)]
    forget_datasets(dataset_dir, names)


def export_rows(rows: Iterable[Feedback], path: str | Path) -> Path:
    """Every field of ``rows`` as CSV (formula cells neutralised, data/cells.py) or JSONL, by the file's suffix,
    written a row at a time into a temp file that replaces ``path`` at the end.

    Raises:
        StudioError: a suffix other than .csv / .jsonl.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise StudioError.of("feedback.export_suffix", file=target.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    fh, tmp = _temp(target.parent, target.name)
    try:
        with fh:
            writer = csv.writer(fh) if suffix == ".csv" else None
            if writer:
                writer.writerow(EXPORT_COLUMNS)
            for r in rows:
                rec = {k: (json.dumps(v, ensure_ascii=False) if k == "scores" and v is not None else v)
                       for k, v in r.to_dict().items() if k in EXPORT_COLUMNS}
                if writer:
                    writer.writerow([csv_safe(rec.get(c)) for c in EXPORT_COLUMNS])
                else:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def conflict_lines(store: FeedbackStore, run: str, limit: int = 20) -> list[str]:
    """The first ``limit`` conflicts of ``run``, one line each: the input, then each answer with who gave it."""
    return [f"{c.input}: " + " | ".join(f"{a} ({', '.join(f'{w} #{i}' for w, i in who)})"
                                        for a, who in c.answers.items()) for c in store.conflicts(run, limit)]


__all__ = ["EXPORT_COLUMNS", "conflict_lines", "count_rows", "dataset_names", "export_rows", "make_datasets",
           "remove_datasets", "run_prompt_shape", "training_rows"]
