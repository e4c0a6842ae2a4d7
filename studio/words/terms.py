"""The words of values: a value of a closed set (a column's role, a JSON type, a unit, why a row was skipped), and
how a list value is joined in each language (studio/words/render.py applies both to every message's values).

A list ``<name>``: each item by ``list.<name>`` ({0}, {1} are a tuple item's parts; a plural as ``{1:row|rows}``),
joined by ``list.<name>.sep``; an item made of groups by ``list.<name>.inner``. A list without entries is joined
with ", ".
"""
from __future__ import annotations

from typing import Any

from .entry import message, terms

ENTRIES: list[Any] = [
    # a column's role (the convert command's --<role>-column; the Data tab's "<Role> column")
    terms("term.role", ("text", "text", "文本"), ("label", "label", "标签"), ("instruction", "instruction", "指令"),
          ("input", "input", "输入"), ("output", "output", "输出"), ("system", "system", "系统提示"),
          ("messages", "messages", "对话消息")),
    # a JSON value's type, as Python names it
    terms("term.kind", ("list", "list", "列表"), ("str", "str", "字符串"), ("int", "int", "整数"),
          ("float", "float", "小数"), ("bool", "bool", "布尔值"), ("NoneType", "NoneType", "null 值")),
    # the system's English for a full disk (an OSError's strerror)
    terms("term.os_error", ("No space left on device", "No space left on device", "设备上没有剩余空间"),
          ("Disk quota exceeded", "Disk quota exceeded", "超出磁盘配额")),
    # the held-out metric a run keeps its best by (studio/engine/held_out.py)
    terms("term.metric", ("accuracy", "accuracy", "准确率"), ("answer_loss", "answer loss", "回答损失")),
    # a data report problem's severity
    terms("term.severity", ("error", "error", "错误"), ("warning", "warning", "警告"), ("info", "info", "提示")),
    # the unit of a length (the Data tab's column statistics, the data report)
    terms("unit", ("chars", "chars", "字符"), ("tokens", "tokens", "token"),
          ("estimated tokens", "estimated tokens", "估算 token")),
    # why a row was skipped (studio/data/convert.py)
    terms("skip", ("empty text", "empty text", "文本为空"), ("missing label", "missing label", "缺少标签"),
          ("empty instruction and input", "empty instruction and input", "指令和输入都为空"),
          ("empty output", "empty output", "输出为空"), ("no assistant reply", "no assistant reply", "没有助手回复")),
    # ---- how list values are joined
    message("list.roots", "'{0}'", "“{0}”"),
    message("list.roots.sep", " or ", " 或 "),
    message("list.values", "'{0}' ({1} {1:row|rows})", "“{0}”（{1} 行）"),
    message("list.values.sep", ", ", "，"),
    message("list.spellings", "{0}", "{0}"),
    message("list.spellings.sep", "; ", "；"),
    message("list.spellings.inner", "'{0}' ({1} {1:row|rows})", "“{0}”（{1} 行）"),
    message("list.spellings.inner.sep", " / ", " / "),
    message("list.lengths", "'{0}' {1}", "“{0}” {1} 个"),
    message("list.lengths.sep", ", ", "，"),
    message("list.skipped", "{0} with {1}", "{0} 行{1}"),
    message("list.skipped.sep", ", ", "，"),
    message("list.hosts", "{0}", "“{0}”"),
    message("list.hosts.sep", ", ", "，"),
    message("list.counts", "{0} {1}", "{0} {1}"),  # a label and its rows (the data report's Labels line)
    message("list.problems.sep", "; ", "；"),
    # the lists a field's help names (studio/config/run_config.py help_values)
    message("list.aliases", "{0} for {1}", "{0} 即 {1}"),
    message("list.aliases.sep", ", ", "、"),
    message("list.plans.sep", ", ", "、"),
    message("list.schedulers.sep", ", ", "、"),
]
