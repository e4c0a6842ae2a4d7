"""The words of the data report (studio/data/report.py ``format_report``) other than its command line's English.

The report is shared: the command line prints it after ``python -m studio convert`` and names config keys and flags
(``cutoff_len``, ``--label-map``), in English (built with each problem: its ``message`` and ``fix``) or Chinese
(``ZH_PROBLEMS``); the Data tab shows it in the page's words (``PAGE_PROBLEMS``, where the page's differ), each
setting named ``{f_<key>}`` as the Settings tab labels it (studio/words/config_problems.py ``setting_names``).
A problem's values are its ``count`` and its ``params`` (studio/data/report.py ``_problem``), with ``unit_zh`` (its
unit in Chinese) and ``rows_are`` (its count of rows with its verb, in English).
"""
from __future__ import annotations

from typing import Any

from .config_problems import setting_names

Pair = tuple[str, str]  # (English, Chinese)

# the command line's Chinese of each problem: (message, fix)
ZH_PROBLEMS: dict[str, Pair] = {
    "no_rows": ("数据集中没有任何行", "转换一个含有数据行的文件（'python -m studio convert'）"),
    "empty_text": ("{count} 行没有可读的文本", "补上文本或删除这些行"),
    "missing_label": ("{count} 行的答案（output/标签）为空", "补上标签或删除这些行；它们会教模型什么都不回答"),
    "duplicates": ("{count} 行与前面的某行完全相同", "删除重复行：它们让这些样本被计算多次，还可能混进验证集"),
    "conflicting_labels": ("{count} 条文本出现了不同的答案", "检查这些行，只保留正确的答案"),
    "tokenizer_failed": ("分词器出错（{error}）；长度为估算值", "检查模型的分词器和提示词模板"),
    "too_long": ("{count} 行超过 cutoff_len={cutoff_len} 个{unit_zh}，会被截断",
                 "把 cutoff_len 提高到 {max}（覆盖全部行；{p95} 覆盖 95%），或缩短这些文本"),
    "mixed_spellings": ("同一个标签有不同的写法：{shown}", "用合并它们的标签映射重新转换，例如 --label-map '{fix_map}'"),
    "single_label": ("每一行的答案都是 '{label}'", "加入其他标签的行；只用一种答案训练的模型学不到别的"),
    "imbalance": ("标签不均衡：'{big}' 有 {n_big} 行，'{small}' 只有 {n_small} 行（{ratio}:1）",
                  "多加一些 '{small}' 样本或去掉一些 '{big}' 样本；否则模型总回答 '{big}' 也能得高分"),
    "small_validation": ("验证集只有 {count} 行", "数据更多时用 val_size 0.1；太小的验证集损失主要是噪声"),
    "few_rows": ("只有 {count} 行训练数据", "每个标签几百条样本，结果会可靠得多"),
}
# the page's words of the problems whose command-line words name a setting, a flag or a command: {code: {part:
# (English, Chinese)}}, part "message" or "fix"; a part not here reads as on the command line
PAGE_PROBLEMS: dict[str, dict[str, Pair]] = {
    "no_rows": {"fix": ("convert a file with data rows on the Data tab", "在“数据”页转换一个含有数据行的文件")},
    "too_long": {
        "message": ("{rows_are} longer than {f_cutoff_len} ({cutoff_len} {unit}) and will be truncated",
                    "{count} 行超过{f_cutoff_len}（{cutoff_len} 个{unit_zh}），会被截断"),
        "fix": ("raise {f_cutoff_len} on the Settings tab to {max} (covers all rows; {p95} covers 95%), or shorten "
                "those texts", "在“设置”页把{f_cutoff_len}提高到 {max}（覆盖全部行；{p95} 覆盖 95%），或缩短这些文本")},
    "mixed_spellings": {"fix": ("merge them in the Label map box on the Data tab and convert again, e.g. '{fix_map}'",
                                "在“数据”页的“标签映射”框中合并它们后重新转换，例如 '{fix_map}'")},
    "small_validation": {"fix": ("set {f_val_size} to 0.1 once you have more data; a tiny validation loss is mostly "
                                 "noise", "数据更多时把{f_val_size}设为 0.1；太小的验证集损失主要是噪声")},
}
# the lengths line: {unit} (in the report's language), {mean}, {p95}, {max}, {over} (rows over the cutoff), {cutoff}
LENGTHS: dict[str, Pair] = {
    "cli": ("Length ({unit}): mean {mean}, 95% under {p95}, max {max}; {over} over cutoff_len {cutoff}",
            "长度（{unit}）：平均 {mean}，95% 不超过 {p95}，最长 {max}；{over} 行超过 cutoff_len {cutoff}"),
    "page": ("Length ({unit}): mean {mean}, 95% under {p95}, max {max}; {over} over {f_cutoff_len} ({cutoff})",
             "长度（{unit}）：平均 {mean}，95% 不超过 {p95}，最长 {max}；{over} 行超过{f_cutoff_len}（{cutoff}）"),
}
UNITS_ZH = {"tokens": "token", "estimated tokens": "估算 token"}
SEVERITY_ZH = {"error": "错误", "warning": "警告", "info": "提示"}


def _rows_are(n: int) -> str:
    return f"{n} row is" if n == 1 else f"{n} rows are"


def _worded(text: str, values: dict[str, Any], lang: str, surface: str) -> str:
    return text.format(**setting_names(text, {}, lang, surface), **values)


def problem_words(problem: dict[str, Any], lang: str = "en", surface: str = "cli") -> Pair:
    """(message, fix) of a report's ``problem`` in ``lang`` for ``surface``; the command line's English as the
    problem holds it, and the English where a problem has no Chinese words (or values that do not fit them)."""
    params = dict(problem.get("params") or {})
    values = {**params, "count": problem["count"], "rows_are": _rows_are(problem["count"]),
              "unit_zh": UNITS_ZH.get(params.get("unit", ""), params.get("unit", ""))}
    page = PAGE_PROBLEMS.get(problem.get("code", ""), {}) if surface == "page" else {}
    zh = ZH_PROBLEMS.get(problem.get("code", ""))
    out = []
    for i, part in enumerate(("message", "fix")):
        text = page[part][lang == "zh"] if part in page else (zh[i] if lang == "zh" and zh else None)
        try:
            out.append(_worded(text, values, lang, surface) if text else problem[part])
        except (KeyError, IndexError):
            out.append(problem[part])
    return out[0], out[1]


def lengths_line(lengths: dict[str, Any], cutoff_len: int, lang: str = "en", surface: str = "cli") -> str:
    """The report's lengths line in ``lang`` for ``surface`` (the page names the cutoff as the Settings tab does)."""
    unit = UNITS_ZH.get(lengths["unit"], lengths["unit"]) if lang == "zh" else lengths["unit"]
    return _worded(LENGTHS[surface][lang == "zh"], {"unit": unit, "mean": lengths["mean"], "p95": lengths["p95"],
                                                     "max": lengths["max"], "over": lengths["over_cutoff"],
                                                     "cutoff": cutoff_len}, lang, surface)
