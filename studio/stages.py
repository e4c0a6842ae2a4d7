"""The training stages, as one table: for each stage the rows it reads, the sequences one row puts through the
model, the trainer that trains it, the methods it allows and what the memory estimate adds for it.

Every decision that depends on the run's stage reads its row here (``stage_of(cfg.stage)``): the checks
(config/checks.py), the LLaMA-Factory keys (config/lf_keys.py), the rows a run reads (data/), the memory estimate
(memory/), autoconfig, the engine's trainer (engine/run.py resolves ``trainer``), the evaluation's held-out rows and
the page's choices (RunConfig's ``stage`` field lists ``STAGE_NAMES``). tests/project/test_stage_table.py fails on
a comparison with a stage, or a lookup keyed by one, anywhere else in studio/. How to add a stage:
docs/ARCHITECTURE.md.

This module sits at the bottom (data/ and config/ read it), so it imports nothing of the studio: a trainer is
named by its ``module:function`` (as torchtune's ``_component_``), which the engine imports when a run starts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import regex

RowKind = Literal["sft", "ranking", "kto"]   # data/lf_dataset.Kind: instruction rows, chosen/rejected pairs, tagged
Problems = Callable[[Any], list[tuple[str, dict[str, Any]]]]   # cfg -> [(check code, values)]


def _no_problems(cfg: Any) -> list[tuple[str, dict[str, Any]]]:
    return []


@dataclass(frozen=True)
class Stage:
    """One training stage.

    name: the ``stage`` value (LLaMA-Factory's key where it has one).
    rows: the rows it reads (data/dataset.load_rows' kind); its held-out and demo rows are their good answers
        (data/preference.as_sft_rows, the identity on instruction rows).
    sequences: sequences one row puts through the forward with gradients (DPO: chosen and rejected; GRPO, RLOO:
        their generations of the prompt). The memory estimate counts them; their trainer generates this many.
    no_grad_sequences: sequences per row of the forwards without gradients that the estimate adds as a transient
        beside the policy's peak (DPO's and KTO's reference; GRPO's and RLOO's generation),
        memory/terms.reference_forward.
    trainer: ``module:function`` that builds the stage's trainer from engine/run.TrainerInputs and returns an
        engine/run.BuiltTrainer; imported by the engine when the run starts.
    methods: the finetuning types it allows (preference and RL stages: LoRA only, their reference being the same
        weights with the adapter off).
    counts: what its trainer's batch size counts: "rows" (SFT, DPO, KTO) or "sequences" (GRPO's and RLOO's completions).
    studio_trainer: trained by the studio's own Trainer (engine/studio_trainer.py), so packing, dynamic batching,
        layer-wise offload, DeepSpeed / several processes, the chunked loss, keeping the best checkpoint and the
        learning-rate search apply; TRL's trainers do their own batching and run on one process here.
    warns_on_labels: a run on a few labels is told SFT measured better (engine notice ``preference_on_labels``).
    trl: (trainer class, config class) of TRL's, by name, where the stage's ``trainer`` builds whichever its row
        names (engine/online_rl.py: ``("GRPOTrainer", "GRPOConfig")``, ``("RLOOTrainer", "RLOOConfig")``); () for
        a stage whose builder knows its own.
    rewards: the verifiable rewards the page offers by name for this stage (RunConfig ``reward``, with
        ``reward_pattern``: engine/rewards.py); () for none. A stage with rewards is checked by ``_reward_problems``.
    metrics: the numbers its trainer logs beside the loss that the run's progress events keep (trainer_log.jsonl,
        which the page and a benchmark read): DPO's reward accuracy and margin, GRPO's and RLOO's mean reward.
    problems: the stage's own checks of a config, as (check code, values) for config/checks.py.
    """

    name: str
    rows: RowKind
    sequences: int
    no_grad_sequences: int
    trainer: str
    methods: tuple[str, ...] = ("full", "freeze", "lora")
    counts: Literal["rows", "sequences"] = "rows"
    studio_trainer: bool = False
    warns_on_labels: bool = False
    trl: tuple[str, ...] = ()
    rewards: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    problems: Problems = field(default=_no_problems, compare=False)

    def micro_batch(self, batch: int, accumulation: int) -> tuple[int, int]:
        """(the trainer's batch size, accumulation steps) for the page's Batch size and Gradient accumulation.

        A row of ``sequences`` > 1 would put that many times the SFT step's activations through one forward
        (DPO measured: peak RSS >= 1.8x SFT's at batch 8, the feedback-loop bench), so the engine keeps
        ``batch`` sequences per forward and accumulates ``sequences`` times as many steps: the same rows per
        optimizer step the user asked for. Counted in rows (DPO), an odd batch is kept (halving it would change
        the effective batch); counted in sequences (GRPO's completions), the batch is the sequences per forward and
        the rows per optimizer step are batch x accumulation prompts, each with its ``sequences`` generations."""
        if self.sequences > 1 and self.counts == "sequences":
            return batch, accumulation * self.sequences
        if self.sequences > 1 and batch % self.sequences == 0:
            return batch // self.sequences, accumulation * self.sequences
        return batch, accumulation

    def work_per_row(self) -> float:
        """The training work of one row, in SFT rows: each sequence with gradients costs a forward and a backward
        (3 units, SFT's row), each sequence without them a forward (1 unit). GRPO's generation is decoded token by
        token, which costs more than a forward on a CPU (measured ~6.4x SFT's CPU-seconds against 5.3 here, the
        GRPO bench); the next estimate learns the difference from the first run's own speed."""
        return self.sequences + self.no_grad_sequences / 3

    def sequences_per_forward(self, batch: int) -> int:
        """Sequences one forward of the trainer holds at the page's batch (the estimate's activations)."""
        micro = self.micro_batch(batch, 1)[0]
        return micro if self.counts == "sequences" else micro * self.sequences


def _kto_problems(cfg: Any) -> list[tuple[str, dict[str, Any]]]:
    p: list[tuple[str, dict[str, Any]]] = []
    if cfg.pref_ftx:
        p.append(("check.kto_ftx", {}))   # TRL's KTO trainer has no supervised term
    if cfg.per_device_train_batch_size < 2:
        p.append(("check.kto_batch", {}))   # KTO estimates its reference KL from the batch's other answers
    return p


def _reward_problems(cfg: Any) -> list[tuple[str, dict[str, Any]]]:
    """A stage with rewards: the ``regex`` reward needs a pattern that compiles."""
    if cfg.reward != "regex":
        return []
    if not cfg.reward_pattern.strip():
        return [("check.reward_pattern_empty", {})]
    try:
        regex.compile(cfg.reward_pattern)   # as the reward compiles it (engine/rewards.py: regex, for its time limit)
    except regex.error as exc:
        return [("check.reward_pattern_invalid", {"pattern": cfg.reward_pattern[:80], "error": str(exc)[:120]})]
    return []


_TRL_LORA = dict(methods=("lora",))
# a stage that samples answers and scores them (engine/online_rl.py): 4 answers per prompt, its batch counts answers,
# the verifiable rewards of engine/rewards.py; beta 0, so no reference: generation is a forward without gradients
# per answer
_ONLINE_RL = dict(sequences=4, no_grad_sequences=4, trainer="studio.engine.online_rl:stage_trainer",
                  counts="sequences", rewards=("row_label", "json_fields", "regex"), metrics=("reward", "reward_std"),
                  problems=_reward_problems)

STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("sft", rows="sft", sequences=1, no_grad_sequences=0, trainer="studio.engine.run:sft_trainer",
          studio_trainer=True),
    # DPO runs chosen and rejected in one concatenated forward; its reference scores both
    Stage("dpo", rows="ranking", sequences=2, no_grad_sequences=2, trainer="studio.engine.preference:stage_trainer",
          warns_on_labels=True, metrics=("rewards/accuracies", "rewards/margins"), **_TRL_LORA),
    # KTO runs one answer (its KL pair goes through a forward without gradients); the reference scores the answer
    # and its KL pair, plus the policy's own KL forward
    Stage("kto", rows="kto", sequences=1, no_grad_sequences=3, trainer="studio.engine.preference:stage_trainer",
          warns_on_labels=True, problems=_kto_problems, **_TRL_LORA),
    # GRPO: each answer's reward against its group's mean, scaled by the group's spread
    Stage("grpo", rows="sft", trl=("GRPOTrainer", "GRPOConfig"), **_ONLINE_RL),
    # RLOO: each answer's reward against the mean of its prompt's other answers (leave one out)
    Stage("rloo", rows="sft", trl=("RLOOTrainer", "RLOOConfig"), **_ONLINE_RL),
)}
STAGE_NAMES = tuple(STAGES)
# the rewards the page offers by name (RunConfig ``reward``): every stage's, in the table's order
REWARD_NAMES = tuple(dict.fromkeys(r for s in STAGES.values() for r in s.rewards))

# LLaMA-Factory's stages the studio does not train, each refused with its own words (config/lf_keys.py)
LF_REFUSED = ("pt", "rm", "ppo")


def stage_of(name: str) -> Stage:
    """The table's row for ``name``; an unknown name (a config built in code, never coerced) is SFT's, as the
    engine always treated it. RunConfig's checks refuse an unknown stage before a run starts."""
    return STAGES.get(name, STAGES["sft"])


def reader_of(kind: str) -> str:
    """The first stage that reads rows of ``kind`` (what an error about a dataset's kind advises)."""
    return next((s.name for s in STAGES.values() if s.rows == kind), "sft")


def lf_refusal(name: str) -> str | None:
    """The check code for a LLaMA-Factory stage the studio does not train; None for one of the table's."""
    if name in STAGES:
        return None
    return f"check.lf_stage_{name if name in LF_REFUSED else 'other'}"
