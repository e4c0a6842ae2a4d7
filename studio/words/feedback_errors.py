"""The words of the errors of teammates' feedback and of the page's own handlers: the feedback database and its
bounds (studio/feedback/store.py), the datasets and exports made from it (feedback/datasets.py), the improving run
built from it (feedback/improve.py), the feedback row under an answer and the Feedback tab (studio/ui/
feedback_panel.py, feedback_tab.py): codes ``feedback.*``; and what the other tabs of the page refuse before any
work starts (an empty pick, an empty message, no file: studio/ui/demo.py, share_demo.py, eval_compare.py,
evaluate_tab.py, data_tab.py, runs_tab.py, settings_tab.py, train_tab.py): codes ``page.*``.

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled. ``{field}`` is
the name of a feedback row's column (run, login, input, answer, correction, scores), as the database and the
exported files spell it.
"""
from __future__ import annotations

from typing import Any

from .entry import error

_MOVE_ASIDE = ("move the file aside (e.g. rename it to feedback.sqlite3.old): the studio starts a new database "
               "and the old file keeps its rows for recovery",
               "请把该文件移开（例如改名为 feedback.sqlite3.old）：工作室会新建一个数据库，旧文件保留原有的行以便恢复")
_NO_RUN_FIX = ("pick a finished run at the top of the tab", "请在本页顶部选择一个已完成的运行")
_NOTHING_ACCEPTED_FIX = ("accept some rows first (and settle conflicting corrections)",
                         "请先接受一些行（并解决相互矛盾的更正）")
_VERDICT = {"what": ("The verdict '{verdict}' is not one of {verdicts}", "评价“{verdict}”不是 {verdicts} 之一"),
            "fix": ("press 👍 or 👎", "请按 👍 或 👎")}
_TEXT_FIX = ("type or paste a text to classify", "请输入或粘贴要分类的文字")
_TEXT_TOO_LONG = ("The text is {n:,} characters long, over the limit of {limit:,}",
                  "文字有 {n:,} 个字符，超过了 {limit:,} 的上限")


