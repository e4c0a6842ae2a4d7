"""The "least sure" queue: a teammate uploads texts without labels and gets the few rows the run is least sure
about, to confirm or correct one by one (the demo page and the Evaluate tab draw it: studio/ui/least_sure_box.py;
``python -m studio feedback queue`` prints it).

The queue lives on the server (a page keeps it in its session's gr.State): each item holds the text and the
answer the server computed, so the feedback a teammate sends from it records what the model said, never what a
browser claims it said. Bounded before any scoring: the file's size (the page's upload limit), MAX_POOL rows of it,
MAX_QUEUE rows asked for.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.readers import SUPPORTED_SUFFIXES
from ..errors import StudioError
from ..evaluation import inference
from ..evaluation.uncertainty import MAX_TEXT_ROWS, least_sure_answers, least_sure_labels
from ..feedback.datasets import _prompt, run_prompt_shape
from ..feedback.store import FeedbackStore
from .uploads import DATA_MB, check_data_upload

MAX_POOL = 2000   # texts scored for one queue of a labels run: about 3 CPU-minutes with Gemma-3-270M
MAX_QUEUE = 100  # "100 corrections" (issue 49) fit in one queue
QUEUE = 10


def build_queue(run_path: str | Path, file: str | None, k: int = QUEUE, limit_mb: float = DATA_MB
                ) -> dict[str, Any]:
    """{"run", "task": "labels"|"chat", "labels", "pool": texts scored, "items": [...], "at": 0} for ``file``.

    Raises:
        StudioError: no file, a file over the limit or unreadable, a queue size out of 1..MAX_QUEUE.
    """
    if not file:
        raise StudioError.of("queue.no_file")
    if not isinstance(k, (int, float)) or not 1 <= k <= MAX_QUEUE:  # NaN fails both sides
        raise StudioError.of("queue.size", n=str(k)[:12], limit=MAX_QUEUE)
    check_data_upload(file, limit_mb, SUPPORTED_SUFFIXES)
    run = str(run_path)
    texts = [r["input"] for r in inference.unlabelled_rows(str(file), run)]
    task = inference.label_task(run)
    if task:
        pool = texts[:MAX_POOL]
        items = least_sure_labels(run, pool, task[0], task[1], int(k))
        labels = list(task[0])
    else:
        pool = texts[:MAX_TEXT_ROWS]
        like = run_prompt_shape(run)
        items = least_sure_answers(run, [_prompt(t, like) for t in pool], int(k))
        labels = []
    return {"run": Path(run).name, "task": "labels" if task else "chat", "labels": labels, "pool": len(pool),
            "items": items, "at": 0}


def current(queue: Any) -> dict[str, Any] | None:
    """The item a teammate is looking at (None when the queue is done or was never made)."""
    if not isinstance(queue, dict) or not isinstance(queue.get("items"), list):
        return None
    at = int(queue.get("at", 0))
    return queue["items"][at] if 0 <= at < len(queue["items"]) else None


def answer(queue: Any, store: FeedbackStore, login: str | None, verdict: str, correction: str | None = None,
           run: str | None = None) -> tuple[dict[str, Any], int | None]:
    """Record the teammate's 👍, correction or skip (``verdict`` "up", "down", "skip") on the current item and move
    on. ``run``: the run name to record under (the version that answered; default the queue's).
    Returns (the queue, the feedback id or None for a skip).

    Raises:
        StudioError: no queue or nothing left in it; a correction that is not one of a labels run's labels.
    """
    item = current(queue)
    if item is None:
        raise StudioError.of("queue.empty")
    fid = None
    if verdict != "skip":
        fix = correction.strip() if isinstance(correction, str) and correction.strip() else None
        if fix is not None and queue["labels"]:
            match = next((lab for lab in queue["labels"] if lab.casefold() == fix.casefold()), None)
            if match is None:
                raise StudioError.of("feedback.not_label", value=fix[:60], labels=queue["labels"])
            fix = match
        if fix is not None and fix == item["answer"]:
            verdict, fix = "up", None  # "corrected" to the model's own answer: that is a 👍
        fid = store.add(run=run or queue["run"], login=login, input=item["text"], answer=item["answer"],
                        verdict="down" if fix else verdict, correction=fix, scores=item.get("scores"),
                        source="batch")
    queue["at"] = int(queue.get("at", 0)) + 1
    return queue, fid
