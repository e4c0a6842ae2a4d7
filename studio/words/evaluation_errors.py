"""The words of the errors met checking, trying and exporting a trained model: the sentiment check and batch
prediction (studio/evaluation/evaluate.py, metrics.py, inference.py), the caps on what a request may ask
(limits.py), full vs quantized and the deploy report (compare.py, deploy_report.py), and the exports: a model
folder, a quantized model, a GGUF and its Ollama Modelfile (export.py, quantize.py, gguf_export.py, modelfile.py).

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled.
"""
from __future__ import annotations

from typing import Any

from .entry import error

_TOO_LONG_FIX = ("shorten it; a fine-tuned model only sees its context window anyway",
                 "请缩短它；微调后的模型反正只能看到其上下文窗口之内的内容")
_LABELS_FIX = ("use rows whose output is the label, e.g. positive / negative",
               "请使用 output 就是标签的行，例如 积极 / 消极")
_TEMPLATE_FIX = ("use another template", "请换一个模板")
# the GGUF export that cannot write this model: a model folder instead, converted by llama.cpp's own script
_MERGED = "export the merged model folder instead (--merge) and convert it with llama.cpp"
_MERGED_ZH = "改为导出合并后的模型文件夹（--merge），再用 llama.cpp 转换它"
_FOLDER_PAGE = ("export a Model folder instead (Format on the Evaluate tab, with Merge the LoRA adapter into a "
                "standalone model ticked)",
                "改为导出“模型文件夹”（“评估”页的“格式”，并勾选“把 LoRA 适配器合并为独立模型”）")
_CONVERT = " and convert it with llama.cpp's convert_hf_to_gguf.py"
_CONVERT_ZH = "，再用 llama.cpp 的 convert_hf_to_gguf.py 转换它"
_FOLDER_AND_CONVERT = (_FOLDER_PAGE[0] + " and convert it with llama.cpp", _FOLDER_PAGE[1] + "，再用 llama.cpp 转换它")
_FOLDER_AND_CONVERT_SCRIPT = (_FOLDER_PAGE[0] + _CONVERT, _FOLDER_PAGE[1] + _CONVERT_ZH)
_BYTE_LEVEL_ONLY = ("GGUF export writes byte-level BPE vocabularies, and models prepared from a GGUF",
                    "GGUF 导出只能写出字节级字节对编码词表，以及由 GGUF 准备的模型")
_SPLIT_ROWS = ("split it into files of at most {limit:,} rows", "请把它拆成每个不超过 {limit:,} 行的文件")


def _too_long(what_en: str, what_zh: str) -> dict[str, tuple[str, str]]:
    return {"what": (f"The {what_en} is {{n:,}} characters long, over the limit of {{limit:,}}",
                     f"{what_zh}长 {{n:,}} 个字符，超过了上限 {{limit:,}}"), "fix": _TOO_LONG_FIX}


