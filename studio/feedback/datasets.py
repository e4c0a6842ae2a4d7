"""Feedback -> training data, the owner's review summary, and exports.

An owner's accepted rows become three datasets in the data folder, registered in dataset_info.json as the Data tab
registers its conversions (studio/data/convert.py ``register_dataset``):

* ``NAME``: instruction rows (alpaca): each correction is the answer to its input;
* ``NAME_pref``: ranking rows (``"ranking": true``): the correction chosen over the model's answer (stage dpo);
* ``NAME_kto``: single answers tagged good or bad: a 👍 answer good, a 👎 answer bad, a correction good (stage kto).

Agreement: two logins who corrected the same input differently disagree; such an input is reported as a conflict
and left out of every dataset until the owner resolves it (edits one correction to match, or drops one row), never
merged by a rule the owner did not choose.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.cells import csv_safe
from ..data.convert import refuse_replacing, register_dataset, write_jsonl
from ..errors import StudioError
from ..runs.run_dir import RunDir
from ..workspace import atomic_write_text, safe_name
from .store import Feedback, FeedbackStore, input_key

EXPORT_COLUMNS = ("id", "run", "login", "created", "source", "input", "answer", "verdict", "correction", "edited",
                  "status", "reviewer", "scores")


@dataclass(frozen=True)
class Conflict:
    """One input that logins corrected differently: each distinct answer with who gave it and the row ids."""
    input: str
    answers: dict[str, list[tuple[str, int]]]  # correction -> [(login, feedback id), ...]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def conflicts(rows: list[Feedback]) -> list[Conflict]:
    """Inputs whose not-dropped corrections differ between logins (same spelling up to spaces and case agrees)."""
    groups: dict[str, list[Feedback]] = defaultdict(list)
    for r in rows:
        if r.status != "dropped" and r.final_correction:
            groups[input_key(r.input)].append(r)
    out = []
    for group in groups.values():
        answers: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for r in group:
            answers[_norm(r.final_correction or "")].append((r.login, r.id))
        if len(answers) > 1 and len({login for who in answers.values() for login, _ in who}) > 1:
            shown = {next(g.final_correction for g in group if _norm(g.final_correction or "") == k) or k: v
                     for k, v in answers.items()}
            out.append(Conflict(group[0].input, shown))
    return out


def summary(rows: list[Feedback]) -> dict[str, Any]:
    """Counts for the review panel: by verdict, status, login and label (the correction, else the model's answer)."""
    return {"total": len(rows), "verdict": dict(Counter(r.verdict for r in rows)),
            "status": dict(Counter(r.status for r in rows)), "login": dict(Counter(r.login for r in rows)),
            "label": dict(Counter((r.final_correction or r.answer) for r in rows)),
            "conflicts": len(conflicts(rows))}


def run_prompt_shape(run_path: str | Path) -> dict[str, str] | None:
    """Where a typed text goes in the run's rows: {instruction, input} of its first held-out (else recorded) row.
    A labels run keeps its instruction and takes the text as input; a chat run takes the text as the instruction.
    The demo page and the Evaluate tab place a typed text the same way (the run's ``like`` row)."""
    val = RunDir(run_path).val_data
    try:
        first = next((json.loads(line) for line in val.read_text(encoding="utf-8").splitlines() if line.strip()),
                     None)
    except (OSError, ValueError):
        first = None
    return {k: str(first.get(k, "")) for k in ("instruction", "input")} if isinstance(first, dict) else None


def _prompt(text: str, like: dict[str, str] | None) -> dict[str, str]:
    if like and like.get("input"):
        return {"instruction": like.get("instruction", ""), "input": text}
    return {"instruction": text, "input": ""}


def build_rows(rows: list[Feedback], like: dict[str, str] | None, clash: set[str] | None = None,
               confirmed: bool = False) -> dict[str, Any]:
    """Accepted, conflict-free rows -> {"sft": [...], "ranking": [...], "kto": [...], "conflicts": [...],
    "skipped": n}. Only rows an owner accepted are used. ``clash``: the input keys in conflict as the store's SQL
    finds them (``FeedbackStore.conflict_keys``, where a 👍 can disagree with a correction); added to the
    corrections that disagree among ``rows``. ``confirmed``: an accepted 👍 answer is an instruction row too (an
    improvement learns what teammates confirmed, not only what they corrected)."""
    clash = {input_key(c.input) for c in conflicts(rows)} | set(clash or ())
    sft: list[dict[str, Any]] = []
    ranking: list[dict[str, Any]] = []
    kto: list[dict[str, Any]] = []
    skipped = 0
    for r in rows:
        if r.status != "accepted":
            continue
        if input_key(r.input) in clash:
            skipped += 1
            continue
        prompt = _prompt(r.input, like)
        fixed = r.final_correction
        if fixed and fixed.strip():
            sft.append({**prompt, "output": fixed})
            kto.append({**prompt, "output": fixed, "kto_tag": True})
            if r.answer.strip() and _norm(fixed) != _norm(r.answer):
                ranking.append({**prompt, "chosen": fixed, "rejected": r.answer})
        elif confirmed and r.verdict == "up" and r.answer.strip():
            sft.append({**prompt, "output": r.answer})
        if r.answer.strip() and not (fixed and _norm(fixed) == _norm(r.answer)):
            kto.append({**prompt, "output": r.answer, "kto_tag": r.verdict == "up"})
    return {"sft": sft, "ranking": ranking, "kto": kto, "conflicts": sorted(clash), "skipped": skipped}


def make_datasets(store: FeedbackStore, run: str, dataset_dir: str | Path, name: str, *,
                  like: dict[str, str] | None = None, replace: bool = False, rows: list[Feedback] | None = None,
                  confirmed: bool = False) -> dict[str, Any]:
    """Write and register NAME (instruction rows), NAME_pref (ranking) and NAME_kto from ``run``'s accepted rows.
    A kind with no rows is not written. Returns {kind: {"name", "path", "rows"}, "conflicts", "skipped"}.
    ``rows`` and ``confirmed``: see ``build_rows`` (default: every row of ``run``, corrections only).

    Raises:
        StudioError: a name that is not plain, a dataset that exists (without ``replace``), no accepted row.
    """
    name = safe_name(name, code="name.plain")
    # rows: the caller's choice of ``run``'s rows (Improve leaves out those kept aside); conflicts from the SQL
    built = build_rows(store.list(run=run) if rows is None else rows, like, clash=store.conflict_keys(run),
                       confirmed=confirmed)
    folder = Path(dataset_dir)
    plan = [(kind, name + suffix, built[kind]) for kind, suffix in (("sft", ""), ("ranking", "_pref"), ("kto", "_kto"))
            if built[kind]]
    if not plan:
        if built["skipped"]:
            raise StudioError.of("feedback.nothing_accepted_conflicts", run=run, skipped=built["skipped"])
        raise StudioError.of("feedback.nothing_accepted", run=run)
    if not replace:
        for _, dataset, _ in plan:
            refuse_replacing(folder, dataset, folder / f"{dataset}.jsonl")
    out: dict[str, Any] = {"conflicts": len(built["conflicts"]), "skipped": built["skipped"]}
    for kind, dataset, rows in plan:
        path = write_jsonl(rows, folder / f"{dataset}.jsonl")
        register_dataset(folder, dataset, path, rows, kind=kind)
        out[kind] = {"name": dataset, "path": str(path), "rows": len(rows)}
    return out


def export_rows(rows: list[Feedback], path: str | Path) -> Path:
    """Every field of ``rows`` as CSV (formula cells neutralised, data/cells.py) or JSONL, by the file's suffix.

    Raises:
        StudioError: a suffix other than .csv / .jsonl.
    """
    target = Path(path)
    records = [{k: (json.dumps(v, ensure_ascii=False) if k == "scores" and v is not None else v)
                for k, v in r.to_dict().items() if k in EXPORT_COLUMNS} for r in rows]
    if target.suffix.lower() == ".jsonl":
        atomic_write_text(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    elif target.suffix.lower() == ".csv":
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(EXPORT_COLUMNS)
        for rec in records:
            writer.writerow([csv_safe(rec.get(c)) for c in EXPORT_COLUMNS])
        atomic_write_text(target, buf.getvalue())
    else:
        raise StudioError.of("feedback.export_suffix", file=target.name)
    return target
