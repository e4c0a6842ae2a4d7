"""The words of the errors the Data tab can meet: reading a file (studio/data/decode.py, readers.py, limits.py),
converting it (columns.py, convert.py, labels.py, split.py, templates.py) and the workspace's path and name checks
(studio/workspace.py). Loading a dataset to train on: dataset_errors.py.

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled.
"""
from __future__ import annotations

_NAME_TAKEN_FIX = {"fix": ("choose another --dataset-name / --out, or pass --replace to replace '{name}'",
                           "换一个 --dataset-name / --out，或加上 --replace 替换“{name}”"),
                   "page_fix": ("type another name under Dataset name on the Data tab", "在“数据”页的“数据集名称”中输入另一个名字")}
# what safe_name (studio/workspace.py) refuses, and nothing more (a name it lets through is shown as text)
_PLAIN_NAME_FIX = ("use a name without '/', '\\', line breaks or control characters, other than '.' and '..' (at "
                   "most 120 characters)", "请使用不含“/”“\\”、换行或控制字符的名字，且不能是“.”或“..”（最多 120 个字符）")
_JSON_LINE_FIX = ('each line must look like {{"text": "...", "label": "..."}}',
                  '每一行都必须形如 {{"text": "...", "label": "..."}}')
_CHAT_FIX = ('write it as [{{"role": "user", "content": "..."}}, ...]', '请写成 [{{"role": "user", "content": "..."}}, ...]')
_XLSX_AGAIN = ("open it in Excel and save it again as .xlsx", "在 Excel 中打开它，再另存为 .xlsx")
_FIX_OR_DELETE = ("fix or delete it", "改正或删除它")

