"""What a feedback row may say, checked the same way from every surface (the demo page, the Evaluate tab's
playground and chat, the Feedback tab's edit, the CLI): the model's answer is one the server kept (app/answers.py),
and on a labels run a correction is one of the run's labels, spelled as the run spells it.

No web framework here: the page's handlers (studio/ui/feedback_panel.py) pass the login and the request in.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..autoconfig import guess_task
from ..errors import StudioError
from ..evaluation.evaluate import validation_rows
from ..evaluation.metrics import label_set, normalize
from ..feedback.store import FeedbackStore
from ..feedback.texts import bounded
from . import answers


def run_labels(run_folder: str | Path) -> list[str]:
    """The labels a run answers with (the demo page's rule, app/demo_run.py: a few labels among the held-out
    answers), [] for a free-text run or one without a held-out split."""
    try:
        rows = list(validation_rows(Path(run_folder)))
        return label_set([str(r.get("output", "")) for r in rows]) if rows and guess_task(rows) == "sentiment" \
            else []
    except StudioError:
        return []


def as_correction(labels: list[str], typed: Any) -> str | None:
    """A typed right answer as it is stored: None when empty; on a labels run the label it names, spelled as the
    run spells it (whatever the case or spacing typed); any text on a free-text run.

    Raises:
        StudioError: a text that is not text, too long, or none of a labels run's labels.
    """
    fix = bounded("correction", typed)  # first: the label check quotes the text back
    if fix is None or not labels:
        return fix
    match = next((lab for lab in labels if normalize(lab) == normalize(fix)), None)
    if match is None:
        raise StudioError.of("feedback.not_label", value=fix[:60], labels=list(labels))
    return match


def correction_for(run_folder: str | Path, typed: Any) -> str | None:
    """``as_correction`` with the labels of the run in ``run_folder`` (the CLI, the Feedback tab's edit)."""
    return as_correction(run_labels(run_folder), typed)


def _text(content: Any) -> str:
    """A chat message's text: Gradio 6 sends a string or a list of parts ({"type": "text", "text": ...})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return ""


def last_exchange(history: Any) -> tuple[str, str]:
    """(the last user message, the answer after it) of a chat history.

    Raises:
        StudioError: the history does not end with a user message and its answer.
    """
    turns = [m for m in (history if isinstance(history, list) else [])
             if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    if len(turns) < 2 or turns[-1].get("role") != "assistant" or turns[-2].get("role") != "user":
        raise StudioError.of("feedback.no_answer")
    return _text(turns[-2].get("content")), _text(turns[-1].get("content"))


def _same(a: str, b: str) -> bool:
    """The same text up to spacing (a page's chat strips what it shows; a forged text differs in its words)."""
    return " ".join(a.split()) == " ".join(b.split())


def kept_answer(request: Any, kind: str, run_key: str, asked: tuple[str, ...], shown: str | None) -> answers.Answer:
    """What this page session asked ``run_key`` and the answer it got, as the server kept them.

    Raises:
        StudioError: no answer kept (feedback.no_answer), or the page shows another run, question or answer than
            the model gave (feedback.answer_changed: a forged answer is never recorded as the model's).
    """
    kept = answers.last(request, kind)
    if kept is None:
        raise StudioError.of("feedback.no_answer")
    same_question = len(kept.asked) == len(asked) and all(_same(k, a) for k, a in zip(kept.asked, asked))
    if kept.run != str(run_key) or not same_question or (shown is not None and not _same(shown, kept.answer)):
        raise StudioError.of("feedback.answer_changed")
    return kept


def record_generated(store: FeedbackStore, *, kind: str, run_name: str, run_key: str, asked: tuple[str, ...],
                     shown: str | None, verdict: str, correction: Any, labels: list[str], login: str | None,
                     request: Any, source: str) -> tuple[int, bool]:
    """Record feedback on a generated answer (the playground's, a chat's): the question and the answer are the ones
    kept on the server, the correction a label of a labels run. Returns (the row id, whether a correction was
    given)."""
    fix = as_correction(labels, correction)
    kept = kept_answer(request, kind, run_key, asked, shown)
    text = kept.asked[1] if kind == "play" and kept.asked[1].strip() else kept.asked[0]
    if not text.strip() or not kept.answer.strip():
        raise StudioError.of("feedback.no_answer")
    answer = kept.answer
    if labels and answer.strip().splitlines()[0].strip() in labels:  # a labels run's chat: its label, then scores
        answer = answer.strip().splitlines()[0].strip()
    fid = store.add(run=run_name, login=login, input=text, answer=answer, verdict="down" if fix else verdict,
                    correction=fix, source=source, visitor=answers.session_of(request))
    return fid, fix is not None
