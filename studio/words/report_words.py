"""The words of the data report (studio/data/report.py): each problem (``report.<code>``, what is wrong, and
``report.<code>.fix``), the lines around them, for the command line and for the Data tab.

The command line names config keys and flags (``cutoff_len``, ``--label-map``); the page names its own fields
(``{f_<key>}``: the Settings tab's label) and never a flag. A problem's values are its ``count`` and its params
(studio/data/report.py ``_problem``); ``{count:row is|rows are}`` is the English plural.
"""
from __future__ import annotations

from typing import Any

from .entry import message

ENTRIES: list[Any] = [
    # ---- the problems
    message("report.no_rows", "The dataset has no rows", "数据集中没有任何行"),
    message("report.no_rows.fix", "convert a file with data rows ('python -m studio convert')",
            "转换一个含有数据行的文件（'python -m studio convert'）",
            page=("convert a file with data rows on the Data tab", "在“数据”页转换一个含有数据行的文件")),
    message("report.empty_text", "{count} {count:row has|rows have} no text to read", "{count} 行没有可读的文本"),
    message("report.empty_text.fix", "fill in the text or delete those rows", "补上文本或删除这些行"),
    message("report.missing_label", "{count} {count:row has|rows have} an empty answer (output/label)",
            "{count} 行的答案（output/标签）为空"),
    message("report.missing_label.fix",
            "fill in the label or delete those rows; they teach the model to answer nothing",
            "补上标签或删除这些行；它们会教模型什么都不回答"),
    message("report.duplicates", "{count} {count:row repeats|rows repeat} an earlier row exactly",
            "{count} 行与前面的某行完全相同"),
    message("report.duplicates.fix",
            "remove the duplicates: they count those examples several times and can leak into the validation split",
            "删除重复行：它们让这些样本被计算多次，还可能混进验证集"),
    message("report.conflicting_labels", "{count} {count:text appears|texts appear} with different answers",
            "{count} 条文本出现了不同的答案"),
    message("report.conflicting_labels.fix", "check those rows and keep the right answer", "检查这些行，只保留正确的答案"),
    message("report.tokenizer_failed", "Tokenizer failed ({error}); lengths are estimated", "分词器出错（{error}）；长度为估算值"),
    message("report.tokenizer_failed.fix", "check the model's tokenizer and the template", "检查模型的分词器和提示词模板"),
    message("report.too_long",
            "{count} {count:row is|rows are} longer than cutoff_len={cutoff_len} {unit} and will be truncated",
            "{count} 行超过 cutoff_len={cutoff_len} 个{unit}，会被截断",
            page=("{count} {count:row is|rows are} longer than {f_cutoff_len} ({cutoff_len} {unit}) and will be "
                  "truncated", "{count} 行超过{f_cutoff_len}（{cutoff_len} 个{unit}），会被截断")),
    message("report.too_long.fix", "raise cutoff_len to {max} (covers all rows; {p95} covers 95%), or shorten those "
                                   "texts",
            "把 cutoff_len 提高到 {max}（覆盖全部行；{p95} 覆盖 95%），或缩短这些文本",
            page=("raise {f_cutoff_len} on the Settings tab to {max} (covers all rows; {p95} covers 95%), or shorten "
                  "those texts", "在“设置”页把{f_cutoff_len}提高到 {max}（覆盖全部行；{p95} 覆盖 95%），或缩短这些文本")),
    message("report.mixed_spellings", "The same label is spelled differently: {shown}", "同一个标签有不同的写法：{shown}"),
    message("report.mixed_spellings.fix", "convert again with a label map that merges them, e.g. --label-map "
                                          "'{fix_map}'",
            "用合并它们的标签映射重新转换，例如 --label-map '{fix_map}'",
            page=("merge them in the Label map box on the Data tab and convert again, e.g. '{fix_map}'",
                  "在“数据”页的“标签映射”框中合并它们后重新转换，例如 '{fix_map}'")),
    message("report.single_label", "Every row has the same answer '{label}'", "每一行的答案都是 '{label}'"),
    message("report.single_label.fix", "add rows with the other labels; a model trained on one answer learns nothing "
                                       "else",
            "加入其他标签的行；只用一种答案训练的模型学不到别的"),
    message("report.imbalance", "Labels are imbalanced: '{big}' has {n_big} rows, '{small}' only {n_small} ({ratio}:1)",
            "标签不均衡：'{big}' 有 {n_big} 行，'{small}' 只有 {n_small} 行（{ratio}:1）"),
    message("report.imbalance.fix",
            "add more '{small}' examples or drop some '{big}' ones; otherwise the model can score well by always "
            "answering '{big}'", "多加一些 '{small}' 样本或去掉一些 '{big}' 样本；否则模型总回答 '{big}' 也能得高分"),
    message("report.small_validation", "The validation split has only {count} {count:row|rows}", "验证集只有 {count} 行"),
    message("report.small_validation.fix", "use val_size 0.1 with more data; a tiny validation loss is mostly noise",
            "数据更多时用 val_size 0.1；太小的验证集损失主要是噪声",
            page=("set {f_val_size} to 0.1 once you have more data; a tiny validation loss is mostly noise",
                  "数据更多时把{f_val_size}设为 0.1；太小的验证集损失主要是噪声")),
    message("report.few_rows", "Only {count} training {count:row|rows}", "只有 {count} 行训练数据"),
    message("report.few_rows.fix", "a few hundred examples per label give much more reliable results",
            "每个标签几百条样本，结果会可靠得多"),
    # ---- the lines around them
    message("report.rows", "Rows: {rows} (train {train}, validation {val})", "行数：{rows}（训练 {train}，验证 {val}）"),
    message("report.lengths", "Length ({unit}): mean {mean}, 95% under {p95}, max {max}; {over} over cutoff_len "
                              "{cutoff}",
            "长度（{unit}）：平均 {mean}，95% 不超过 {p95}，最长 {max}；{over} 行超过 cutoff_len {cutoff}",
            page=("Length ({unit}): mean {mean}, 95% under {p95}, max {max}; {over} over {f_cutoff_len} ({cutoff})",
                  "长度（{unit}）：平均 {mean}，95% 不超过 {p95}，最长 {max}；{over} 行超过{f_cutoff_len}（{cutoff}）")),
    message("report.labels", "Labels: {counts}", "标签：{counts}"),
    message("report.problem", "[{severity}] {message}{rows}. Fix: {fix}.", "[{severity}] {message}{rows}。解决办法：{fix}。"),
    message("report.examples", " (rows {rows}{more})", "（第 {rows}{more} 行）"),
    message("report.estimate_note", "estimated without a tokenizer: 1 token per 4 Latin characters, 1 per "
            "Chinese/Japanese/Korean character; real counts differ by model",
            "未使用分词器的估算：每 4 个拉丁字符算 1 个 token，每个中文/日文/韩文字符算 1 个；实际数量因模型而异"),
]
