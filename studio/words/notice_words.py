"""The words of a training notice, by code: the command line's English and the page's English and Chinese.

The engine sends a notice as a code and its values (studio/notices.py ``Notice.of``); the run log and the CLI print
its ``cli`` words, the Train tab its ``page`` words in the browser's language. ``{f_<key>}`` names the setting
``key`` as each surface names it (studio/words/config_problems.py ``setting_names``): the config key on the command
line (``cutoff_len``), the Settings tab's label on the page ('Max tokens per example', “每条样本最大 token 数”), so a
page never shows a config key. The CLI's words say what a YAML user needs (a recipe file, ``Method: full``); the
page's say it with the page's fields. tests/ui/test_page_notices.py holds every code to all three.
"""
from __future__ import annotations

from typing import Any

from .config_problems import setting_names
from .errors import UnknownCode

# What the libraries the studio uses for a card do on AMD ROCm, said once (docs/GPU.md repeats it for readers)
ROCM_SUPPORT = {
    "bitsandbytes": "QLoRA (4-bit/8-bit) needs bitsandbytes built for ROCm: its multi-backend releases support "
                    "MI200/MI300 and RDNA3 (install the ROCm wheel; check with `python -m bitsandbytes`); 8-bit "
                    "optimizers likewise. Where it is missing, use LoRA in bf16 (MI-class cards have the memory)",
    "deepspeed": "DeepSpeed runs on ROCm (ZeRO-1/2/3 and CPU offload; its C++/HIP ops build on first use and need "
                 "the ROCm development headers, hipcc); ZeRO-Infinity's NVMe offload needs libaio as on CUDA",
    "liger": "liger-kernel's Triton kernels run on ROCm with the ROCm build of triton (pytorch-triton-rocm)",
    "flash_attn": "FlashAttention-2 has a ROCm build for MI200/MI300 (Composable Kernel); else SDPA is used",
}

