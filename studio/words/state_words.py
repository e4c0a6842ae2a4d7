"""A state file the studio could not read, in the page's words: which file, where its bytes are kept, what to do.

studio/state_files.py moves such a file aside and records it; studio/app/state_problems.py lists them in these
words for the page (the Train tab's status, the Settings tab's why, the Data tab's report), so a garbled
status.json, queue.json, settings.yaml or dataset_info.json is never handled in silence. The words:
studio/words/messages.py (``state.*``).
"""
from __future__ import annotations

from typing import Any

from .catalog import msg
from .render import has


def problem_line(q: Any, lang: str) -> str:
    """One quarantined file (a state_files.Quarantined: its file, reason, kept_as) in ``lang``: which, why, where it
    is kept, what to do."""
    key = f"state.fix.{q.file.name}"
    fix = msg(key if has(key) else "state.fix.other", lang)
    kept = str(q.kept_as) if q.kept_as else msg("state.not_moved", lang)
    return msg("state.corrupt", lang, file=str(q.file), reason=q.reason[:120], kept=kept, fix=fix)
