"""Why a run ended: each end reason's words by code, in English and Chinese.

The engine and the job runner write a run's end reason as codes with values (studio/runs/reasons.py): the English
text made from the words here (what the CLI prints and status.json's "reason" keeps for older readers) and, beside
it, the parts (code, values) a page words in its own language. A reason of several phrases ("the training process
was killed ..." + "The last checkpoint ... is kept ...") is several parts, each worded here once.

``REASONS``: code -> (English, Chinese), the words on every surface; ``FIXES``: what to do, for a reason that
says it after what happened; ``PAGE_REASONS``: the page's words where they differ (a page names the Settings fields
by their labels, where the command line names config keys). Besides a code's own values, ``{f_<key>}`` is the
Settings tab's label of that config key and ``{b_resume}`` / ``{b_start}`` the Train tab's buttons, filled in for
the language shown, so a reason can never name a button the page lacks. A value of a closed set written by the
system in English (a full disk's error) is worded by ``TERMS``. tests/words/test_end_reason_words.py holds every entry to
the rule (both languages, the same values, no English in the page's Chinese) and every code written in studio/ to
having an entry.
"""
from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from .catalog import FIELD_LABELS, UI

Pair = tuple[str, str]  # (English, Chinese)
LANGS = ("en", "zh")
SURFACES = ("cli", "page")

_FREE_SPACE = ("free some space (old runs, exports, checkpoints), then press {b_resume} or {b_start} again",
               "腾出一些磁盘空间（旧的运行、导出文件、检查点），然后再按{b_resume}或{b_start}")
_KEEP_GOING = ("resume continues from here", "按{b_resume}会从这里接着训练")

REASONS: dict[str, Pair] = {
    # ---- the engine (studio/engine/run.py)
    "stopped": ("stopped on request", "应请求停止"),  # the end event's: who asked, if anyone
    "stopped_by": ("stopped on request by {who}", "应 {who} 的请求停止"),
    "stopped_at_step": (f"stopped on request at step {{step}}; {_KEEP_GOING[0]}",
                        f"应请求在第 {{step}} 步停止；{_KEEP_GOING[1]}"),
    "stopped_by_at_step": (f"stopped on request by {{who}} at step {{step}}; {_KEEP_GOING[0]}",
                           f"应 {{who}} 的请求在第 {{step}} 步停止；{_KEEP_GOING[1]}"),
    "keyboard": ("interrupted from the keyboard", "在终端里用键盘中断"),
    "internal_error": ("Training stopped with an internal error ({kind}: {detail}); see error.log",
                       "训练因内部错误而停止（{kind}：{detail}）；详见 error.log"),
    "card_oom": ("The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller Batch size / Max "
                 "tokens per example (cutoff_len), or enable DeepSpeed offload (see the memory estimate)",
                 "显卡内存不足。请打开梯度检查点（gradient_checkpointing），使用 QLoRA，或调小批大小/每条样本最大 token "
                 "数（cutoff_len），或启用 DeepSpeed 卸载（参见内存估算）"),
    "disk_full_training": ("The disk is full ({os_error}) while writing the base model, a checkpoint or the model",
                           "磁盘已满（{os_error}），发生在写入基础模型、检查点或模型时"),
    # ---- the job runner (studio/runs/jobs.py, processes.py, run_dir.py)
    "disk_full_ending": ("The disk is full ({os_error}) while recording the end of the run",
                         "磁盘已满（{os_error}），发生在记录运行结束时"),
    "before_that": ("Before that:", "在此之前："),
    "start_failed": ("could not start the training process: {detail}", "无法启动训练进程：{detail}"),
    "runner_lost": ("the job runner lost track of the run ({detail}); see the log",
                    "任务管理器与这次运行失去了联系（{detail}）；详见日志"),
    "stopped_early": ("stopped on request before the first checkpoint.", "应请求在第一个检查点之前停止。"),
    "stopped_early_by": ("stopped on request by {who} before the first checkpoint.",
                         "应 {who} 的请求在第一个检查点之前停止。"),
    "no_result": ("the training process ended without reporting a result.", "训练进程结束了，但没有报告结果。"),
    "killed": ("the training process was killed ({signal}, signal {n}).", "训练进程被终止了（{signal}，信号 {n}）。"),
    # a signal with no name: the CLI's words say its number twice, as they always have
    "killed_unnamed": ("the training process was killed (signal {n}, signal {n}).", "训练进程被终止了（信号 {n}）。"),
    "oom_killer": ("If nobody stopped it, the system probably ran out of memory (the kernel's OOM killer).",
                   "如果没有人停止它，多半是系统内存不足（被内核的 OOM 机制终止）。"),
    "exited_with_line": ("the training process exited with code {rc} before finishing: {line}. See {log}.",
                         "训练进程在完成之前退出了，退出码 {rc}：{line}。详见 {log}。"),
    "exited": ("the training process exited with code {rc} before finishing. See {log}.",
               "训练进程在完成之前退出了，退出码 {rc}。详见 {log}。"),
    "checkpoint_kept": ("The last checkpoint ({ckpt}) is kept: press {b_resume} to continue from it.",
                        "最新的检查点（{ckpt}）已保留：按{b_resume}可从它接着训练。"),
    "no_checkpoint": ("No checkpoint was written yet, so a resume would start over.",
                      "还没有写出任何检查点，所以继续训练会从头开始。"),
    "process_gone": ("interrupted: the training process is gone (the studio or the machine restarted while it "
                     "trained).", "已中断：训练进程不在了（训练期间工作室或机器重启过）。"),
    "resume_from": ("Press {b_resume} to continue from {ckpt}.", "按{b_resume}可从 {ckpt} 接着训练。"),
    "status_rebuilt": ("status.json could not be read; the state was rebuilt from the run's log",
                       "status.json 无法读取；状态已根据运行日志重建"),
    "status_rebuilt_kept": ("status.json could not be read (kept as {name}); the state was rebuilt from the run's log",
                            "status.json 无法读取（已另存为 {name}）；状态已根据运行日志重建"),
}

