"""A state file the studio could not read, in the page's words: which file, where its bytes are kept, what to do.

studio/state_files.py moves such a file aside and records it; studio/app/state_problems.py lists them in these
words for the page (the Train tab's status, the Settings tab's why, the Data tab's report), so a garbled
status.json, queue.json, settings.yaml or dataset_info.json is never handled in silence.
"""
from __future__ import annotations

from typing import Any

from .catalog import MESSAGES, msg

MESSAGES.update({
    "state.corrupt": ("⚠️ The file `{file}` could not be read ({reason}). It was kept as `{kept}` and the studio goes "
                      "on without it. Fix: {fix}.",
                      "⚠️ 文件 `{file}` 无法读取（{reason}）。它已另存为 `{kept}`，工作室在没有它的情况下继续运行。"
                      "解决办法：{fix}。"),
    "state.not_moved": ("(it could not be moved: the folder is read-only)", "（无法移动：文件夹只读）"),
    "state.fix.status.json": ("the run's state was rebuilt from its log; compare it with the kept copy, and delete "
                              "the copy once nothing is missing",
                              "运行的状态已根据它的日志重建；请与另存的副本核对，确认无遗漏后再删除副本"),
    "state.fix.queue.json": ("the queued runs were restored from queue.json.bak (the last good copy); check the "
                             "queue and press Start again for any run that is missing",
                             "排队的运行已从 queue.json.bak（最后一份完好的副本）恢复；请检查队列，缺少的运行请再按一次“开始”"),
    "state.fix.settings.yaml": ("the Settings tab shows derived settings; set yours again and they are saved anew "
                                "(the kept copy holds the old ones)",
                                "“设置”页显示的是推导出的设置；重新设置后会再次保存（旧设置在另存的副本中）"),
    "state.fix.dataset_info.json": ("datasets converted before are still in the data folder; convert them again on "
                                    "the Data tab to list them (the kept copy holds the old list)",
                                    "之前转换的数据集仍在数据文件夹中；在“数据”页重新转换即可再次列出（旧列表在另存的副本中）"),
    "state.fix.other": ("check the kept copy, and delete it once nothing is missing",
                        "请检查另存的副本，确认无遗漏后再删除它"),
})


def problem_line(q: Any, lang: str) -> str:
    """One quarantined file (a state_files.Quarantined: its file, reason, kept_as) in ``lang``: which, why, where it
    is kept, what to do."""
    key = f"state.fix.{q.file.name}"
    fix = msg(key if key in MESSAGES else "state.fix.other", lang)
    kept = str(q.kept_as) if q.kept_as else msg("state.not_moved", lang)
    return msg("state.corrupt", lang, file=str(q.file), reason=q.reason[:120], kept=kept, fix=fix)
