"""The words of errors raised below the UI, in the page's language.

A coded error (``StudioError.of(code, **values)``: all of studio/data and the workspace's path checks) is worded
by its code from the catalog (studio/words/errors.py), in the page's language and with the page's fix: nothing
here matches its sentences.

The errors not yet coded (studio/models, engine, evaluation, memory, ...) are still written once, in English,
where they are raised; the page shows ``page_message`` (the fix in the page's words, ``page_fix``), and a Chinese
page finds their Chinese in ``PAGE_ERRORS``: the English text exactly as the error writes it, with ``{name}``
where the error puts a runtime value, and its Chinese. Every ``page_fix`` written in studio/ has its entry here
(tests/ui/test_page_messages.py scans them all). These entries go as their subsystems move to codes.
"""
from __future__ import annotations

import functools
import re
from typing import Any

from .catalog import UI, msg

PAGE_ERRORS: dict[str, str] = {
    # ---- page fixes (StudioError.page_fix): one for each in studio/ (tests/ui/test_page_messages.py)
    "correct the listed fields on the Settings tab": "在“设置”页改正列出的字段",
    "improve it again: the page picks a new name": "再改进一次：页面会选一个新名字",
    "choose auto or sft as the method": "方法请选择 auto 或 sft",
    "untick Trust remote code on the Settings tab; only whoever runs the studio can allow a model's own code to run "
    "on the server": "在“设置”页取消勾选“信任远程代码”；只有运行本工作室的人才能允许模型自带的代码在服务器上运行",
    "ask whoever runs the studio to reinstall the package {package}, or pick another Base model on the Settings tab":
        "请运行本工作室的人重新安装软件包 {package}，或在“设置”页选择另一个“基础模型”",
    "ask whoever runs the studio to install the package {package} (README: built-in models), or pick another Base "
    "model on the Settings tab":
        "请运行本工作室的人安装软件包 {package}（见 README 的内置模型一节），或在“设置”页选择另一个“基础模型”",
    "press Download under Model on the Settings tab ({mb} MB), or pick another Base model":
        "在“设置”页的模型下按“下载”（{mb} MB），或选择另一个“基础模型”",
    "check that this machine reaches PyPI (pip's index), then press Download again, or ask whoever runs the studio "
    "to run install.sh": "检查本机能否访问 PyPI（pip 的软件包索引），然后再按一次“下载”；或请运行本工作室的人运行 install.sh",
    "These settings are already queued (or just started) by this login": "这组设置已经由本登录排队（或刚刚开始）",
    "wait for that run, or change a setting to queue another one": "请等待那次运行，或修改某项设置后再排队另一次",
    "This login already has {n} runs waiting in the queue, the most one login may queue":
        "本登录已有 {n} 次运行在队列中等待，这是一个登录最多可排队的数量",
    "wait until one of them starts, or clear the queue on the Train tab": "请等其中一次开始，或在“训练”页清空队列",
    "pick a finished run on the Evaluate tab": "在“评估”页选择一个已完成的运行",
    "The {what} '{name}' holds a link to a file outside the studio's folders ({names})":
        "{what}“{name}”中有一个指向本工作室文件夹之外的链接（{names}）",
    "remove the link, or copy the file itself into the folder; the studio never reads, copies or exports through a "
    "link that leads out of its folders": "请删除这个链接，或把文件本身复制到该文件夹中；本工作室从不通过指向其文件夹之外的链接读取、复制或导出",
    "ask whoever runs the studio to allow an NVMe folder, or choose another DeepSpeed setting":
        "请运行本工作室的人允许一个 NVMe 文件夹，或选择另一个 DeepSpeed 设置",
    "The NVMe offload folder (offload_nvme_path) can only be a folder the operator allowed, and none was allowed":
        "NVMe 卸载文件夹（offload_nvme_path）只能是运行本工作室的人允许的文件夹，而目前没有允许任何文件夹",
    "'{path}' is not a complete checkpoint": "“{path}”不是一个完整的检查点",
    "pick a checkpoints/checkpoint-N folder of a run, or 'last'": "选择某个运行的 checkpoints/checkpoint-N 文件夹，或填 'last'",
    "set Method to LoRA, or Quantization bits (QLoRA) to none": "把“微调方法”设为 LoRA，或把“量化位数（QLoRA）”设为 none",
    "set Quantization bits (QLoRA) to 4 or 8": "把“量化位数（QLoRA）”设为 4 或 8",
    "resume with {n} processes (Processes (cards) on the Settings tab)":
        "用 {n} 个进程继续训练（“设置”页的“进程数（显卡数）”）",
    "export with Format set to GGUF f16 on the Evaluate tab, then run llama.cpp's quantizer (llama-quantize, type "
    "Q4_K_M) on that model.gguf":
        "在“评估”页把“格式”设为 GGUF f16 导出，然后用 llama.cpp 的量化工具（llama-quantize，类型 Q4_K_M）处理该 model.gguf",
    "export a Model folder instead (Format on the Evaluate tab, with Merge the LoRA adapter into a standalone model "
    "ticked) and convert it with llama.cpp's convert_hf_to_gguf.py":
        "改为导出“模型文件夹”（“评估”页的“格式”，并勾选“把 LoRA 适配器合并为独立模型”），再用 llama.cpp 的 "
        "convert_hf_to_gguf.py 转换它",
    "export a Model folder instead (Format on the Evaluate tab, with Merge the LoRA adapter into a standalone model "
    "ticked) and convert it with llama.cpp":
        "改为导出“模型文件夹”（“评估”页的“格式”，并勾选“把 LoRA 适配器合并为独立模型”），再用 llama.cpp 转换它",
    "export a Model folder instead (Format on the Evaluate tab, with Merge the LoRA adapter into a standalone model "
    "ticked)": "改为导出“模型文件夹”（“评估”页的“格式”，并勾选“把 LoRA 适配器合并为独立模型”）",
    "check that node's log, then start all nodes again, resuming from the last checkpoint":
        "查看那个节点的日志，然后重新启动所有节点，从最新的检查点继续",
    # ---- what / why of the errors that end a run (shown as its reason on the Train tab)
    "Lost contact with another process of this multi-process run (a node stopped, was killed, or the network "
    "between nodes failed)": "与这次多进程运行的另一个进程失去了联系（某个节点停止了、被终止了，或节点之间的网络出了故障）",
    "Detail: {detail}": "详情：{detail}",
    # ---- fixes that errors outside studio/data share with its words (engine/arguments.py, autoconfig.py)
    "fix the file": "改正这个文件",
    "use one of: {choices}": "请使用其中之一：{choices}",
}

