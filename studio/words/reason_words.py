"""Why a run ended: each end reason's words by code (``reason.<code>``), in English and Chinese.

The engine and the job runner write a run's end reason as codes with values (studio/runs/reasons.py): the English
text made from the words here (what the CLI prints and status.json's "reason" keeps for older readers) and, beside
it, the parts (code, values) a page words in its own language. A reason of several phrases ("the training process
was killed ..." + "The last checkpoint ... is kept ...") is several parts, each worded here once.

A reason that says what to do after what happened has it as ``reason.<code>.fix`` (studio/words/end_reasons.py
joins the two). The page's words differ where it names Settings fields (``{l_<key>}``: the field's label, inline);
``{b_resume}`` / ``{b_start}`` are the Train tab's buttons on both surfaces, so a reason can never name a button the
page lacks. A system's English value (a full disk's error) is worded by its term (studio/words/terms.py).
"""
from __future__ import annotations

from typing import Any

from .entry import message

_FREE_SPACE = ("free some space (old runs, exports, checkpoints), then press {b_resume} or {b_start} again",
               "腾出一些磁盘空间（旧的运行、导出文件、检查点），然后再按{b_resume}或{b_start}")
_KEEP_GOING = ("resume continues from here", "按{b_resume}会从这里接着训练")

ENTRIES: list[Any] = [
    # ---- the engine (studio/engine/run.py)
    message("reason.stopped", "stopped on request", "应请求停止"),  # the end event's: who asked, if anyone
    message("reason.stopped_by", "stopped on request by {who}", "应 {who} 的请求停止"),
    message("reason.stopped_at_step", f"stopped on request at step {{step}}; {_KEEP_GOING[0]}",
            f"应请求在第 {{step}} 步停止；{_KEEP_GOING[1]}"),
    message("reason.stopped_by_at_step", f"stopped on request by {{who}} at step {{step}}; {_KEEP_GOING[0]}",
            f"应 {{who}} 的请求在第 {{step}} 步停止；{_KEEP_GOING[1]}"),
    message("reason.keyboard", "interrupted from the keyboard", "在终端里用键盘中断"),
    message("reason.internal_error", "Training stopped with an internal error ({kind}: {detail}); see error.log",
            "训练因内部错误而停止（{kind}：{detail}）；详见 error.log"),
    message("reason.card_oom",
            "The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller Batch size / Max "
            "tokens per example (cutoff_len), or enable DeepSpeed offload (see the memory estimate)",
            "显卡内存不足。请打开梯度检查点（gradient_checkpointing），使用 QLoRA，或调小批大小/每条样本最大 token "
            "数（cutoff_len），或启用 DeepSpeed 卸载（参见内存估算）",
            page=("The card ran out of memory. Turn on {l_gradient_checkpointing}, use QLoRA or a smaller "
                  "{l_per_device_train_batch_size} / {l_cutoff_len}, or enable DeepSpeed offload (see the memory "
                  "estimate)",
                  "显卡内存不足。请打开{l_gradient_checkpointing}，使用 QLoRA，或调小{l_per_device_train_batch_size}"
                  "/{l_cutoff_len}，或启用 DeepSpeed 卸载（参见内存估算）")),
    message("reason.disk_full_training",
            "The disk is full ({os_error}) while writing the base model, a checkpoint or the model",
            "磁盘已满（{os_error}），发生在写入基础模型、检查点或模型时"),
    message("reason.disk_full_training.fix", *_FREE_SPACE),
    # ---- the job runner (studio/runs/jobs.py, processes.py, run_dir.py)
    message("reason.disk_full_ending", "The disk is full ({os_error}) while recording the end of the run",
            "磁盘已满（{os_error}），发生在记录运行结束时"),
    message("reason.disk_full_ending.fix", *_FREE_SPACE),
    message("reason.before_that", "Before that:", "在此之前："),
    message("reason.start_failed", "could not start the training process: {detail}", "无法启动训练进程：{detail}"),
    message("reason.runner_lost", "the job runner lost track of the run ({detail}); see the log",
            "任务管理器与这次运行失去了联系（{detail}）；详见日志"),
    message("reason.stopped_early", "stopped on request before the first checkpoint.", "应请求在第一个检查点之前停止。"),
    message("reason.stopped_early_by", "stopped on request by {who} before the first checkpoint.",
            "应 {who} 的请求在第一个检查点之前停止。"),
    message("reason.no_result", "the training process ended without reporting a result.", "训练进程结束了，但没有报告结果。"),
    message("reason.killed", "the training process was killed ({signal}, signal {n}).", "训练进程被终止了（{signal}，信号 {n}）。"),
    # a signal with no name: the CLI's words say its number twice, as they always have
    message("reason.killed_unnamed", "the training process was killed (signal {n}, signal {n}).", "训练进程被终止了（信号 {n}）。"),
    message("reason.oom_killer",
            "If nobody stopped it, the system probably ran out of memory (the kernel's OOM killer).",
            "如果没有人停止它，多半是系统内存不足（被内核的 OOM 机制终止）。"),
    message("reason.exited_with_line",
            "the training process exited with code {rc} before finishing: {line}. See {log}.",
            "训练进程在完成之前退出了，退出码 {rc}：{line}。详见 {log}。"),
    message("reason.exited", "the training process exited with code {rc} before finishing. See {log}.",
            "训练进程在完成之前退出了，退出码 {rc}。详见 {log}。"),
    message("reason.checkpoint_kept", "The last checkpoint ({ckpt}) is kept: press {b_resume} to continue from it.",
            "最新的检查点（{ckpt}）已保留：按{b_resume}可从它接着训练。"),
    message("reason.no_checkpoint", "No checkpoint was written yet, so a resume would start over.",
            "还没有写出任何检查点，所以继续训练会从头开始。"),
    message("reason.process_gone",
            "interrupted: the training process is gone (the studio or the machine restarted while it "
            "trained).",
            "已中断：训练进程不在了（训练期间工作室或机器重启过）。"),
    message("reason.resume_from", "Press {b_resume} to continue from {ckpt}.", "按{b_resume}可从 {ckpt} 接着训练。"),
    message("reason.status_rebuilt", "status.json could not be read; the state was rebuilt from the run's log",
            "status.json 无法读取；状态已根据运行日志重建"),
    message("reason.status_rebuilt_kept",
            "status.json could not be read (kept as {name}); the state was rebuilt from the run's log",
            "status.json 无法读取（已另存为 {name}）；状态已根据运行日志重建"),
]
