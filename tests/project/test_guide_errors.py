"""The guide's "When something goes wrong" tables stay in step with the studio's own errors.

docs/make_error_guide.py writes them from the page's error table; this holds the guides to what it writes today,
and each listed pair to the code: the fix shown beside an error is the fix that same error carries where it is
raised, so the guide cannot pair an error with another one's advice.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from source_texts import Module, calls_named

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("make_error_guide", ROOT / "docs" / "make_error_guide.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _pattern(template: str) -> re.Pattern[str]:
    """The template's text with each {slot} standing for any runtime value (the scan writes those as 'X')."""
    parts = re.split(r"\{\w+\}", template.strip().rstrip("."))
    return re.compile(".*?".join(re.escape(p) for p in parts) + r"\.?", re.DOTALL)


def _raised_pairs() -> list[tuple[list[str], list[str]]]:
    """(texts of the what, texts of the fix the page shows) of every StudioError(...) under studio/."""
    out = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        module = Module(ast.parse(path.read_text(encoding="utf-8")))
        for func, call in calls_named(module.tree, {"StudioError"}):
            kw = {k.arg: k.value for k in call.keywords}
            what = call.args[0] if call.args else kw.get("what")
            fix = kw.get("page_fix", call.args[1] if len(call.args) > 1 else kw.get("fix"))
            out.append((module.texts(what, func), module.texts(fix, func) if fix is not None else [""]))
    return out


def test_the_guides_are_what_the_script_writes_today():
    assert _script().main(["--check"]) == 0, "run: .venv/bin/python docs/make_error_guide.py"


def unpaired(script, picked: list[tuple[str, str, str]]) -> list[str]:
    """The rows of ``picked`` whose error and fix are not raised together."""
    pairs = _raised_pairs()
    unpaired = []
    for row in picked:
        # an error code: its what and its fix are one catalog entry; a run's end: its codes' words, as the engine
        # and the job runner write them (a code no longer worded fails the script): paired by construction
        if len(row) == 2 or row[0] == script.TRAIN:
            continue
        tab, what, fix = row
        w, f = _pattern(what), _pattern(fix)
        if not any(any(w.fullmatch(t) for t in whats) and any(f.fullmatch(t) for t in fixes)
                   for whats, fixes in pairs):
            unpaired.append(f"{what!r} -> {fix!r}")
    return unpaired


def test_each_listed_error_is_paired_with_its_own_fix(monkeypatch):
    script = _script()
    assert unpaired(script, script.PICKED) == []
    # an error with another error's fix (errors of different calls: one call may pick among several pairs); two
    # errors raised as StudioError(what, fix) stand for the studio's (its own are coded, one subsystem after another)
    monkeypatch.setattr(sys.modules[__name__], "_raised_pairs", lambda: [
        (["pure_bf16 needs a card that supports bf16 (Ampere or newer)"],
         ["turn pure_bf16 off: this card trains with fp16 mixed precision"]),
        (["pure_bf16 cannot be combined with precision X"], ["turn pure_bf16 off, or set precision to bf16 or auto"])])
    swapped = [(script.SETTINGS, "pure_bf16 needs a card that supports bf16 (Ampere or newer)",
                "turn pure_bf16 off, or set precision to bf16 or auto")]
    assert unpaired(script, swapped) == [f"{swapped[0][1]!r} -> {swapped[0][2]!r}"]
    kept = [(script.SETTINGS, swapped[0][1], "turn pure_bf16 off: this card trains with fp16 mixed precision")]
    assert unpaired(script, kept) == []


def test_the_check_fails_on_a_guide_out_of_step_and_on_a_message_that_is_gone(tmp_path, monkeypatch):
    script = _script()
    for lang in script.GUIDES:
        text = script.GUIDES[lang].read_text(encoding="utf-8")
        doctored = tmp_path / f"{lang}.md"
        stale = text.replace(script.BEGIN, script.BEGIN + "\n| An error of last year | its old advice |")
        doctored.write_text(stale if lang == "en" else text, encoding="utf-8")
        monkeypatch.setitem(script.GUIDES, lang, doctored)
    assert script.main(["--check"]) == 1
    monkeypatch.setattr(script, "PICKED", [(script.TRAIN, "a_reason_the_studio_no_longer_writes", "")])
    with pytest.raises(SystemExit, match="not in the studio's end reasons"):
        script.section("en")
    from studio.words.errors import UnknownCode
    monkeypatch.setattr(script, "PICKED", [(script.DATA, "data.a_code_that_is_gone")])
    with pytest.raises(UnknownCode):
        script.section("en")