ENTRIES: list[Any] = [
    # ---- what one request may ask (limits.py)
    error("eval.prompt_too_long", **_too_long("prompt", "提示")),
    error("eval.message_too_long", **_too_long("message", "消息")),
    error("eval.text_too_long", **_too_long("text", "文本")),
    error("eval.max_new_tokens", what=("Max new tokens must be between 1 and {limit} (got {got})",
                                       "“最多生成 token 数”必须在 1 到 {limit} 之间（实际是 {got}）"),
          fix=("lower Max new tokens", "请调低“最多生成 token 数”")),
    error("eval.file_too_large", what=("'{file}' is {mb:.1f} MB, over the limit of {limit:g} MB for a file to predict "
                                       "or check", "“{file}”有 {mb:.1f} MB，超过了待预测或待检查文件 {limit:g} MB 的上限"),
          fix=("split it into files of at most {limit:g} MB",
               "请把它拆成每个不超过 {limit:g} MB 的文件")),
    error("eval.too_many_rows",
          what=("The file has {n:,} rows, over the limit of {limit:,} for one prediction or check",
                "文件有 {n:,} 行，超过了一次预测或检查 {limit:,} 行的上限"),
          fix=_SPLIT_ROWS),
    error("eval.too_many_rows_page", what=("The file has {n:,} rows, over this page's limit of {limit:,} for one "
                                           "prediction or check", "文件有 {n:,} 行，超过了本页面一次预测或检查 {limit:,} 行的上限"),
          fix=_SPLIT_ROWS),
    # ---- the model a request is answered by (inference.py)
    error("eval.no_run", what=("No run is selected", "没有选择运行"),
          fix=("pick a finished run in the list (refresh it after training)",
               "请在列表中选择一个已完成的运行（训练之后刷新一下列表）")),
    error("eval.no_run_export", what=("No run is selected", "没有选择运行"),
          fix=("pick a finished run first", "请先选择一个已完成的运行")),
    error("eval.busy_loading", what=("The model is still loading for another request", "模型仍在为另一个请求加载"),
          fix=("try again in a moment (a large model takes a while to load the first time)",
               "请稍后再试（大模型第一次加载需要一些时间）")),
    error("eval.busy", what=("The model is busy answering another request", "模型正忙于回答另一个请求"),
          fix=("try again in a moment (one generation runs at a time per model)",
               "请稍后再试（每个模型一次只进行一个生成）")),
    error("eval.no_base", what=("This model folder does not say which base model it came from",
                                "这个模型文件夹没有说明它来自哪个基础模型"),
          fix=("pick a run folder to compare with its base", "请选择一个运行文件夹，以便与它的基础模型比较")),
    error("eval.empty_prompt", what=("The prompt is empty", "提示为空"),
          fix=("type an instruction to send to the model", "请输入要发给模型的指令")),
    error("eval.no_file", what=("No file to predict", "没有要预测的文件"),
          fix=("upload a .jsonl or .csv file first", "请先上传一个 .jsonl 或 .csv 文件")),
    error("eval.run_labels", what=("This run has fewer than two labels to choose from", "这个运行可供选择的标签少于两个"),
          fix=("train it on rows whose output is a label (e.g. positive / negative)",
               "请用 output 是标签的行来训练它（例如 积极 / 消极）")),
    error("eval.no_text", what=("'{file}' has no text to predict", "“{file}”中没有要预测的文本"),
          fix=("give a file with one text per row", "请提供每行一条文本的文件")),
    error("eval.export_format", what=("Unknown export format '{format}'", "未知的导出格式“{format}”"),
          fix=("choose one of: {formats}", "请选择其中之一：{formats}")),
    error("eval.export_name", what=("The export name is empty", "导出名称为空"),
          fix=("type a folder name for the export", "请为导出输入一个文件夹名")),
    # ---- the sentiment check and batch prediction (evaluate.py, metrics.py)
    error("eval.data_missing", what=("Data file '{file}' does not exist", "数据文件“{file}”不存在"),
          fix=("check the path", "请检查路径")),
    error("eval.no_rows", what=("There are no rows to evaluate", "没有可以评估的行"),
          fix=("give a labelled file or a run with a validation split",
               "请提供一个带标签的文件，或一个留有验证集的运行")),
    error("eval.mode", what=("Unknown evaluation mode '{mode}'", "未知的评估模式“{mode}”"),
          fix=("use score or generate", "请使用“打分”或“生成”模式")),
    error("eval.no_gold", what=("No row's output is one of the labels {labels}", "没有哪一行的 output 是标签 {labels} 之一"),
          fix=("check the labels or the output column", "请检查标签或 output 列")),
    error("eval.no_base_model", what=("Cannot find the base model of this model folder", "找不到这个模型文件夹的基础模型"),
          fix=("pick a run folder", "请选择一个运行文件夹")),
    error("eval.no_rows_predict", what=("There are no rows to predict", "没有要预测的行"),
          fix=("give a file with at least one row", "请提供至少有一行的文件")),
    error("eval.not_run", what=("'{folder}' is not a run folder (no config.yaml)", "“{folder}”不是运行文件夹（没有 config.yaml）"),
          fix=("pick a folder under runs/", "请选择 runs/ 下的一个文件夹")),
    error("eval.no_val", what=("This run kept no validation split ({f_val_size} is 0)", "这个运行没有留出验证集（{f_val_size}为 0）"),
          fix=("upload a labelled file to check it on, or train with {f_val_size} such as 0.1",
               "请上传一个带标签的文件来检查它，或用{f_val_size}（例如 0.1）重新训练")),
    error("eval.few_labels", what=("The data has {n} distinct label(s); a sentiment check needs at least 2",
                                   "数据中只有 {n} 种不同的标签；情感分类检查至少需要 2 种"),
          fix=_LABELS_FIX),
    error("eval.not_labels", what=("The data has {n} distinct outputs, which does not look like labels",
                                   "数据中有 {n} 种不同的 output，看起来不像标签"),
          fix=("use the sentiment check on labelled rows (output = the label), or use the generation "
               "playground for free-text answers",
               "请对带标签的行（output 就是标签）做情感分类检查；自由文本的回答请用生成试一试")),
    # ---- full vs quantized (compare.py) and the deploy report (deploy_report.py)
    error("eval.already_quantized", what=("'{name}' is already quantized", "“{name}”已经是量化模型"),
          fix=("pick a run or a full/merged export as the full model",
               "请选择一个运行或完整/合并后的导出作为完整模型")),
    error("eval.not_quantized", what=("'{name}' is not a 4-bit or 8-bit export", "“{name}”不是 4 位或 8 位的导出"),
          fix=("export the run with 'Quantize' 4 or 8 first, or pick 4-bit / 8-bit to quantize now",
               "请先用“量化” 4 或 8 导出这个运行，或选择 4 位 / 8 位现在量化")),
    error("eval.quantized_unloadable", what=("Could not load the quantized model '{name}'", "无法加载量化模型“{name}”"),
          why=("{detail}", "出错信息：{detail}"),
          fix=("check that bitsandbytes is installed and the folder is complete",
               "请检查 bitsandbytes 是否已安装、文件夹是否完整")),
    error("eval.quantized_missing", what=("Quantized model folder '{folder}' does not exist", "量化模型文件夹“{folder}”不存在"),
          fix=("pick a quantized export or 4-bit / 8-bit", "请选择一个量化导出，或选择 4 位 / 8 位")),
    error("eval.not_finished", what=("'{run}' is not a finished run", "“{run}”不是已完成的运行"),
          fix=("pick a run folder (runs/<name>) whose training finished; the report measures that "
               "run's model in each deployable form",
               "请选择一个训练已完成的运行文件夹（runs/<name>）；报告会测量该运行的模型在每种可部署形式下的表现")),
    error("eval.no_rows_report", what=("There are no rows to measure the forms on", "没有可用来测量各种形式的行"),
          fix=("give a labelled file, or a run that kept a validation split",
               "请提供一个带标签的文件，或一个留有验证集的运行")),
    error("eval.report_forms", what=("Unknown deploy report forms {forms}", "未知的部署报告形式 {forms}"),
          fix=("use 'full' and any of: {others}", "请使用“full”，再加上其中任意几种：{others}")),
    error("eval.report_full", what=("The report needs the full form", "报告需要完整形式（full）"),
          fix=("use 'full' and any of: {others}", "请使用“full”，再加上其中任意几种：{others}")),
    # ---- a model folder, a quantized model (export.py, quantize.py)
    error("export.unfinished", what=("Run '{run}' has no finished model to export", "运行“{run}”没有可导出的已完成模型"),
          fix=("wait for training to finish (or resume it); checkpoints are not exported",
               "请等待训练完成（或继续训练）；检查点不会被导出")),
    error("export.nothing", what=("Nothing to export at '{path}'", "“{path}”处没有可导出的内容"),
          fix=("pick a run folder (runs/<name>) or a model/adapter folder",
               "请选择一个运行文件夹（runs/<name>）或模型/适配器文件夹")),
    error("export.target_file", what=("Export target '{path}' is a file", "导出目标“{path}”是一个文件"),
          fix=("choose a folder name", "请选择一个文件夹名")),
    error("export.exists_not_ours", what=("Export folder '{path}' already exists and was not made by an export",
                                          "导出文件夹“{path}”已经存在，且不是由导出生成的"),
          fix=("choose a new folder name; the studio only replaces its own earlier exports",
               "请换一个新的文件夹名；本工作室只会替换它自己之前的导出")),
    error("export.exists", what=("Export folder '{path}' already exists", "导出文件夹“{path}”已经存在"),
          fix=("choose another name, or allow overwriting to replace that earlier export",
               "请换一个名字，或允许覆盖以替换之前的那次导出")),
    error("export.no_adapter", what=("'{source}' holds no LoRA adapter to keep beside the quantized base",
                                     "“{source}”中没有可以保留在量化基础模型旁边的 LoRA 适配器"),
          fix=("keep the adapter only for LoRA/QLoRA runs; other models are quantized whole",
               "只有 LoRA/QLoRA 运行才能保留适配器；其他模型会被整体量化")),
    error("export.bits", what=("Quantized export supports 4 or 8 bits, not {bits}", "量化导出只支持 4 位或 8 位，不支持 {bits}"),
          fix=("use 4 (NF4) or 8", "请使用 4（NF4）或 8")),
    # ---- a GGUF for llama.cpp (gguf_export.py)
    error("export.gguf_type", what=("Unknown GGUF type '{type}'", "未知的 GGUF 类型“{type}”"),
          fix=("use one of: {types}", "请使用其中之一：{types}")),
    error("export.gguf_k_quant", what=("GGUF q4_k_m cannot be written here", "这里无法写出 GGUF q4_k_m"),
          why=("the gguf Python package reads Q4_K but cannot write it, and Q4_K_M's mix of types per tensor is "
               "llama-quantize's; a q4_k_m file made any other way would not be one",
               "gguf 这个 Python 包能读取 Q4_K 但不能写出它，而且 Q4_K_M 给每个张量混用的类型由 llama-quantize 决定；"
               "用其他方式做出的 q4_k_m 文件并不是真正的 q4_k_m"),
          fix=("export f16 (python -m studio export RUN --gguf f16 --out DIR), then run llama.cpp's quantizer on it: "
               "llama-quantize DIR/model.gguf DIR/model-q4_k_m.gguf Q4_K_M (and point the Modelfile's FROM at the "
               "new file)",
               "先导出 f16（python -m studio export RUN --gguf f16 --out DIR），再用 llama.cpp 的量化工具处理它："
               "llama-quantize DIR/model.gguf DIR/model-q4_k_m.gguf Q4_K_M（并把 Modelfile 中的 FROM 指向新文件）"),
          page_fix=("export with Format set to GGUF f16 on the Evaluate tab, then run llama.cpp's quantizer "
                    "(llama-quantize, type Q4_K_M) on that model.gguf",
                    "在“评估”页把“格式”设为 GGUF f16 导出，然后用 llama.cpp 的量化工具（llama-quantize，类型 Q4_K_M）"
                    "处理该 model.gguf")),
    error("export.gguf_no_weights", what=("'{folder}' holds no .safetensors weights to convert",
                                          "“{folder}”中没有可转换的 .safetensors 权重"),
          fix=("export the run again", "请重新导出这个运行")),
    error("export.gguf_arch", what=("GGUF export does not know the '{arch}' architecture", "GGUF 导出不认识“{arch}”架构"),
          why=("supported: llama (SmolLM2, tiny-demo), gemma3 (Gemma 3) and qwen2",
               "支持的架构：llama（SmolLM2、tiny-demo）、gemma3（Gemma 3）和 qwen2"),
          fix=("export the merged model folder instead (python -m studio export RUN --merge --out DIR)" + _CONVERT,
               "改为导出合并后的模型文件夹（python -m studio export RUN --merge --out DIR）" + _CONVERT_ZH),
          page_fix=_FOLDER_AND_CONVERT_SCRIPT),
    error("export.gguf_tensor",
          what=("GGUF export has no name for the tensor '{tensor}'", "GGUF 导出没有张量“{tensor}”对应的名字"),
          fix=(_MERGED, _MERGED_ZH),
          page_fix=_FOLDER_AND_CONVERT),
    error("export.gguf_pre_tokenizer",
          what=("GGUF export does not know this tokenizer's way of splitting text", "GGUF 导出不认识这个分词器切分文本的方式"),
          why=("pre-tokenizer {spec}", "预分词器 {spec}"),
          fix=(_MERGED + "'s convert_hf_to_gguf.py", "改为导出合并后的模型文件夹（--merge）" + _CONVERT_ZH),
          page_fix=_FOLDER_AND_CONVERT_SCRIPT),
    error("export.gguf_vocab", what=_BYTE_LEVEL_ONLY,
          why=("this tokenizer is {kind}", "这个分词器是 {kind}"),
          fix=(_MERGED, _MERGED_ZH),
          page_fix=_FOLDER_AND_CONVERT),
    error("export.gguf_vocab_fallback", what=_BYTE_LEVEL_ONLY,
          why=("this tokenizer is {kind} with byte fallback (sentencepiece style)", "这个分词器是带字节回退的 {kind}"),
          fix=(_MERGED, _MERGED_ZH),
          page_fix=_FOLDER_AND_CONVERT),
    error("export.gguf_config", what=("The GGUF file cannot describe this model exactly", "GGUF 文件无法准确描述这个模型"),
          why=("{detail}", "配置不一致：{detail}"),
          fix=("export the merged model folder instead (--merge)", "改为导出合并后的模型文件夹（--merge）"),
          page_fix=_FOLDER_PAGE),
    # ---- its Ollama Modelfile (modelfile.py)
    error("export.template_drops_text", what=("Template '{name}' drops the message text", "模板“{name}”会丢掉消息文本"),
          fix=_TEMPLATE_FIX),
    error("export.template_quotes",
          what=("Template '{name}' cannot be written into a Modelfile", "模板“{name}”无法写入 Modelfile"),
          why=('its text contains """', '它的文本中含有 """'),
          fix=_TEMPLATE_FIX),
    error("export.no_modelfile",
          what=("This run's prompt format (the model's own chat template) cannot be written as an Ollama Modelfile",
                "这个运行的提示格式（模型自带的对话模板）无法写成 Ollama 的 Modelfile"),
          why=("the tokenizer's Jinja template renders like none of the built-in templates, and only those have a "
               "Go-template equivalent",
               "分词器自带的对话模板渲染出来与任何一个内置模板都不同，而只有内置模板才能写成 Ollama 所用的模板"),
          fix=("export the GGUF without the Modelfile (llama.cpp reads the chat template embedded in the GGUF), or "
               "train with a named template (studio, chatml, alpaca, gemma, llama3, ...)",
               "导出不带 Modelfile 的 GGUF（llama.cpp 会读取 GGUF 中内嵌的对话模板），或用一个有名字的模板训练"
               "（studio、chatml、alpaca、gemma、llama3 等）")),
    # a typed text with a character UTF-8 cannot encode (a lone surrogate, sent by a script or a broken paste)
    *(entry for en, zh in (("prompt", "提示"), ("message", "消息"), ("text", "文本"))
      for entry in error(f"eval.{en}_not_unicode",
                         what=(f"The {en} holds a character that is not text (at position {{pos}})",
                               f"{zh}在第 {{pos}} 个字符处含有不是文字的字符"),
                         fix=("type or paste it again", "请重新输入或粘贴"))),
    # the generation check (generation_check.py, deploy_report.py)
    error("eval.no_references", what=("No row has a reference answer to compare with", "没有哪一行带有可比较的参考答案"),
          fix=("give a file whose output column holds the expected answers, or a run with a validation split",
               "请提供 output 列写着期望答案的文件，或一个留有验证集的运行")),
]
