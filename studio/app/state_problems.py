"""The state files this server moved aside (studio/state_files.py), in the page's words
(studio/words/state_words.py): the Train tab's status, the Settings tab's why and the Data tab's report show them."""
from __future__ import annotations

from pathlib import Path

from ..state_files import problems
from ..words.state_words import problem_line


def problem_lines(lang: str, *, files: list[Path] | None = None, since: float = 0.0) -> str:
    """Markdown: the files moved aside since ``since`` (only ``files`` when given), one line each; '' if none."""
    wanted = {Path(f) for f in files} if files is not None else None
    found = [q for q in problems(since) if wanted is None or q.file in wanted]
    return "\n\n".join(problem_line(q, lang) for q in found)


def state_problems_markdown(lang: str, since: float = 0.0) -> str:
    """Every state file this server moved aside (the Train tab's status shows it to every page)."""
    return problem_lines(lang, since=since)
