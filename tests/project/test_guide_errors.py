"""The guide's "When something goes wrong" tables stay in step with the studio's own errors.

docs/make_error_guide.py writes them from the studio's words; this holds the guides to what it writes today, and
each listed row to the code: an error and a run's end reason are listed by code (what and fix are one entry, paired by
construction; every error is raised by its code: StudioError refuses a sentence).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("make_error_guide", ROOT / "docs" / "make_error_guide.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_guides_are_what_the_script_writes_today():
    assert _script().main(["--check"]) == 0, "run: .venv/bin/python docs/make_error_guide.py"


def unpaired(script, picked: list[tuple[str, ...]]) -> list[str]:
    """The rows of ``picked`` that do not stand for what the studio says: a row of sentences. The studio raises
    every error and writes every run's end reason by code, so a row names a code, whose what and fix are one entry
    of the words (paired by construction; a code no longer worded fails the script)."""
    out = []
    for row in picked:
        if len(row) == 2 or row[0] == script.TRAIN:
            continue
        out.append(f"{row[1]!r} -> {row[2]!r}")
    return out


def test_each_listed_row_stands_for_what_the_studio_says():
    script = _script()
    assert unpaired(script, script.PICKED) == []
    sentences = [(script.SETTINGS, "pure_bf16 needs a card that supports bf16 (Ampere or newer)",
                  "turn pure_bf16 off: this card trains with fp16 mixed precision")]
    assert unpaired(script, sentences) == [f"{sentences[0][1]!r} -> {sentences[0][2]!r}"]


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
