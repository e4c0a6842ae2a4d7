"""The words of a training notice, by code: the command line's English and the page's English and Chinese.

The engine sends a notice as a code and its values (studio/notices.py ``Notice.of``: ``notice.<code>`` here); the
run log and the CLI print its ``cli`` words, the Train tab its ``page`` words in the browser's language.
``{f_<key>}`` names the setting ``key`` as each surface names it (studio/words/render.py): the config key on the
command line (``cutoff_len``), the Settings tab's label on the page ('Max tokens per example', “每条样本最大 token
数”), so a page never shows a config key. The CLI's words say what a YAML user needs (a recipe file, ``Method:
full``); the page's say it with the page's fields.
"""
from __future__ import annotations

from typing import Any

from .entry import notice

# What the libraries the studio uses for a card do on AMD ROCm, said once (docs/GPU.md repeats it for readers)
ROCM_SUPPORT = {
    "bitsandbytes": "QLoRA (4-bit/8-bit) and 8-bit optimizers use bitsandbytes' ROCm library: the pinned wheel "
                    "(bitsandbytes 0.50.2) ships builds for ROCm 6.4 to 7.2 and loads the one matching torch's HIP; "
                    "bitsandbytes names CDNA (MI200, MI300) and RDNA3 or newer. If the load fails, "
                    "`python -m bitsandbytes` says why; else use LoRA in bf16 (MI-class cards have the memory)",
    "deepspeed": "DeepSpeed runs on ROCm (ZeRO-1/2/3 and CPU offload; its C++/HIP ops build on first use and need "
                 "the ROCm development headers, hipcc); ZeRO-Infinity's NVMe offload needs libaio as on CUDA",
    "liger": "liger-kernel's Triton kernels run on ROCm with the ROCm build of triton (pytorch-triton-rocm)",
    "flash_attn": "FlashAttention-2 has a ROCm build for MI200/MI300 (Composable Kernel); else SDPA is used",
}