PAGE_REASONS: dict[str, Pair] = {
    "card_oom": ("The card ran out of memory. Turn on {f_gradient_checkpointing}, use QLoRA or a smaller "
                 "{f_per_device_train_batch_size} / {f_cutoff_len}, or enable DeepSpeed offload (see the memory "
                 "estimate)",
                 "显卡内存不足。请打开{f_gradient_checkpointing}，使用 QLoRA，或调小{f_per_device_train_batch_size}"
                 "/{f_cutoff_len}，或启用 DeepSpeed 卸载（参见内存估算）"),
}

# what to do, where a reason says it after what happened ("The disk is full ...; free some space ...")
FIXES: dict[str, Pair] = {"disk_full_training": _FREE_SPACE, "disk_full_ending": _FREE_SPACE}

# values written by the system in English, per placeholder: {name: {value: (English, Chinese)}}
TERMS: dict[str, dict[str, Pair]] = {
    "os_error": {"No space left on device": ("No space left on device", "设备上没有剩余空间"),
                 "Disk quota exceeded": ("Disk quota exceeded", "超出磁盘配额")},
}
_BUTTONS = {"b_resume": "train.resume", "b_start": "train.start"}


class UnknownReason(RuntimeError):
    """A code with no words here, or values that do not fit them: a bug of whoever wrote the reason."""


def what_and_fix(code: str, surface: str = "cli") -> tuple[Pair, Pair | None]:
    """The (English, Chinese) of what happened by ``code`` on ``surface``, and of what to do where the reason says
    it; ``UnknownReason`` when there are no words."""
    if surface == "page" and code in PAGE_REASONS:
        return PAGE_REASONS[code], FIXES.get(code)
    try:
        return REASONS[code], FIXES.get(code)
    except KeyError:
        raise UnknownReason(f"no words for the end reason {code!r} in studio/words/end_reasons.py") from None


def words_of(code: str, surface: str = "cli") -> Pair:
    """The (English, Chinese) of ``code`` on ``surface``, what to do included."""
    what, fix = what_and_fix(code, surface)
    return what if fix is None else (f"{what[0]}; {fix[0]}", f"{what[1]}；{fix[1]}")


def placeholders(text: str) -> set[str]:
    """The value names ``text`` formats."""
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def page_names(lang: str) -> dict[str, str]:
    """``f_<key>`` and ``b_<button>`` as ``lang`` shows them (quoted in Chinese, as the page's other sentences)."""
    i = LANGS.index(lang)
    names = {f"f_{k}": pair[i] for k, pair in FIELD_LABELS.items()}
    names.update({b: UI[key][i] for b, key in _BUTTONS.items()})
    return {k: f"“{v}”" if lang == "zh" else v for k, v in names.items()}


def phrase(code: str, values: Mapping[str, Any], lang: str = "en", surface: str = "cli") -> str:
    """One part of a reason in ``lang`` for ``surface``."""
    i = LANGS.index(lang) if lang in LANGS else 0
    vals = {k: TERMS[k].get(v, (v, v))[i] if k in TERMS and isinstance(v, str) else v for k, v in values.items()}
    try:
        return words_of(code, surface)[i].format(**page_names(LANGS[i]), **vals)
    except (KeyError, IndexError, ValueError) as exc:
        raise UnknownReason(f"the values {sorted(values)} do not fit the words of {code!r}: {exc!r}") from None


def sentence(phrases: list[str], lang: str = "en") -> str:
    """The phrases of one reason as one text: each after a space (Chinese: none), a phrase that ends without a
    mark closed by a full stop first ("...then press Resume or Start again. Before that: ...")."""
    out = ""
    for p in phrases:
        if out:
            if lang == "zh":
                out += "" if out.endswith(("。", "；", "：")) else "。"
            else:
                out += ("" if out.endswith((".", ";", ":")) else ".") + " "
        out += p
    return out
