"""The words of the errors met loading a dataset to train on: the studio's own JSONL and LLaMA-Factory's
dataset_info.json entries and rows (studio/data/dataset.py, lf_dataset.py), and a model's chat template that goes
over its rendering budget (studio/data/template_budget.py).

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled.
"""
from __future__ import annotations

from typing import Any

from .entry import error

_TEMPLATE_WHAT = "The model's chat template went over its rendering limits: it "
_TEMPLATE_ZH = "模型自带的对话模板超出了渲染限制："
_TEMPLATE_FIX = ("use a chat template without such loops or sizes (or set Template to one of the built-in ones on the "
                 "Settings tab)", "请使用没有这类循环或尺寸的对话模板（或在“设置”页把“模板”设为内置模板之一）")


def _template(en: str, zh: str) -> dict[str, tuple[str, str]]:
    return {"what": (_TEMPLATE_WHAT + en, _TEMPLATE_ZH + zh), "fix": _TEMPLATE_FIX}


_FIX_OR_DELETE = ("fix or delete it", "改正或删除它")
_AGAIN_PAGE = ("convert the source file again on the Data tab", "在“数据”页重新转换源文件")
_UNSUPPORTED = ("train it with LLaMA-Factory, or give the studio a supervised dataset (instruction/input/output or "
                "ShareGPT)", "请用 LLaMA-Factory 训练它，或给本工作室一个监督微调数据集（instruction/input/output 或 "
                             "ShareGPT 格式）")