FILES: dict[str, dict[str, tuple[str, str]]] = {
    # ---- finding, sizing and decoding a file (decode.py, limits.py)
    "data.missing_file": {"what": ("File '{file}' does not exist", "文件“{file}”不存在"),
                          "fix": ("check the path and the file name", "检查路径和文件名")},
    "data.not_a_file": {"what": ("'{file}' is a folder, not a file", "“{file}”是一个文件夹，不是文件"),
                        "fix": ("give the path of one data file", "请给出单个数据文件的路径")},
    "data.too_large": {
        "what": ("'{file}' is {mb:.1f} MB, over the {limit:g} MB limit", "“{file}”有 {mb:.1f} MB，超过了 {limit:g} MB 的上限"),
        "fix": ("split the file into smaller parts, or raise the limit (CLI: --max-mb {need})",
                "把文件拆成几个更小的文件，或提高上限（命令行：--max-mb {need}）"),
        "page_fix": ("split the file into smaller parts, or ask whoever runs the studio to raise its upload limit to "
                     "at least {need} MB", "把文件拆成几个更小的文件，或请运行本工作室的人把上传上限提高到至少 {need} MB")},
    "data.upload_too_large": {
        "what": ("'{file}' is {mb:.1f} MB, over the {limit:g} MB limit", "“{file}”有 {mb:.1f} MB，超过了 {limit:g} MB 的上限"),
        "fix": ("split the file into smaller parts, or restart the studio with --max-upload-mb {need}",
                "把文件拆成几个更小的文件，或用 --max-upload-mb {need} 重新启动本工作室"),
        "page_fix": ("split the file into smaller parts, or ask whoever runs the studio to raise its upload limit to "
                     "at least {need} MB", "把文件拆成几个更小的文件，或请运行本工作室的人把上传上限提高到至少 {need} MB")},
    "data.binary_zip": {"what": ("'{file}' is not a text file: it looks like an Excel/zip file",
                                 "“{file}”不是文本文件：它看起来是 Excel 或 zip 文件"),
                        "fix": ("rename it to '{stem}.xlsx', or save the sheet as 'CSV UTF-8' in Excel",
                                "把它改名为“{stem}.xlsx”，或在 Excel 中把工作表另存为“CSV UTF-8”")},
    "data.binary_xls": {"what": ("'{file}' is not a text file: it looks like an old Excel (.xls) file",
                                 "“{file}”不是文本文件：它看起来是旧版 Excel（.xls）文件"),
                        "fix": ("rename it to '{stem}.xls'", "把它改名为“{stem}.xls”")},
    "data.binary_parquet": {"what": ("'{file}' is not a text file: it looks like a Parquet file",
                                     "“{file}”不是文本文件：它看起来是 Parquet 文件"),
                            "fix": ("rename it to '{stem}.parquet'", "把它改名为“{stem}.parquet”")},
    "data.binary": {"what": ("'{file}' is not a text file: it looks like a binary file",
                             "“{file}”不是文本文件：它看起来是二进制文件"),
                    "fix": ("export the data as CSV (UTF-8), Excel (.xlsx) or JSONL",
                            "把数据导出为 CSV（UTF-8）、Excel（.xlsx）或 JSONL")},
    "data.empty_file": {"what": ("'{file}' is empty", "“{file}”是空的"),
                        "fix": ("export the data again; the file has no content", "请重新导出数据；这个文件没有任何内容")},
    "data.unknown_encoding": {"what": ("Unknown encoding '{encoding}'", "未知的编码“{encoding}”"),
                              "fix": ("use auto, utf-8, utf-8-sig, gbk or gb18030",
                                      "请使用 auto、utf-8、utf-8-sig、gbk 或 gb18030")},
    "data.bad_encoding": {"what": ("'{file}' cannot be read as {encoding} (bad byte at position {pos})",
                                   "无法按 {encoding} 读取“{file}”（位置 {pos} 处有无效字节）"),
                          "fix": ("use encoding 'auto', or save the file as UTF-8", "把编码设为“auto”，或把文件另存为 UTF-8")},
    "data.nul_byte": {"what": ("'{file}' contains a NUL byte (line {line})", "“{file}”含有 NUL 字节（第 {line} 行）"),
                      "fix": ("remove the NUL characters or export the data again as CSV (UTF-8)",
                              "删除 NUL 字符，或把数据重新导出为 CSV（UTF-8）")},
    "data.mixed_encodings": {
        "what": ("'{file}' mixes encodings: {n} line(s) are UTF-8 but line {lines} (counting the header as line 1) are "
                 "not, so any one decoding would garble part of it",
                 "“{file}”混用了多种编码：{n} 行是 UTF-8，但第 {lines} 行（表头算第 1 行）不是，用任何一种编码读取都会有一部分变成乱码"),
        "fix": ("save the file again as 'CSV UTF-8' (or fix those lines); or choose the encoding explicitly if you know "
                "it", "把文件重新另存为“CSV UTF-8”（或改好那几行）；如果知道文件的编码，也可以直接选择它")},
    "data.too_many_rows": {"what": ("'{file}' has more than {rows:,} rows", "“{file}”超过 {rows:,} 行"),
                           "fix": ("split the file into parts of at most {rows:,} rows and {columns:,} columns (keep "
                                   "only the columns you need)",
                                   "把文件拆成每份最多 {rows:,} 行、{columns:,} 列的几部分（只保留需要的列）")},
    "data.too_many_columns": {"what": ("'{file}' has {n:,} columns, over the limit of {columns:,}",
                                       "“{file}”有 {n:,} 列，超过了 {columns:,} 列的上限"),
                              "fix": ("split the file into parts of at most {rows:,} rows and {columns:,} columns (keep "
                                      "only the columns you need)",
                                      "把文件拆成每份最多 {rows:,} 行、{columns:,} 列的几部分（只保留需要的列）")},
    "data.cell_too_long": {
        "what": ("'{file}' has a cell of {n:,} characters in row {row}, column '{column}', over the limit of {limit:,}",
                 "“{file}”第 {row} 行“{column}”列有一个 {n:,} 个字符的单元格，超过了上限 {limit:,}"),
        "fix": ("shorten that text (or split it into several rows)", "请缩短这段文字（或把它拆成几行）")},
    "data.sheet_unpacks": {
        "what": ("'{file}' unpacks to {mb:.1f} MB of sheet data, over the {limit:g} MB limit ({x}x the {file_mb:g} MB "
                 "file limit)", "“{file}”解压后有 {mb:.1f} MB 的表格数据，超过了 {limit:g} MB 的上限（文件上限 {file_mb:g} MB 的 {x} 倍）"),
        "fix": ("save the sheet as 'CSV UTF-8' and split it into smaller files (or remove unused rows and columns)",
                "把工作表另存为“CSV UTF-8”并拆成几个更小的文件（或删除用不到的行和列）")},
    # ---- reading a table (readers.py)
    "data.header_only": {"what": ("'{file}' has a header row ({columns}) but no data rows",
                                  "“{file}”只有表头（{columns}），没有数据行"),
                         "fix": ("export the sheet again including its rows", "重新导出工作表，并包含其中的数据行")},
    "data.header_only_sheet": {"what": ("'{file}' has a header row ({columns}) but no data rows",
                                        "“{file}”只有表头（{columns}），没有数据行"),
                               "fix": ("add the data rows under the header", "在表头下面添加数据行")},
    "data.bad_csv": {"what": ("'{file}' is not a readable CSV file ({detail})", "“{file}”不是可以读取的 CSV 文件（{detail}）"),
                     "fix": ("export it again as CSV (UTF-8) from the spreadsheet", "从电子表格重新导出为 CSV（UTF-8）")},
    "data.no_rows": {"what": ("'{file}' is empty", "“{file}”是空的"),
                     "fix": ("export the data again; the file has no rows", "请重新导出数据；这个文件没有任何行")},
    "data.empty_list": {"what": ("'{file}' has no rows", "“{file}”没有任何行"),
                        "fix": ("the file holds an empty list; export the data again", "文件里是一个空列表；请重新导出数据")},
    "data.too_deep_line": {
        "what": ("'{file}' is nested too deeply to read (line {line} has lists/objects inside each other hundreds of "
                 "levels deep)", "“{file}”嵌套太深，无法读取（第 {line} 行的列表/对象互相嵌套了几百层）"),
        "fix": ("export flat rows: one object per row with text fields", "导出扁平的行：每行一个对象，字段为文本")},
    "data.too_deep": {
        "what": ("'{file}' is nested too deeply to read (the file has lists/objects inside each other hundreds of "
                 "levels deep)", "“{file}”嵌套太深，无法读取（文件里的列表/对象互相嵌套了几百层）"),
        "fix": ("export flat rows: one object per row with text fields", "导出扁平的行：每行一个对象，字段为文本")},
    "data.non_finite_line": {
        "what": ("Line {line} of '{file}' holds {value}, which is not a value JSON allows (Python writes it for a "
                 "missing or broken number)", "“{file}”第 {line} 行含有 {value}，JSON 不允许这个值（Python 会把缺失或损坏的数字写成它）"),
        "fix": ("replace {value} with the real value or null, or delete that row", "把 {value} 换成真实的值或 null，或删除那一行")},
    "data.non_finite": {
        "what": ("'{file}' holds {value}, which is not a value JSON allows (Python writes it for a missing or broken "
                 "number)", "“{file}”含有 {value}，JSON 不允许这个值（Python 会把缺失或损坏的数字写成它）"),
        "fix": ("replace {value} with the real value or null, or delete that row", "把 {value} 换成真实的值或 null，或删除那一行")},
    "data.json_line_invalid": {"what": ("Line {line} of '{file}' is not valid JSON ({detail})",
                                        "“{file}”第 {line} 行不是有效的 JSON（{detail}）"),
                               "fix": ("fix or delete line {line}; each line must be one JSON object",
                                       "改正或删除第 {line} 行；每一行必须是一个 JSON 对象")},
    "data.json_line_not_object": {"what": ("Line {line} of '{file}' is a JSON {kind}, not an object",
                                           "“{file}”第 {line} 行是 JSON {kind}，不是对象"),
                                  "fix": _JSON_LINE_FIX},
    "data.json_invalid_near": {"what": ("'{file}' is not valid JSON ({detail})", "“{file}”不是有效的 JSON（{detail}）"),
                               "fix": ("fix the file near line {line}", "改正文件第 {line} 行附近的内容")},
    "data.json_invalid": {"what": ("'{file}' is not valid JSON ({detail})", "“{file}”不是有效的 JSON（{detail}）"),
                          "fix": ("fix the file", "改正这个文件")},
    "data.json_not_rows": {"what": ("'{file}' must hold a list of JSON objects (one per row)",
                                    "“{file}”必须是一个 JSON 对象列表（每行一个对象）"),
                           "fix": ('shape it like [{{"text": "...", "label": "..."}}, ...]',
                                   '请整理成 [{{"text": "...", "label": "..."}}, ...] 的形式')},
    "data.json_lists_differ": {"what": ("'{file}' holds one list per column, but the lists differ in length ({lengths})",
                                        "“{file}”每一列是一个列表，但这些列表长度不同（{lengths}）"),
                               "fix": ("give every column the same number of values, or export one object per row",
                                       "让每一列的值数量相同，或改为每行导出一个对象")},
    "data.parquet_binary": {"what": ("Column '{column}' of '{file}' holds binary data that is not text (row {row})",
                                     "“{file}”的列“{column}”含有不是文本的二进制数据（第 {row} 行）"),
                            "fix": ("store '{column}' as a string column, or choose another column",
                                    "把“{column}”存为字符串列，或选择另一列")},
    "data.bad_parquet": {"what": ("'{file}' is not a readable Parquet file ({detail})", "“{file}”不是可以读取的 Parquet 文件（{detail}）"),
                         "fix": ("export it again, or use CSV/JSONL", "重新导出，或改用 CSV/JSONL")},
    "data.parquet_no_rows": {"what": ("'{file}' has columns but no data rows", "“{file}”有列，但没有数据行"),
                             "fix": ("export it again including its rows", "重新导出，并包含其中的数据行")},
    "data.xlsx_is_text": {"what": ("'{file}' is not an Excel file: it looks like text (CSV?)",
                                   "“{file}”不是 Excel 文件：它看起来是文本（CSV？）"),
                          "fix": ("rename it to '{stem}.csv'", "把它改名为“{stem}.csv”")},
    "data.xlsx_not_excel": {"what": ("'{file}' is not a readable Excel file (not .xlsx or .xls inside)",
                                     "“{file}”不是可以读取的 Excel 文件（内容不是 .xlsx 或 .xls）"), "fix": _XLSX_AGAIN},
    "data.bad_xlsx": {"what": ("'{file}' is not a readable Excel file ({detail})", "“{file}”不是可以读取的 Excel 文件（{detail}）"),
                      "fix": _XLSX_AGAIN},
    "data.sheet_missing": {"what": ("Sheet '{sheet}' not found in '{file}'", "“{file}”中没有工作表“{sheet}”"),
                           "fix": ("use one of: {choices}", "请使用其中之一：{choices}")},
    "data.sheet_empty": {"what": ("Sheet '{sheet}' of '{file}' is empty", "“{file}”的工作表“{sheet}”是空的"),
                         "fix": ("put the data on the first sheet, or choose the sheet that holds it",
                                 "把数据放在第一个工作表上，或选择存放数据的工作表")},
    "data.unreadable": {"what": ("'{file}' could not be read ({error}: {detail})", "无法读取“{file}”（{error}：{detail}）"),
                        "fix": ("export it again (CSV UTF-8 or JSONL are the safest), or delete the row it names",
                                "重新导出（CSV UTF-8 或 JSONL 最稳妥），或删除它指出的那一行")},
    "data.unsupported_type": {"what": ("Cannot read '{file}': unsupported file type '{suffix}'",
                                       "无法读取“{file}”：不支持的文件类型“{suffix}”"),
                              "fix": ("use one of: {choices}", "请使用其中之一：{choices}")},
    # ---- the workspace's paths and names (workspace.py)
    "path.empty": {"what": ("The path is empty", "路径是空的"),
                   "fix": ("type a file or folder inside the workspace", "请输入工作区之内的文件或文件夹")},
    "path.control_char": {"what": ("The path contains a control character (NUL or line break)", "路径含有控制字符（NUL 或换行）"),
                          "fix": ("type the path again without pasting hidden characters", "请重新输入路径，不要粘贴进隐藏字符")},
    "path.outside": {"what": ("The path '{path}' is outside the folders this studio may use",
                              "路径“{path}”不在本工作室可以使用的文件夹之内"),
                     "fix": ("use a path inside {roots} (start the studio with --data-root DIR to add a folder)",
                             "请使用 {roots} 之内的路径（用 --data-root DIR 启动本工作室可以添加文件夹）"),
                     "page_fix": ("use a path inside {roots} (whoever runs the studio can add a folder)",
                                  "请使用 {roots} 之内的路径（运行本工作室的人可以添加文件夹）")},
    "name.plain": {"what": ("The name '{name}' is not a plain folder name", "名字“{name}”不是一个简单的文件夹名"),
                   "fix": _PLAIN_NAME_FIX},
    "name.file": {"what": ("The file name '{name}' is not a plain folder name", "文件名“{name}”不是一个简单的文件夹名"),
                  "fix": _PLAIN_NAME_FIX},
    "name.export": {"what": ("The export name '{name}' is not a plain folder name", "导出名称“{name}”不是一个简单的文件夹名"),
                    "fix": _PLAIN_NAME_FIX},
    "name.run": {"what": ("The run name '{name}' is not a plain folder name", "运行名称“{name}”不是一个简单的文件夹名"),
                 "fix": _PLAIN_NAME_FIX},
}

