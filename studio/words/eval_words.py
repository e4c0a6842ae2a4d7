"""The words the server builds for the Evaluate tab (scores, exports, the deploy report), the demo page of one run,
feedback on answers and "Improve this run".
"""
from __future__ import annotations

from typing import Any

from .entry import terms, message

ENTRIES: list[Any] = [
    # Evaluate tab, built on the server
    message("ev.per_class_headers", "label|precision|recall|f1|support", "标签|精确率|召回率|F1|样本数"),
    message("ev.wrong_headers", "input|expected|model's answer|read as", "输入|正确答案|模型的回答|解析为"),
    message("ev.summary",
            "**Accuracy {acc:.1%}** on {n} rows · macro-F1 {f1:.3f} · {ms:.1f} ms per row · mode `{mode}` · "
            "unparseable answers: {bad} (counted as wrong)",
            "**准确率 {acc:.1%}**（共 {n} 行）· macro-F1 {f1:.3f} · 每行 {ms:.1f} 毫秒 · 模式 `{mode}` · "
            "无法解析的回答：{bad}（计为错误）"),
    message("ev.leak",
            "\n\n**{k} of {n} rows were training rows of this run**: their score shows memory, not learning. ",
            "\n\n**{n} 行中有 {k} 行是本次训练用过的数据**：这些行的得分反映的是记忆，而不是学到的能力。"),
    message("ev.leak_unseen", "Accuracy on the {m} rows it never saw: **{acc:.1%}**.",
            "在它没见过的 {m} 行上的准确率：**{acc:.1%}**。"),
    message("ev.leak_none", "Every row was a training row: check it on other rows (e.g. the run's held-out rows).",
            "所有行都是训练数据：请换用其他数据检查（例如本次训练留出的数据）。"),
    message("ev.skipped", " · {k} rows skipped (their output is none of the labels {labels})",
            " · 跳过了 {k} 行（它们的输出不是标签 {labels} 之一）"),
    message("ev.card_head", "Same {n} rows, mode `{mode}`.", "同样的 {n} 行，模式 `{mode}`。"),
    message("ev.label_map", " · asked with the run's own instruction; the file's labels read by meaning as the run's: "
                            "{pairs}", " · 用运行自己的指令提问；文件中的标签按含义对应到运行的标签：{pairs}"),
    message("ev.card_cols", "| | base model | fine-tuned | change |", "| | 基础模型 | 微调后 | 变化 |"),
    message("ev.card_acc", "accuracy", "准确率"),
    message("ev.card_bad", "unparseable", "无法解析"),
    message("ev.predicted", "Predicted {n} rows ({mode} mode, {ms:.1f} ms per row){acc}. Saved to `{path}`.",
            "已预测 {n} 行（{mode} 模式，每行 {ms:.1f} 毫秒）{acc}。已保存到 `{path}`。"),
    message("ev.predicted_acc", " · accuracy {acc:.1%} against the file's outputs", " · 相对文件中的答案，准确率 {acc:.1%}"),
    message("ev.exported",
            "Exported **{kind}** model to `{path}` ({mb} MB). {what} See README.md in that folder for how to "
            "load it.",
            "已把 **{kind}** 模型导出到 `{path}`（{mb} MB）。{what} 加载方法见该文件夹中的 README.md。"),
    message("ev.fmt_folder", "Model folder", "模型文件夹"),
    message("ev.fmt_f16", "GGUF f16 (llama.cpp / Ollama)", "GGUF f16（用于 llama.cpp / Ollama）"),
    message("ev.fmt_q8_0", "GGUF q8_0, smaller (llama.cpp / Ollama)", "GGUF q8_0，更小（llama.cpp / Ollama）"),
    message("ev.exported_gguf",
            "Exported a **GGUF {gtype}** model to `{path}` ({mb} MB): `model.gguf` with its tokenizer "
            "and the prompt format it trained with (`{template}`). {extra} See README.md in that folder "
            "for llama.cpp and Ollama.",
            "已把 **GGUF {gtype}** 模型导出到 `{path}`（{mb} MB）：`model.gguf` 含分词器和训练时的提示格式"
            "（`{template}`）。{extra} llama.cpp 和 Ollama 的用法见该文件夹中的 README.md。"),
    message("ev.download_zip", "Download {name} ({mb} MB before compression; the zip is made while it downloads)",
            "下载 {name}（压缩前 {mb} MB；压缩包边下载边生成）"),
    message("ev.download_file", "Download {name} ({mb} MB, the file itself)", "下载 {name}（{mb} MB，即该文件本身）"),
    message("ev.download_file_modelfile",
            "Download {name} ({mb} MB, the file itself, for llama.cpp). For Ollama take the "
            "zip below: it has the Modelfile beside model.gguf (ollama create my-model -f "
            "Modelfile)",
            "下载 {name}（{mb} MB，即该文件本身，供 llama.cpp 使用）。Ollama 请下载下面的压缩包："
            "其中 model.gguf 旁边有 Modelfile（ollama create my-model -f Modelfile）"),
    message("ev.download_making", "Preparing the download link", "正在准备下载链接"),
    message("ev.exported_modelfile", "The `Modelfile` beside it sets up Ollama: `ollama create my-model -f Modelfile`.",
            "旁边的 `Modelfile` 用于 Ollama：`ollama create my-model -f Modelfile`。"),
    message("ev.exported_no_modelfile", "No Ollama Modelfile: {why}. llama.cpp reads the format from the GGUF itself.",
            "没有 Ollama Modelfile：{why}。llama.cpp 会直接读取 GGUF 中的格式。"),
    message("ev.card_latency", "latency per answer (ms)", "每个回答的延迟（毫秒）"),
    message("ev.card_memory", "model memory (MB)", "模型内存（MB）"),
    message("ev.measured_note",
            "*Latency*: wall time of that model's scoring (or generation) pass over these rows, divided "
            "by the rows answered. *Model memory*: bytes of the loaded model's parameters, buffers and "
            "quantization state (not the whole process); for a LoRA run the base is the same model with "
            "its adapter off.",
            "*延迟*：该模型在这些行上的打分（或生成）过程的实际耗时除以回答的行数。*模型内存*：已加载模型的"
            "参数、缓冲区和量化状态所占字节（不是整个进程）；LoRA 运行的基础模型就是关闭适配器后的同一个模型。"),
    message("ev.q_head", "Same {n} rows, mode `{mode}`. Full: {full}. Quantized: {quant}.",
            "同样的 {n} 行，模式 `{mode}`。完整模型：{full}。量化模型：{quant}。"),
    message("ev.q_cols", "| | full | quantized | change |", "| | 完整模型 | 量化模型 | 变化 |"),
    message("ev.q_the_run", "the run picked above", "上面选中的运行"),
    message("ev.q_now4", "4-bit NF4, quantize now", "4 位 NF4，现在量化"),
    message("ev.q_now8", "8-bit, quantize now", "8 位，现在量化"),
    message("ev.kind_lora", "LoRA adapter", "低秩适配器"),
    message("ev.kind_full", "full model", "完整模型"),
    message("demo.header", "**{run}** · model `{model}` ({method}) · labels: {labels}",
            "**{run}** · 模型 `{model}`（{method}）· 标签：{labels}"),
    message("demo.header_chat", "**{run}** · model `{model}` ({method}) · template `{template}`",
            "**{run}** · 模型 `{model}`（{method}）· 模板 `{template}`"),
    message("demo.empty", "The text is empty", "文字为空"),
    message("demo.empty_fix", "type or paste a text to classify", "请输入或粘贴要分类的文字"),
    message("demo.too_long", "The text is {n:,} characters long, over the limit of {limit:,}",
            "文字有 {n:,} 个字符，超过了 {limit:,} 的上限"),
    message("demo.no_file_fix", "upload a .csv, .jsonl or .xlsx file with one text per row",
            "请上传每行一段文字的 .csv、.jsonl 或 .xlsx 文件"),
    message("demo.predicted", "Predicted {n} rows ({ms:.1f} ms per row){acc}. Download the CSV below.",
            "已预测 {n} 行（每行 {ms:.1f} 毫秒）{acc}。请在下方下载 CSV。"),
    message("demo.command", "Only on this computer:\n```\n{local}\n```\nFor teammates on the network (they log in "
                            "with a line of the login file):\n```\n{network}\n```",
            "仅本机可用：\n```\n{local}\n```\n给网络上的同事（用登录文件中的一行登录）：\n```\n{network}\n```"),
    message("demo.no_run", "No finished run is selected", "没有选择已完成的运行"),
    message("demo.running_local",
            "The demo of **{run}** is running; open it on this computer:\n{urls}\n\n(This studio "
            "listens on this computer only, so its demo does too.)",
            "**{run}** 的演示页面已启动，请在本机打开：\n{urls}\n\n（本工作室只在本机监听，演示页面也一样。）"),
    message("demo.no_run_fix", "pick a finished run at the top of the tab", "请在本页顶部选择一个已完成的运行"),
    message("demo.starting", "Starting the demo of **{run}** (loading the model takes a few seconds)…",
            "正在启动 **{run}** 的演示页面（加载模型需要几秒）…"),
    message("demo.running", "The demo of **{run}** is running; teammates open:\n{urls}\n\nThey log in as they do for "
                            "the studio.",
            "**{run}** 的演示页面已启动，同事请打开：\n{urls}\n\n登录方式与工作室相同。"),
    message("demo.stopped", "Stopped the demo of **{run}**.", "已停止 **{run}** 的演示页面。"),
    message("demo.none_running", "No demo of **{run}** is running.", "**{run}** 没有正在运行的演示页面。"),
    # the deploy report: studio/ui/eval_compare.py
  # the deploy report: studio/ui/eval_compare.py
    message("ev.d_head", "Same {n} rows, mode `{mode}`, on {device}.", "同样的 {n} 行，模式 `{mode}`，设备 {device}。"),
    message("ev.d_cols", "| form | file (MB) | load (s) | model memory (MB) | latency per answer (ms) | accuracy | "
                         "agreement with full | CPU-s |",
            "| 形式 | 文件（MB） | 加载（秒） | 模型内存（MB） | 每个回答的延迟（毫秒） | 准确率 | "
            "与完整模型一致 | CPU 秒 |"),
    message("ev.d_full", "full (the run as trained)", "完整模型（训练时的形式）"),
    message("ev.d_bnb-8bit", "bitsandbytes 8-bit", "bitsandbytes 8 位"),
    message("ev.d_bnb-nf4", "bitsandbytes NF4", "bitsandbytes NF4（4 位）"),
    message("ev.d_gguf-f16", "GGUF f16 ¹", "GGUF f16 ¹"),
    message("ev.d_gguf-q8_0", "GGUF q8_0 ¹", "GGUF q8_0 ¹"),
    message("ev.d_gguf-q4_k_m", "GGUF q4_k_m ¹", "GGUF q4_k_m ¹"),
    message("ev.d_unavailable", "not made on this machine: {why}", "无法在本机生成：{why}"),
    message("ev.d_note", "*File*: the weight files that form loads (as trained: the base model's and the adapter's). "
                         "*Load*: wall time, tokenizer included. *Agreement*: the share of rows where the form picks the same "
                         "label as the full model. *Latency*: the batched label scoring's wall time over these rows divided "
                         "by the rows. *CPU-s*: load and scoring, the figure a busy machine moves least. ¹ GGUF rows are read "
                         "back with transformers' GGUF reader, which expands every tensor to float32: their memory and "
                         "latency are transformers', not llama.cpp's (llama.cpp is not run here).",
            "*文件*：该形式加载的权重文件（训练时的形式：基础模型和适配器的权重）。*加载*：实际耗时，含分词器。"
            "*一致*：该形式与完整模型选出相同标签的行所占比例。*延迟*：在这些行上批量标签打分的实际耗时除以行数。"
            "*CPU 秒*：加载和打分所用的 CPU 时间，机器繁忙时它变化最小。¹ GGUF 行用 transformers 的 GGUF 读取器"
            "读回，它把每个张量展开为 float32：这些行的内存和延迟是 transformers 的，不是 llama.cpp 的（这里没有运行 "
            "llama.cpp）。"),
    message("fb.thanks_up", "Thanks: recorded as right (#{id})", "谢谢：已记为正确（#{id}）"),
    message("fb.thanks_down", "Thanks: recorded as wrong (#{id})", "谢谢：已记为错误（#{id}）"),
    message("fb.thanks_fix", "Thanks: your right answer is recorded (#{id})", "谢谢：你的正确答案已记录（#{id}）"),
    message("fb.withdrawn", "Your feedback #{id} is withdrawn", "你的反馈 #{id} 已撤回"),
    message("fb.nothing", "Nothing to withdraw", "没有可撤回的反馈"),
    message("fb.reviewed", "{n} row(s) marked {status}", "{n} 行已标记为{status}"),
    message("fb.edited", "Row {id} edited", "第 {id} 行已修改"),
    message("fb.made", "Made {parts}{skipped}. Pick them under Training data on the Settings tab.",
            "已生成 {parts}{skipped}。请在“设置”页的“训练数据”中选择它们。"),
    message("fb.made_skipped", "; {n} accepted row(s) left out: their input has conflicting corrections",
            "；{n} 条已接受的行未使用：它们的输入有相互矛盾的更正"),
    message("fb.headers", "id|status|verdict|person|source|input|model answer|correction|edited",
            "编号|状态|评价|人员|来源|输入|模型答案|更正|修改后"),
    # the Feedback tab's values of a closed set (studio/feedback/store.py VERDICTS, SOURCES) and its counts' names
    *terms("fb.verdict", ("up", "👍 right", "👍 对"), ("down", "👎 wrong", "👎 错")),
    *terms("fb.source", ("demo", "demo page", "演示页面"), ("playground", "playground", "试用区"),
           ("chat", "chat", "对话"), ("batch", "batch prediction", "批量预测"), ("cli", "command line", "命令行")),
    # (the English names are the listing's own keys, which the CLI's JSON and the tests read too)
    *terms("fb.count", ("rows", "rows", "显示的行"), ("page", "page", "页"), ("total", "total", "总数"),
           ("verdict", "verdict", "按评价"), ("status", "status", "按状态"), ("login", "login", "按人员"),
           ("label", "label", "按标签或答案"), ("conflicts", "conflicts", "有冲突的输入"),
           ("agreement", "agreement", "同事之间的一致性"), ("pair", "pair", "两人"), ("shared", "rows", "共同的输入"),
           ("agree", "agree", "标签相同"), ("kappa", "kappa", "卡帕系数")),
    message("imp.choice", "{run} · {n} accepted", "{run} · {n} 条已接受"),
    message("imp.none", "No finished run has accepted feedback yet: accept rows on the Feedback tab first.",
            "还没有带已接受反馈的已完成运行：请先在“反馈”页接受一些行。"),
    message("imp.counts", "{corrections} correction(s), {pairs} preference pair(s).",
            "{corrections} 条更正，{pairs} 组偏好对。"),
    message("imp.method_sft", "Method: **SFT** on the corrections plus a replay of the run's own training rows.",
            "方法：在更正上做 **SFT**，并重放这次运行自己的训练行。"),
    message("imp.method_dpo", "Method: **DPO** on (correction, model answer) pairs.", "方法：在（更正，模型答案）对上做 **DPO**。"),
    message("imp.no_corrections", "There is no accepted correction to train on.", "没有可以训练的已接受更正。"),
    message("imp.no_pairs", "DPO needs (correction, model answer) pairs: choose auto or sft.",
            "DPO 需要（更正，模型答案）对：请选择 auto 或 sft。"),
    message("imp.waiting",
            "⏳ **{run}** is training (or waiting in the queue); the before / after appears here when it "
            "finishes.",
            "⏳ **{run}** 正在训练（或在排队）；完成后这里会显示改进前后的对比。"),
    message("imp.ended", "❌ **{run}** ended ({state}); see the Train tab's status and log.",
            "❌ **{run}** 已结束（{state}）；请查看“训练”页的状态和日志。"),
    message("imp.head", "**{new}**: improved from **{old}** with {n} feedback rows ({method})",
            "**{new}**：由 **{old}** 用 {n} 条反馈改进（{method}）"),
    message("imp.set_held_out", "held-out rows of {old}", "{old} 的验证行"),
    message("imp.set_feedback", "feedback rows", "反馈行"),
    message("imp.headers", "|before|after|change", "|改进前|改进后|变化"),
    message("imp.accuracy", "accuracy", "准确率"),
    message("runs.origin", "made from", "来源"),
    message("runs.lineage", "improved from {run} with {n} feedback rows ({method})", "由 {run} 用 {n} 条反馈改进（{method}）"),
    # the time estimate of a run that keeps its best and may search (studio/app/run_estimate.py)
    message("time.search", "learning-rate search {t}", "学习率搜索 {t}"),
    message("time.early_stop", "Early stop on a plateau ({n} checks without a gain) can end it sooner.",
            "验证分数连续 {n} 次没有提升时会提前停止，可能更早结束。"),
    message("time.early_stop_history", "Your last runs of this model stopped early at {pct}% of their steps: about {t} "
            "sooner.", "这个模型最近几次运行平均在 {pct}% 的步数时提前停止：约早 {t} 结束。"),
    # the generation check (studio/app/generation_report.py: the page and the CLI)
    message("gen.head", "**Generation check** on {n} rows ({tokenize} tokens for BLEU and ROUGE-L).",
            "在 {n} 行上的**生成检查**（BLEU 与 ROUGE-L 按 {tokenize} 分词）。"),
    message("gen.cols_both", "| | base model | fine-tuned | change |", "| | 基础模型 | 微调后 | 变化 |"),
    message("gen.cols_one", "| | fine-tuned |", "| | 微调后 |"),
    message("gen.exact_match", "exact match", "完全一致"),
    message("gen.chrf", "chrF (0-100)", "chrF（0-100）"),
    message("gen.bleu", "BLEU (0-100)", "BLEU（0-100）"),
    message("gen.rouge_l", "ROUGE-L", "ROUGE-L"),
    message("gen.answer_loss", "answer loss (lower is better)", "回答损失（越低越好）"),
    message("gen.perplexity", "perplexity (lower is better)", "困惑度（越低越好）"),
    message("gen.length", "answer length / reference length", "回答长度 / 参考长度"),
    message("gen.latency", "latency per answer (ms)", "每个回答的延迟（毫秒）"),
    message("gen.parses_json", "parses as JSON", "可解析为 JSON"),
    message("gen.parses_label_reason", "starts with a label", "以标签开头"),
    message("gen.fields_match", "fields match the reference", "字段与参考一致"),
    message("gen.field", "field `{name}` right", "字段 `{name}` 正确"),
    message("gen.note", "chrF and BLEU are sacrebleu's (character and word n-grams); ROUGE-L is the longest common "
            "subsequence over the same tokens; exact match ignores case and punctuation. The answer loss is the "
            "training loss on these rows; perplexity is its exponential.",
            "chrF 与 BLEU 出自 sacrebleu（字符与词的 n 元组）；ROUGE-L 是同样分词下的最长公共子序列；完全一致"
            "不计大小写与标点。回答损失是这些行上的训练损失；困惑度是它的指数。"),
    message("gen.d_cols", "| form | file (MB) | load (s) | model memory (MB) | latency per answer (ms) | chrF | exact "
            "match | agreement | CPU-s |", "| 形式 | 文件（MB） | 加载（秒） | 模型内存（MB） | 每个回答的延迟（毫秒） | "
            "chrF | 完全一致 | 一致率 | CPU 秒 |"),
    message("gen.d_note", "Each form answered the same rows (greedy) and was scored by the generation check. "
            "*Agreement*: the share of rows where the form writes the full model's answer (case and punctuation "
            "aside). *Latency*: the batched generation's wall time over these rows divided by the rows.",
            "每种形式都（贪心解码）回答同样的行，并由生成检查打分。*一致率*：该形式写出与完整模型相同回答（不计大小写"
            "与标点）的行所占比例。*延迟*：批量生成这些行的总时间除以行数。"),
    message("gen.changed", "Rows that changed most", "变化最大的行"),
    message("gen.worst", "Worst rows of the fine-tuned model", "微调后模型最差的行"),
    message("gen.row_cols_both", "| prompt | reference | base model | fine-tuned | chrF base → tuned |",
            "| 提示 | 参考答案 | 基础模型 | 微调后 | chrF 基础 → 微调 |"),
    message("gen.row_cols_one", "| prompt | reference | fine-tuned | chrF |", "| 提示 | 参考答案 | 微调后 | chrF |"),
]
