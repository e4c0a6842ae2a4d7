"""The Model list of the Settings tab: each model's size, languages, how long its derived plan takes here, and
whether it is on this machine. Its own module: it joins the short form (simple.py), the time estimate
(run_estimate.py) and the download marks (model_download.py), which do not know each other."""
from __future__ import annotations

from typing import Any

from ..autoconfig import BUDGETS, Hardware, model_facts
from ..errors import StudioError
from . import form_values
from ..words.units import fmt_seconds
from .context import AppContext
from ..words.catalog import msg
from .model_download import availability_note
from .run_estimate import form_estimate, placeholder_rows, plan_seconds, rows_for
from .settings import derive


def model_choices(hw: Hardware, n_rows: int | None, task: str, lang: str, extra: str | None = None, *,
                  ctx: AppContext | None = None, dataset: str | None = None,
                  budget: str = "balanced", form: list[Any] | None = None,
                  gpu_mem: float | None = None) -> list[tuple[str, str]]:
    """(label, value) for every model the estimator knows: size, languages and how long the plan the page would
    derive for it takes here (studio/runs/run_time.py: this machine's speed, this studio's earlier runs, the
    chosen dataset's rows when ``ctx`` and ``dataset`` say which).

    With the Settings form's ``values`` (``form``), each model's time is ``form_estimate`` of the form the page
    would hold after picking it (``derive``, the same call the short form makes), and the model the form holds
    is timed on the form as it is: the number the Settings panel shows beside it."""
    rows = rows_for(ctx, dataset, task, n_rows) if ctx is not None else placeholder_rows(task, n_rows)
    budget = budget if budget in BUDGETS else "balanced"
    current = form_values.values_to_draft(list(form)) if form is not None and ctx is not None else None
    out = []
    for name in form_values.WIDGET_CHOICES["model_name_or_path"]():
        facts = model_facts(name)
        if not facts:
            out.append((name, name))
            continue
        try:
            if current is not None and ctx is not None:
                cfg = current if current.model_name_or_path.strip() == name else form_values.values_to_draft(
                    derive(ctx, name, task, budget, dataset, list(form or []), gpu_mem)[0])
                est = form_estimate(ctx, cfg, task)
                seconds = est.seconds if est is not None else None
            else:
                seconds = plan_seconds(name, task, budget, rows, hw, ctx.runs_root if ctx is not None else None)
        except StudioError:
            seconds = None
        size = _size(facts["params"])
        label = msg("model.label", lang, name=name, size=size, langs=msg(facts["languages"], lang),
                    time=fmt_seconds(seconds, lang))
        out.append((label + availability_note(name, lang, facts.get("params")), name))
    if extra and extra not in [v for _, v in out]:
        out.append((extra, extra))
    return out


def _size(n: int) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.1f} B"
    return f"{n / 1e6:.1f} M"


__all__ = ["model_choices"]