CONVERT: dict[str, dict[str, tuple[str, str]]] = {
    # ---- which column is which, and the labels (columns.py, convert.py, labels.py)
    "data.column_missing_guess": {
        "what": ("Column '{name}' not found in '{file}' (did you mean '{guess}'?). Available columns: {columns}",
                 "文件“{file}”中没有列“{name}”（是不是“{guess}”？）。现有的列：{columns}"),
        "fix": ("choose the {role} column from that list (CLI: {role_flag} {guess})",
                "从上面的列中选择{role}列（命令行：{role_flag} {guess}）"),
        "page_fix": ("pick one of those under {role_label} on the Data tab", "在“数据”页的“{role_label}”中选择其中一列")},
    "data.column_missing": {
        "what": ("Column '{name}' not found in '{file}'. Available columns: {columns}",
                 "文件“{file}”中没有列“{name}”。现有的列：{columns}"),
        "fix": ("choose the {role} column from that list (CLI: {role_flag} NAME)",
                "从上面的列中选择{role}列（命令行：{role_flag} 列名）"),
        "page_fix": ("pick one of those under {role_label} on the Data tab", "在“数据”页的“{role_label}”中选择其中一列")},
    "data.no_label_column": {
        "what": ("'{file}' has only one column, '{column}', and no column of labels",
                 "“{file}”只有一列“{column}”，没有标签列"),
        "fix": ("add a column with each row's label (for example positive or negative) to the file, save it and "
                "convert it again", "请在文件里加一列，写上每行的标签（例如 正面 或 负面），保存后重新转换"),
        "page_fix": ("add a column with each row's label (for example positive or negative) to the spreadsheet, "
                     "save it and upload it again",
                     "请在表格里加一列，写上每行的标签（例如 正面 或 负面），保存后重新上传")},
    "data.column_unknown": {
        "what": ("Could not tell which column holds the {role} in '{file}'. Available columns: {columns}",
                 "无法判断“{file}”中哪一列是{role}。现有的列：{columns}"),
        "fix": ("name it (CLI: {role_flag} NAME)", "指定这一列（命令行：{role_flag} 列名）"),
        "page_fix": ("pick it under {role_label} on the Data tab", "在“数据”页的“{role_label}”中选择它")},
    "data.instruction_columns": {
        "what": ("'{file}' needs an output column and an instruction or input column. Available columns: {columns}",
                 "“{file}”需要一个输出列，以及一个指令列或输入列。现有的列：{columns}"),
        "fix": ("name them (CLI: --instruction-column/--input-column/--output-column), or use --task sentiment for a "
                "text + label file", "指定这些列（命令行：--instruction-column/--input-column/--output-column）；文件是文本 + "
                "标签时，请用 --task sentiment"),
        "page_fix": ("pick them under Instruction column, Input column and Output column on the Data tab, or set Task "
                     "to sentiment for a text + label file",
                     "在“数据”页的“指令列”“输入列”和“输出列”中选择它们；文件是文本 + 标签时，请把“任务”设为“情感分类”")},
    "data.no_chat_column": {
        "what": ("No conversation column in '{file}'. Available columns: {columns}", "“{file}”中没有对话列。现有的列：{columns}"),
        "fix": ("use a 'messages' (OpenAI) or 'conversations' (ShareGPT) column, or name it (CLI: --messages-column)",
                "使用“messages”（OpenAI 格式）或“conversations”（ShareGPT 格式）列，或指定它（命令行：--messages-column）"),
        "page_fix": ("pick the column that holds the conversations under Messages column on the Data tab",
                     "在“数据”页的“对话消息列”中选择存放对话的那一列")},
    "data.label_empty": {
        "what": ("Label column '{column}' is empty in every row", "标签列“{column}”在每一行都是空的"),
        "fix": ("fill in the labels, or choose the column that holds them (CLI: --label-column NAME)",
                "填写标签，或选择存放标签的那一列（命令行：--label-column 列名）"),
        "page_fix": ("fill in the labels, or pick the column that holds them under Label column on the Data tab",
                     "填写标签，或在“数据”页的“标签列”中选择存放标签的那一列")},
    "data.labels_many": {
        "what": ("Label column '{column}' has {n} different values (at most {most} for a classification task)",
                 "标签列“{column}”有 {n} 个不同的值（分类任务最多 {most} 个）"),
        "fix": ("check that it is the label column; for free-text answers use the instruction task (CLI: --task "
                "instruction)", "检查它是否确实是标签列；答案是自由文本时，请用指令任务（命令行：--task instruction）"),
        "page_fix": ("check that it is the label column (Label column on the Data tab); for free-text answers set Task "
                     "to instruction", "检查它是否确实是标签列（“数据”页的“标签列”）；答案是自由文本时，请把“任务”设为“指令”")},
    "data.label_is_text": {
        "what": ("Label column '{label}' holds the same values as the text column '{text}' in every row",
                 "标签列“{label}”每一行的值都和文本列“{text}”相同"),
        "fix": ("choose the column that holds the labels (CLI: --label-column NAME)",
                "选择存放标签的那一列（命令行：--label-column 列名）"),
        "page_fix": ("pick the column that holds the labels under Label column on the Data tab",
                     "在“数据”页的“标签列”中选择存放标签的那一列")},
    "data.label_unmapped": {
        "what": ("Label values not in the label map: {values}", "这些标签值不在标签映射中：{values}"),
        "fix": ("add them to the label map (e.g. {example}) or remove those rows", "把它们加入标签映射（例如 {example}），或删除那些行")},
    "data.label_map_entry": {"what": ("Label map entry '{entry}' is not of the form value=label",
                                      "标签映射中的“{entry}”不是“值=标签”的形式"),
                             "fix": ("write it like 1=positive,0=negative", "请写成 1=positive,0=negative 这样的形式")},
    "data.label_spellings": {
        "what": ("Label column '{column}' spells the same label differently: {spellings}",
                 "标签列“{column}”把同一个标签写成了不同的样子：{spellings}"),
        "fix": ("give a label map that merges them, e.g. --label-map '{example}'",
                "给出一个合并它们的标签映射，例如 --label-map '{example}'"),
        "page_fix": ("merge them in the Label map box on the Data tab, e.g. '{example}'",
                     "在“数据”页的“标签映射”框中合并它们，例如 '{example}'")},
    "data.val_rows": {"what": ("{f_val_size} asks for {n} validation rows, but the data has only {rows} rows",
                               "{f_val_size}要求 {n} 行验证数据，但数据只有 {rows} 行"),
                      "fix": ("use a fraction such as 0.1, or a count well below the number of rows",
                              "请使用 0.1 这样的比例，或远小于总行数的行数")},
    # ---- conversations and rows (convert.py)
    "data.chat_not_json": {"what": ("Row {row}: the conversation is not valid JSON", "第 {row} 行：对话不是有效的 JSON"),
                           "fix": _CHAT_FIX},
    "data.chat_not_list": {"what": ("Row {row}: the conversation must be a list of messages", "第 {row} 行：对话必须是一个消息列表"),
                           "fix": _CHAT_FIX},
    "data.chat_message": {"what": ("Row {row}: a message lacks role/content (OpenAI) or from/value (ShareGPT)",
                                   "第 {row} 行：有一条消息缺少 role/content（OpenAI 格式）或 from/value（ShareGPT 格式）"),
                          "fix": ('write messages like {{"role": "user", "content": "..."}}',
                                  '请把消息写成 {{"role": "user", "content": "..."}} 的形式')},
    "data.no_usable_rows": {"what": ("No usable rows in '{file}' ({skipped})", "“{file}”中没有可用的行（{skipped}）"),
                            "fix": ("check that the chosen columns are the right ones and are filled",
                                    "检查所选的列是否正确，并且已填写内容")},
    "data.no_rows_at_all": {"what": ("No usable rows in '{file}' (no rows)", "“{file}”中没有可用的行（没有任何行）"),
                            "fix": ("check that the chosen columns are the right ones and are filled",
                                    "检查所选的列是否正确，并且已填写内容")},
    "data.unknown_task": {"what": ("Unknown task '{task}'", "未知的任务“{task}”"),
                          "fix": ("use one of: {choices}", "请使用其中之一：{choices}")},
    # ---- writing and registering the converted data (convert.py)
    "data.info_invalid": {"what": ("'{file}' is not valid JSON ({detail})", "“{file}”不是有效的 JSON（{detail}）"),
                          "fix": ("fix or delete it, then convert again", "改正或删除它，然后再转换一次")},
    "data.info_not_object": {"what": ("'{file}' must hold a JSON object of datasets", "“{file}”必须是一个以数据集为内容的 JSON 对象"),
                             "fix": _FIX_OR_DELETE},
    "data.name_taken_file": {"what": ("A dataset named '{name}' is already registered in '{info}' (file '{old}'); "
                                      "converting would replace it",
                                      "“{info}”中已登记了名为“{name}”的数据集（文件“{old}”）；转换会替换它"), **_NAME_TAKEN_FIX},
    "data.name_taken": {"what": ("A dataset named '{name}' is already registered in '{info}'; converting would replace "
                                 "it", "“{info}”中已登记了名为“{name}”的数据集；转换会替换它"), **_NAME_TAKEN_FIX},
    "data.out_exists": {"what": ("'{file}' already exists; converting would replace it", "“{file}”已存在；转换会替换它"),
                        **_NAME_TAKEN_FIX},
    "data.out_outside": {
        "what": ("'{file}' is outside the dataset folder '{folder}', so dataset_info.json cannot name it",
                 "“{file}”在数据集文件夹“{folder}”之外，dataset_info.json 无法登记它"),
        "fix": ("write the output inside the dataset folder (CLI: --out inside --dataset-dir, or leave --dataset-dir "
                "out)", "把输出写在数据集文件夹之内（命令行：--out 放在 --dataset-dir 之内，或不写 --dataset-dir）"),
        "page_fix": ("type a plain name (no folders) under Dataset name on the Data tab",
                     "在“数据”页的“数据集名称”中输入一个简单的名字（不含文件夹）")},
    "data.out_suffix": {"what": ("Output '{file}' must end in .jsonl", "输出文件“{file}”必须以 .jsonl 结尾"),
                        "fix": ("use --out {suggestion}", "请用 --out {suggestion}"),
                        "page_fix": ("type a plain name under Dataset name on the Data tab",
                                     "在“数据”页的“数据集名称”中输入一个简单的名字")},
    "data.out_is_input": {"what": ("The output file is the input file", "输出文件和输入文件是同一个文件"),
                          "fix": ("choose another --out path", "换一个 --out 路径"),
                          "page_fix": ("type another name under Dataset name on the Data tab",
                                       "在“数据”页的“数据集名称”中输入另一个名字")},
    "data.disk_full": {"what": ("The disk is full while saving the converted data", "保存转换后的数据时磁盘已满"),
                       "fix": ("free some space or choose another --out folder you can write to",
                               "腾出一些磁盘空间，或换一个可以写入的 --out 文件夹"),
                       "page_fix": ("free some space, then press Convert again", "腾出一些磁盘空间，然后再按一次“转换”")},
    "data.cannot_write": {"what": ("Cannot write '{file}' ({detail}) while saving the converted data",
                                   "保存转换后的数据时无法写入“{file}”（{detail}）"),
                          "fix": ("free some space or choose another --out folder you can write to",
                                  "腾出一些磁盘空间，或换一个可以写入的 --out 文件夹"),
                          "page_fix": ("free some space, then press Convert again", "腾出一些磁盘空间，然后再按一次“转换”")},
    # ---- the prompt template (templates.py)
    "data.template_unknown_guess": {"what": ("Unknown template '{name}'", "未知的模板“{name}”"),
                                    "fix": ("did you mean '{guess}'? Built-in templates: {names}",
                                            "是不是“{guess}”？内置模板：{names}")},
    "data.template_unknown": {"what": ("Unknown template '{name}'", "未知的模板“{name}”"),
                              "fix": ("Built-in templates: {names}", "内置模板：{names}")},
    "data.template_no_chat": {
        "what": ("template '{name}' is one of LLaMA-Factory's that the studio serves with the model's own chat "
                 "template, and this model has none",
                 "模板“{name}”是 LLaMA-Factory 的模板，本工作室用模型自带的对话模板来代替它，但这个模型没有自带的对话模板"),
        "fix": ("choose a built-in template: {names}", "请选择一个内置模板：{names}")},
}

DATA_ERRORS: dict[str, dict[str, tuple[str, str]]] = {**FILES, **CONVERT}


# ==== issue 47 (items 4-6): nothing replaced silently, text that encodes, names by their true rule. One block, to port. ====
_NEW_NAME_FIX = ("use letters, digits, '-', '_', '.' or '~', starting with a letter, a digit or '_' (at most 120 "
                 "characters)", "请只用字母、数字、“-”、“_”、“.”或“~”，并以字母、数字或“_”开头（最多 120 个字符）")
DATA_ERRORS.update({
    # a name a person gives a new run or dataset (workspace.plain_name): the rule the fix states is the rule applied
    "name.new_run": {"what": ("'{name}' cannot be a run's name", "“{name}”不能用作运行名称"), "fix": _NEW_NAME_FIX},
    "name.new_dataset": {"what": ("'{name}' cannot be a dataset's name", "“{name}”不能用作数据集名称"),
                         "fix": _NEW_NAME_FIX},
})
# ==== end of issue 47's block ====
