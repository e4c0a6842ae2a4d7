"""The Chinese of every error the Data tab can meet below the UI (the file readers, the conversion, the label
checks, the dataset loader, the workspace's path checks): English exactly as studio/data writes it, ``{name}``
where it puts a runtime value (and a brace of the text doubled in the
Chinese, which is formatted). studio/words/error_words.py merges this table into PAGE_ERRORS;
tests/test_page_errors_zh.py reads every StudioError under studio/data from the source and fails on one missing
here. Kept apart from error_words.py so that file stays the matcher and the page fixes.
"""
from __future__ import annotations

DATA_ERRORS: dict[str, str] = {
    "'{file}' has only one column, '{column}', and no column of labels":
        "“{file}”只有一列“{column}”，没有标签列",
    "add a column with each row's label (for example positive or negative) to the spreadsheet, save it and upload "
    "it again": "请在表格里加一列，写上每行的标签（例如 正面 或 负面），保存后重新上传",
    # ---- finding and opening the file (decode.py, readers.py, limits.py, workspace.py)
    "File '{file}' does not exist": "文件“{file}”不存在",
    "check the path and the file name": "检查路径和文件名",
    "'{file}' is a folder, not a file": "“{file}”是一个文件夹，不是文件",
    "give the path of one data file": "请给出单个数据文件的路径",
    "'{file}' is not a text file: it looks like an Excel/zip file": "“{file}”不是文本文件：它看起来是 Excel 或 zip 文件",
    "'{file}' is not a text file: it looks like an old Excel (.xls) file":
        "“{file}”不是文本文件：它看起来是旧版 Excel（.xls）文件",
    "'{file}' is not a text file: it looks like a Parquet file": "“{file}”不是文本文件：它看起来是 Parquet 文件",
    "'{file}' is not a text file: it looks like a binary file": "“{file}”不是文本文件：它看起来是二进制文件",
    "rename it to '{name}.xlsx', or save the sheet as 'CSV UTF-8' in Excel":
        "把它改名为“{name}.xlsx”，或在 Excel 中把工作表另存为“CSV UTF-8”",
    "rename it to '{name}.xls'": "把它改名为“{name}.xls”",
    "rename it to '{name}.parquet'": "把它改名为“{name}.parquet”",
    "rename it to '{name}.csv'": "把它改名为“{name}.csv”",
    "export the data as CSV (UTF-8), Excel (.xlsx) or JSONL": "把数据导出为 CSV（UTF-8）、Excel（.xlsx）或 JSONL",
    "'{file}' is empty": "“{file}”是空的",
    "export the data again; the file has no content": "请重新导出数据；这个文件没有任何内容",
    "export the data again; the file has no rows": "请重新导出数据；这个文件没有任何行",
    "'{file}' contains a NUL byte (line {line})": "“{file}”含有 NUL 字节（第 {line} 行）",
    "remove the NUL characters or export the data again as CSV (UTF-8)": "删除 NUL 字符，或把数据重新导出为 CSV（UTF-8）",
    "Unknown encoding '{encoding}'": "未知的编码“{encoding}”",
    "use auto, utf-8, utf-8-sig, gbk or gb18030": "请使用 auto、utf-8、utf-8-sig、gbk 或 gb18030",
    "'{file}' cannot be read as {encoding} (bad byte at position {pos})":
        "无法按 {encoding} 读取“{file}”（位置 {pos} 处有无效字节）",
    "use encoding 'auto', or save the file as UTF-8": "把编码设为“auto”，或把文件另存为 UTF-8",
    "'{file}' mixes encodings: {n} line(s) are UTF-8 but line {lines} (counting the header as line 1) are not, so "
    "any one decoding would garble part of it":
        "“{file}”混用了多种编码：{n} 行是 UTF-8，但第 {lines} 行（表头算第 1 行）不是，用任何一种编码读取都会有一部分变成乱码",
    "save the file again as 'CSV UTF-8' (or fix those lines); or choose the encoding explicitly if you know it":
        "把文件重新另存为“CSV UTF-8”（或改好那几行）；如果知道文件的编码，也可以直接选择它",
    "'{file}' has more than {n} rows": "“{file}”超过 {n} 行",
    "'{file}' has a cell of {n} characters in row {row}, column '{column}', over the limit of {limit}":
        "“{file}”第 {row} 行“{column}”列有一个 {n} 个字符的单元格，超过了上限 {limit}",
    "shorten that text (or split it into several rows)": "请缩短这段文字（或把它拆成几行）",
    "The model's chat template went over its rendering limits: it {reason}":
        "模型自带的对话模板超出了渲染限制：{reason}",
    "use a chat template without such loops or sizes (or set Template to one of the built-in ones on the Settings "
    "tab)": "请使用没有这类循环或尺寸的对话模板（或在“设置”页把“模板”设为内置模板之一）",
    "'{file}' has {n} columns, over the limit of {limit}": "“{file}”有 {n} 列，超过了 {limit} 列的上限",
    "split the file into parts of at most {rows} rows and {columns} columns (keep only the columns you need)":
        "把文件拆成每份最多 {rows} 行、{columns} 列的几部分（只保留需要的列）",
    "'{file}' unpacks to {mb} MB of sheet data, over the {limit} MB limit ({x}x the {file_mb} MB file limit)":
        "“{file}”解压后有 {mb} MB 的表格数据，超过了 {limit} MB 的上限（文件上限 {file_mb} MB 的 {x} 倍）",
    "save the sheet as 'CSV UTF-8' and split it into smaller files (or remove unused rows and columns)":
        "把工作表另存为“CSV UTF-8”并拆成几个更小的文件（或删除用不到的行和列）",
    "'{file}' has a header row ({columns}) but no data rows": "“{file}”只有表头（{columns}），没有数据行",
    "export the sheet again including its rows": "重新导出工作表，并包含其中的数据行",
    "add the data rows under the header": "在表头下面添加数据行",
    "'{file}' is not a readable CSV file ({detail})": "“{file}”不是可以读取的 CSV 文件（{detail}）",
    "export it again as CSV (UTF-8) from the spreadsheet": "从电子表格重新导出为 CSV（UTF-8）",
    "'{file}' has no rows": "“{file}”没有任何行",
    "the file holds an empty list; export the data again": "文件里是一个空列表；请重新导出数据",
    "'{file}' is nested too deeply to read (line {line} has lists/objects inside each other hundreds of levels deep)":
        "“{file}”嵌套太深，无法读取（第 {line} 行的列表/对象互相嵌套了几百层）",
    "'{file}' is nested too deeply to read (the file has lists/objects inside each other hundreds of levels deep)":
        "“{file}”嵌套太深，无法读取（文件里的列表/对象互相嵌套了几百层）",
    "export flat rows: one object per row with text fields": "导出扁平的行：每行一个对象，字段为文本",
    "Line {line} of '{file}' holds {value}, which is not a value JSON allows (Python writes it for a missing or "
    "broken number)": "“{file}”第 {line} 行含有 {value}，JSON 不允许这个值（Python 会把缺失或损坏的数字写成它）",
    "'{file}' holds {value}, which is not a value JSON allows (Python writes it for a missing or broken number)":
        "“{file}”含有 {value}，JSON 不允许这个值（Python 会把缺失或损坏的数字写成它）",
    "replace {value} with the real value or null, or delete that row": "把 {value} 换成真实的值或 null，或删除那一行",
    "Line {line} of '{file}' is a JSON {kind}, not an object": "“{file}”第 {line} 行是一个 JSON {kind}，不是对象",
    "Line {line} of '{file}' is a JSON list, not an object": "“{file}”第 {line} 行是 JSON 列表，不是对象",
    "Line {line} of '{file}' is a JSON str, not an object": "“{file}”第 {line} 行是 JSON 字符串，不是对象",
    "Line {line} of '{file}' is a JSON int, not an object": "“{file}”第 {line} 行是 JSON 整数，不是对象",
    "Line {line} of '{file}' is a JSON float, not an object": "“{file}”第 {line} 行是 JSON 小数，不是对象",
    "Line {line} of '{file}' is a JSON bool, not an object": "“{file}”第 {line} 行是 JSON 布尔值，不是对象",
    'each line must look like {"text": "...", "label": "..."}': '每一行都必须形如 {{"text": "...", "label": "..."}}',
    "Line {line} of '{file}' is not valid JSON (a number has more digits than Python reads (over 4,300))":
        "“{file}”第 {line} 行不是有效的 JSON（有一个数字的位数超过了 Python 能读取的上限（4,300 位））",
    "Line {line} of '{file}' is not valid JSON ({detail})": "“{file}”第 {line} 行不是有效的 JSON（{detail}）",
    "fix or delete line {line}; each line must be one JSON object": "改正或删除第 {line} 行；每一行必须是一个 JSON 对象",
    "'{file}' must hold a list of JSON objects (one per row)": "“{file}”必须是一个 JSON 对象列表（每行一个对象）",
    'shape it like [{"text": "...", "label": "..."}, ...]': '请整理成 [{{"text": "...", "label": "..."}}, ...] 的形式',
    "'{file}' is not valid JSON (a number has more digits than Python reads (over 4,300))":
        "“{file}”不是有效的 JSON（有一个数字的位数超过了 Python 能读取的上限（4,300 位））",
    "'{file}' is not valid JSON ({detail})": "“{file}”不是有效的 JSON（{detail}）",
    "fix the file near line {line}": "改正文件第 {line} 行附近的内容",
    "fix the file": "改正这个文件",
    "'{file}' holds one list per column, but the lists differ in length ({lengths})":
        "“{file}”每一列是一个列表，但这些列表长度不同（{lengths}）",
    "give every column the same number of values, or export one object per row":
        "让每一列的值数量相同，或改为每行导出一个对象",
    "Column '{column}' of '{file}' holds binary data that is not text (row {row})":
        "“{file}”的列“{column}”含有不是文本的二进制数据（第 {row} 行）",
    "store '{column}' as a string column, or choose another column": "把“{column}”存为字符串列，或选择另一列",
    "'{file}' has columns but no data rows": "“{file}”有列，但没有数据行",
    "export it again including its rows": "重新导出，并包含其中的数据行",
    "'{file}' is not a readable Parquet file ({detail})": "“{file}”不是可以读取的 Parquet 文件（{detail}）",
    "export it again, or use CSV/JSONL": "重新导出，或改用 CSV/JSONL",
    "Sheet '{sheet}' of '{file}' is empty": "“{file}”的工作表“{sheet}”是空的",
    "put the data on the first sheet, or choose the sheet that holds it": "把数据放在第一个工作表上，或选择存放数据的工作表",
    "'{file}' is not a readable Excel file ({detail})": "“{file}”不是可以读取的 Excel 文件（{detail}）",
    "open it in Excel and save it again as .xlsx": "在 Excel 中打开它，再另存为 .xlsx",
    "Sheet '{sheet}' not found in '{file}'": "“{file}”中没有工作表“{sheet}”",
    "use one of: {choices}": "请使用其中之一：{choices}",
    "'{file}' is not an Excel file: it looks like text (CSV?)": "“{file}”不是 Excel 文件：它看起来是文本（CSV？）",
    "'{file}' is not a readable Excel file (not .xlsx or .xls inside)": "“{file}”不是可以读取的 Excel 文件（内容不是 .xlsx 或 .xls）",
    "'{file}' could not be read ({kind}: {detail})": "无法读取“{file}”（{kind}：{detail}）",
    "export it again (CSV UTF-8 or JSONL are the safest), or delete the row it names":
        "重新导出（CSV UTF-8 或 JSONL 最稳妥），或删除它指出的那一行",
    "Cannot read '{file}': unsupported file type '{suffix}'": "无法读取“{file}”：不支持的文件类型“{suffix}”",
    "The path '{path}' is outside the folders this studio may use": "路径“{path}”不在本工作室可以使用的文件夹之内",
    "The path is empty": "路径是空的",
    "type a file or folder inside the workspace": "请输入工作区之内的文件或文件夹",
    "The path contains a control character (NUL or line break)": "路径含有控制字符（NUL 或换行）",
    "type the path again without pasting hidden characters": "请重新输入路径，不要粘贴进隐藏字符",
    "The name '{name}' is not a plain folder name": "名字“{name}”不是一个简单的文件夹名",
    "The file name '{name}' is not a plain folder name": "文件名“{name}”不是一个简单的文件夹名",
    "The export name '{name}' is not a plain folder name": "导出名称“{name}”不是一个简单的文件夹名",
    "The run name '{name}' is not a plain folder name": "运行名称“{name}”不是一个简单的文件夹名",
    "use letters, digits, '-', '_' or '.', without '/' or '..' (at most 120 characters)":
        "请只用字母、数字、“-”、“_”或“.”，不要含“/”或“..”（最多 120 个字符）",
    # ---- converting a table (convert.py, labels.py, split.py)
    "Label values not in the label map: {values}": "这些标签值不在标签映射中：{values}",
    "add them to the label map (e.g. {example}) or remove those rows": "把它们加入标签映射（例如 {example}），或删除那些行",
    "Row {row}: the conversation must be a list of messages": "第 {row} 行：对话必须是一个消息列表",
    'write it as [{"role": "user", "content": "..."}, ...]': '请写成 [{{"role": "user", "content": "..."}}, ...]',
    "Row {row}: a message lacks role/content (OpenAI) or from/value (ShareGPT)":
        "第 {row} 行：有一条消息缺少 role/content（OpenAI 格式）或 from/value（ShareGPT 格式）",
    'write messages like {"role": "user", "content": "..."}': '请把消息写成 {{"role": "user", "content": "..."}} 的形式',
    "Row {row}: the conversation is not valid JSON": "第 {row} 行：对话不是有效的 JSON",
    "No usable rows in '{file}' ({detail})": "“{file}”中没有可用的行（{detail}）",
    "check that the chosen columns are the right ones and are filled": "检查所选的列是否正确，并且已填写内容",
    "Unknown task '{task}'": "未知的任务“{task}”",
    "'{file}' must hold a JSON object of datasets": "“{file}”必须是一个以数据集为内容的 JSON 对象",
    "fix or delete it": "改正或删除它",
    "fix or delete it, then convert again": "改正或删除它，然后再转换一次",
    "A dataset named '{name}' is already registered in '{info}' (file '{old}'); converting would replace it":
        "“{info}”中已登记了名为“{name}”的数据集（文件“{old}”）；转换会替换它",
    "A dataset named '{name}' is already registered in '{info}'; converting would replace it":
        "“{info}”中已登记了名为“{name}”的数据集；转换会替换它",
    "'{file}' already exists; converting would replace it": "“{file}”已存在；转换会替换它",
    "'{file}' is outside the dataset folder '{folder}', so dataset_info.json cannot name it":
        "“{file}”在数据集文件夹“{folder}”之外，dataset_info.json 无法登记它",
    "Output '{file}' must end in .jsonl": "输出文件“{file}”必须以 .jsonl 结尾",
    "The output file is the input file": "输出文件和输入文件是同一个文件",
    "The disk is full while saving the converted data": "保存转换后的数据时磁盘已满",
    "Cannot write '{file}' ({detail}) while saving the converted data": "保存转换后的数据时无法写入“{file}”（{detail}）",
    "Label map entry '{entry}' is not of the form value=label": "标签映射中的“{entry}”不是“值=标签”的形式",
    "write it like 1=positive,0=negative": "请写成 1=positive,0=negative 这样的形式",
    "val_size asks for {n} validation rows, but the data has only {rows} rows":
        "“验证集比例”要求 {n} 行验证数据，但数据只有 {rows} 行",
    "use a fraction such as 0.1, or a count well below the number of rows": "请使用 0.1 这样的比例，或远小于总行数的行数",
    # ---- reading a dataset to train on (dataset.py, lf_dataset.py, templates.py)
    "Dataset '{name}' is nested too deeply to read": "数据集“{name}”嵌套太深，无法读取",
    "Dataset '{name}' must hold a JSON list of rows": "数据集“{name}”必须是一个由行组成的 JSON 列表",
    "Dataset '{name}' is not valid JSON ({detail})": "数据集“{name}”不是有效的 JSON（{detail}）",
    "convert the source file again on the Data tab": "在“数据”页重新转换源文件",
    "Line {line} of '{file}' is not valid JSON": "“{file}”第 {line} 行不是有效的 JSON",
    "fix or delete that line, or convert the source again": "改正或删除那一行，或重新转换源文件",
    "Dataset '{name}' could not be read ({kind}: {detail})": "无法读取数据集“{name}”（{kind}：{detail}）",
    "Dataset '{name}' has a row that is not an object": "数据集“{name}”中有一行不是对象",
    "each row needs instruction/input/output": "每一行都需要 instruction/input/output",
    "Dataset '{name}': file_name '{file}' is outside the dataset folder '{folder}'":
        "数据集“{name}”：file_name“{file}”在数据集文件夹“{folder}”之外",
    "put the data file inside that folder and name it relative to it": "把数据文件放进那个文件夹，并用相对于它的路径命名",
    "No dataset given": "没有指定数据集",
    "convert a file on the Data tab, then pick it under Training data on the Settings tab":
        "在“数据”页转换一个文件，然后在“设置”页的“训练数据”中选择它",
    "convert the file on the Data tab, then pick it under Training data on the Settings tab":
        "在“数据”页转换这个文件，然后在“设置”页的“训练数据”中选择它",
    "Dataset '{name}' has no rows": "数据集“{name}”没有任何行",
    "check the file; convert the source again": "检查这个文件；重新转换源文件",
    "Dataset '{name}' not found: no such file, and no entry of that name in {info}":
        "找不到数据集“{name}”：没有这个文件，{info} 中也没有这个名字的条目",
    "Dataset '{name}' points to '{file}', which does not exist": "数据集“{name}”指向的“{file}”不存在",
    "convert the data again": "重新转换数据",
    "'{file}' must hold a JSON object of datasets (name -> entry)": "“{file}”必须是一个以数据集为内容的 JSON 对象（名字 -> 条目）",
    "'{file}' is not valid JSON": "“{file}”不是有效的 JSON",
    "dataset_info.json entry '{name}' is not an object": "dataset_info.json 中的条目“{name}”不是对象",
    'write {"file_name": "..."}': '请写成 {{"file_name": "..."}}',
    "dataset_info.json entry '{name}' has no file_name": "dataset_info.json 中的条目“{name}”没有 file_name",
    "add the data file's name": "加上数据文件的名字",
    "Dataset '{name}' is a ranking/preference dataset (chosen/rejected answers, for DPO/ORPO/reward modelling); "
    "those stages are not supported yet":
        "数据集“{name}”是排序/偏好数据集（chosen/rejected 回答，用于 DPO/ORPO/奖励模型）；暂不支持这些训练阶段",
    "train it with LLaMA-Factory, or give the studio a supervised dataset (instruction/input/output or ShareGPT)":
        "请用 LLaMA-Factory 训练它，或给本工作室一个监督微调数据集（instruction/input/output 或 ShareGPT 格式）",
    "Dataset '{name}' is a KTO dataset (kto_tag); stage kto is not supported yet":
        "数据集“{name}”是 KTO 数据集（kto_tag）；暂不支持 KTO 训练阶段",
    "Dataset '{name}' has tool definitions (tools): tool-call training is not supported yet":
        "数据集“{name}”含有工具定义（tools）：暂不支持工具调用训练",
    "Dataset '{name}' has formatting '{formatting}'": "数据集“{name}”的 formatting 是“{formatting}”",
    "use alpaca or sharegpt": "请使用 alpaca 或 sharegpt",
    "Dataset '{name}' maps only a text column ({column}) and no response: it is a pre-training dataset (stage pt), "
    "which is not supported yet": "数据集“{name}”只映射了一个文本列（{column}），没有回答：这是预训练数据集（pt 阶段），暂不支持",
    "Dataset '{name}' is downloaded from a hub ({hub}); this machine reads local files only":
        "数据集“{name}”要从模型库下载（{hub}）；本机只读取本地文件",
    "download it, save it as .json/.jsonl next to dataset_info.json and set file_name":
        "请下载它，存为 dataset_info.json 旁边的 .json/.jsonl 文件，并设置 file_name",
    "Dataset '{name}' has {media}: multimodal training is not supported here": "数据集“{name}”含有 {media}：这里不支持多模态训练",
    "dataset_info.json entry '{name}': file_name must be the name of one data file (got {got})":
        "dataset_info.json 中的条目“{name}”：file_name 必须是一个数据文件的名字（实际是 {got}）",
    'write "file_name": "data.json"; list several datasets as separate entries':
        '请写成 "file_name": "data.json"；多个数据集请分别列为不同的条目',
    'dataset_info.json entry \'{name}\': formatting must be "alpaca" or "sharegpt" (got {got})':
        'dataset_info.json 中的条目“{name}”：formatting 必须是 "alpaca" 或 "sharegpt"（实际是 {got}）',
    'write "formatting": "alpaca"': '请写成 "formatting": "alpaca"',
    "dataset_info.json entry '{name}': {key} must be an object of names (got {kind} {got})":
        "dataset_info.json 中的条目“{name}”：{key} 必须是一个由名字组成的对象（实际是 {kind} {got}）",
    'write "{key}": {example}': '请写成 "{key}": {example}',
    "Row {row} of '{file}': the row does not have the shape its dataset_info.json entry describes ({kind}: {detail})":
        "“{file}”第 {row} 行：这一行的结构与它在 dataset_info.json 中的条目不符（{kind}：{detail}）",
    "Row {row} of '{file}': history must be a list of [question, answer] pairs (got {got})":
        "“{file}”第 {row} 行：history 必须是由 [问题, 回答] 组成的列表（实际是 {got}）",
    "Row {row} of '{file}': '{column}' must be a list of message objects (got {got})":
        "“{file}”第 {row} 行：“{column}”必须是由消息对象组成的列表（实际是 {got}）",
    "fix that row, or the entry's columns/formatting": "改正那一行，或改正条目的 columns/formatting",
    'write "history": [["earlier question", "its answer"]]': '请写成 "history": [["之前的问题", "它的回答"]]',
    'write [{"{role}": "human", "{content}": "..."}, ...]': '请写成 [{{"{role}": "human", "{content}": "..."}}, ...]',
    "'{file}' holds ShareGPT conversations, not instruction/input/output rows":
        "“{file}”里是 ShareGPT 对话，不是 instruction/input/output 行",
    'register it in dataset_info.json with "formatting": "sharegpt" and use its name':
        '请在 dataset_info.json 中用 "formatting": "sharegpt" 登记它，然后使用它的名字',
    "'{file}' is a preference dataset (chosen/rejected); DPO is not supported yet":
        "“{file}”是偏好数据集（chosen/rejected）；暂不支持 DPO",
    "'{file}' holds plain text (pre-training data, stage pt), which is not supported yet":
        "“{file}”里是纯文本（预训练数据，pt 阶段），暂不支持",
    "'{file}' has tool-call turns ({role}); tool-call training is not supported yet":
        "“{file}”含有工具调用的轮次（{role}）；暂不支持工具调用训练",
    "Unknown template '{name}'": "未知的模板“{name}”",
    "did you mean '{guess}'? Built-in templates: {names}": "是不是“{guess}”？内置模板：{names}",
    "Built-in templates: {names}": "内置模板：{names}",
    "template '{name}' is one of LLaMA-Factory's that the studio serves with the model's own chat template, and this "
    "model has none": "模板“{name}”是 LLaMA-Factory 的模板，本工作室用模型自带的对话模板来代替它，但这个模型没有自带的对话模板",
    "choose a built-in template: {names}": "请选择一个内置模板：{names}",
}