NOTICES: dict[str, dict[str, Any]] = {
    "rocm_bitsandbytes": {
        "cli": ("AMD card ({arch}): {f_quantization_bit} needs bitsandbytes built for ROCm; "
                + ROCM_SUPPORT["bitsandbytes"]),
        "page": (
            "This is an {card} card: {f_quantization_bit} needs bitsandbytes built for ROCm (MI200/MI300 and "
            "RDNA3); if it is missing the run stops at the model load: set {f_quantization_bit} to none and train LoRA "
            "in bf16",
            "这是 {card} 显卡：{f_quantization_bit}需要为该平台构建的 bitsandbytes（支持 MI200/MI300 和 "
            "RDNA3）；若未安装，运行会在加载模型时停止：请把{f_quantization_bit}设为 none，用 bf16 训练 LoRA",
        ),
    },
    "rocm_deepspeed": {
        "cli": "AMD card ({arch}): " + ROCM_SUPPORT["deepspeed"],
        "page": (
            "This is an {card} card: DeepSpeed runs there, and builds its HIP operations (CPU Adam for "
            "offload) on first use, which needs the ROCm development tools (hipcc)",
            "这是 {card} 显卡：DeepSpeed 可以运行，首次使用时会编译其显卡算子（把状态卸载到内存时用的 CPU Adam），"
            "需要该平台的开发工具",
        ),
    },
    "pure_bf16": {
        "cli": ("{f_pure_bf16} is on: weights, gradients and Adam states are bf16 (8-bit mantissa), so an update "
                "smaller than about 1/256 of a weight rounds away; with a small learning rate (below ~1e-5) much of "
                "the model may not change at all. Turn {f_pure_bf16} off for fp32 master weights (more memory, same "
                "speed)"),
        "page": (
            "{f_pure_bf16} is on: weights, gradients and Adam states are bf16 (8-bit mantissa), so an update "
            "smaller than about 1/256 of a weight rounds away; with a small {f_learning_rate} (below ~1e-5) much "
            "of the model may not change at all. Untick {f_pure_bf16} for fp32 master weights (more memory, same "
            "speed)",
            "{f_pure_bf16}已打开：权重、梯度和 Adam 状态都是 bf16（8 位尾数），比权重约 1/256 更小的更新会被舍入掉；"
            "{f_learning_rate}较小（低于约 1e-5）时，模型的大部分可能完全不变。取消勾选{f_pure_bf16}即可使用 fp32 "
            "主权重（更占内存，速度相同）",
        ),
    },
    "pure_bf16_cpu": {
        "cli": ("{f_pure_bf16} is on but this run has no GPU, so it trains in fp32 (as {f_precision} auto does on a "
                "CPU); set {f_precision}: bf16 to train in bf16 on the CPU anyway"),
        "page": (
            "{f_pure_bf16} is on but this run has no GPU, so it trains in fp32 (as {f_precision} auto does on a CPU); "
            "set {f_precision} to bf16 to train in bf16 on the CPU anyway",
            "{f_pure_bf16}已打开，但这次运行没有 GPU，所以按 fp32 训练（与{f_precision}为 auto 时在 CPU 上一样）；"
            "如果仍要在 CPU 上用 bf16 训练，请把{f_precision}设为 bf16",
        ),
    },
    "yaml_key": {
        "cli": "{setting}",
        "page": (
            "A setting of the loaded configuration has no effect here: {setting}",
            "载入的配置中有一项设置在这里不起作用：{setting}",
        ),
    },
    "bf16_cpu": {
        "cli": ("{f_bf16}: true but this machine has no GPU: training in fp32 (LLaMA-Factory refuses bf16 here; the "
                "studio runs the file anyway)"),
        "page": (
            "{f_bf16} is on but this machine has no GPU: training in fp32",
            "{f_bf16}已打开，但本机没有 GPU：按 fp32 训练",
        ),
    },
    "lora_alpha": {
        "cli": "{f_lora_alpha} not set: using 2 x {f_lora_rank} = {alpha} (LLaMA-Factory's rule)",
        "page": (
            "{f_lora_alpha} is not set: using 2 x {f_lora_rank} = {alpha} (LLaMA-Factory's rule)",
            "未设置{f_lora_alpha}：使用 2 × {f_lora_rank} = {alpha}（LLaMA-Factory 的规则）",
        ),
    },
    "tiny_demo_method": {
        "cli": ("tiny-demo starts from random weights, so '{method}' (which trains only part of the model) learns "
                "little on it; choose Method: full (presets/recipes/tiny-demo-cpu.yaml)"),
        "page": (
            "tiny-demo starts from random weights, so {method} (which trains only part of the model) learns little on "
            "it; set {f_finetuning_type} to full",
            "tiny-demo 从随机权重开始，所以 {method}（只训练模型的一部分）在它上面几乎学不到东西；请把{f_finetuning_type}设为 full",
        ),
    },
    "history_masked": {
        "cli": ("{n} multi-turn training rows carry loss on their last reply only: the {f_template} '{name}' (this "
                "model's chat template) does not render earlier replies so that their tokens can be found; choose a "
                "named template to train every reply"),
        "page": (
            "{n} multi-turn training rows carry loss on their last reply only: the {f_template} '{name}' (this model's "
            "chat template) does not render earlier replies so that their tokens can be found; pick a named template "
            "under {f_template} to train every reply",
            "{n} 条多轮对话训练数据只在最后一轮回复上计算损失：{f_template}“{name}”（这个模型自带的对话模板）渲染之前的"
            "回复时无法定位它们的 token；在{f_template}中选择一个具名模板，才能训练每一轮回复",
        ),
    },
    "truncated": {
        "cli": ("{n} training rows are longer than {f_cutoff_len}={cutoff} and were truncated; raise {f_cutoff_len} to "
                "keep them whole"),
        "page": (
            "{n} training rows are longer than {f_cutoff_len} ({cutoff}) and were truncated; raise {f_cutoff_len} to "
            "keep them whole",
            "{n} 条训练数据超过了{f_cutoff_len}（{cutoff}），已被截断；调高{f_cutoff_len}可以保留完整内容",
        ),
    },
    "template_mismatch": {
        "cli": ("{f_template}: {name} renders prompts differently from this model's own chat template; the run "
                "uses '{name}' (as LLaMA-Factory would). Set {f_template}: auto to train with the model's own "
                "template"),
        "page": (
            "The {f_template} '{name}' renders prompts differently from this model's own chat template; the run uses "
            "'{name}' (as LLaMA-Factory would). Set {f_template} to auto to train with the model's own template",
            "{f_template}“{name}”渲染出的提示词与这个模型自带的对话模板不同；这次运行使用“{name}”（与 LLaMA-Factory "
            "一致）。把{f_template}设为 auto 即可用模型自带的模板训练",
        ),
    },
    "template_fallback": {
        "cli": ("{f_template}: {name} is LLaMA-Factory's; the studio does not render it slot by slot, so this run "
                "uses the model's own chat template (as {f_template}: auto). Pick a built-in template to fix the "
                "format yourself"),
        "page": (
            "The {f_template} '{name}' is LLaMA-Factory's; the studio does not render it slot by slot, so this run "
            "uses the model's own chat template (as auto does). Pick a built-in one under {f_template} to fix the "
            "format yourself",
            "{f_template}“{name}”是 LLaMA-Factory 的模板；本工作室不逐段渲染它，所以这次运行使用模型自带的对话模板"
            "（与 auto 相同）。在{f_template}中选择一个内置模板，就能自己确定格式",
        ),
    },
    "oom_split": {
        "cli": ("Out of memory with {rows} rows per micro-batch at step {step}: now {now} rows x {steps} accumulation "
                "steps (was {old}); the effective batch is unchanged"),
        "page": (
            "Out of memory with {rows} rows per micro-batch at step {step}: now {now} rows x {steps} accumulation "
            "steps; the effective batch is unchanged",
            "第 {step} 步每个微批 {rows} 行时内存不足：现在改为 {now} 行 × {steps} 步累积；等效批大小不变",
        ),
    },
    "selective_logits_off": {
        "cli": ("Logits-only-where-the-loss-is does not apply to this model; training uses the full output layer "
                "(same result, slower)"),
        "page": (
            "{f_selective_logits} does not apply to this model; training uses the full output layer (same result, "
            "slower)",
            "{f_selective_logits}不适用于这个模型；训练使用完整的输出层（结果相同，速度更慢）",
        ),
    },
}


