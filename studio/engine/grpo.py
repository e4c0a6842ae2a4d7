"""Stage grpo: TRL's GRPOTrainer with verifiable rewards, for labels and structured-answer runs.

GRPO samples ``Stage.sequences`` answers to each prompt (studio/stages.py), scores each with a reward a program can
check against the row's reference answer, and moves the model toward the answers that scored above their group's
mean. No reward model and, at TRL's default beta 0, no reference forward. The rewards, offered on the page by
name (RunConfig ``grpo_reward``):

* ``row_label``: the answer is the row's label (1 or 0; case and surrounding spaces and full stops ignored);
* ``json_fields``: the answer is valid JSON with the reference's fields (0 not a JSON object; 0.5 for one, plus
  0.5 x the share of the reference object's keys it has: 1 = valid and complete);
* ``regex``: the answer matches the regular expression ``grpo_pattern`` as a whole (1 or 0).

The rest of the run is the other stages': the same model and adapter, TrainingArguments from the same fields
(engine/arguments.py, with TRL's GRPOConfig), callbacks, staged checkpoints, resume and abort. Prompts are the
studio's own (the run's template, exactly as SFT and inference render them), tokenized as the studio tokenizes
them; an answer is read up to the template's end marker.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import regex

from ..data.templates import Template, get_template
from ..data.tokenize import _bos_kept, example_prompt
from ..errors import StudioError
from .arguments import training_arguments
from .stage_trainer import BuiltTrainer, TrainerInputs, held_out_split
from .studio_trainer import GuardedCheckpoints

Reward = Callable[..., list[float]]


def _answer(text: str, end: str) -> str:
    """The answer of a completion: up to the template's end marker (decoded text may keep a textual one)."""
    return (text.split(end)[0] if end else text).strip()


def _plain(text: str) -> str:
    return text.strip().strip(".。").strip().casefold()


def label_reward(end: str = "") -> Reward:
    """1.0 where the answer is the row's label, else 0.0."""
    def label(completions: list[str], reference: list[str], **_: Any) -> list[float]:
        return [float(_plain(_answer(c, end)) == _plain(r)) for c, r in zip(completions, reference)]
    return label


def json_fields_reward(end: str = "") -> Reward:
    """0 for an answer that is not a JSON object; 0.5 for one, plus 0.5 x the share of the reference's keys it
    has (a reference that is not an object: 1.0 for any valid JSON)."""
    def json_fields(completions: list[str], reference: list[str], **_: Any) -> list[float]:
        out = []
        for c, r in zip(completions, reference):
            try:
                got = json.loads(_answer(c, end))
            except ValueError:
                out.append(0.0)
                continue
            try:
                want = json.loads(r)
            except ValueError:
                want = None
            if not isinstance(want, dict):
                out.append(1.0)
            elif not isinstance(got, dict):
                out.append(0.0)
            else:
                out.append(0.5 + 0.5 * (len(set(want) & set(got)) / len(want) if want else 1.0))
        return out
    return json_fields


# The owner's pattern runs on every sampled answer of every step, and a pattern that backtracks catastrophically
# (``(a+)+$``) would hang the run on one answer: each match gets this long, then scores 0. The standard library's
# re has no time limit; the regex package (transformers' own dependency, re's syntax) does.
MATCH_TIMEOUT_S = 0.05


def pattern_reward(pattern: str, end: str = "") -> Reward:
    """1.0 where the whole answer matches ``pattern``, else 0.0 (also where the match takes too long)."""
    compiled = regex.compile(pattern)

    def matches(text: str) -> bool:
        try:
            return compiled.fullmatch(text, timeout=MATCH_TIMEOUT_S) is not None
        except TimeoutError:
            return False

    def pattern_match(completions: list[str], **_: Any) -> list[float]:
        return [float(matches(_answer(c, end))) for c in completions]
    return pattern_match


