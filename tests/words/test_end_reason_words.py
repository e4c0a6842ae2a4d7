"""A run's end reason is said by code (studio/runs/reasons.py ``Reason.of``) and worded per language from the
catalog (``reason.<code>``, studio/words/reason_words.py): the CLI keeps its English text, the page shows it in its
own language, a reason with no words fails where it is written. The catalog's completeness is
tests/words/test_catalog_complete.py.
"""
from __future__ import annotations

import re

import pytest

from studio.errors import StudioError
from studio.runs.reasons import NO_REASON, Reason, reason_fields, reason_text
from studio.words.end_reasons import UnknownReason
from studio.words.entry import LANGS
from tests.ui.test_ui_zh_page import latin_words


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


def test_every_reason_reads_in_chinese_on_the_page_naming_its_buttons() -> None:
    from studio.words.catalog import CATALOG
    from studio.words.end_reasons import phrase
    codes = [c[len("reason."):] for c in CATALOG if c.startswith("reason.") and not c.endswith(".fix")]
    assert len(codes) >= 20
    for code in codes:
        values = {n: 7 for n in re.findall(r"\{(\w+)", CATALOG[f"reason.{code}"].cli[0]) if not n.startswith("b_")}
        zh = phrase(code, values, "zh", "page")
        assert not latin_words(zh) - {"oom"}, (code, zh)
    assert "“继续”" in phrase("checkpoint_kept", {"ckpt": "c"}, "zh", "page")
