"""What the Feedback tab does, without drawing it: one page of a run's rows, its counts and conflicts (computed in
the database), the owners' review, datasets and exports.

Bounded by construction: a listing is one page of ``PAGE_ROWS`` rows with each text cut to ``SHOWN_CHARS``
characters, and the counts and conflicts come from SQL, so however many rows a run holds (a viewer's flood
included), an answer of the tab's listing is small. The tab wires the listing to many events (the run, the status,
the filters, every review button), which is why no event of it may read every row.

The browser names a run by the name the database lists, never a path; an export goes to a fresh temp folder.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..feedback.agreement import agreement
from ..feedback.datasets import conflict_lines, export_rows, make_datasets, run_prompt_shape
from ..feedback.store import PAGE_ROWS, STATUSES, FeedbackStore, Page
from ..words.catalog import msg
from ..words.render import has
from ..workspace import safe_name, shown_name
from .context import AppContext
from .feedback_intake import correction_for

MAX_IDS = 1000      # row ids one review may name (a page shows PAGE_ROWS; "accept every new row" has its own action)
FILTER_CHARS = 200  # a filter value as it is matched


def store_of(ctx: AppContext) -> FeedbackStore:
    return FeedbackStore.in_workspace(ctx.workspace)


def checked_run(ctx: AppContext, run: Any) -> str:
    """A run the database has feedback for (the only names the tab lists).

    Raises:
        StudioError: no run picked, or one the database does not know.
    """
    if not isinstance(run, str) or run not in store_of(ctx).runs():
        raise StudioError.of("feedback.no_run")
    return run


def parse_ids(text: Any) -> list[int]:
    """Row ids typed as "3, 7 12".

    Raises:
        StudioError: anything else, or more than MAX_IDS ids.
    """
    parts = [p for p in re.split(r"[,\s]+", str(text or "")) if p]
    if not parts or len(parts) > MAX_IDS or not all(p.isdigit() and len(p) < 12 for p in parts):
        raise StudioError.of("feedback.bad_ids", text=shown_name(str(text)[:40]))
    return [int(p) for p in parts]


def _filters(status: Any, login: Any, label: Any) -> dict[str, str | None]:
    pick = {k: (v.strip()[:FILTER_CHARS] if isinstance(v, str) and v.strip() else None)
            for k, v in (("status", status), ("login", login), ("label", label))}
    if pick["status"] not in (None, *STATUSES):
        pick["status"] = None
    return pick


def _page_number(page: Any) -> int:
    try:
        return max(1, min(int(float(page)), 10**9))
    except (TypeError, ValueError, OverflowError):
        return 1


def listing(ctx: AppContext, run: Any, status: Any, login: Any, label: Any, page: Any = 1) -> dict[str, Any] | None:
    """One page of the picked run's rows as table rows (the rows in conflict first), the run's counts (with which
    rows this page shows, and the teammates' agreement) and its first conflicts as text; None when the run is not
    one the database lists."""
    store = store_of(ctx)
    if not isinstance(run, str) or run not in store.runs():
        return None
    shown: Page = store.page(run=run, page=_page_number(page), **_filters(status, login, label))
    lang = ctx.lang
    table = [[r.id, _word("fb.st", r.status, lang), _word("fb.verdict", r.verdict, lang), r.login,
              _word("fb.source", r.source, lang), r.input, r.answer, r.correction or "", r.edited or ""]
             for r in shown.rows]
    first = (shown.page - 1) * PAGE_ROWS + 1
    summary = store.summary(run)
    for group, prefix in (("verdict", "fb.verdict"), ("status", "fb.st")):  # closed sets: their words
        summary[group] = {_word(prefix, k, lang): n for k, n in summary[group].items()}
    counts = {"rows": f"{first if shown.total else 0}–{first + len(shown.rows) - 1 if shown.total else 0} / "
                      f"{shown.total}", "page": f"{shown.page} / {shown.pages}", **summary,
              # how far teammates agree, pair by pair (Cohen's kappa), from the store's SQL
              "agreement": [{_word("fb.count", k, lang): v for k, v in
                             {"pair": " & ".join(p["pair"]), "shared": p["rows"], "agree": p["agree"],
                              "kappa": p["kappa"]}.items()} for p in agreement(store, run)]}
    return {"table": table, "counts": {_word("fb.count", k, lang): v for k, v in counts.items()},
            "conflicts": "\n".join(conflict_lines(store, run)), "page": shown.page}


def _word(prefix: str, value: Any, lang: str) -> Any:
    """A value of a closed set (a status, a verdict, a source, a count's name) in the page's words; anything else
    (a newer store's value) as it is."""
    key = f"{prefix}_{value}" if prefix == "fb.st" else f"{prefix}.{value}"
    return msg(key, lang) if isinstance(value, str) and has(key) else value


def review(ctx: AppContext, ids: Any, status: str) -> int:
    store = store_of(ctx)
    found = parse_ids(ids)
    for fid in found:
        store.review(fid, reviewer=ctx.user, status=status)
    return len(found)


def accept_new(ctx: AppContext, run: Any, status: Any, login: Any, label: Any) -> int:
    """Accept every new row of the picked run that the filters show (the common case: the corrections are right),
    in one statement however many there are."""
    name = checked_run(ctx, run)
    pick = _filters(status, login, label)
    if pick["status"] not in (None, "new"):
        return 0
    return store_of(ctx).accept_new(run=name, reviewer=ctx.user, login=pick["login"], label=pick["label"])


def edit(ctx: AppContext, ids: Any, text: Any) -> int:
    """An owner's edit of one row's correction; on a labels run it must be one of the run's labels."""
    (fid, *rest) = parse_ids(ids)
    if rest:
        raise StudioError.of("feedback.bad_ids", text=shown_name(str(ids)[:40]))
    store = store_of(ctx)
    row = store.get(fid)
    if row is None:
        raise StudioError.of("feedback.missing", id=fid)
    folder = ctx.runs_root / safe_name(row.run, code="name.run")
    fixed = correction_for(folder, text) if isinstance(text, str) else None
    store.review(fid, reviewer=ctx.user, edited=(fixed or "") if isinstance(text, str) else None)  # "": no edit
    return fid


def make(ctx: AppContext, run: Any, name: Any) -> dict[str, Any]:
    """Accepted rows -> NAME, NAME_pref, NAME_kto in the data folder, registered for the Settings tab."""
    run = checked_run(ctx, run)
    folder = ctx.runs_root / safe_name(run, code="name.run")
    return make_datasets(store_of(ctx), run, ctx.data_root, str(name or ""),
                         like=run_prompt_shape(folder) if folder.is_dir() else None)


def export(ctx: AppContext, run: Any, suffix: str) -> str:
    """Every row of the run as a file in a fresh temp folder (never the workspace), for the browser to download."""
    run = checked_run(ctx, run)
    out = Path(tempfile.mkdtemp(prefix="studio-feedback-")) / f"feedback-{safe_name(run)}{suffix}"
    return str(export_rows(store_of(ctx).iter_rows(run=run), out))