ENTRIES: list[Any] = [
    # ---- reading a dataset to train on (dataset.py)
    error("dataset.too_deep", what=("Dataset '{name}' is nested too deeply to read", "数据集“{name}”嵌套太深，无法读取"),
          fix=("convert the source again with 'python -m studio convert' (rows are flat objects)",
               "用“python -m studio convert”重新转换源文件（每行是扁平的对象）"),
          page_fix=_AGAIN_PAGE),
    error("dataset.json_invalid",
          what=("Dataset '{name}' is not valid JSON ({detail})", "数据集“{name}”不是有效的 JSON（{detail}）"),
          fix=("fix the file or convert it again with 'python -m studio convert'",
               "改正这个文件，或用“python -m studio convert”重新转换"),
          page_fix=_AGAIN_PAGE),
    error("dataset.not_list", what=("Dataset '{name}' must hold a JSON list of rows", "数据集“{name}”必须是一个由行组成的 JSON 列表"),
          fix=("convert it with 'python -m studio convert'", "用“python -m studio convert”转换它"),
          page_fix=_AGAIN_PAGE),
    error("dataset.line_invalid", what=("Line {line} of '{file}' is not valid JSON", "“{file}”第 {line} 行不是有效的 JSON"),
          fix=("fix or delete that line, or convert the source again", "改正或删除那一行，或重新转换源文件")),
    error("dataset.unreadable",
          what=("Dataset '{name}' could not be read ({error}: {detail})", "无法读取数据集“{name}”（{error}：{detail}）"),
          fix=("fix the file, or convert the source again with 'python -m studio convert'",
               "改正这个文件，或用“python -m studio convert”重新转换源文件"),
          page_fix=_AGAIN_PAGE),
    error("dataset.row_not_object", what=("Dataset '{name}' has a row that is not an object", "数据集“{name}”中有一行不是对象"),
          fix=("each row needs instruction/input/output", "每一行都需要 instruction/input/output")),
    error("dataset.outside", what=("Dataset '{name}': file_name '{file}' is outside the dataset folder '{folder}'",
                                   "数据集“{name}”：file_name“{file}”在数据集文件夹“{folder}”之外"),
          fix=("put the data file inside that folder and name it relative to it",
               "把数据文件放进那个文件夹，并用相对于它的路径命名")),
    error("dataset.none", what=("No dataset given", "没有指定数据集"),
          fix=("set 'dataset' to a .jsonl file made by 'python -m studio convert'",
               "把“dataset”设为由“python -m studio convert”生成的 .jsonl 文件"),
          page_fix=("convert a file on the Data tab, then pick it under Training data on the Settings tab",
                    "在“数据”页转换一个文件，然后在“设置”页的“训练数据”中选择它")),
    error("dataset.info_invalid", what=("'{file}' is not valid JSON", "“{file}”不是有效的 JSON"), fix=_FIX_OR_DELETE),
    error("dataset.info_not_object", what=("'{file}' must hold a JSON object of datasets (name -> entry)",
                                           "“{file}”必须是一个以数据集为内容的 JSON 对象（名字 -> 条目）"),
          fix=_FIX_OR_DELETE),
    error("dataset.not_found", what=("Dataset '{name}' not found: no such file, and no entry of that name in {info}",
                                     "找不到数据集“{name}”：没有这个文件，{info} 中也没有这个名字的条目"),
          fix=("give the path of a .jsonl file (python -m studio convert makes one) or register it",
               "给出一个 .jsonl 文件的路径（python -m studio convert 可以生成），或登记它"),
          page_fix=("convert the file on the Data tab, then pick it under Training data on the Settings tab",
                    "在“数据”页转换这个文件，然后在“设置”页的“训练数据”中选择它")),
    error("dataset.file_missing",
          what=("Dataset '{name}' points to '{file}', which does not exist", "数据集“{name}”指向的“{file}”不存在"),
          fix=("convert the data again", "重新转换数据")),
    error("dataset.no_rows", what=("Dataset '{name}' has no rows", "数据集“{name}”没有任何行"),
          fix=("check the file; convert the source again", "检查这个文件；重新转换源文件")),
    # ---- LLaMA-Factory's dataset_info.json entries and rows (lf_dataset.py)
    error("lf.entry_not_object",
          what=("dataset_info.json entry '{name}' is not an object", "dataset_info.json 中的条目“{name}”不是对象"),
          fix=('write {{"file_name": "..."}}', '请写成 {{"file_name": "..."}}')),
    error("lf.hub", what=("Dataset '{name}' is downloaded from a hub ({hub}); this machine reads local files only",
                          "数据集“{name}”要从模型库下载（{hub}）；本机只读取本地文件"),
          fix=("download it, save it as .json/.jsonl next to dataset_info.json and set file_name",
               "请下载它，存为 dataset_info.json 旁边的 .json/.jsonl 文件，并设置 file_name")),
    error("lf.no_file_name",
          what=("dataset_info.json entry '{name}' has no file_name", "dataset_info.json 中的条目“{name}”没有 file_name"),
          fix=("add the data file's name", "加上数据文件的名字")),
    error("lf.preference", what=("Dataset '{name}' is a ranking/preference dataset (chosen/rejected answers, for "
                                 "DPO/ORPO/reward modelling); those stages are not supported yet",
                                 "数据集“{name}”是排序/偏好数据集（chosen/rejected 回答，用于 DPO/ORPO/奖励模型）；暂不支持这些训练阶段"),
          fix=_UNSUPPORTED),
    error("lf.kto", what=("Dataset '{name}' is a KTO dataset (kto_tag); stage kto is not supported yet",
                          "数据集“{name}”是 KTO 数据集（kto_tag）；暂不支持 KTO 训练阶段"),
          fix=_UNSUPPORTED),
    error("lf.media", what=("Dataset '{name}' has {media}: multimodal training is not supported here",
                            "数据集“{name}”含有 {media}：这里不支持多模态训练"),
          fix=_UNSUPPORTED),
    error("lf.tools", what=("Dataset '{name}' has tool definitions (tools): tool-call training is not supported yet",
                            "数据集“{name}”含有工具定义（tools）：暂不支持工具调用训练"),
          fix=_UNSUPPORTED),
    error("lf.formatting",
          what=("Dataset '{name}' has formatting '{formatting}'", "数据集“{name}”的 formatting 是“{formatting}”"),
          fix=("use alpaca or sharegpt", "请使用 alpaca 或 sharegpt")),
    error("lf.pretrain",
          what=("Dataset '{name}' maps only a text column ({column}) and no response: it is a pre-training "
                "dataset (stage pt), which is not supported yet",
                "数据集“{name}”只映射了一个文本列（{column}），没有回答：这是预训练数据集（pt 阶段），暂不支持"),
          fix=_UNSUPPORTED),
    error("lf.file_name_shape",
          what=("dataset_info.json entry '{name}': file_name must be the name of one data file (got "
                "{got})", "dataset_info.json 中的条目“{name}”：file_name 必须是一个数据文件的名字（实际是 {got}）"),
          fix=('write "file_name": "data.json"; list several datasets as separate entries',
               '请写成 "file_name": "data.json"；多个数据集请分别列为不同的条目')),
    error("lf.names_shape",
          what=("dataset_info.json entry '{name}': {key} must be an object of names (got {kind} {got})",
                "dataset_info.json 中的条目“{name}”：{key} 必须是一个由名字组成的对象（实际是 {kind} {got}）"),
          fix=('write "{key}": {example}', '请写成 "{key}": {example}')),
    error("lf.formatting_shape", what=('dataset_info.json entry \'{name}\': formatting must be "alpaca" or "sharegpt" '
                                       '(got {got})',
                                       'dataset_info.json 中的条目“{name}”：formatting 必须是 "alpaca" 或 "sharegpt"（实际是 {got}）'),
          fix=('write "formatting": "alpaca"', '请写成 "formatting": "alpaca"')),
    error("lf.row_shape", what=("Row {row} of '{file}': the row does not have the shape its dataset_info.json entry "
                                "describes ({error}: {detail})",
                                "“{file}”第 {row} 行：这一行的结构与它在 dataset_info.json 中的条目不符（{error}：{detail}）"),
          fix=("fix that row, or the entry's columns/formatting", "改正那一行，或改正条目的 columns/formatting")),
    error("lf.row_history",
          what=("Row {row} of '{file}': history must be a list of [question, answer] pairs (got {got})",
                "“{file}”第 {row} 行：history 必须是由 [问题, 回答] 组成的列表（实际是 {got}）"),
          fix=('write "history": [["earlier question", "its answer"]]', '请写成 "history": [["之前的问题", "它的回答"]]')),
    error("lf.row_messages", what=("Row {row} of '{file}': '{column}' must be a list of message objects (got {got})",
                                   "“{file}”第 {row} 行：“{column}”必须是由消息对象组成的列表（实际是 {got}）"),
          fix=('write [{{"{role_tag}": "human", "{content_tag}": "..."}}, ...]',
               '请写成 [{{"{role_tag}": "human", "{content_tag}": "..."}}, ...]')),
    error("lf.sharegpt_rows", what=("'{file}' holds ShareGPT conversations, not instruction/input/output rows",
                                    "“{file}”里是 ShareGPT 对话，不是 instruction/input/output 行"),
          fix=('register it in dataset_info.json with "formatting": "sharegpt" and use its name',
               '请在 dataset_info.json 中用 "formatting": "sharegpt" 登记它，然后使用它的名字')),
    error("lf.preference_rows", what=("'{file}' is a preference dataset (chosen/rejected); DPO is not supported yet",
                                      "“{file}”是偏好数据集（chosen/rejected）；暂不支持 DPO"),
          fix=_UNSUPPORTED),
    error("lf.pretrain_rows",
          what=("'{file}' holds plain text (pre-training data, stage pt), which is not supported yet",
                "“{file}”里是纯文本（预训练数据，pt 阶段），暂不支持"),
          fix=_UNSUPPORTED),
    error("lf.tool_turns", what=("'{file}' has tool-call turns ({turn}); tool-call training is not supported yet",
                                 "“{file}”含有工具调用的轮次（{turn}）；暂不支持工具调用训练"),
          fix=_UNSUPPORTED),
    # ---- a model's own chat template over its rendering budget (template_budget.py)
    error("template.steps", **_template("takes more than {limit:,} steps to render", "渲染需要超过 {limit:,} 步")),
    error("template.slow", **_template("takes longer than {seconds:g} s to render", "渲染用时超过 {seconds:g} 秒")),
    error("template.would_make", **_template("would make a text or list of {n:,} items, over the limit of {limit:,}",
                                             "将生成一个有 {n:,} 项的文本或列表，超过了上限 {limit:,}")),
    error("template.made", **_template("made a text or list of {n:,} items, over the limit of {limit:,}",
                                       "生成了一个有 {n:,} 项的文本或列表，超过了上限 {limit:,}")),
    error("template.is", **_template("is a text or list of {n:,} items, over the limit of {limit:,}",
                                     "本身是一个有 {n:,} 项的文本，超过了上限 {limit:,}")),
    error("template.writes", **_template("writes more than {limit:,} characters", "输出超过 {limit:,} 个字符")),
    error("template.asks_size", **_template("asks for a size of {n:,}, over the limit of {limit:,}",
                                            "要求的大小为 {n:,}，超过了上限 {limit:,}")),
    error("template.format_width", **_template("asks for a format width over the limit", "要求的格式宽度超过了上限")),
    error("template.recursion", **_template("calls itself too deeply to render", "递归调用太深，无法渲染")),
    error("template.power", **_template("raises a number to the power {power}, over the limit of {limit}",
                                        "把一个数计算 {power} 次方，超过了上限 {limit}")),
    # ---- preference rows for stage dpo / kto (lf_dataset.kind_mismatch, preference.py, dataset.py); {have} and
    # {want} are the kinds' names: sft (instruction rows), ranking (chosen/rejected pairs), kto (tagged answers)
    error("dataset.kind_mismatch", what=("Dataset '{name}' holds {have} rows, but stage {stage} trains on {want} rows",
                                         "数据集“{name}”是 {have} 数据，但训练阶段 {stage} 需要 {want} 数据"),
          fix=("set stage: {other} to train on it, or pick a dataset of {want} rows",
               "把训练阶段设为 {other} 来训练它，或选择一个 {want} 数据集"),
          page_fix=("set Training stage to {other} on the Settings tab, or pick a dataset of {want} rows",
                    "在“设置”页把“训练阶段”设为 {other}，或选择一个 {want} 数据集")),
    error("dataset.pref_not_json",
          what=("Dataset '{name}' is not JSON or JSONL: preference rows are read from .json/.jsonl files",
                "数据集“{name}”不是 JSON 或 JSONL：偏好数据只从 .json/.jsonl 文件读取"),
          fix=("save the rows as JSONL", "请把这些行保存为 JSONL")),
    error("pref.kto_tag", what=("Row {row} of '{file}': kto_tag is '{value}', not true or false",
                                "“{file}”第 {row} 行：kto_tag 的值“{value}”不是真或假"),
          fix=("write kto_tag as true (a good answer) or false (a bad one)",
               "把 kto_tag 写成真值（好答案）或假值（坏答案）")),
    error("pref.no_prompt", what=("Row {row} of '{file}' has no prompt (instruction or input)",
                                  "“{file}”第 {row} 行没有提示（instruction 或 input）"),
          fix=("fill the instruction or input of that row", "请填写那一行的 instruction 或 input")),
    error("pref.no_pair", what=("Row {row} of '{file}' lacks a chosen or a rejected answer",
                                "“{file}”第 {row} 行缺少好答案或坏答案"),
          fix=("give both answers in every row of a ranking dataset", "偏好数据集的每一行都要给出两个答案")),
    error("pref.no_answer", what=("Row {row} of '{file}' has no answer to judge", "“{file}”第 {row} 行没有可评价的答案"),
          fix=("fill its answer (output)", "请填写它的答案（output）")),
    # a pair whose two answers are the same teaches nothing (DPO's loss sits at ln 2 on it): refused before a run
    error("pref.same_pair", what=("{n:,} of the {total:,} pairs in '{file}' have the same chosen and rejected answer "
                                  "(row {row} first)", "“{file}”的 {total:,} 对中有 {n:,} 对的选中答案和被拒答案相同"
                                  "（第一处在第 {row} 行）"),
          fix=("remove those rows or give them a different rejected answer",
               "请删除这些行，或给它们一个不同的被拒答案")),
]