def reward_for(cfg: Any, template: Template) -> Reward:
    """The reward the config names (``grpo_reward``, ``grpo_pattern``), reading answers up to ``template``'s end."""
    end = template.assistant_suffix.strip()
    if cfg.grpo_reward == "json_fields":
        return json_fields_reward(end)
    if cfg.grpo_reward == "regex":
        return pattern_reward(cfg.grpo_pattern, end)
    return label_reward(end)


def completion_budget(tok: Any, template: Template, references: list[str], cutoff_len: int) -> int:
    """Tokens an answer may take: the longest reference answer (with its end marker) and a little room, at most
    half of ``cutoff_len``: a verifiable answer is short, and every generated token costs a forward on a CPU."""
    longest = max((len(tok(template.answer(r), add_special_tokens=False)["input_ids"]) for r in references[:500]),
                  default=8)
    return max(4, min(cutoff_len // 2, longest + 4))


def _trainer_class(template: Template, prompt_budget: int) -> type:
    # start-up: TRL, with torch and transformers; only a GRPO run needs it
    from trl import GRPOTrainer

    class StudioGRPOTrainer(GuardedCheckpoints, GRPOTrainer):  # type: ignore[misc, valid-type]
        def _tokenize_prompts(self, prompts: list) -> tuple[list[list[int]], None, dict]:
            """The studio's tokenization of its own prompt text (no second BOS; a long prompt loses its start,
            BOS kept, as SFT's rows do). A private override: TRL 1.16 tokenizes plain-text prompts with the
            tokenizer's defaults and offers no hook."""
            out = []
            for text in prompts:
                ids = list(self.processing_class(text, add_special_tokens=False)["input_ids"])
                if len(ids) > prompt_budget:
                    n_bos = _bos_kept(self.processing_class, template, ids)
                    ids = ids[:n_bos] + ids[len(ids) - (prompt_budget - n_bos):]
                out.append(ids)
            return out, None, {}

    return StudioGRPOTrainer


def stage_trainer(inputs: TrainerInputs) -> BuiltTrainer:
    """Stage grpo (the stage table's trainer, studio/stages.py): TRL's GRPOTrainer on the run's rows, their
    answers the references the reward checks; held-out rows saved as for SFT (Evaluate checks the tuned model on
    them), no evaluation during training (it would generate for every held-out row at each evaluation).

    Raises:
        StudioError: no row has an answer to check.
    """
    # start-up: datasets and TRL, with torch; only a GRPO run needs them
    from datasets import Dataset
    from trl import GRPOConfig
    cfg, stage, tok = inputs.cfg, inputs.stage, inputs.tok
    template = get_template(cfg.template, tok)
    train_rows, val_rows = held_out_split(inputs)
    rows = [{"prompt": example_prompt(template, r), "reference": str(r.get("output", "")).strip()}
            for r in train_rows if str(r.get("output", "")).strip()]
    if not rows:
        raise StudioError.of("engine.no_trainable_tokens", dataset=cfg.dataset, rows=len(train_rows))
    budget = completion_budget(tok, template, [r["reference"] for r in rows], cfg.cutoff_len)
    micro, accumulation = stage.micro_batch(cfg.per_device_train_batch_size, cfg.gradient_accumulation_steps)
    # gradient checkpointing is the engine's (engine/run.py enables it on the model), as for the other stages
    args = training_arguments(cfg, inputs.run, inputs.device, has_val=False, plan=inputs.plan, args_class=GRPOConfig,
                              gradient_checkpointing=False, per_device_train_batch_size=micro,
                              gradient_accumulation_steps=accumulation, num_generations=stage.sequences,
                              max_completion_length=budget, beta=0.0, train_sampling_strategy="random",
                              log_completions=False)
    reward = reward_for(cfg, template)
    cls = _trainer_class(template, max(1, cfg.cutoff_len - budget))
    trainer = cls(model=inputs.model, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows),
                  processing_class=tok, callbacks=inputs.callbacks)
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
