"""Why a run ended, in Chinese for a Chinese page ("English left in the Chinese page").

The engine and the job runner write a run's plain end reason once, in English, into status.json (the CLI prints
it; studio/runs may not import the UI). Such a reason is made of phrases ("the training process was killed
(SIGKILL, signal 9)." + " The last checkpoint (checkpoint-4) is kept: press Resume to continue from it."), so
the page translates it phrase by phrase: ``REASON_PHRASES`` holds each phrase as written, ``{name}`` where a
runtime value goes. The rule, for the whole class: every reason the engine and the job runner can write comes out
with no English left (tests/test_page_messages.py reads them all from the source).
"""
from __future__ import annotations

import functools
import re

from .catalog import FIELD_LABELS


def _f(name: str) -> str:
    """A Settings field as the Chinese page labels it."""
    return f"“{FIELD_LABELS[name][1]}”"


RESUME = "“继续”"  # the Train tab's Resume button
REASON_PHRASES: dict[str, str] = {
    "status.json could not be read (kept as {name}); the state was rebuilt from the run's log":
        "status.json 无法读取（已另存为 {name}）；状态已根据运行日志重建",
    "status.json could not be read; the state was rebuilt from the run's log": "status.json 无法读取；状态已根据运行日志重建",
    "stopped on request by {who} at step {step}; resume continues from here":
        f"应 {{who}} 的请求在第 {{step}} 步停止；按{RESUME}会从这里接着训练",
    "stopped on request at step {step}; resume continues from here":
        f"应请求在第 {{step}} 步停止；按{RESUME}会从这里接着训练",
    "stopped on request by {who} before the first checkpoint.": "应 {who} 的请求在第一个检查点之前停止。",
    "stopped on request before the first checkpoint.": "应请求在第一个检查点之前停止。",
    "stopped on request by {who}": "应 {who} 的请求停止",
    "stopped on request": "应请求停止",
    "interrupted from the keyboard": "在终端里用键盘中断",
    "Training stopped with an internal error ({kind}: {detail}); see error.log":
        "训练因内部错误而停止（{kind}：{detail}）；详见 error.log",
    "The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller Batch size / Max tokens per "
    "example (cutoff_len), or enable DeepSpeed offload (see the memory estimate)":
        f"显卡内存不足。请打开{_f('gradient_checkpointing')}，使用 QLoRA，或调小{_f('per_device_train_batch_size')}"
        f"/{_f('cutoff_len')}，或启用 DeepSpeed 卸载（参见内存估算）",
    "The disk is full ({what}) while {doing}": "磁盘已满（{what}），发生在{doing}时",
    "No space left on device": "设备上没有剩余空间",  # the system's own words for a full disk
    "writing the base model, a checkpoint or the model": "写入基础模型、检查点或模型",
    "recording the end of the run": "记录运行结束",
    "preparing the run folder": "准备运行文件夹",
    "free some space (old runs, exports, checkpoints), then press Resume or Start again":
        f"腾出一些磁盘空间（旧的运行、导出文件、检查点），然后再按{RESUME}或“开始”",
    "Before that:": "在此之前：",
    "could not start the training process: {detail}": "无法启动训练进程：{detail}",
    "the job runner lost track of the run ({detail}); see the log": "任务管理器与这次运行失去了联系（{detail}）；详见日志",
    "the training process exited with code {rc} before finishing: {line}. See {log}.":
        "训练进程在完成之前退出了，退出码 {rc}：{line}。详见 {log}。",
    "the training process exited with code {rc} before finishing. See {log}.":
        "训练进程在完成之前退出了，退出码 {rc}。详见 {log}。",
    "The last checkpoint ({ckpt}) is kept: press Resume to continue from it.":
        f"最新的检查点（{{ckpt}}）已保留：按{RESUME}可从它接着训练。",
    "No checkpoint was written yet, so a resume would start over.": "还没有写出任何检查点，所以继续训练会从头开始。",
    "the training process ended without reporting a result.": "训练进程结束了，但没有报告结果。",
    "the training process was killed ({signal}, signal {n}).": "训练进程被终止了（{signal}，信号 {n}）。",
    "the training process was killed (signal {same}, signal {n}).": "训练进程被终止了（信号 {n}）。",  # no name
    "If nobody stopped it, the system probably ran out of memory (the kernel's OOM killer).":
        "如果没有人停止它，多半是系统内存不足（被内核的 OOM 机制终止）。",
    "interrupted: the training process is gone (the studio or the machine restarted while it trained).":
        "已中断：训练进程不在了（训练期间工作室或机器重启过）。",
    "Press Resume to continue from {ckpt}.": f"按{RESUME}可从 {{ckpt}} 接着训练。",
}

_SLOT = re.compile(r"\{(\w+)\}")
_END = r"(?=;|\.(?:\s|$)|$)"
_CJK = r"[\u4e00-\u9fff）”。；：]"  # a Chinese character or mark: the English mark after it becomes Chinese


@functools.lru_cache(maxsize=1)
def _phrases() -> list[tuple[re.Pattern[str], str]]:
    """(regex of a phrase, its Chinese), the phrases with the most fixed words first. A full stop ends a sentence
    only before a space or the end ('See stdout.log.')."""
    out = []
    for en, zh in REASON_PHRASES.items():
        parts, pos = [], 0
        for m in _SLOT.finditer(en):
            last = m.end() == len(en)  # a slot that ends its phrase ends where the sentence or the text does
            parts += [re.escape(en[pos:m.start()]), f"(?P<{m.group(1)}>.*?)" + (_END if last else "")]
            pos = m.end()
        tail = re.escape(en[pos:])
        parts.append(tail[:-2] + r"\.(?=\s|$)" if tail.endswith(r"\.") else tail)
        out.append((re.compile("".join(parts), re.DOTALL), zh, len(_SLOT.sub("", en))))
    return [(p, zh) for p, zh, _ in sorted(out, key=lambda t: -t[2])]


def zh_reason(text: str) -> str:
    """A run's plain end reason in Chinese: each known phrase replaced, the sentence marks made Chinese; a part no
    phrase knows (a runtime value: a file, a signal, a library's message) is kept as written."""
    for pattern, zh in _phrases():
        text = pattern.sub(lambda m, zh=zh: zh.format(**m.groupdict()), text)
    text = re.sub(rf"(?<={_CJK})\s*;\s*", "；", text)
    text = re.sub(rf"(?<={_CJK})\.(?=\s|$)", "。", text)
    return re.sub(r"(?<=[。；：])\s+", "", text).replace("。。", "。")