# ==== issue 49 (loop49): a preference run on labels, said before it trains (studio/engine/run.py). One block.
NOTICES.update({
    "preference_on_labels": {
        "cli": ("{stage} on answers that are a few labels: SFT on the corrections is the measured better choice (on 49 "
                "corrections of a Gemma-3-270M review run, DPO gave every held-out row one label, 0.500, while SFT "
                "with a replay kept 0.850; docs/BENCHMARKS.md). A pair of labels pushes one label against the other "
                "with nothing holding the rest in place"),
        "page": (
            "{stage} on answers that are a few labels: SFT on the corrections is the measured better choice (on 49 "
            "corrections of a Gemma-3-270M review run, DPO gave every held-out row one label, 0.500, while SFT with "
            "a replay kept 0.850; docs/BENCHMARKS.md). A pair of labels pushes one label against the other with "
            "nothing holding the rest in place",
            "在只有几个标签的答案上做 {stage}：实测更好的选择是在更正上做 SFT（在一个 Gemma-3-270M 评论运行的 49 条更正上，"
            "DPO 让所有验证行都得到同一个标签，0.500；带重放的 SFT 保持 0.850；见 docs/BENCHMARKS.md）。一对标签只是把"
            "一个标签压过另一个，没有东西让其余部分保持不变",
        ),
    },
})


def cli_words(code: str, values: dict[str, Any]) -> str:
    """The notice ``code`` with ``values`` as the run log and the command line say it (English, config keys).

    Raises:
        UnknownCode: a code the catalog lacks, or values that do not fit its words (a bug of the notice's maker).
    """
    try:
        return _worded(NOTICES[code]["cli"], values, "en", "cli")
    except (KeyError, IndexError, ValueError):
        if code not in NOTICES:
            raise UnknownCode(f"no words for the notice code {code!r} in studio/words/notice_words.py") from None
        raise UnknownCode(f"the values {sorted(values)} do not fit the CLI words of the notice {code!r}") from None


def page_words(code: str, values: dict[str, Any], lang: str = "en") -> str:
    """The notice ``code`` with ``values`` as the page says it in ``lang``, naming the Settings tab's fields.

    Raises:
        KeyError, IndexError, ValueError: a code the catalog lacks, or values that do not fit its words.
        TypeError: values that are not a mapping.
    """
    return _worded(NOTICES[code]["page"][lang == "zh"], values, lang, "page")


def _worded(text: str, values: dict[str, Any], lang: str, surface: str) -> str:
    return text.format(**setting_names(text, values, lang, surface), **values)


def notice_text(notice: dict[str, Any] | str, lang: str = "en") -> str:
    """One notice (a run's notice event, or an older run's bare message) as the page shows it; an event whose code
    or values this studio's words lack (written by another version of the engine) as its CLI message."""
    if isinstance(notice, str):
        return notice
    try:
        return page_words(str(notice.get("code")), dict(notice.get("params") or {}), lang)
    except (KeyError, IndexError, ValueError, TypeError):
        return str(notice.get("message", ""))
