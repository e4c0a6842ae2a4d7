"""The words of a run configuration's problems (studio/config/checks.py): each code's sentence in English and Chinese.

A problem names settings; ``{f_<key>}`` stands for the setting ``key``, written as the surface names it: the config
key on the command line and in YAML (``learning_rate``), the Settings tab's label on the page ('Learning rate',
“学习率”). So the English is written once here, for both surfaces, and a Chinese page shows the problem in Chinese.
``{q_<key>}`` is the same setting where the command line quotes it ('learning_rate'; the page's label is quoted
already). ``{name}`` is a value, formatted with str.format; a literal brace is doubled.
Every problem of a ConfigError is made from a code here (studio/config/checks.py ``problem``): the checks of
checks.py, the unknown keys and wrong types of run_config.py, the LLaMA-Factory keys lf_keys.py refuses, the
``--set`` items yaml_io.py cannot read. A problem whose page words differ (a Data tab to use, not a command) has
them as ``page=``. tests/config/test_config_problems.py holds every problem the config package raises to a code.
"""
from __future__ import annotations

from typing import Any

from .entry import message

# what the studio trains, said where LLaMA-Factory's other stages are refused
_STAGES = ("the studio trains these stages: {stages}", "本工作室可训练的阶段：{stages}")  # the stage table's names

