"""Online-RL stages (grpo, rloo): TRL's trainer that samples answers to each prompt and scores them with a
verifiable reward (engine/rewards.py), for labels and structured-answer runs.

Such a stage samples ``Stage.sequences`` answers to each prompt (studio/stages.py), scores each with the reward the
config names against the row's reference answer, and moves the model toward the answers that scored above the
others of their prompt: GRPO against the group's mean (TRL's GRPOTrainer), RLOO against the mean of the prompt's
other answers (TRL's RLOOTrainer). No reward model and, at beta 0, no reference forward. Which TRL trainer and
config class is the row's ``trl``; everything else is built here the same way for each.

The rest of the run is the other stages': the same model and adapter, TrainingArguments from the same fields
(engine/arguments.py, with the TRL config class), callbacks, staged checkpoints, resume and abort. Prompts are the
studio's own (the run's template, exactly as SFT and inference render them), tokenized as the studio tokenizes
them; an answer is read up to the template's end marker.
"""
from __future__ import annotations

from typing import Any

from ..data.templates import Template, get_template
from ..data.tokenize import _bos_kept, example_prompt
from ..errors import StudioError
from ..stages import Stage
from .arguments import training_arguments
from .rewards import reward_for
from .stage_trainer import BuiltTrainer, TrainerInputs, held_out_split
from .studio_trainer import GuardedCheckpoints


def completion_budget(tok: Any, template: Template, references: list[str], cutoff_len: int) -> int:
    """Tokens an answer may take: the longest reference answer (with its end marker) and a little room, at most
    half of ``cutoff_len``: a verifiable answer is short, and every generated token costs a forward on a CPU."""
    longest = max((len(tok(template.answer(r), add_special_tokens=False)["input_ids"]) for r in references[:500]),
                  default=8)
    return max(4, min(cutoff_len // 2, longest + 4))


def trl_classes(stage: Stage) -> tuple[type, type]:
    """(the studio's subclass of TRL's trainer, TRL's config class) that the row's ``trl`` names. The subclass
    keeps the divergence guard and staged checkpoints (GuardedCheckpoints first) and tokenizes prompts as the studio
    does (``_prompt_budget`` and ``_studio_template``: set by ``stage_trainer`` on the trainer it builds)."""
    import trl   # start-up: TRL, with torch and transformers; only an online-RL run needs it
    trainer_name, config_name = stage.trl
    base = getattr(trl, trainer_name)

    def _tokenize_prompts(self: Any, prompts: list) -> tuple[list[list[int]], None, dict]:
        """The studio's tokenization of its own prompt text (no second BOS; a long prompt loses its start, BOS
        kept, as SFT's rows do). A private override: TRL 1.16's GRPOTrainer and RLOOTrainer tokenize plain-text
        prompts with the tokenizer's defaults and offer no hook; both return (ids, images, multimodal fields)."""
        out = []
        for text in prompts:
            ids = list(self.processing_class(text, add_special_tokens=False)["input_ids"])
            if len(ids) > self._prompt_budget:
                n_bos = _bos_kept(self.processing_class, self._studio_template, ids)
                ids = ids[:n_bos] + ids[len(ids) - (self._prompt_budget - n_bos):]
            out.append(ids)
        return out, None, {}

    cls = type(f"Studio{trainer_name}", (GuardedCheckpoints, base), {"_tokenize_prompts": _tokenize_prompts})
    return cls, getattr(trl, config_name)


def stage_trainer(inputs: TrainerInputs) -> BuiltTrainer:
    """An online-RL stage (the stage table's trainer, studio/stages.py): the TRL trainer its row names on the run's
    rows, their answers the references the reward checks; held-out rows saved as for SFT (Evaluate checks the tuned
    model on them), no evaluation during training (it would generate for every held-out row at each evaluation).

    Raises:
        StudioError: no row has an answer to check.
    """
    from datasets import Dataset   # start-up: datasets, with pyarrow; only a TRL stage needs it
    cfg, stage, tok = inputs.cfg, inputs.stage, inputs.tok
    template = get_template(cfg.template, tok)
    train_rows, val_rows = held_out_split(inputs)
    rows = [{"prompt": example_prompt(template, r), "reference": str(r.get("output", "")).strip()}
            for r in train_rows if str(r.get("output", "")).strip()]
    if not rows:
        raise StudioError.of("engine.no_trainable_tokens", dataset=cfg.dataset, rows=len(train_rows))
    budget = completion_budget(tok, template, [r["reference"] for r in rows], cfg.cutoff_len)
    micro, accumulation = stage.micro_batch(cfg.per_device_train_batch_size, cfg.gradient_accumulation_steps)
    cls, config_class = trl_classes(stage)
    # gradient checkpointing is the engine's (engine/run.py enables it on the model), as for the other stages;
    # beta 0 for both (TRL's RLOO default is 0.05): no reference forward, as the row's no_grad_sequences count
    args = training_arguments(cfg, inputs.run, inputs.device, has_val=False, plan=inputs.plan,
                              args_class=config_class, gradient_checkpointing=False,
                              per_device_train_batch_size=micro, gradient_accumulation_steps=accumulation,
                              num_generations=stage.sequences, max_completion_length=budget, beta=0.0,
                              train_sampling_strategy="random", log_completions=False)
    trainer = cls(model=inputs.model, reward_funcs=[reward_for(cfg, template)], args=args,
                  train_dataset=Dataset.from_list(rows), processing_class=tok, callbacks=inputs.callbacks)
    trainer._prompt_budget, trainer._studio_template = max(1, cfg.cutoff_len - budget), template
    generate, count = trainer._generate_and_score_completions, inputs.count_tokens

    def counted(batch: Any) -> Any:
        """Tokens per second on the page: the prompts and answers of each generation batch (TRL has already
        brought them to the host to decode the answers, so this sum waits for nothing new)."""
        out = generate(batch)
        count(int(out["prompt_mask"].sum()) + int(out["completion_mask"].sum()))
        return out
    trainer._generate_and_score_completions = counted
    counts = {"train_rows": len(rows), "val_rows": len(val_rows), "truncated": 0, "history_masked": 0,
              "tokenized_from_cache": False, "generations": stage.sequences, "answer_tokens": budget}
    return BuiltTrainer(trainer, counts, [])   # no evaluation during training (above)
