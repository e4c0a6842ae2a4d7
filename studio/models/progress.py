"""A step of a model's preparation (fetching a built-in model's file, turning a GGUF into a model folder), said by
code: ``Step.of("using", path=...)`` is the catalog's ``prepare.using`` (studio/words/prepare_words.py).

Whoever prepares a model reports each step to a ``Progress`` callback with the share done; the default prints the
run log's line (``[prepare  50%] Using the prepared model in ...``), the engine also records the step as an event
for the Train tab, and the Settings tab shows it in the page's language. No one translates a printed line.
"""
from __future__ import annotations

from collections.abc import Callable

from ..words.render import render
from ..words.said import Said


class Step(Said):
    """One step of a preparation: its command line's English, with its code and values."""

    prefix = "prepare"


Progress = Callable[[float, Step], None]


def line(fraction: float, step: Step, lang: str = "en", surface: str = "cli") -> str:
    """The log's line of a step: ``[prepare  50%] ...``."""
    return render("prepare.line", {"fraction": fraction, "step": step}, lang, surface)


def print_step(fraction: float, step: Step) -> None:
    """The default report: a line on stdout (the run's stdout.log in the web app, the terminal in the CLI)."""
    print(line(fraction, step), flush=True)
