"""The words the server builds for the page (and, where they are shared, for the command line): the Train tab's
status and log, the Runs tab, the Data tab's lines, uploads, a full disk, a state file moved aside.

The Settings tab's words: settings_words.py; the Evaluate tab's, the demo page's and feedback's: eval_words.py.
"""
from __future__ import annotations

from typing import Any

from .entry import message

ENTRIES: list[Any] = [
    message("idle", "No run yet. Press **Start**.", "还没有运行。点击 **开始**。"),
    message("idle_viewer", "No run yet. Only an owner can start one: this login is a viewer.",
            "还没有运行。只有所有者可以开始训练：当前登录是查看者。"),
    message("role.viewer",
            "👁️ Signed in as **{user}**, a **viewer**: you can watch runs, see results, try the models, chat "
            "with them and upload a file to predict (Batch prediction on the Evaluate tab). Opening training data, "
            "converting, training, stopping, deleting and exporting are for owners, so those controls are off.",
            "👁️ 当前登录：**{user}**，身份是**查看者**：可以查看运行和结果、试用模型并与之对话，也可以上传要预测的文件"
            "（“评估”页的“批量预测”）。打开训练数据、转换、训练、停止、删除和导出只有所有者可以操作，这些控件已停用。"),
    message("data.viewer_note",
            "👁️ Preparing training data is for owners, so this tab's upload is off for you. To get a model's "
            "answers for a file of your own, upload it under **Batch prediction** on the Evaluate tab.",
            "👁️ 准备训练数据只有所有者可以操作，所以这一页的上传对你已停用。想让模型回答你自己的文件，"
            "请在“评估”页的**批量预测**中上传。"),
    message("state.starting", "Starting", "正在启动"),
    message("state.running", "Running", "训练中"),
    message("state.finished", "Finished", "已完成"),
    message("state.aborted", "Aborted", "已中止"),
    message("state.failed", "Failed", "失败"),
    message("state.unknown", "Unknown", "未知"),
    message("aborting", "stopping: saving a checkpoint…", "正在停止：保存检查点……"),
    message("step", "Step", "步数"),
    message("eta", "ETA", "剩余时间"),
    message("speed", "tokens/s", "token/秒"),
    message("loss", "loss", "损失"),
    message("login", "Fine-Tune Studio: please log in.", "Fine-Tune Studio：请登录。"),
    # the Train tab's log box: one plain line per progress event (model preparation: prepare_words.py)
    message("log.progress", "step {step} of {total}", "第 {step} 步，共 {total} 步"),
    message("log.prep_locating", "Preparing {name} (first use only): locating the GGUF in package {pkg}",
            "正在准备 {name}（仅首次使用）：在软件包 {pkg} 中查找 GGUF 文件"),
    message("log.prep_license", "{name} is distributed under the {license}: {url}", "{name} 按许可条款“{license}”发布：{url}"),
    message("log.prep_terms", " (full text installed at {path})", "（全文安装在 {path}）"),
    message("log.prep_using", "Using the prepared model in {path}", "使用已准备好的模型：{path}"),
    message("log.prep_checking", "Checking that the tensors of {file} cover its model", "检查 {file} 的张量是否完整"),
    message("log.prep_tokenizer", "Reading the tokenizer of {file}", "读取 {file} 的分词器"),
    message("log.prep_rebuild", "Rebuilding a plain fp32 model", "重建为普通的 fp32 模型"),
    message("log.prep_saving", "Saving the prepared model to {path}", "把准备好的模型保存到 {path}"),
    message("log.prep_done", "Prepared {name} in {s} s", "{name} 已准备好，用时 {s} 秒"),
    message("log.prep_dequant", "Dequantizing the weights of {file} to fp32", "把 {file} 的权重反量化为 fp32"),
    # model facts in the model list (autoconfig.LANGUAGES, studio/models/zoo.py): what languages a model reads
    message("langs.tiny", "en, zh (learns the data's own words)", "中英文均可（从数据本身学习用词）"),
    message("langs.qwen", "29 languages incl. en, zh", "29 种语言，含中英文"),
    message("langs.en7", "en (+7 more)", "英文（另有 7 种语言）"),
    message("langs.en", "en", "英文"),
    message("langs.english", "English", "英文"),
    message("langs.gemma3", "English, Chinese and 140+ others", "中英文及其他 140 多种语言"),
    message("langs.card", "see the model card", "见模型说明"),
    message("langs.any", "any (learns from your data)", "任何语言（从你的数据中学习）"),
    message("mem", "memory in use", "内存占用"),
    message("folder", "Run folder", "运行文件夹"),
    message("reason", "Reason", "原因"),
    message("checkpoint", "Last checkpoint", "最新检查点"),
    message("final_model", "Trained model", "训练好的模型"),
    message("final_loss", "final loss", "最终损失"),
    message("eval_loss", "eval loss", "验证损失"),
    message("started", "Started run '{name}'.", "已开始运行 '{name}'。"),
    message("abort_sent", "Stop requested: the run saves a checkpoint and stops.", "已请求停止：保存检查点后停止。"),
    message("runs.renamed", "Renamed: the run is now **{name}**.", "已重命名：该运行现在名为 **{name}**。"),
    message("runs.deleted", "Deleted {n} run(s).", "已删除 {n} 个运行。"),
    message("runs.confirm_delete", "Delete the ticked runs with their models and checkpoints? This cannot be undone.",
            "删除勾选的运行及其模型和检查点？此操作无法撤销。"),
    message("train.will", "**Start** trains **{model}** ({method}) on **{data}**, with the Settings tab's values.",
            "**开始** 将用“设置”页的取值，在 **{data}** 上训练 **{model}**（{method}）。"),
    message("train.will_none", "Pick a model and training data on the Settings tab; **Start** uses them.",
            "请在“设置”页选择模型和训练数据；**开始** 会使用它们。"),
    message("nothing_running", "Nothing is running.", "当前没有正在进行的训练。"),
    message("settings_stale",
            "Your settings were changed in another page since this one was opened, so this change was not "
            "saved. Fix: reload this page to see the newer settings.",
            "自从打开此页面后，您的设置已在另一个页面中更改，因此本次更改未保存。解决办法：重新加载此页面以查看较新的设置。"),
    message("converted", "Wrote {n} rows to {path} (dataset '{name}'). The Settings tab now uses it.",
            "已把 {n} 行写入 {path}（数据集 '{name}'）。设置页已改用它。"),
    message("loaded_file", "Read {rows} rows and {cols} columns from {name}.", "从 {name} 读取了 {rows} 行、{cols} 列。"),
    message("runs_headers", "run|state|model|method|step|final loss|eval loss|reason|started by",
            "运行|状态|模型|方法|步数|最终损失|验证损失|原因|发起人"),
    # who started / stopped a run (per-user state); no login -> nothing shown, a dash in tables
    message("who.started", "Started by **{name}**", "由 **{name}** 开始"),
    message("who.stopped", "stopped by **{name}**", "由 **{name}** 停止"),
    message("who.stopped_only", "Stopped by **{name}**", "由 **{name}** 停止"),
    message("stats_headers", "column|rows|empty|distinct|unit|mean length|max length|values",
            "列|行数|空值|不同值|单位|平均长度|最大长度|取值"),
    # Data tab report lines (the report itself: studio/data/report.py, format_report(lang=))
    message("data.label_map_line", "Label map: `{map}`", "标签映射：`{map}`"),
    message("data.instruction_line", "Instruction: {text}", "指令：{text}"),
    message("data.model_view", "**What the model will read** (the first row, as Convert would make it):",
            "**模型将读到的内容**（第一行，与“转换”生成的一致）："),
    message("data.view_instruction", "Instruction", "指令"),
    message("data.view_input", "Text", "文本"),
    message("data.view_output", "Answer it learns", "它要学会的回答"),
    message("data.note_line", "Note: {text}", "说明：{text}"),
    message("data.skipped_line", "Skipped {n} row(s) with {reason}", "跳过了 {n} 行（{reason}）"),
    message("nothing_fits_card",
            "Nothing on this page makes it fit this machine: it needs a card with at least {gpu:.0f} GB "
            "and {ram:.0f} GB of host RAM, or a smaller model.",
            "本页的改动都不足以放下：需要至少 {gpu:.0f} GB 显存和 {ram:.0f} GB 内存的机器，或换更小的模型。"),
    message("nothing_fits_ram",
            "Nothing on this page makes it fit this machine: it needs {ram:.0f} GB of RAM, or a smaller "
            "model.",
            "本页的改动都不足以放下：需要 {ram:.0f} GB 内存，或换更小的模型。"),
    message("auto.pending", "⏳ Checking the model on the held-out rows…", "⏳ 正在用留出的验证行检验模型……"),
    message("auto.accuracy",
            "🎯 **Accuracy {acc:.0%}** on {n} held-out rows the model never saw. The Evaluate tab shows "
            "which rows it got wrong.",
            "🎯 **准确率 {acc:.0%}**（{n} 条模型没见过的验证行）。“评估”页会列出分错的行。"),
    message("auto.no_val",
            "No rows were held back, so there is no accuracy yet: check a labelled file on the Evaluate tab.",
            "没有留出验证行，所以还没有准确率：请在“评估”页上传带标签的文件检验。"),
    message("plot.title", "Loss: {name}", "损失：{name}"),
    message("plot.loss", "loss", "损失"),
    message("plot.smoothed", "smoothed", "平滑"),
    message("cm.title", "Confusion matrix", "混淆矩阵"),
    message("cm.answer", "model's answer", "模型的答案"),
    message("cm.truth", "true label", "真实标签"),
    message("cm.unparseable", "(unparseable)", "（无法解析）"),
    message("plot.eval", "eval loss", "验证损失"),
    message("plot.step", "step", "步数"),
    message("plot.waiting", "waiting for the first logged step", "等待第一个记录的步骤"),
    message("plot.compare", "Loss of the chosen runs", "所选运行的损失"),
    message("runs.headers", "run|state|model|method|data|accuracy|time|final loss|started|started by",
            "运行|状态|模型|方法|数据|准确率|用时|最终损失|开始时间|发起人"),
    message("runs.pick_some", "Tick runs above to see their scorecards side by side.", "在上面勾选运行，并排查看它们的成绩。"),
    message("runs.accuracy", "accuracy (held-out rows)", "准确率（验证行）"),
    message("runs.held_out", "held-out rows", "验证行数"),
    message("runs.model", "model", "模型"),
    message("runs.method", "method", "方法"),
    message("runs.data", "data", "数据"),
    message("runs.lr", "learning rate", "学习率"),
    message("runs.steps", "steps", "步数"),
    message("runs.final_loss", "final loss", "最终损失"),
    message("runs.eval_loss", "eval loss", "验证损失"),
    message("runs.time", "training time", "训练用时"),
    message("queued",
            "A run is going: this one is queued (number {n}) and starts by itself when the run before it ends.",
            "正在训练：这次运行已排队（第 {n} 个），前一个结束后会自动开始。"),
    message("queue_line", "⏭️ {n} run(s) queued; they start one after another.", "⏭️ 还有 {n} 个运行在排队，会依次开始。"),
    message("queue_dropped", "⚠️ A queued run could not start when its turn came and was taken off the queue: {reason}",
            "⚠️ 一个排队的运行轮到时无法开始，已移出队列：{reason}"),
    message("queue_cleared", "Removed {n} queued run(s).", "已移除 {n} 个排队的运行。"),
    message("err.title", "Error", "错误"),
    message("info.title", "Info", "提示"),
    message("warn.title", "Warning", "注意"),
    message("err.internal", "Something went wrong inside the studio ({name}); the server log has the details.",
            "工作室内部出错（{name}）；详情见服务器日志。"),
    message("set.gguf_note",
            "A .gguf file (llama.cpp format) of a text model transformers can read ({archs}). It is copied "
            "into the workspace (`models/uploads/`), prepared once into a normal model folder, and becomes "
            "the Model. Up to {mb:g} MB (this studio's upload limit, set by whoever started it); for a bigger "
            "file, put it in the workspace and type its path in Model.",
            "transformers 能读取的文本模型的 .gguf 文件（llama.cpp 格式；{archs}）。文件会复制到工作区"
            "（`models/uploads/`），只准备一次，转换成普通模型文件夹，并设为“模型”。最大 {mb:g} MB（本工作室的上传上限，"
            "由启动它的人设定）；更大的文件请放进工作区，再在“模型”中输入路径。"),
    message("upload.length", "This upload does not say its size (no Content-Length). Fix: upload it from the page",
            "这次上传没有说明大小（缺少 Content-Length）。解决：请从页面上传"),
    message("upload.role_too_big",
            "This upload is {mb:.1f} MB, over the limit of {limit:g} MB for this login ({role}). Fix: use a "
            "smaller file (split it), or ask an owner of the studio to upload it",
            "这次上传有 {mb:.1f} MB，超过了 {role} 登录的上限 {limit:g} MB。解决：请换用更小的文件（拆分），"
            "或请工作室的所有者上传"),
    message("upload.viewer_kind",
            "A viewer login may upload data files only (.csv, .tsv, .xlsx, .json, .jsonl, .parquet). "
            "Fix: upload a spreadsheet to predict, or ask an owner of the studio to upload models",
            "查看者登录只能上传数据文件（.csv、.tsv、.xlsx、.json、.jsonl、.parquet）。"
            "解决：请上传要预测的表格，或请工作室的所有者上传模型"),
    message("disk.full",
            "The server's disk is full: {what} stopped and nothing half-written was kept. Fix: ask whoever runs "
            "the studio to free disk space (old runs, exports, uploads), then try again",
            "服务器磁盘已满：{what}已停止，没有留下写了一半的文件。解决：请运行本工作室的人腾出磁盘空间"
            "（旧的运行、导出、上传），然后再试一次"),
    message("disk.what_upload", "the upload", "上传"),
    message("disk.what_convert", "converting the data", "数据转换"),
    message("disk.what_export", "the export", "导出"),
    message("disk.what_checkpoint", "saving the checkpoint", "保存检查点"),
    message("disk.what_other", "writing the file", "写入文件"),
    message("gguf.prepared", "Prepared **{name}** ({arch}, {params:,} parameters) into `{path}`; it is now the Model.",
            "已把 **{name}**（{arch}，{params:,} 个参数）准备到 `{path}`，并设为“模型”。"),
    # ---- what reading and converting a file noticed (studio/data/readers.py, convert.py): the command line prints
    # each as a warning or a note, the Data tab in the page's language
    message("note.column_twice",
            "'{file}': the header names column '{name}' twice; the later one is read as {again}. Check which one "
            "holds the data, or rename the header",
            "“{file}”：表头中“{name}”这一列出现了两次；后一列按 {again} 读取。请确认哪一列是数据，或修改表头"),
    message("note.column_repeated",
            "'{file}': the header names column '{name}' {n} times; the later ones are read as {again}. Check which "
            "one holds the data, or rename the header",
            "“{file}”：表头中“{name}”这一列出现了 {n} 次；后面的列按 {again} 读取。请确认哪一列是数据，或修改表头"),
    message("list.again", "'{0}'", "“{0}”"),
    message("list.again.sep", ", ", "，"),
    message("note.unclosed_quote",
            "'{file}': a quote (\") is never closed, so quotes were read as ordinary characters; check that row",
            "“{file}”：有一个引号（\"）没有闭合，所以引号都按普通字符读取；请检查那一行"),
    message("note.unclosed_quote_near",
            "'{file}': a quote (\") is never closed (the one near line {line}), so quotes were read as ordinary "
            "characters; check that row",
            "“{file}”：有一个引号（\"）没有闭合（在第 {line} 行附近），所以引号都按普通字符读取；请检查那一行"),
    message("note.long_rows",
            "{n} row(s) have more fields than the header (data rows near line {lines}); the extra fields were "
            "dropped. Quote text that contains the delimiter '{delim}'",
            "{n} 行的字段比表头多（数据行在第 {lines} 行附近）；多出的字段已丢弃。含有分隔符“{delim}”的文本请加上引号"),
    message("note.labels_normalised",
            "labels {forms} were merged into '{label}' (Unicode NFKC normalisation, zero-width characters removed): "
            "they look the same", "标签 {forms} 已合并为“{label}”（按统一字符编码规范化，去掉了零宽字符）：它们看起来一样"),
    message("note.labels_mapped", "label {forms} -> '{label}'", "标签 {forms} -> “{label}”"),
    message("list.forms.sep", " / ", " / "),
    # ---- a state file the studio could not read (studio/state_files.py moves it aside; studio/words/state_words.py
    # words each for the Train tab's status, the Settings tab's why and the Data tab's report)
    message("state.corrupt",
            "⚠️ The file `{file}` could not be read ({reason}). It was kept as `{kept}` and the studio goes on "
            "without it. Fix: {fix}.",
            "⚠️ 文件 `{file}` 无法读取（{reason}）。它已另存为 `{kept}`，工作室在没有它的情况下继续运行。"
            "解决办法：{fix}。"),
    message("state.not_moved", "(it could not be moved: the folder is read-only)", "（无法移动：文件夹只读）"),
    message("state.fix.status.json",
            "the run's state was rebuilt from its log; compare it with the kept copy, and delete the copy once "
            "nothing is missing", "运行的状态已根据它的日志重建；请与另存的副本核对，确认无遗漏后再删除副本"),
    message("state.fix.queue.json",
            "the queued runs were restored from queue.json.bak (the last good copy); check the queue and press "
            "Start again for any run that is missing",
            "排队的运行已从 queue.json.bak（最后一份完好的副本）恢复；请检查队列，缺少的运行请再按一次“开始”"),
    message("state.fix.settings.yaml",
            "the Settings tab shows derived settings; set yours again and they are saved anew (the kept copy holds "
            "the old ones)", "“设置”页显示的是推导出的设置；重新设置后会再次保存（旧设置在另存的副本中）"),
    message("state.fix.dataset_info.json",
            "datasets converted before are still in the data folder; convert them again on the Data tab to list "
            "them (the kept copy holds the old list)",
            "之前转换的数据集仍在数据文件夹中；在“数据”页重新转换即可再次列出（旧列表在另存的副本中）"),
    message("state.fix.other", "check the kept copy, and delete it once nothing is missing",
            "请检查另存的副本，确认无遗漏后再删除它"),
    # the "least sure" queue, the gate and the versions (studio/app/least_sure.py, verdict.py, versions.py)
    message("ls.progress", "Row {i} of {n} · sureness {sure}", "第 {i} 行，共 {n} 行 · 把握 {sure}"),
    message("ls.ready", "{n} rows to check, least sure first (of {pool} in the file).",
            "有 {n} 行要检查，最没把握的在前（文件共 {pool} 行）。"),
    message("ls.done", "All {n} rows checked: thank you.", "{n} 行都检查完了：谢谢。"),
    message("imp.dpo_labels", "⚠ This is a labels run: SFT on the corrections is the measured better choice. On 49 "
            "corrections of a Gemma-3-270M review run, DPO gave every held-out row one label (accuracy 0.500) while "
            "SFT with replay kept 0.850 (docs/BENCHMARKS.md). A pair of labels pushes one label against the other with "
            "nothing holding the rest in place.",
            "⚠ 这是一个标签运行：在更正上做 SFT 是实测更好的选择。在一个 Gemma-3-270M 评论运行的 49 条"
            "更正上，DPO 让所有验证行都得到同一个标签（准确率 0.500），而带重放的 SFT 保持 0.850"
            "（docs/BENCHMARKS.md）。一对标签只是把一个标签压过另一个，没有东西让其余部分保持不变。"),
    message("imp.taught", "{confirmed} confirmed 👍 answer(s) teach too; {aside} row(s) kept aside to judge the result.",
            "{confirmed} 条被 👍 确认的答案也用于训练；{aside} 行留出来评判结果。"),
    message("gate.passed", "✅ **Check passed**: {after} of {n} check rows right ({before} before).",
            "✅ **检查通过**：{n} 行检查行中对 {after} 行（之前 {before} 行）。"),
    message("gate.worse", "⛔ **Check failed**: {after} of {n} check rows right, {before} before. Not promoted.",
            "⛔ **检查未通过**：{n} 行检查行中对 {after} 行，之前 {before} 行。未设为当前版本。"),
    message("gate.forgets", "⛔ **Check failed**: the old run's own held-out rows went from {before} to {after} of {n} "
            "right (more than {slack} lost). Not promoted.",
            "⛔ **检查未通过**：原运行自己的验证行从 {n} 行对 {before} 行降到 {after} 行（损失超过 {slack} 行）。"
            "未设为当前版本。"),
    message("gate.passed_graded", "✅ **Check passed**: mean chrF {after} on {n} check rows ({before} before).",
            "✅ **检查通过**：{n} 行检查行的平均 chrF 为 {after}（之前 {before}）。"),
    message("gate.worse_graded", "⛔ **Check failed**: mean chrF {after} on {n} check rows, {before} before. "
            "Not promoted.",
            "⛔ **检查未通过**：{n} 行检查行的平均 chrF 为 {after}，之前 {before}。未设为当前版本。"),
    message("gate.forgets_graded", "⛔ **Check failed**: on the old run's own {n} held-out rows the mean chrF went "
            "from {before} to {after} (more than {slack} row(s)' worth lost). Not promoted.",
            "⛔ **检查未通过**：在原运行自己的 {n} 行验证行上，平均 chrF 从 {before} 降到 {after}"
            "（损失超过 {slack} 行的分数）。未设为当前版本。"),
    message("gate.flips_graded", "{right} row(s) improved and {wrong} worsened by {points} chrF points or more, on a frozen "
            "check set of {n} rows ({held} held-out rows of {old}, {fb} feedback rows kept aside); scorer: {scorer}.",
            "在 {n} 行固定检查集上（{old} 的 {held} 行验证行，{fb} 行留出的反馈），{right} 行提高、{wrong} 行下降"
            "{points} 个 chrF 点以上；评分方式：{scorer}。"),
    message("scorer.labels", "the most probable label, right or wrong", "最可能的标签，对或错"),
    message("scorer.generation", "each written answer's chrF against the expected answer (the generation check)",
            "每个生成答案与应有答案的 chrF（生成检查）"),
    message("gate.flips", "{right} row(s) flipped right, {wrong} flipped wrong, on a frozen check set of {n} rows "
            "({held} held-out rows of {old}, {fb} feedback rows kept aside); scorer: {scorer}.",
            "在 {n} 行固定检查集上（{old} 的 {held} 行验证行，{fb} 行留出的反馈），{right} 行变对，{wrong} 行变错；"
            "评分方式：{scorer}。"),
    message("gate.flipped_head", "flipped|text|expected|before|after", "变化|文字|应为|之前|之后"),
    message("gate.live", "Teammates of **{line}** now see **{live}**.", "**{line}** 的队友现在使用 **{live}**。"),
    message("runs.no_versions", "No run has been promoted yet: teammates see each run as it was shared.",
            "还没有运行被设为当前版本：队友看到的是分享时的运行。"),
    message("runs.version_line", "**{line}**: {chain} · live: **{live}**", "**{line}**：{chain} · 当前：**{live}**"),
]
