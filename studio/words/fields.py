"""Each RunConfig field's words: its Settings tab label (``f.<key>``) and its help (``h.<key>``), in English and
Chinese, written once here for the form, the page's language switch and every message that names the field.

A field is documented where its words are (studio/config/run_config.py keeps its type, default, group and range).
A help that names another setting writes ``{f_<key>}`` (the page shows that field's label); the values a help
lists from the config's vocabulary (``{schedulers}``, ``{aliases}``, ``{plans}``) are filled in by
studio/config/run_config.py ``help_values``, so the lists are never copied here.
"""
from __future__ import annotations

from typing import Any

from .entry import field

ENTRIES: list[Any] = [
    # ---- model
    field("model_name_or_path", label=("Base model", "基础模型"),
          help=("Base model: 'tiny-demo' (built-in, random init, learns on a CPU), the built-in real models "
                "'smollm2-135m-instruct' (135M, English chat, Apache-2.0) and 'gemma3-270m' (268M, Chinese + "
                "English, Gemma Terms of Use: https://ai.google.dev/gemma/terms; the Model list shows the time per "
                "step here), a .gguf file, a local folder, or a hub id",
                "基础模型：'tiny-demo'（内置、随机初始化、CPU 上几分钟就能学会）、内置真实模型 'smollm2-135m-instruct'（1.35 亿参数，英文对话，Apache-2.0）和 "
                "'gemma3-270m'（2.68 亿参数，中英文，Gemma 使用条款：https://ai.google.dev/gemma/terms；模型列表显示在本机每步所需时间）、.gguf "
                "文件、本地文件夹或 Hub 模型 ID")),
    field("trust_remote_code", label=("Trust remote code", "信任远程代码"),
          help=("Run code shipped with the model. Only for models you trust",
                "运行模型自带的代码。只对你信任的模型打开")),
    # ---- method
    # the stage's label and help: studio/words/stage_words.py, beside its stages' own words
    field("pref_beta", label=("Preference beta", "偏好 beta"),
          help=("dpo/kto: how far the tuned model may move from the reference (higher = stays closer; "
                "LLaMA-Factory's key)",
                "dpo/kto：调好的模型离参照模型能走多远（越大越靠近参照；LLaMA-Factory 的键）")),
    field("pref_loss", label=("Preference loss", "偏好损失"),
          help=("dpo: the preference loss (sigmoid = DPO, hinge = SLiC, ipo = IPO)",
                "dpo：偏好损失（sigmoid = DPO，hinge = SLiC，ipo = IPO）")),
    field("pref_ftx", label=("Supervised loss weight (DPO)", "监督损失权重（DPO）"),
          help=("dpo: weight of an extra supervised loss on the chosen answer (0 = off)",
                "dpo：在选中的答案上再加一项监督损失的权重（0 = 关闭）")),
    field("kto_chosen_weight", label=("KTO good-answer weight", "KTO 好答案权重"),
          help=("kto: weight of the good answers' loss",
                "kto：好答案损失的权重")),
    field("kto_rejected_weight", label=("KTO bad-answer weight", "KTO 坏答案权重"),
          help=("kto: weight of the bad answers' loss",
                "kto：坏答案损失的权重")),
    field("finetuning_type", label=("Method", "微调方法"),
          help=("full: train every weight; freeze: train only the last layers; lora: small adapters",
                "full：训练全部权重；freeze：只训练最后几层；lora：训练小的适配器")),
    field("adapter_name_or_path", label=("Continue from adapter", "从适配器继续"),
          help=("Continue training from this LoRA adapter folder (a finished run's adapter; LLaMA-Factory's key); "
                "its rank and targets are kept",
                "从这个 LoRA 适配器文件夹继续训练（某个已完成运行的 adapter；LLaMA-Factory 的键）；沿用它的秩和目标层")),
    field("freeze_trainable_layers", label=("Trainable last layers (freeze)", "可训练的最后几层（freeze）"),
          help=("freeze method: how many of the last layers stay trainable",
                "freeze 方法：最后多少层保持可训练")),
    field("lora_rank", label=("LoRA rank", "LoRA 秩"),
          help=("LoRA rank (adapter size); 8-64 is typical",
                "LoRA 秩（适配器大小），常用 8-64")),
    field("lora_alpha", label=("LoRA alpha", "LoRA alpha 缩放"),
          help=("LoRA scaling; empty = 2x the rank (as LLaMA-Factory)",
                "LoRA 缩放系数；留空 = 秩的 2 倍（与 LLaMA-Factory 相同）")),
    field("lora_dropout", label=("LoRA dropout", "LoRA dropout"),
          help=("Dropout inside LoRA adapters",
                "LoRA 适配器内部的 dropout")),
    field("lora_target", label=("LoRA target modules", "LoRA 目标模块"),
          help=("Modules that get adapters: 'all' (every linear layer) or a comma list such as q_proj,v_proj",
                "加适配器的模块：'all'（所有线性层）或逗号分隔的列表，如 q_proj,v_proj")),
    field("use_rslora", label=("rsLoRA", "rsLoRA 缩放"),
          help=("rsLoRA: scale adapters by alpha/sqrt(rank) instead of alpha/rank",
                "rsLoRA：按 alpha/sqrt(秩) 缩放适配器，而不是 alpha/秩")),
    field("use_dora", label=("DoRA", "DoRA 权重分解"),
          help=("DoRA: weight-decomposed LoRA (adds a magnitude vector per layer)",
                "DoRA：权重分解的 LoRA（每层多一个幅度向量）")),
    field("pissa_init", label=("PiSSA init", "PiSSA 初始化"),
          help=("PiSSA: start adapters from the weights' principal components",
                "PiSSA：用权重的主成分初始化适配器")),
    field("loraplus_lr_ratio", label=("LoRA+ learning-rate ratio", "LoRA+ 学习率倍数"),
          help=("LoRA+: learning rate of the B matrices = this x {f_learning_rate} (16 is typical; empty = off)",
                "LoRA+：B 矩阵的学习率 = 该倍数 × {f_learning_rate}（常用 16；留空 = 关闭）")),
    field("quantization_bit", label=("Quantization bits (QLoRA)", "量化位数（QLoRA）"),
          help=("Load the base model in 4 or 8 bits (QLoRA); needs lora",
                "以 4 位或 8 位加载基础模型（QLoRA），需要 lora")),
    field("quantization_type", label=("4-bit type", "4 位量化类型"),
          help=("4-bit data type",
                "4 位数据类型")),
    field("double_quantization", label=("Double quantization", "双重量化"),
          help=("Quantize the 4-bit scales too (saves ~0.4 bit/param)",
                "对 4 位量化的缩放因子再量化（每个参数约省 0.4 位）")),
    # ---- data
    field("dataset", label=("Training data", "训练数据"),
          help=("Training data: a .jsonl/.json file in alpaca format, or a name in dataset_info.json",
                "训练数据：alpaca 格式的 .jsonl/.json 文件，或 dataset_info.json 中的名字")),
    field("dataset_dir", label=("Dataset folder", "数据集文件夹"),
          help=("Folder holding dataset_info.json (LLaMA-Factory layout)",
                "存放 dataset_info.json 的文件夹（LLaMA-Factory 的布局）")),
    field("template", label=("Prompt template", "提示词模板"),
          help=("Prompt template: 'auto' uses the tokenizer's chat template (else the studio's '### Instruction' "
                "format); LLaMA-Factory names render as there (default, alpaca, llama3, qwen, chatml, gemma, "
                "smollm2, gemma3, mistral, ...); its other names use the model's own chat template; 'studio' is the "
                "studio's own format",
                "提示词模板：'auto' 使用分词器自带的对话模板（没有时用 studio 格式）；LLaMA-Factory "
                "的名称（default、alpaca、llama3、qwen、chatml、gemma、smollm2、gemma3、mistral 等）与 LLaMA-Factory 渲染完全一致，其余 "
                "LLaMA-Factory 名称使用模型自带的对话模板；studio 是本工具自己的 '### Instruction' 格式")),
    field("cutoff_len", label=("Max tokens per example", "每条样本最大 token 数"),
          help=("Longest training example in tokens; longer rows are truncated",
                "训练样本的最大 token 数；更长的会被截断")),
    field("train_on_prompt", label=("Train on the prompt too", "同时在提示词上计算损失"),
          help=("Also compute loss on the prompt (default: only on the answer)",
                "也在提示词上计算损失（默认只在答案上）")),
    field("mask_history", label=("Loss on the last reply only", "只在最后一轮回复上计算损失"),
          help=("Multi-turn rows: only the last reply carries loss (default: every assistant reply does, as in "
                "LLaMA-Factory)",
                "多轮对话：只让最后一轮回复参与损失（默认：每一轮助手回复都参与，与 LLaMA-Factory 相同）")),
    field("val_size", label=("Validation share", "验证集比例"),
          help=("Fraction (0-1) or count (>=1) of rows kept for validation",
                "留作验证集的比例（0-1）或行数（>=1）")),
    field("max_samples", label=("Max training rows", "最多训练行数"),
          help=("Use at most this many training rows (for quick tries)",
                "最多使用这么多训练行（用于快速尝试）")),
    # ---- train
    field("per_device_train_batch_size", label=("Batch size", "批大小"),
          help=("Examples per step on the card",
                "每一步在显卡上处理的样本数")),
    field("gradient_accumulation_steps", label=("Gradient accumulation", "梯度累积步数"),
          help=("Steps whose gradients add up before one update",
                "累积多少步的梯度再更新一次")),
    field("learning_rate", label=("Learning rate", "学习率"),
          help=("Peak learning rate (1e-5..5e-4 is typical)",
                "峰值学习率（通常在 1e-5 到 5e-4 之间）")),
    field("num_train_epochs", label=("Epochs", "训练轮数"),
          help=("Passes over the training data",
                "遍历训练数据的次数")),
    field("max_steps", label=("Max steps", "最大步数"),
          help=("Stop after this many updates (-1: use epochs)",
                "更新这么多步后停止（-1：按轮数）")),
    field("lr_scheduler_type", label=("LR schedule", "学习率调度"),
          help=("How the learning rate changes over the run (any transformers scheduler: {schedulers})",
                "训练过程中学习率如何变化（任何 transformers 调度器：{schedulers}）")),
    field("warmup_ratio", label=("Warm-up share", "预热比例"),
          help=("Fraction of steps spent warming up the learning rate",
                "用于学习率预热的步数比例")),
    field("weight_decay", label=("Weight decay", "权重衰减"),
          help=("Weight decay",
                "权重衰减")),
    field("max_grad_norm", label=("Gradient clipping", "梯度裁剪"),
          help=("Gradient clipping norm",
                "梯度裁剪的范数上限")),
    field("logging_steps", label=("Log every N steps", "每 N 步记录一次"),
          help=("Log the loss every N updates",
                "每 N 步记录一次损失")),
    field("save_steps", label=("Checkpoint every N steps", "每 N 步保存检查点"),
          help=("Save a checkpoint every N updates",
                "每 N 步保存一个检查点")),
    field("save_total_limit", label=("Checkpoints kept", "保留的检查点数"),
          help=("Keep at most this many checkpoints",
                "最多保留多少个检查点")),
    field("eval_steps", label=("Evaluate every N steps", "每 N 步评估一次"),
          help=("Evaluate every N updates (default: with logging)",
                "每 N 步评估一次（默认与记录同步）")),
    field("load_best_model_at_end", label=("Keep the best checkpoint", "保留最好的检查点"),
          help=("Keep the checkpoint with the best held-out score as the run's model: accuracy for a labels run, "
                "answer loss otherwise, scored at every evaluation by the Evaluate tab's own check (a checkpoint is "
                "saved at each evaluation). Needs held-out rows",
                "把验证分数最好的检查点作为这次运行的模型：标签类运行看准确率，其他看回答损失，每次评估都用"
                "“评估”页自己的检查打分（每次评估都保存一个检查点）。需要留出的验证行")),
    field("early_stopping_patience", label=("Early stop after N evaluations without gain", "连续 N 次评估无提升即提前停止"),
          help=("Stop when neither the held-out score nor the held-out loss has improved for this many evaluations "
                "in a row (0: off; the page's plan uses 4); keeps the best checkpoint too. Needs held-out rows",
                "验证分数和验证损失连续这么多次评估都没有提升就停止训练（0：关闭；页面的方案用 4）；"
                "同时保留最好的检查点。需要留出的验证行")),
    field("learning_rate_search", label=("Learning rates to try first", "先试的学习率"),
          help=("Learning rates to try first, comma separated (e.g. 1e-4,2e-4,5e-4): each trains "
                "{f_search_steps} updates from the start and is scored on the held-out rows; the run then trains "
                "with the winner. Empty: off (the page's 'best' time budget fills it). Needs held-out rows",
                "先试的学习率，用逗号分隔（例如 1e-4,2e-4,5e-4）：每个都从头训练“每个试用学习率的步数”步，并在"
                "验证行上打分；然后用胜出的学习率训练。留空：关闭（页面的“最佳”时间预算会填上）。需要留出的验证行")),
    field("search_steps", label=("Steps per learning rate tried", "每个试用学习率的步数"),
          help=("Updates per learning rate tried by {f_learning_rate_search} (0: a sixth of the run's, at least 10)",
                "“先试的学习率”中每个学习率训练的步数（0：这次运行步数的六分之一，至少 10 步）")),
    field("per_device_eval_batch_size", label=("Eval batch size", "评估批大小"),
          help=("Examples per evaluation step (default: the training batch size)",
                "每个评估步的样本数（默认与训练批大小相同）")),
    field("neftune_noise_alpha", label=("NEFTune noise", "NEFTune 噪声"),
          help=("NEFTune: noise added to embeddings while training (5 is typical; empty = off)",
                "NEFTune：训练时给词向量加噪声（常用 5；留空 = 关闭）")),
    field("report_to", label=("Report to", "日志上报"),
          help=("Where Trainer also logs: none, tensorboard, wandb, mlflow, ... (comma list)",
                "Trainer 同时上报日志到：none、tensorboard、wandb、mlflow 等（逗号分隔）")),
    field("resume_from_checkpoint", label=("Resume from checkpoint", "从检查点继续"),
          help=("Continue from this checkpoint folder ('last' = the newest in the run folder)",
                "从这个检查点文件夹继续（'last' = 运行文件夹中最新的检查点）")),
    field("seed", label=("Random seed", "随机种子"),
          help=("Random seed",
                "随机种子")),
    field("output_dir", label=("Run folder", "运行文件夹"),
          help=("Run folder: config, logs, checkpoints, the trained model",
                "运行文件夹：配置、日志、检查点和训练好的模型")),
    field("overwrite_output_dir", label=("Replace an earlier run in the run folder", "替换运行文件夹中已有的运行"),
          help=("Replace an earlier run in {f_output_dir} instead of refusing (LLaMA-Factory's key). Only a folder "
                "holding nothing but a studio run is replaced; a folder with other files is never emptied. To "
                "continue a run, resume it instead",
                "不拒绝，而是替换{f_output_dir}中已有的运行（LLaMA-Factory 的键）。只替换只含工作室运行的文件夹；含其他文件的文件夹绝不清空。要继续一次运行，请改用恢复")),
    field("plot_loss", label=("Save loss plot", "保存损失曲线图"),
          help=("Write loss.png at the end",
                "结束时保存 loss.png")),
    # ---- memory
    field("bf16", label=("bfloat16", "bfloat16"),
          help=("Train in bfloat16 (auto-chosen when {f_precision} is 'auto')",
                "用 bfloat16 训练（{f_precision}为 auto 时自动选择）")),
    field("fp16", label=("float16", "float16"),
          help=("Train in float16 with loss scaling",
                "用 float16 训练（带损失缩放）")),
    field("precision", label=("Precision", "计算精度"),
          help=("auto: bf16 where the card supports it, else fp16 on GPU, fp32 on CPU",
                "auto：显卡支持时用 bf16，否则 GPU 上用 fp16，CPU 上用 fp32")),
    field("gradient_checkpointing", label=("Gradient checkpointing", "梯度检查点"),
          help=("Recompute activations in backward: less memory, ~30% slower (on by default, as in LLaMA-Factory)",
                "反向传播时重新计算激活：更省显存，约慢 30%")),
    field("optim", label=("Optimizer", "优化器"),
          help=("Optimizer (any transformers name, or {aliases}); adamw_8bit stores its states in 8 bits (bitsandbytes)",
                "优化器（任何 transformers 的名称，或 {aliases}）；adamw_8bit 以 8 位保存优化器状态（bitsandbytes）")),
    field("pure_bf16", label=("Pure bf16 (no fp32 master weights)", "纯 bf16（无 fp32 主权重）"),
          help=("Keep weights and optimizer states in bf16 too (half the memory of mixed precision); small learning "
                "rates may then change nothing",
                "权重和优化器状态也用 bf16（比混合精度省一半显存）；学习率较小时模型可能几乎不更新")),
    field("deepspeed", label=("DeepSpeed", "DeepSpeed"),
          help=("DeepSpeed config: {plans} or a .json path", "DeepSpeed 配置：{plans} 或 JSON 路径")),
    field("offload_nvme_path", label=("NVMe offload folder", "NVMe 卸载文件夹"),
          help=("z3-nvme (ZeRO-Infinity): a folder on a fast local disk (NVMe) where DeepSpeed swaps weights and "
                "optimizer states; needs libaio",
                "z3-nvme（ZeRO-Infinity）：快速本地磁盘（NVMe）上的文件夹，DeepSpeed 在这里换入换出权重和优化器状态；需要 libaio")),
    field("offload_activations", label=("Keep checkpointed activations in host RAM", "将检查点激活保存在主机内存中"),
          help=("Keep checkpointed activations in host RAM (pinned) instead of on the card: less card memory for "
                "long rows, slower (they cross PCIe twice a step); needs gradient checkpointing",
                "把梯度检查点保存的激活放在主机内存（锁页）而不是显卡上：长序列时省显存，但更慢（每步经 PCIe 往返两次）；需要开启梯度检查点")),
    field("layerwise_offload", label=("Layer-wise offload", "逐层卸载"),
          help=("Keep decoder layers on CPU; move each to the card only for its forward/backward",
                "解码层放在 CPU 上，只在前向/反向时逐层搬到显卡")),
    field("dynamic_batching", label=("Dynamic batching", "动态批处理"),
          help=("Group rows of similar length and fill each batch up to a token budget",
                "把长度相近的样本放在一起，按 token 预算填满每个批次")),
    field("max_tokens_per_batch", label=("Tokens per batch (dynamic)", "每批 token 上限（动态）"),
          help=("Token budget per micro-batch for dynamic batching (default: batch size x the average row length)",
                "动态批处理时每个微批次的 token 预算（默认：批大小 × 最大 token 数）")),
    field("packing", label=("Packing (no padding)", "序列打包（无填充）"),
          help=("Pack several examples into one row with no padding (faster on GPU; attention may cross examples "
                "unless {f_neat_packing} is on)",
                "把多个样本拼进同一行、不加填充（GPU 上更快；不开{f_neat_packing}时注意力会跨样本）")),
    field("neat_packing", label=("Packing without cross-attention", "无交叉注意力的打包"),
          help=("Pack without cross-attention: each example sees only itself (implies packing)",
                "打包但每个样本只看见自己，不互相注意（自动打开序列打包）")),
    field("selective_logits", label=("Output layer only on answers", "只在答案处计算输出层"),
          help=("Compute the output layer only where the loss is (the answer tokens): same result, faster and "
                "leaner; checked on the first batch",
                "只在有损失的位置（答案 token）计算输出层：结果相同，更快更省内存；第一批会自动核对")),
    field("enable_liger_kernel", label=("Liger kernels on a GPU", "GPU 上使用 Liger 内核"),
          help=("On a GPU, Liger's fused kernels (output layer + cross-entropy, RMSNorm, RoPE, SwiGLU) where "
                "transformers supports the model and liger-kernel is installed (LLaMA-Factory's key); else the "
                "studio's own",
                "在 GPU 上、transformers 支持该模型且已安装 liger-kernel 时，使用 Liger "
                "的融合内核（输出层+交叉熵、RMSNorm、RoPE、SwiGLU）；否则用工作室自己的（LLaMA-Factory 的键）")),
    field("oom_adaptive", label=("Adapt on out-of-memory", "显存不足时自动调整"),
          help=("On out-of-memory, halve the micro-batch and double accumulation, then go on",
                "显存不足时把微批次减半、累积步数加倍，然后继续")),
    field("nproc", label=("Processes (cards)", "进程数（显卡数）"),
          help=("Data-parallel processes (one per card); >1 needs {f_deepspeed}",
                "数据并行的进程数（每张卡一个）；大于 1 需要{f_deepspeed}")),
    field("ddp_timeout", label=("Process wait limit (s)", "进程等待上限（秒）"),
          help=("Seconds a process waits for the others in one exchange before the run fails (a stalled node ends "
                "the run instead of hanging it)",
                "一个进程在一次数据交换中等待其他进程的秒数，超时则运行失败（卡住的节点会结束运行，而不是一直挂起）")),
]