ENTRIES: list[Any] = [
    message("check.model_empty", "{f_model_name_or_path} is empty: use 'tiny-demo', a local folder or a hub id",
            "{f_model_name_or_path}为空：请填 'tiny-demo'、一个本地文件夹或模型库 id"),
    message("check.dataset_empty", "{f_dataset} is empty: give a .jsonl file made by 'python -m studio convert' or a "
                                   "dataset name",
            "{f_dataset}为空：请给出用“python -m studio convert”生成的 .jsonl 文件或数据集名称",
            page=("{f_dataset} is empty: convert a file on the Data tab, then pick it under {f_dataset}",
                  "{f_dataset}为空：先在“数据”页转换一个文件，再在{f_dataset}中选择它")),
    message("check.template_close",
            "{f_template} '{name}' is not known here: did you mean '{close}'? Built-in templates: "
            "{builtin} (LLaMA-Factory's names render as there; its others use the model's own chat "
            "template)",
            "这里不认识{f_template}“{name}”：是不是想用“{close}”？内置模板：{builtin}（LLaMA-Factory "
            "的模板名按它的方式渲染；其余的使用模型自带的对话模板）"),
    message("check.template_unknown", "{f_template} '{name}' is not known here: Built-in templates: {builtin} "
                                      "(LLaMA-Factory's names render as there; its others use the model's own chat template)",
            "这里不认识{f_template}“{name}”：内置模板：{builtin}（LLaMA-Factory 的模板名按它的方式"
            "渲染；其余的使用模型自带的对话模板）"),
    message("check.scheduler_close", "{f_lr_scheduler_type} '{name}' is not a transformers scheduler (did you mean "
                                     "'{close}'?)",
            "{f_lr_scheduler_type}“{name}”不是 transformers 的调度器（是不是想用“{close}”？）"),
    message("check.scheduler_unknown",
            "{f_lr_scheduler_type} '{name}' is not a transformers scheduler; use one of {choices}",
            "{f_lr_scheduler_type}“{name}”不是 transformers 的调度器；请使用其中之一：{choices}"),
    message("check.optim_close", "{f_optim} '{name}' is not a transformers optimizer (did you mean '{close}'?)",
            "{f_optim}“{name}”不是 transformers 的优化器（是不是想用“{close}”？）"),
    message("check.optim_unknown", "{f_optim} '{name}' is not a transformers optimizer; use one of {choices}",
            "{f_optim}“{name}”不是 transformers 的优化器；请使用其中之一：{choices}"),
    message("check.lora_extras", "{f_use_dora} / {f_use_rslora} / {f_pissa_init} / {f_loraplus_lr_ratio} need "
                                 "{f_finetuning_type}: lora",
            "{f_use_dora}、{f_use_rslora}、{f_pissa_init}、{f_loraplus_lr_ratio}需要{f_finetuning_type}为 lora"),
    message("check.loraplus_deepspeed", "{f_loraplus_lr_ratio} cannot be combined with DeepSpeed (it builds its own "
                                        "optimizer): turn one off",
            "{f_loraplus_lr_ratio}不能与 DeepSpeed 同时使用（它自己构建优化器）：请关闭其中一个"),
    message("check.max_steps", "{f_max_steps} must be -1 (use epochs) or a positive number",
            "{f_max_steps}必须是 -1（按轮数）或一个正数"),
    message("check.epochs", "{f_num_train_epochs} must be above 0 when {f_max_steps} is -1",
            "{f_max_steps}为 -1 时，{f_num_train_epochs}必须大于 0"),
    message("check.val_size", "{f_val_size} must be a fraction in (0, 1) or a whole number of rows",
            "{f_val_size}必须是 (0, 1) 之间的比例，或一个整数行数"),
    message("check.quant_bits", "{f_quantization_bit} must be 4, 8 or empty (got {value})",
            "{f_quantization_bit}必须是 4、8 或留空（现在是 {value}）"),
    message("check.quant_needs_lora",
            "{f_quantization_bit} needs {f_finetuning_type}: lora (QLoRA); quantized weights "
            "cannot be trained directly",
            "{f_quantization_bit}需要{f_finetuning_type}为 lora（QLoRA）；量化后的权重不能直接训练"),
    message("check.quant_zero3",
            "{f_quantization_bit} with DeepSpeed ZeRO-3 is not supported here (ZeRO-3 shards the 4-bit "
            "weights, which needs bnb_4bit_quant_storage; the studio does not set it): use ZeRO-2 or "
            "no DeepSpeed",
            "这里不支持{f_quantization_bit}与 DeepSpeed ZeRO-3 同时使用（ZeRO-3 会切分 4 位权重，需要 "
            "bnb_4bit_quant_storage，而本工作室不设置它）：请用 ZeRO-2 或不用 DeepSpeed"),
    message("check.pure_bf16_precision", "{f_pure_bf16} needs bf16: set {f_precision} to bf16 or auto, or turn "
                                         "{f_pure_bf16} off",
            "{f_pure_bf16}需要 bf16：请把{f_precision}设为 bf16 或 auto，或关闭{f_pure_bf16}"),
    message("check.pure_bf16_deepspeed",
            "{f_pure_bf16} cannot be combined with {f_deepspeed} (DeepSpeed keeps its own fp32 "
            "master weights): turn {f_pure_bf16} off",
            "{f_pure_bf16}不能与{f_deepspeed}同时使用（DeepSpeed 自己保存 fp32 主权重）：请关闭"
            "{f_pure_bf16}"),
    message("check.bf16_fp16", "{f_bf16} and {f_fp16} are both on: choose one (or set {f_precision}: auto)",
            "{f_bf16}和{f_fp16}都打开了：请只选一个（或把{f_precision}设为 auto）"),
    message("check.deepspeed_choice", "{f_deepspeed} must be one of {choices} (got '{value}')",
            "{f_deepspeed}必须是其中之一：{choices}（现在是“{value}”）"),
    message("check.layerwise_deepspeed", "{f_layerwise_offload} and {f_deepspeed} both move weights: choose one",
            "{f_layerwise_offload}和{f_deepspeed}都会搬移权重：请只选一个"),
    message("check.layerwise_quant", "{f_layerwise_offload} with a quantized model is not supported: turn one off",
            "不支持对量化模型使用{f_layerwise_offload}：请关闭其中一个"),
    message("check.nvme_path_missing",
            "{f_deepspeed} z3-nvme needs {f_offload_nvme_path}: a folder on a fast local disk "
            "(NVMe)",
            "{f_deepspeed}为 z3-nvme 时需要{f_offload_nvme_path}：一个位于高速本地磁盘（NVMe）上的文件夹"),
    message("check.nvme_path_unused",
            "{f_offload_nvme_path} is only used by {f_deepspeed} z3-nvme: set {f_deepspeed} to "
            "z3-nvme or clear it",
            "只有{f_deepspeed}为 z3-nvme 时才使用{f_offload_nvme_path}：请把{f_deepspeed}设为 "
            "z3-nvme，或清空它"),
    message("check.nproc_deepspeed", "{f_nproc} > 1 needs {f_deepspeed} (z2 or z3) for data-parallel training",
            "{f_nproc}大于 1 时，数据并行训练需要{f_deepspeed}（z2 或 z3）"),
    message("check.optim_deepspeed",
            "{f_optim} {name} cannot be combined with DeepSpeed (it brings its own optimizer): use "
            "adamw_torch",
            "{f_optim} {name} 不能与 DeepSpeed 同时使用（它自带优化器）：请用 adamw_torch"),
    message("check.adapter_needs_lora",
            "{f_adapter_name_or_path} continues a LoRA adapter: set {f_finetuning_type}: lora",
            "{f_adapter_name_or_path}用于继续训练一个 LoRA 适配器：请把{f_finetuning_type}设为 lora"),
    message("check.adapter_pissa", "{f_adapter_name_or_path} continues an adapter as it is: turn {f_pissa_init} off",
            "{f_adapter_name_or_path}按原样继续训练一个适配器：请关闭{f_pissa_init}"),
    # ---- preference tuning (stage dpo / kto)
    message("check.pref_needs_lora",
            "{f_stage}: {stage} needs {f_finetuning_type}: lora (LoRA or QLoRA): the reference "
            "model is the same weights with the adapter switched off; {method} training would need "
            "a second full copy of the model in memory",
            "{f_stage}为 {stage} 时需要{f_finetuning_type}为 lora（LoRA 或 QLoRA）：参考模型是关闭"
            "适配器后的同一份权重；{method} 训练需要在内存中再放一份完整的模型"),
    message("check.pref_batching",
            "{f_name} is not supported with {f_stage}: {stage} (TRL's trainers batch their rows "
            "themselves): turn {f_name} off",
            "{f_stage}为 {stage} 时不支持{f_name}（TRL 的训练器自己组织批次）：请关闭{f_name}"),
    message("check.pref_one_process",
            "{f_stage}: {stage} runs on one process without DeepSpeed here: clear {f_deepspeed} "
            "and set {f_nproc} to 1",
            "{f_stage}为 {stage} 时，这里只用一个进程、不用 DeepSpeed 运行：请清空{f_deepspeed}，"
            "并把{f_nproc}设为 1"),
    message("check.kto_ftx",
            "{f_pref_ftx} is not supported with {f_stage}: kto (TRL's KTO trainer has no supervised term): "
            "set {f_pref_ftx} to 0",
            "{f_stage}为 kto 时不支持{f_pref_ftx}（TRL 的 KTO 训练器没有监督项）：请把{f_pref_ftx}设为 0"),
    message("check.kto_batch", "{f_stage}: kto needs {f_per_device_train_batch_size} of at least 2 (KTO estimates its "
                               "reference KL from the other answers in the batch)",
            "{f_stage}为 kto 时{f_per_device_train_batch_size}至少为 2（KTO 用同一批次中的其他回答估计"
            "参考 KL）"),
    # ---- numbers outside a field's range (the range: each field's metadata in studio/config/run_config.py)
    message("check.not_finite", "{f_name} must be a finite number (got {value})", "{f_name}必须是有限的数（现在是 {value}）"),
    message("check.not_number", "{f_name} must be a number (got {value})", "{f_name}必须是数字（现在是 {value}）"),
    message("check.above", "{f_name} must be above {bound} (got {value})", "{f_name}必须大于 {bound}（现在是 {value}）"),
    message("check.above_or_empty", "{f_name} must be above {bound}, or empty (got {value})",
            "{f_name}必须大于 {bound}，或留空（现在是 {value}）"),
    message("check.at_least", "{f_name} must be at least {bound} (got {value})", "{f_name}至少为 {bound}（现在是 {value}）"),
    message("check.at_least_or_empty", "{f_name} must be at least {bound}, or empty (got {value})",
            "{f_name}至少为 {bound}，或留空（现在是 {value}）"),
    message("check.below", "{f_name} must be below {bound} (got {value})", "{f_name}必须小于 {bound}（现在是 {value}）"),
    message("check.below_or_empty", "{f_name} must be below {bound}, or empty (got {value})",
            "{f_name}必须小于 {bound}，或留空（现在是 {value}）"),
    message("check.at_most", "{f_name} must be at most {bound} (got {value})", "{f_name}最多为 {bound}（现在是 {value}）"),
    message("check.at_most_or_empty", "{f_name} must be at most {bound}, or empty (got {value})",
            "{f_name}最多为 {bound}，或留空（现在是 {value}）"),
    message("check.control_char",
            "{f_name} contains a control character (line break, tab or NUL): type it again on one "
            "line",
            "{f_name}中含有控制字符（换行、制表符或 NUL）：请在一行内重新输入"),
    # ---- a value of the wrong type, or a key no field has (config/run_config.py ``from_dict``); {source}: the file
    message("check.unknown_key_close", "unknown key '{key}' in {source} (did you mean {q_name}?)",
            "{source} 中有未知的键“{key}”（是不是想用{q_name}？）"),
    message("check.unknown_key", "unknown key '{key}' in {source}", "{source} 中有未知的键“{key}”"),
    message("check.value_required", "{f_name}: a value is required", "{f_name}：必须填写一个值"),
    message("check.not_choice_close", "{f_name}: '{value}' is not one of {choices} (did you mean '{close}'?)",
            "{f_name}：“{value}”不是可选的值（{choices}）（是不是想用“{close}”？）"),
    message("check.not_choice", "{f_name}: '{value}' is not one of {choices}", "{f_name}：“{value}”不是可选的值（{choices}）"),
    message("check.not_bool", "{f_name}: expected true or false, got '{value}'",
            "{f_name}：应为 true 或 false，现在是“{value}”"),
    message("check.not_whole", "{f_name}: expected a whole number, got '{value}'", "{f_name}：应为整数，现在是“{value}”"),
    message("check.not_a_number", "{f_name}: expected a number, got '{value}'", "{f_name}：应为数字，现在是“{value}”"),
    message("check.not_finite_number", "{f_name}: expected a finite number, got '{value}'",
            "{f_name}：应为有限的数，现在是“{value}”"),
    message("check.set_not_pair", "--set '{pair}' is not key=value", "--set “{pair}”不是 key=value 的形式",
            page=("'{pair}' is not key=value", "“{pair}”不是 key=value 的形式")),
    # ---- LLaMA-Factory keys the studio refuses (config/lf_keys.py), each with its reason; {key}: the key as written
    message("check.lf_stage_pt", "{f_stage}: {stage} (pre-training) is not supported yet: " + _STAGES[0],
            "暂不支持{f_stage} {stage}（预训练）：" + _STAGES[1]),
    message("check.lf_stage_rm", "{f_stage}: {stage} (reward modelling) is not supported yet: " + _STAGES[0],
            "暂不支持{f_stage} {stage}（奖励模型训练）：" + _STAGES[1]),
    message("check.lf_stage_ppo", "{f_stage}: {stage} (PPO) is not supported yet: " + _STAGES[0],
            "暂不支持{f_stage} {stage}（PPO）：" + _STAGES[1]),
    message("check.lf_stage_other", "{f_stage}: {stage} ({stage}) is not supported yet: " + _STAGES[0],
            "暂不支持{f_stage} {stage}：" + _STAGES[1]),
    message("check.lf_pref_loss_orpo",
            "{f_pref_loss}: {loss}: ORPO is in TRL 1.16's experimental package only and is not "
            "wired into the studio yet: use {f_pref_loss}: sigmoid (DPO)",
            "{f_pref_loss} {loss}：ORPO 只在 TRL 1.16 的实验包中，本工作室尚未接入：请把"
            "{f_pref_loss}设为 sigmoid（DPO）"),
    message("check.lf_pref_loss_simpo",
            "{f_pref_loss}: {loss}: SimPO is not supported here (TRL 1.16 runs it only through "
            "its experimental CPO trainer): use {f_pref_loss}: sigmoid (DPO)",
            "{f_pref_loss} {loss}：这里不支持 SimPO（TRL 1.16 只通过实验性的 CPO 训练器运行它）："
            "请把{f_pref_loss}设为 sigmoid（DPO）"),
    message("check.lf_pref_loss_kto_pair",
            "{f_pref_loss}: {loss}: kto_pair was removed from TRL: use {f_stage}: kto with a "
            "KTO or ranking dataset",
            "{f_pref_loss} {loss}：TRL 已移除 kto_pair：请把{f_stage}设为 kto，并使用 KTO "
            "数据集或排序数据集"),
    message("check.lf_do_train",
            "{key}: false asks for no training; the studio's train command always trains (remove the "
            "key or set it to true)",
            "{key}: false 表示不训练；本工作室的训练命令总是会训练（请删除这个键或把它设为 true）",
            page=("{key}: false asks for no training; Start always trains (remove the key from the file or "
                  "set it to true)", "{key}: false 表示不训练；“开始”总是会训练（请从文件中删除这个键或把它设为 true）")),
    message("check.lf_do_predict", "{key}: true is not supported here: use 'python -m studio eval' after training",
            "这里不支持 {key}: true：请在训练后使用“python -m studio eval”",
            page=("{key}: true is not supported here: use the Evaluate tab after training",
                  "这里不支持 {key}: true：请在训练后使用“评估”页")),
    message("check.lf_quantization_method", "{key}: {method} is not supported: the studio quantizes with bitsandbytes "
                                            "({f_quantization_bit}: 4 or 8)",
            "不支持 {key}: {method}：本工作室用 bitsandbytes 量化（{f_quantization_bit}为 4 或 8）"),
    message("check.lf_eval_dataset",
            "{key} is not supported: hold out rows with {f_val_size}, or score any file later "
            "with 'python -m studio eval --data FILE'",
            "不支持 {key}：请用{f_val_size}留出验证行，或在训练后用“python -m studio eval --data "
            "文件”给任意文件打分",
            page=("{key} is not supported: hold out rows with {f_val_size}, or score any file later on "
                  "the Evaluate tab", "不支持 {key}：请用{f_val_size}留出验证行，或在训练后到“评估”页给任意文件打分")),
    message("check.lf_multimodal",
            "{key}: multimodal (image/video/audio) training is not supported here; the studio trains "
            "text-only models",
            "{key}：这里不支持多模态（图像/视频/音频）训练；本工作室只训练纯文本模型"),
    message("check.lf_galore", "{key}: GaLore is not supported yet", "{key}：暂不支持 GaLore"),
    message("check.lf_apollo", "{key}: APOLLO is not supported yet", "{key}：暂不支持 APOLLO"),
    message("check.lf_badam", "{key}: BAdam is not supported yet", "{key}：暂不支持 BAdam"),
    message("check.lf_adam_mini", "{key}: Adam-mini is not supported yet", "{key}：暂不支持 Adam-mini"),
    message("check.lf_muon", "{key}: the Muon optimizer is not supported yet", "{key}：暂不支持 Muon 优化器"),
    message("check.lf_asft", "{key}: the ASFT loss is not supported yet", "{key}：暂不支持 ASFT 损失"),
    message("check.lf_dft", "{key}: the DFT loss is not supported yet", "{key}：暂不支持 DFT 损失"),
    message("check.lf_eaft", "{key}: the EAFT loss is not supported yet", "{key}：暂不支持 EAFT 损失"),
    message("check.lf_llama_pro", "{key}: LLaMA Pro block expansion is not supported yet", "{key}：暂不支持 LLaMA Pro 的块扩展"),
    message("check.lf_freeze_modules",
            "{key}: freeze trains whole layers here ({f_freeze_trainable_layers}); choosing "
            "modules inside them is not supported yet",
            "{key}：这里的 freeze 训练整层（{f_freeze_trainable_layers}）；暂不支持在层内挑选模块"),
    message("check.lf_freeze_extra", "{key}: freeze trains whole layers here ({f_freeze_trainable_layers})",
            "{key}：这里的 freeze 训练整层（{f_freeze_trainable_layers}）"),
    message("check.lf_oft", "{key}: OFT adapters are not supported yet ({f_finetuning_type}: lora, full or freeze)",
            "{key}：暂不支持 OFT 适配器（{f_finetuning_type}可选 lora、full 或 freeze）"),
    message("check.lf_pissa_convert",
            "{key}: converting a PiSSA adapter into a plain LoRA when saving is not supported yet "
            "({f_pissa_init} is; the saved adapter then needs the PiSSA-initialised base)",
            "{key}：暂不支持在保存时把 PiSSA 适配器转换成普通 LoRA（支持{f_pissa_init}；保存的适配器"
            "随后需要经 PiSSA 初始化的基础模型）"),
    message("check.lf_mixture_of_depths", "{key}: Mixture-of-Depths conversion is not supported",
            "{key}：不支持 Mixture-of-Depths 转换"),
    message("check.lf_predict_with_generate", "{key}: generation after training is done by 'python -m studio eval'",
            "{key}：训练后的生成由“python -m studio eval”完成",
            page=("{key}: generation after training is done on the Evaluate tab",
                  "{key}：训练后的生成在“评估”页完成")),
    message("check.lf_fsdp",
            "{key}: FSDP is not supported: use DeepSpeed ZeRO-3 ({f_deepspeed}: ds_z3 or ds_z3_offload)",
            "{key}：不支持 FSDP：请用 DeepSpeed ZeRO-3（{f_deepspeed}设为 ds_z3 或 ds_z3_offload）"),
    message("check.lf_simpo_gamma", "{key}: SimPO is not supported here ({f_pref_loss}: sigmoid, hinge or ipo)",
            "{key}：这里不支持 SimPO（{f_pref_loss}可选 sigmoid、hinge 或 ipo）"),
    message("check.lf_dpo_label_smoothing", "{key}: label smoothing of the DPO loss is not supported yet",
            "{key}：暂不支持 DPO 损失的标签平滑"),
    message("check.lf_bco", "{key}: the BCO term of the DPO loss is not supported yet", "{key}：暂不支持 DPO 损失中的 BCO 项"),
    message("check.lf_ld_dpo", "{key}: LD-DPO's length weighting is not supported yet", "{key}：暂不支持 LD-DPO 的长度加权"),
    message("check.lf_fp8", "{key}: FP8 training is not supported yet", "{key}：暂不支持 FP8 训练"),
    message("check.lf_ktransformers", "{key}: KTransformers is not supported", "{key}：不支持 KTransformers"),
    message("check.lf_megatron", "{key}: Megatron parallelism is not supported (one card, or DeepSpeed)",
            "{key}：不支持 Megatron 并行（用一张卡，或用 DeepSpeed）"),
    # the held-out score kept during training: the learning-rate search (config/search.py)
    message("check.search_values", "{f_learning_rate_search} must be learning rates between 0 and 1, comma separated "
            "(got {value})", "{f_learning_rate_search}必须是 0 到 1 之间、用逗号分隔的学习率（现在是 {value}）"),
    message("check.search_single", "{f_learning_rate_search} works for one process and supervised training ({f_stage}: "
            "sft): leave it empty", "{f_learning_rate_search}只适用于单进程的监督训练（{f_stage}：sft）：请把它留空"),
]
