"""One exception type for everything a user can fix.

The UI and the CLI show ``StudioError`` as-is (what / why / how to fix); anything
else is a bug and is logged with its traceback, never shown raw to a user.
"""
from __future__ import annotations


class StudioError(Exception):
    """A problem the user can fix: says what is wrong and how to fix it."""

    def __init__(self, what: str, fix: str = "", *, why: str = "", code: str = "error"):
        self.what = what
        self.why = why
        self.fix = fix
        self.code = code
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [self.what.rstrip(".") + "."]
        if self.why:
            parts.append(self.why.rstrip(".") + ".")
        if self.fix:
            parts.append("Fix: " + self.fix.rstrip(".") + ".")
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {"error": self.code, "what": self.what, "why": self.why, "fix": self.fix,
                "message": self.message}


class ConfigError(StudioError):
    """A run configuration has one or more invalid fields (all listed at once)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        what = "The run configuration has {} problem{}: {}".format(
            len(problems), "" if len(problems) == 1 else "s", "; ".join(problems))
        super().__init__(what, "correct the listed fields in the YAML, the --set options or the Settings tab",
                         code="config")