ENTRIES: list[Any] = [
    # ---- the feedback database (feedback/store.py); {field} is a row's column
    error("feedback.empty", what=("The feedback's {field} is empty", "反馈的“{field}”为空"),
          fix=("give a {field}", "请填写“{field}”")),
    error("feedback.not_text", what=("The feedback's {field} is not text", "反馈的“{field}”不是文字"),
          fix=("send the {field} as text", "请以文字形式发送“{field}”")),
    error("feedback.nul", what=("The feedback's {field} contains a NUL character", "反馈的“{field}”含有 NUL 字符"),
          fix=("type it again without hidden characters", "请重新输入，不要带隐藏字符")),
    error("feedback.too_long", what=("The feedback's {field} has {n:,} characters, over the limit of {limit:,}",
                                     "反馈的“{field}”有 {n:,} 个字符，超过了 {limit:,} 的上限"),
          fix=("shorten the {field} to at most {limit:,} characters",
               "请把“{field}”缩短到最多 {limit:,} 个字符")),
    error("feedback.scores", what=("The model's scores are not plain numbers and names", "模型的分数不是简单的数字和名字"),
          fix=("{detail}", "{detail}")),  # the JSON encoder's words, as the old error gave them
    error("feedback.schema",
          what=("The feedback database '{file}' was written by a newer studio (schema {version}, this "
                "one knows {known})",
                "反馈数据库“{file}”是由更新版本的工作室写入的（结构版本 {version}，本版本只认识 {known}）"),
          fix=("update the studio", "请更新本工作室")),
    error("feedback.verdict", **_VERDICT),
    error("feedback.source", what=("The feedback source '{source}' is unknown", "未知的反馈来源“{source}”"),
          fix=("use one of {sources}", "请使用其中之一：{sources}")),
    error("feedback.quota", what=("'{login}' gave {n:,} answers' feedback in the last hour, the most one login may",
                                  "“{login}”在过去一小时内对 {n:,} 个答案给出了反馈，已达到一个登录的上限"),
          fix=("wait an hour, or ask the studio's owner", "请等一小时，或联系本工作室的所有者")),
    # the same words for "absent" and "someone else's": a login learns nothing about others' rows
    error("feedback.not_yours", what=("There is no feedback {id} of yours", "你没有编号为 {id} 的反馈"),
          fix=("pick one of your own answers", "请选择你自己的一条反馈")),
    error("feedback.status", what=("The status '{status}' is not one of {statuses}", "状态“{status}”不是 {statuses} 之一"),
          fix=("pick accept, drop or new", "请选择接受、丢弃或新")),
    error("feedback.missing", what=("There is no feedback {id}", "没有编号为 {id} 的反馈"), fix=("refresh the list", "请刷新列表")),
    # ---- datasets and exports made from the feedback (feedback/datasets.py)
    error("feedback.nothing_accepted", what=("Run '{run}' has no accepted feedback to turn into data",
                                             "运行“{run}”没有可以转成数据的已接受反馈"),
          fix=_NOTHING_ACCEPTED_FIX),
    error("feedback.nothing_accepted_conflicts",
          what=("Run '{run}' has no accepted feedback to turn into data ({skipped} accepted rows are in conflict)",
                "运行“{run}”没有可以转成数据的已接受反馈（有 {skipped} 条已接受的行相互矛盾）"),
          fix=_NOTHING_ACCEPTED_FIX),
    error("feedback.export_suffix", what=("'{file}' is neither .csv nor .jsonl", "“{file}”既不是 .csv 也不是 .jsonl"),
          fix=("export to a .csv or .jsonl file", "请导出为 .csv 或 .jsonl 文件")),
    # ---- the improving run (feedback/improve.py)
    error("feedback.method", what=("Unknown improvement method '{method}'", "未知的改进方法“{method}”"),
          fix=("use auto, sft or dpo", "请使用 auto、sft 或 dpo")),
    error("feedback.no_pair", what=("The feedback holds no (correction, model answer) pair for DPO",
                                    "反馈中没有可用于 DPO 的（更正，模型答案）对"),
          fix=("use --method sft (or auto), or collect corrections of answers the model gave",
               "请使用 --method sft（或 auto），或收集对模型所给答案的更正"),
          page_fix=("choose auto or sft as the method", "方法请选择 auto 或 sft")),
    error("feedback.no_adapter", what=("Run '{run}' has no LoRA adapter to improve", "运行“{run}”没有可改进的 LoRA 适配器"),
          fix=("pick a finished LoRA or QLoRA run", "请选择一个已完成的 LoRA 或 QLoRA 运行")),
    error("feedback.no_correction", what=("The feedback of run '{run}' holds no correction to train on",
                                          "运行“{run}”的反馈中没有可用于训练的更正"),
          fix=("give right answers (not only 👍 / 👎), accept them, then make the dataset again",
               "请给出正确答案（不只是 👍 / 👎），接受它们，然后重新生成数据集")),
    # ---- the feedback row under an answer and the Feedback tab (ui/feedback_panel.py, ui/feedback_tab.py)
    error("feedback.off", what=("Feedback is not recorded on this page", "本页不记录反馈"),
          fix=("start the demo from the studio's workspace", "请从工作室的工作区启动演示页面")),
    error("feedback.no_answer", what=("There is no answer to judge yet", "还没有可以评价的答案"),
          fix=("ask the model first", "请先让模型回答")),
    error("feedback.not_label", what=("'{value}' is not one of this run's labels", "“{value}”不是这个运行的标签"),
          fix=("pick one of: {labels}", "请从以下标签中选择：{labels}")),
    error("feedback.text_too_long", what=_TEXT_TOO_LONG, fix=_TEXT_FIX),
    error("feedback.no_run", what=("Pick a run with feedback", "请选择一个有反馈的运行"),
          fix=("pick a run in the list at the top of the tab", "请在本页顶部的列表中选择一个运行")),
    error("feedback.bad_ids", what=("'{text}' is not a list of row ids", "“{text}”不是行号列表"),
          fix=("type the numbers from the table's id column, e.g. 3, 7, 12",
               "请输入表格 id 列中的数字，例如 3, 7, 12")),
    # ---- the demo page (ui/demo.py) and the Share-a-demo panel (ui/share_demo.py)
    error("page.demo_empty", what=("The text is empty", "文字为空"), fix=_TEXT_FIX),
    error("page.demo_too_long", what=_TEXT_TOO_LONG, fix=_TEXT_FIX),
    error("page.demo_no_file", what=("No file uploaded", "没有上传文件"),
          fix=("upload a .csv, .jsonl or .xlsx file with one text per row",
               "请上传每行一段文字的 .csv、.jsonl 或 .xlsx 文件")),
    error("page.demo_no_run", what=("No finished run is selected", "没有选择已完成的运行"), fix=_NO_RUN_FIX),
    error("page.demo_too_many", what=("{n} demos are running already", "已有 {n} 个演示页面在运行"),
          fix=("stop one first (each holds a model in memory)", "请先停止一个（每个都占用一份模型内存）")),
    # {detail}: the last line the demo's process wrote
    error("page.demo_failed", what=("The demo of {run} did not start: {detail}", "{run} 的演示页面没有启动：{detail}"),
          fix=("run the command above in a terminal to see the whole message",
               "请在终端中运行上面的命令，查看完整信息")),
    error("page.demo_silent", what=("The demo of {run} did not start: it did not answer in time",
                                    "{run} 的演示页面没有启动：它没有及时响应"),
          fix=("run the command above in a terminal to see the whole message",
               "请在终端中运行上面的命令，查看完整信息")),
    # ---- the Evaluate tab (ui/evaluate_tab.py, ui/eval_compare.py)
    error("page.no_upload", what=("No file uploaded", "没有上传文件"),
          fix=("upload a labelled .jsonl or .csv file, or check the validation split",
               "上传带标签的 .jsonl 或 .csv 文件，或改为检查验证集")),
    error("page.empty_message", what=("The message is empty", "消息为空"), fix=("type something to send", "输入内容后再发送")),
    error("page.no_full_model", what=("No full model is picked", "没有选择完整模型"),
          fix=("pick a finished run at the top, or a full/merged export",
               "在顶部选择已完成的运行，或选择完整/合并后的导出")),
    error("page.no_quantized_model", what=("No quantized model is picked", "没有选择量化模型"),
          fix=("pick 4-bit or 8-bit (quantize now) or a quantized export",
               "选择 4 位或 8 位（现在量化），或已导出的量化模型")),
    error("page.no_run", what=("No finished run is picked", "没有选择已完成的运行"), fix=_NO_RUN_FIX),
    # ---- the Data, Runs, Settings and Train tabs
    error("page.no_file", what=("Upload a file or press the sample button first", "请先上传文件或点击示例数据按钮"),
          fix=("use the upload box or the sample button", "使用上传框或示例数据按钮")),
    error("page.pick_one_run", what=("Tick exactly one run to rename", "请只勾选一个要重命名的运行"),
          fix=("untick the others in 'Runs to compare'", "在“要对比的运行”中取消勾选其他运行")),
    error("page.no_suggestion", what=("Pick a suggested change first", "请先选择一条建议的修改"),
          fix=("the list fills when the plan does not fit", "方案放不下时列表里会出现建议")),
    # the database file (feedback/db.py); {file}: its path. Every unusable file has the same way out: moved aside,
    # the studio starts a new one and the old file keeps its rows for recovery
    error("feedback.db_link", what=("'{file}' is a link, and the feedback database is only opened as a file of the "
                                    "workspace", "“{file}”是一个链接，而反馈数据库只以工作区中的普通文件打开"),
          fix=_MOVE_ASIDE),
    error("feedback.db_not_file", what=("'{file}' is not a file (a folder or a device is in the feedback database's "
                                        "place)", "“{file}”不是文件（反馈数据库的位置上是一个文件夹或设备）"),
          fix=_MOVE_ASIDE),
    error("feedback.db_not_sqlite", what=("'{file}' is not a SQLite database", "“{file}”不是数据库文件"),
          fix=_MOVE_ASIDE),
    error("feedback.db_damaged", what=("The feedback database '{file}' is damaged or cut short",
                                       "反馈数据库“{file}”已损坏或不完整"), fix=_MOVE_ASIDE),
    error("feedback.db_foreign", what=("'{file}' is a database, but not a feedback database this studio can use",
                                       "“{file}”是一个数据库，但不是本工作室能使用的反馈数据库"), fix=_MOVE_ASIDE),
    error("feedback.db_locked", what=("The feedback database '{file}' stayed locked by another program for 30 s",
                                      "反馈数据库“{file}”被另一个程序锁定了 30 秒"),
          fix=("close the program that holds it (a database browser, a backup) and try again",
               "请关闭占用它的程序（数据库浏览器、备份工具），然后重试")),
    error("feedback.db_full", what=("The disk that holds the feedback database '{file}' is full",
                                    "存放反馈数据库“{file}”的磁盘已满"),
          fix=("free space on that disk, then try again", "请在该磁盘上腾出空间后重试")),
    error("feedback.db_cannot_open", what=("The feedback database '{file}' cannot be opened",
                                           "无法打开反馈数据库“{file}”"),
          fix=("check that the workspace folder exists and this user may write in it",
               "请确认工作区文件夹存在，并且当前用户可以在其中写入")),
    error("feedback.db_read_only", what=("The feedback database '{file}' is read-only", "反馈数据库“{file}”是只读的"),
          fix=("let this user write the file and its folder", "请允许当前用户写入该文件及其所在文件夹")),
    # texts (feedback/texts.py) and senders (feedback/quota.py)
    error("feedback.not_unicode", what=("The feedback's {field} holds a character that is not text (at position {pos})",
                                        "反馈的“{field}”在第 {pos} 个字符处含有不是文字的字符"),
          fix=("type or paste the {field} again", "请重新输入或粘贴“{field}”")),
    error("feedback.quota_bytes", what=("'{login}' sent {mb:.1f} MB of feedback in the last hour, over the {limit:.0f} MB "
                                        "one login may", "“{login}”在过去一小时内发送了 {mb:.1f} MB 反馈，超过了一个登录 "
                                        "{limit:.0f} MB 的上限"),
          fix=("wait an hour, or ask the studio's owner", "请等一小时，或联系本工作室的所有者")),
    error("feedback.quota_visitor", what=("This page sent {n:,} feedback rows ({mb:.1f} MB) in the last hour, the most "
                                          "one visitor may ({rows:,} rows, {limit:.0f} MB)",
                                          "本页面在过去一小时内发送了 {n:,} 条反馈（{mb:.1f} MB），已达到每位访客的上限"
                                          "（{rows:,} 条，{limit:.0f} MB）"),
          fix=("wait an hour", "请等一小时")),
    error("feedback.run_full", what=("Run '{run}' holds {mb:.0f} MB of feedback, the most one run keeps ({limit:.0f} MB)",
                                     "运行“{run}”已有 {mb:.0f} MB 反馈，达到每个运行的上限（{limit:.0f} MB）"),
          fix=("make a dataset of what is there and improve the run; further feedback goes to the improved run",
               "请先用已有反馈生成数据集并改进该运行；之后的反馈请给改进后的运行")),
    # the model's answer is the one this page's session got from the model (app/answers.py), never the browser's
    error("feedback.answer_changed", what=("The answer shown is not the one the model gave on this page",
                                           "页面上显示的答案不是模型在本页面给出的答案"),
          fix=("ask the model again, then judge its answer", "请重新让模型回答，再评价它的答案")),
    # the gate, promotion and the "least sure" queue (studio/app/verdict.py, versions.py, least_sure.py)
    error("gate.not_judged", what=("'{run}' has no verdict yet: it cannot be promoted before it is checked",
                                   "“{run}”还没有检查结论：检查之前不能把它设为当前版本"),
          fix=("run: python -m studio feedback verdict {run}", "请运行：python -m studio feedback verdict {run}"),
          page_fix=("wait for the before / after under Improve this run",
                    "请等待“改进这次运行”下方显示改进前后的对比")),
    error("gate.refused", what=("'{run}' did worse on the frozen check set ({after} of {n} right, {before} before): "
                                "it is not promoted",
                                "“{run}”在固定检查集上更差（{n} 行中对 {after} 行，之前对 {before} 行）：未设为当前版本"),
          why=("teammates would get a worse model than the one they have", "队友会用上一个比现在更差的模型"),
          fix=("improve again with more feedback, or add --anyway to promote it all the same",
               "请用更多反馈再改进一次，或加上 --anyway 仍然设为当前版本"),
          page_fix=("improve again with more feedback, or tick 'Promote although the check got worse'",
                    "请用更多反馈再改进一次，或勾选“检查变差也设为当前版本”")),
    error("gate.already_live", what=("'{run}' is already the version teammates of '{line}' see",
                                     "“{run}”已经是“{line}”的队友正在使用的版本"),
          fix=("nothing to do", "无需操作")),
    error("gate.nothing_to_undo", what=("'{line}' has no earlier version to go back to", "“{line}”没有可以退回的早先版本"),
          fix=("promote an improved run first", "请先把一个改进后的运行设为当前版本")),
    error("queue.no_file", what=("Upload a file of texts first", "请先上传一个文字文件"),
          fix=("a CSV, Excel, JSON or text file with one text per row", "CSV、Excel、JSON 或文本文件，每行一段文字")),
    error("queue.empty", what=("The queue is empty", "队列是空的"),
          fix=("upload a file and press 'Find the rows worth checking'", "请上传文件并点击“找出值得检查的行”")),
    error("queue.size", what=("Ask for 1 to {limit} rows, not {n}", "请要 1 到 {limit} 行，而不是 {n} 行"),
          fix=("pick a smaller number", "请选一个更小的数")),
]
