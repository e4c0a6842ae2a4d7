"""The end reasons' words are complete (studio/words/end_reasons.py): every code has both languages with the same
values, the page's Chinese has no English left and names no flag, and every code written in studio/ has words.
A reason is written by code (studio/runs/reasons.py), so the rule is held on the catalog, not on English sentences.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.runs.reasons import NO_REASON, Reason, reason_fields, reason_text
from studio.words.end_reasons import FIXES, LANGS, PAGE_REASONS, REASONS, TERMS, UnknownReason, phrase, placeholders
from tests.ui.test_page_messages import FLAG
from tests.ui.test_ui_zh_page import latin_words

ROOT = Path(__file__).resolve().parents[2]
NAMES = {"oom"}  # the kernel's OOM killer, named as the kernel names it


def _values(text: str) -> set[str]:
    """The runtime values ``text`` formats (not the page's names of its fields and buttons, filled in for it)."""
    return {name for name in placeholders(text) if name[:2] not in ("f_", "b_")}


def _sample(code: str) -> dict[str, object]:
    return {name: 7 for name in _values(REASONS[code][0]) | _values(PAGE_REASONS.get(code, ("",))[0])}


def test_every_reason_has_both_languages_with_the_same_values_and_no_english_in_the_page_chinese() -> None:
    assert len(REASONS) >= 20 and set(PAGE_REASONS) | set(FIXES) <= set(REASONS)
    for code, pair in [*REASONS.items(), *PAGE_REASONS.items(), *FIXES.items()]:
        assert len(pair) == len(LANGS) and all(t.strip() for t in pair), code
        assert _values(pair[0]) == _values(pair[1]), (code, pair)  # a language may name a button the other does not
    for code in REASONS:
        for lang in LANGS:
            shown = phrase(code, _sample(code), lang, "page")
            assert "{" not in shown and not FLAG.search(shown), (code, lang, shown)
        zh = phrase(code, _sample(code), "zh", "page")
        assert not latin_words(zh) - NAMES, (code, zh)
    for values in TERMS.values():
        assert all(not latin_words(zh) for _en, zh in values.values()), values


def _codes_written_in_studio() -> dict[str, str]:
    """code -> 'path:line' of every ``Reason.of("code", ...)`` under studio/ (a code chosen at run time is one of
    the literal codes of its module's conditional expression, read the same way)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "studio").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = getattr(call, "func", None)
            if isinstance(f, ast.Attribute) and f.attr == "of" and getattr(f.value, "id", "") == "Reason":
                assert call.args, f"{rel}:{call.lineno}: Reason.of without a code"
                for n in ast.walk(call.args[0]):
                    if isinstance(n, ast.Constant) and isinstance(n.value, str):
                        found[n.value] = f"{rel}:{call.lineno}"
    return found


def test_every_reason_code_written_in_the_studio_has_its_words() -> None:
    written = _codes_written_in_studio()
    assert len(written) >= 15, written  # the engine's and the job runner's
    assert {c: w for c, w in written.items() if c not in REASONS} == {}


def test_a_reason_keeps_its_parts_beside_its_english_text() -> None:
    reason = Reason.of("killed", signal="SIGKILL", n=9).then(Reason.of("oom_killer"),
                                                                Reason.of("checkpoint_kept", ckpt="checkpoint-4"))
    assert reason == ("the training process was killed (SIGKILL, signal 9). If nobody stopped it, the system "
                      "probably ran out of memory (the kernel's OOM killer). The last checkpoint (checkpoint-4) is "
                      "kept: press Resume to continue from it.")
    record = reason_fields(reason)
    assert record["reason_parts"][0] == {"code": "killed", "values": {"signal": "SIGKILL", "n": 9}}
    assert reason_text(record, "zh") == ("训练进程被终止了（SIGKILL，信号 9）。如果没有人停止它，多半是系统内存不足"
                                         "（被内核的 OOM 机制终止）。最新的检查点（checkpoint-4）已保留：按“继续”可从它接着训练。")
    assert reason_text(record, "en") == reason
    # an error that ended the run: its message, and the error for the page; either drops the other's fields
    error = StudioError.of("run.busy", name="a")
    assert reason_fields(error) == {"reason": error.message, "reason_parts": [], "code": "run.busy",
                                    "page_error": error.to_dict()}
    assert reason_fields(NO_REASON) == {"reason": "", "reason_parts": [], "page_error": None}


def test_a_reason_with_no_words_fails_loudly_and_another_versions_parts_show_its_text() -> None:
    with pytest.raises(UnknownReason, match="no_such_reason"):
        Reason.of("no_such_reason")
    with pytest.raises(UnknownReason, match="killed"):  # values that do not fit its words
        Reason.of("killed", signal="SIGKILL")
    text = "the training process left for lunch."
    for parts in ([{"code": "no_such_reason", "values": {}}], [{"code": "killed", "values": {}}], ["junk"], None):
        assert reason_text({"reason": text, "reason_parts": parts}, "zh") == text
    assert reason_text({"reason": ""}, "zh") == ""


@pytest.mark.parametrize("lang", LANGS)
def test_a_full_disk_names_the_buttons_and_the_system_error_in_the_page_language(lang: str) -> None:
    reason = Reason.of("disk_full_ending", os_error="No space left on device").then(
        Reason.of("before_that"), Reason.of("no_result"), Reason.of("no_checkpoint"))
    assert reason == ("The disk is full (No space left on device) while recording the end of the run; free some "
                      "space (old runs, exports, checkpoints), then press Resume or Start again. Before that: the "
                      "training process ended without reporting a result. No checkpoint was written yet, so a "
                      "resume would start over.")
    shown = reason_text(reason_fields(reason), lang)
    if lang == "zh":
        assert shown == ("磁盘已满（设备上没有剩余空间），发生在记录运行结束时；腾出一些磁盘空间（旧的运行、导出文件、检查点），"
                         "然后再按“继续”或“开始”。在此之前：训练进程结束了，但没有报告结果。还没有写出任何检查点，"
                         "所以继续训练会从头开始。")
    else:
        assert shown == reason
    assert re.search(r"\{|\}", shown) is None
