"""The words of the training stages (studio/stages.py): the ``stage`` setting's label and help, and each stage's
own settings, problems and errors, so adding a stage adds its words here, in one file.
"""
from __future__ import annotations

from typing import Any

from .entry import field

ENTRIES: list[Any] = [
    field("stage", label=("Stage", "训练阶段"),
          help=("Training stage (LLaMA-Factory's key): sft = supervised fine-tuning on instruction rows; dpo = "
                "preference tuning on ranking pairs (chosen/rejected); kto = on single answers tagged good or bad. "
                "dpo and kto train a LoRA/QLoRA adapter against the same weights with the adapter off",
                "训练阶段（LLaMA-Factory 的键）：sft = 监督微调；dpo = 用成对的好/坏答案做偏好微调；kto = 用标了好或坏的单个答案做偏好微调")),
]
