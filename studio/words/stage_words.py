"""The words of the training stages (studio/stages.py): the ``stage`` setting's label and help, and each stage's
own settings, problems and errors, so adding a stage adds its words here, in one file.
"""
from __future__ import annotations

from typing import Any

from .entry import error, field, message

ENTRIES: list[Any] = [
    field("stage", label=("Stage", "训练阶段"),
          help=("Training stage (LLaMA-Factory's key): sft = supervised fine-tuning on instruction rows; dpo = "
                "preference tuning on ranking pairs (chosen/rejected); kto = on single answers tagged good or bad. "
                "dpo and kto train a LoRA/QLoRA adapter against the same weights with the adapter off; grpo = "
                "reinforcement learning on instruction rows: 4 answers sampled per prompt, each scored by "
                "{f_reward} against the row's answer, compared with the mean of its group; rloo = the same, each "
                "answer compared with the mean of the prompt's other answers",
                "训练阶段（LLaMA-Factory 的键）：sft = 监督微调；dpo = 用成对的好/坏答案做偏好微调；kto = 用标了好或坏的单个答案做偏好微调；"
                "grpo = 在指令数据上做强化学习：每个提示采样 4 个回答，按{f_reward}对照该行的答案打分，与同组回答的平均分比较；"
                "rloo = 同样做法，每个回答与同一提示其余回答的平均分比较")),
    # ---- the rewards of every stage that samples answers (engine/rewards.py; grpo, rloo)
    field("reward", label=("Reward", "奖励"),
          help=("A stage that samples answers: how each answer is scored against the row's answer: `row_label` = it "
                "is the row's label; `json_fields` = it is valid JSON with the reference's fields; `regex` = it "
                "matches {f_reward_pattern} as a whole",
                "采样回答的训练阶段：每个回答如何对照该行的答案打分：`row_label` = 与该行的标签相同；`json_fields` = 是含参考答案各字段的合法 "
                "JSON；`regex` = 整体匹配{f_reward_pattern}")),
    field("reward_pattern", label=("Reward pattern", "奖励模式"),
          help=("{f_reward} `regex`: the regular expression a whole answer must match to score 1",
                "{f_reward}为 `regex` 时：回答整体须匹配的正则表达式，匹配得 1 分")),
    message("check.reward_pattern_empty", "{f_reward}: `regex` needs {f_reward_pattern}: give the regular expression "
                                          "an answer must match",
            "{f_reward}为 `regex` 时需要{f_reward_pattern}：请填写回答须匹配的正则表达式"),
    message("check.reward_pattern_invalid", "{f_reward_pattern} '{pattern}' is not a regular expression ({error}): "
                                            "correct it",
            "{f_reward_pattern}“{pattern}”不是正则表达式（{error}）：请改正"),
]