ENTRIES: list[Any] = [
    notice("notice.rocm_bitsandbytes",
           cli=("AMD card ({arch}): {f_quantization_bit} uses bitsandbytes on ROCm; " + ROCM_SUPPORT["bitsandbytes"],
                "AMD 显卡（{arch}）：{f_quantization_bit}在 ROCm 上使用 bitsandbytes；QLoRA（4 位/8 位）和 8 位优化器使用 "
                "bitsandbytes 的 ROCm 库：固定版本的安装包（bitsandbytes 0.50.2）自带 ROCm 6.4 到 7.2 的构建，并加载与 "
                "torch 的 HIP 相匹配的那一个；bitsandbytes 支持 CDNA（MI200、MI300）以及 RDNA3 或更新的显卡。若加载失败，"
                "`python -m bitsandbytes` 会说明原因；否则请用 bf16 训练 LoRA（Instinct 系列显卡的显存足够）"),
           page=("This is an {card} card: {f_quantization_bit} uses bitsandbytes' ROCm library, which the installed "
                 "wheel ships (MI200/MI300 and RDNA3 or newer); if this card or its ROCm version is not among its "
                 "builds the run stops at the model load: then set {f_quantization_bit} to none and train LoRA in bf16",
                 "这是 {card} 显卡：{f_quantization_bit}使用 bitsandbytes 的 ROCm 库，已安装的版本自带该库（支持 "
                 "MI200/MI300 及 RDNA3 或更新的显卡）；若这张卡或其 ROCm 版本不在支持之列，运行会在加载模型时停止：请把"
                 "{f_quantization_bit}设为 none，用 bf16 训练 LoRA")),
    notice("notice.rocm_deepspeed",
           cli=("AMD card ({arch}): " + ROCM_SUPPORT["deepspeed"],
                "AMD 显卡（{arch}）：DeepSpeed 可以在 ROCm 上运行（ZeRO-1/2/3 和 CPU 卸载；其 C++/HIP 算子首次使用时编译，"
                "需要 ROCm 的开发头文件和 hipcc）；ZeRO-Infinity 的 NVMe 卸载与 CUDA 上一样需要 libaio"),
           page=("This is an {card} card: DeepSpeed runs there, and builds its HIP operations (CPU Adam for "
                 "offload) on first use, which needs the ROCm development tools (hipcc)",
                 "这是 {card} 显卡：DeepSpeed 可以运行，首次使用时会编译其显卡算子（把状态卸载到内存时用的 CPU Adam），"
                 "需要该平台的开发工具")),
    notice("notice.pure_bf16",
           cli="{f_pure_bf16} is on: weights, gradients and Adam states are bf16 (8-bit mantissa), so an update "
               "smaller than about 1/256 of a weight rounds away; with a small learning rate (below ~1e-5) much of "
               "the model may not change at all. Turn {f_pure_bf16} off for fp32 master weights (more memory, same "
               "speed)",
           page=("{f_pure_bf16} is on: weights, gradients and Adam states are bf16 (8-bit mantissa), so an update "
                 "smaller than about 1/256 of a weight rounds away; with a small {f_learning_rate} (below ~1e-5) much "
                 "of the model may not change at all. Untick {f_pure_bf16} for fp32 master weights (more memory, same "
                 "speed)",
                 "{f_pure_bf16}已打开：权重、梯度和 Adam 状态都是 bf16（8 位尾数），比权重约 1/256 更小的更新会被舍入掉；"
                 "{f_learning_rate}较小（低于约 1e-5）时，模型的大部分可能完全不变。取消勾选{f_pure_bf16}即可使用 fp32 "
                 "主权重（更占内存，速度相同）")),
    notice("notice.pure_bf16_cpu",
           cli="{f_pure_bf16} is on but this run has no GPU, so it trains in fp32 (as {f_precision} auto does on a "
               "CPU); set {f_precision}: bf16 to train in bf16 on the CPU anyway",
           page=("{f_pure_bf16} is on but this run has no GPU, so it trains in fp32 (as {f_precision} auto does on a "
                 "CPU); set {f_precision} to bf16 to train in bf16 on the CPU anyway",
                 "{f_pure_bf16}已打开，但这次运行没有 GPU，所以按 fp32 训练（与{f_precision}为 auto 时在 CPU 上一样）；"
                 "如果仍要在 CPU 上用 bf16 训练，请把{f_precision}设为 bf16")),
    notice("notice.yaml_key", cli="{setting}",
           page=("A setting of the loaded configuration has no effect here: {setting}",
                 "载入的配置中有一项设置在这里不起作用：{setting}")),
    notice("notice.bf16_cpu",
           cli="{f_bf16}: true but this machine has no GPU: training in fp32 (LLaMA-Factory refuses bf16 here; the "
               "studio runs the file anyway)",
           page=("{f_bf16} is on but this machine has no GPU: training in fp32",
                 "{f_bf16}已打开，但本机没有 GPU：按 fp32 训练")),
    notice("notice.lora_alpha", cli="{f_lora_alpha} not set: using 2 x {f_lora_rank} = {alpha} (LLaMA-Factory's rule)",
           page=("{f_lora_alpha} is not set: using 2 x {f_lora_rank} = {alpha} (LLaMA-Factory's rule)",
                 "未设置{f_lora_alpha}：使用 2 × {f_lora_rank} = {alpha}（LLaMA-Factory 的规则）")),
    notice("notice.tiny_demo_method",
           cli="tiny-demo starts from random weights, so '{method}' (which trains only part of the model) learns "
               "little on it; choose Method: full (presets/recipes/tiny-demo-cpu.yaml)",
           page=("tiny-demo starts from random weights, so {method} (which trains only part of the model) learns "
                 "little on it; set {f_finetuning_type} to full",
                 "tiny-demo 从随机权重开始，所以 {method}（只训练模型的一部分）在它上面几乎学不到东西；请把{f_finetuning_type}设为 full")),
    notice("notice.history_masked",
           cli="{n} multi-turn training rows carry loss on their last reply only: the {f_template} '{name}' (this "
               "model's chat template) does not render earlier replies so that their tokens can be found; choose a "
               "named template to train every reply",
           page=("{n} multi-turn training rows carry loss on their last reply only: the {f_template} '{name}' (this "
                 "model's chat template) does not render earlier replies so that their tokens can be found; pick a "
                 "named template under {f_template} to train every reply",
                 "{n} 条多轮对话训练数据只在最后一轮回复上计算损失：{f_template}“{name}”（这个模型自带的对话模板）渲染之前的"
                 "回复时无法定位它们的 token；在{f_template}中选择一个具名模板，才能训练每一轮回复")),
    notice("notice.truncated",
           cli="{n} training rows are longer than {f_cutoff_len}={cutoff} and were truncated; raise {f_cutoff_len} to "
               "keep them whole",
           page=("{n} training rows are longer than {f_cutoff_len} ({cutoff}) and were truncated; raise "
                 "{f_cutoff_len} to keep them whole",
                 "{n} 条训练数据超过了{f_cutoff_len}（{cutoff}），已被截断；调高{f_cutoff_len}可以保留完整内容")),
    notice("notice.template_mismatch",
           cli="{f_template}: {name} renders prompts differently from this model's own chat template; the run "
               "uses '{name}' (as LLaMA-Factory would). Set {f_template}: auto to train with the model's own "
               "template",
           page=("The {f_template} '{name}' renders prompts differently from this model's own chat template; the run "
                 "uses '{name}' (as LLaMA-Factory would). Set {f_template} to auto to train with the model's own "
                 "template",
                 "{f_template}“{name}”渲染出的提示词与这个模型自带的对话模板不同；这次运行使用“{name}”（与 LLaMA-Factory "
                 "一致）。把{f_template}设为 auto 即可用模型自带的模板训练")),
    notice("notice.template_fallback",
           cli="{f_template}: {name} is LLaMA-Factory's; the studio does not render it slot by slot, so this run "
               "uses the model's own chat template (as {f_template}: auto). Pick a built-in template to fix the "
               "format yourself",
           page=("The {f_template} '{name}' is LLaMA-Factory's; the studio does not render it slot by slot, so this "
                 "run uses the model's own chat template (as auto does). Pick a built-in one under {f_template} to "
                 "fix the format yourself",
                 "{f_template}“{name}”是 LLaMA-Factory 的模板；本工作室不逐段渲染它，所以这次运行使用模型自带的对话模板"
                 "（与 auto 相同）。在{f_template}中选择一个内置模板，就能自己确定格式")),
    notice("notice.oom_split",
           cli=("Out of memory with {rows} rows per micro-batch at step {step}: now {now} rows x {steps} accumulation "
                "steps (was {old}); the effective batch is unchanged",
                "第 {step} 步每个微批 {rows} 行时内存不足：现在改为 {now} 行 × {steps} 步累积（原为 {old}）；等效批大小不变"),
           page=("Out of memory with {rows} rows per micro-batch at step {step}: now {now} rows x {steps} accumulation "
                 "steps; the effective batch is unchanged",
                 "第 {step} 步每个微批 {rows} 行时内存不足：现在改为 {now} 行 × {steps} 步累积；等效批大小不变")),
    notice("notice.selective_logits_off",
           cli="Logits-only-where-the-loss-is does not apply to this model; training uses the full output layer "
               "(same result, slower)",
           page=("{f_selective_logits} does not apply to this model; training uses the full output layer (same result, "
                 "slower)",
                 "{f_selective_logits}不适用于这个模型；训练使用完整的输出层（结果相同，速度更慢）")),
    # the held-out score kept during training (studio/engine/held_out.py) and the learning-rate search
    # (studio/engine/lr_search.py); {metric} is a term (term.metric), worded in the reader's language
    notice("notice.kept_best",
           cli="kept the checkpoint of step {step} as the run's model: held-out {metric} {value:.4f}, the best of the "
               "run (the last evaluation, step {last_step}, scored {last:.4f})",
           page=("Kept the checkpoint of step {step} as the run's model: held-out {metric} {value:.4f}, the best of "
                 "the run (the last evaluation, step {last_step}, scored {last:.4f})",
                 "已把第 {step} 步的检查点作为这次运行的模型：验证集{metric}为 {value:.4f}，是整次运行中最好的"
                 "（最后一次评估在第 {last_step} 步，得分 {last:.4f}）")),
    notice("notice.kept_best_early",
           cli="stopped early at step {steps} of {max_steps}: neither the held-out {metric} nor the held-out loss had "
               "improved for {patience} evaluations ({f_early_stopping_patience}); kept the checkpoint of step {step} "
               "({value:.4f}) as the run's model",
           page=("Stopped early at step {steps} of {max_steps}: neither the held-out {metric} nor the held-out loss "
                 "had improved for {patience} evaluations ({f_early_stopping_patience}); kept the checkpoint of step "
                 "{step} ({value:.4f}) as the run's model",
                 "在第 {steps} 步（共 {max_steps} 步）提前停止：验证集{metric}和验证损失已连续 {patience} 次评估都没有"
                 "提升（{f_early_stopping_patience}）；已把第 {step} 步的检查点（{value:.4f}）作为这次运行的模型")),
    notice("notice.held_out_needed",
           cli="{f_load_best_model_at_end}, {f_early_stopping_patience} and {f_learning_rate_search} need held-out "
               "rows and {f_val_size} is 0: this run trains at {f_learning_rate} and keeps its last step",
           page=("{f_load_best_model_at_end}, {f_early_stopping_patience} and {f_learning_rate_search} need held-out "
                 "rows and {f_val_size} is 0: this run trains at {f_learning_rate} and keeps its last step",
                 "{f_load_best_model_at_end}、{f_early_stopping_patience}和{f_learning_rate_search}都需要留出的验证行，"
                 "而{f_val_size}为 0：这次运行用{f_learning_rate}训练，保留最后一步")),
    notice("notice.lr_search_score",
           cli="learning-rate search, {steps} steps each on the held-out {metric}: {tried}; {winner} won with the "
               "best score ({value:.4f}) and trains the run",
           page=("Learning-rate search, {steps} steps each, held-out {metric}: {tried}. {winner} won with the best "
                 "score ({value:.4f}) and trains the run.",
                 "学习率搜索（每个 {steps} 步，看验证集{metric}）：{tried}。{winner} 得分最好（{value:.4f}），"
                 "用它训练这次运行。")),
    notice("notice.lr_search_loss",
           cli="learning-rate search, {steps} steps each on the held-out {metric}: {tried}; {winner} tied for the "
               "best score ({value:.4f}) and won on the lower held-out loss ({loss:.4f}); it trains the run",
           page=("Learning-rate search, {steps} steps each, held-out {metric}: {tried}. {winner} tied for the best "
                 "score ({value:.4f}) and won on the lower held-out loss ({loss:.4f}); it trains the run.",
                 "学习率搜索（每个 {steps} 步，看验证集{metric}）：{tried}。{winner} 与其他并列最好"
                 "（{value:.4f}），验证损失更低（{loss:.4f}）而胜出，用它训练这次运行。")),
    notice("notice.lr_search_near",
           cli="learning-rate search, {steps} steps each on the held-out {metric}: {tried}; the best rates tied, "
               "{winner} (the one nearest the configured {f_learning_rate}) trains the run",
           page=("Learning-rate search, {steps} steps each, held-out {metric}: {tried}. The best rates tied; "
                 "{winner}, the one nearest the configured {f_learning_rate}, trains the run.",
                 "学习率搜索（每个 {steps} 步，看验证集{metric}）：{tried}。最好的几个并列；用最接近所设"
                 "{f_learning_rate}的 {winner} 训练这次运行。")),
    # a preference run on labels, said before it trains (studio/engine/run.py)
    notice("notice.preference_on_labels",
           cli="{stage} on answers that are a few labels: SFT on the corrections is the measured better choice (on 49 "
               "corrections of a Gemma-3-270M review run, DPO gave every held-out row one label, 0.500, while SFT "
               "with a replay kept 0.850; docs/BENCHMARKS.md). A pair of labels pushes one label against the other "
               "with nothing holding the rest in place",
           page=("{stage} on answers that are a few labels: SFT on the corrections is the measured better choice (on "
                 "49 corrections of a Gemma-3-270M review run, DPO gave every held-out row one label, 0.500, while SFT "
                 "with a replay kept 0.850; docs/BENCHMARKS.md). A pair of labels pushes one label against the other "
                 "with nothing holding the rest in place",
                 "在只有几个标签的答案上做 {stage}：实测更好的选择是在更正上做 SFT（在一个 Gemma-3-270M 评论运行的 49 条"
                 "更正上，DPO 让所有验证行都得到同一个标签，0.500；带重放的 SFT 保持 0.850；见 docs/BENCHMARKS.md）。"
                 "一对标签只是把一个标签压过另一个，没有东西让其余部分保持不变")),
]
