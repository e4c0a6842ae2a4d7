"""What a ``learning_rate_search`` setting amounts to: its rates and the updates each trial takes.

One place for both, read by the checks (a value that is no list of rates), the engine (engine/lr_search.py runs the
trials) and the time estimate (runs/run_time.py counts them), so the three agree on what the search costs.
"""
from __future__ import annotations

import math
from typing import Any

MIN_STEPS = 10   # a trial shorter than this says little about a rate


def search_rates(text: str) -> list[float]:
    """The learning rates of a ``learning_rate_search`` value, or [] when any is not a number in (0, 1)."""
    try:
        rates = [float(x) for x in str(text).replace(";", ",").split(",") if x.strip()]
    except ValueError:
        return []
    return rates if rates and all(0 < r < 1 for r in rates) else []


def trial_steps(cfg: Any, planned_steps: int) -> int:
    """Updates per trial: ``search_steps``, else a sixth of the run's (at least MIN_STEPS, at most the run's)."""
    return cfg.search_steps or min(planned_steps, max(MIN_STEPS, math.ceil(planned_steps / 6)))