_SLOT = re.compile(r"\{(\w+)\}")


@functools.lru_cache(maxsize=1)
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    """(regex of an English template, its Chinese), the templates with the most fixed words first."""
    out = []
    for en, zh in PAGE_ERRORS.items():
        parts, pos = [], 0
        for m in _SLOT.finditer(en):
            parts += [re.escape(en[pos:m.start()]), f"(?P<{m.group(1)}>.*?)"]
            pos = m.end()
        parts.append(re.escape(en[pos:]))
        out.append((re.compile("".join(parts), re.DOTALL), zh, len(_SLOT.sub("", en))))
    return [(p, zh) for p, zh, _ in sorted(out, key=lambda t: -t[2])]


def zh_text(text: str) -> str | None:
    """``text`` (an error's what, why or page fix, as raised below the UI) in Chinese; None when not in the table."""
    text = text.strip().rstrip(".")
    for pattern, zh in _patterns():
        m = pattern.fullmatch(text)
        if m:
            return zh.format(**m.groupdict())
    return None


def _tab_label(key: str, lang: str) -> str | None:
    """A Data tab label in ``lang`` (a coded error's ``{role_label}``); None for a key the page has no label for."""
    return msg(key, lang) if key in UI else None


def page_message(exc: Any, lang: str = "en") -> str:
    """What the page shows for ``exc`` (a StudioError: this package sits below studio/errors.py and names no
    class of it) in ``lang``. A coded error (``StudioError.of``) is worded by its code
    (studio/words/errors.py); an older one is ``exc.page_message``, in Chinese for a Chinese page (each part
    that ``PAGE_ERRORS`` knows; the others as written)."""
    if exc.coded:
        return exc.text(lang, "page", labels=_tab_label)
    if lang != "zh":
        return exc.page_message
    fix = exc.fix if exc.page_fix is None else exc.page_fix
    out = ""
    for part, lead in ((exc.what, ""), (exc.why, ""), (fix, "解决办法：")):
        if not part:
            continue
        zh = zh_text(part)
        if zh is not None:
            out += lead + zh + "。"
        else:
            out += (" " if out and not out.endswith("。") else "") + lead + part.rstrip(".") + "."
    return out
