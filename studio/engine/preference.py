"""Preference tuning (stage dpo / kto): TRL's DPOTrainer and KTOTrainer, assembled like the SFT run.

The rest of the run is the SFT run's: the same model and adapter (studio/models/loading.py apply_method), the same
TrainingArguments (steps, saving, precision, logging: engine/arguments.py with TRL's config class), the same
callbacks (live loss on the page, stop requests, the divergence guard) and the same staged checkpoints, so resume
and abort work unchanged.

The reference model. Handed a PeftModel with no ref_model, TRL 1.16 adds a second adapter named "ref", a copy of
the trained one, and computes the reference with it. For a fresh LoRA (B = 0) that copy is the base model exactly,
so the studio removes it and TRL falls back to ``disable_adapter()``: the reference is the same weights with the
adapter off, with no second copy of anything. PiSSA starts from a non-zero adapter on changed base weights, where
the copy is the only right reference; it stays then (one adapter's size).
"""
from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any, Callable

from ..config.run_config import RunConfig
from ..data.preference import encode_preference
from ..data.templates import get_template
from ..errors import StudioError
from ..models.precision import PrecisionPlan
from ..runs.run_dir import RunDir
from ..stages import stage_of
from .arguments import training_arguments
from .stage_trainer import BuiltTrainer, TrainerInputs, held_out_split
from .studio_trainer import GuardedCheckpoints

REF_ADAPTER = "ref"


def keeps_reference_adapter(cfg: RunConfig) -> bool:
    """True where the adapter the run starts from is not zero, so switching it off is not the starting model:
    PiSSA, or an earlier run's adapter continued (the reference is then that adapter, as DPO after SFT wants)."""
    return bool(cfg.pissa_init or cfg.adapter_name_or_path)


def preference_arguments(cfg: RunConfig, run: RunDir, device: str, has_val: bool, plan: PrecisionPlan) -> Any:
    """TRL's DPOConfig / KTOConfig with the run's common TrainingArguments and LLaMA-Factory's pref_* keys."""
    # gradient checkpointing: the studio turns it on on the model itself (engine/run.py) as for SFT; TRL's config
    # defaults it on and would enable it a second time. Sampling: TRL's datasets carry no input_ids to group by
    # length. max_length: rows arrive cut to cutoff_len by the studio's own rule (studio/data/preference.py)
    # Rows per forward: a DPO row is two sequences, so the micro-batch is halved and accumulation doubled where the
    # batch divides (the stage table's micro_batch says why, studio/stages.py; the estimator plans with the same rule)
    stage = stage_of(cfg.stage)
    micro, accumulation = stage.micro_batch(cfg.per_device_train_batch_size, cfg.gradient_accumulation_steps)
    common = dict(gradient_checkpointing=False, max_length=None, beta=cfg.pref_beta, precompute_ref_log_probs=False,
                  train_sampling_strategy="random", per_device_train_batch_size=micro,
                  gradient_accumulation_steps=accumulation)
    if stage.rows == "ranking":   # pairs: DPO
        # start-up: TRL, with torch and transformers; only a preference run needs it
        from trl import DPOConfig
        losses, weights = [cfg.pref_loss], [1.0]
        if cfg.pref_ftx:
            losses.append("sft")  # LLaMA-Factory's pref_ftx: the chosen answer's NLL, weighted
            weights.append(cfg.pref_ftx)
        return training_arguments(cfg, run, device, has_val=has_val, plan=plan, args_class=DPOConfig, **common,
                                  loss_type=losses, loss_weights=weights)
    # start-up: TRL, with torch and transformers; only a preference run needs it
    from trl import KTOConfig
    # TRL's KTO pairs each answer with its batch neighbour's prompt for the KL estimate and needs the batches in
    # dataset order; the rows are shuffled once, seeded, before (build_trainer)
    common["train_sampling_strategy"] = "sequential"
    return training_arguments(cfg, run, device, has_val=has_val, plan=plan, args_class=KTOConfig, **common,
                              desirable_weight=cfg.kto_chosen_weight, undesirable_weight=cfg.kto_rejected_weight)


def _trainer_class(rows: str) -> type:
    """TRL's trainer for the stage's rows: DPO's for ranking pairs, KTO's for tagged answers."""
    # start-up: TRL, with torch and transformers; only a preference run needs it
    from trl import DPOTrainer, KTOTrainer
    base = DPOTrainer if rows == "ranking" else KTOTrainer

    class StudioPreferenceTrainer(GuardedCheckpoints, base):  # type: ignore[misc, valid-type]
        def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
            """The trained adapter only: a kept reference copy is rebuilt from the starting adapter at every start
            (resume too), so saving it would only double the folder and confuse a loader. Checkpoints and the final
            save both go through here."""
            super().save_model(output_dir, _internal_call=_internal_call)
            shutil.rmtree(Path(output_dir or self.args.output_dir) / REF_ADAPTER, ignore_errors=True)

        def _prepare_dataset(self, dataset: Any, processing_class: Any, args: Any, dataset_name: str) -> Any:
            """Rows come tokenized by the studio's template; only KTO's KL pairing is left to do (as TRL does it:
            each answer paired with the previous row's prompt inside a batch).

            A private override: TRL 1.16 prepares every dataset in __init__ with no public way to skip it (only a
            vision dataset is skipped), and it expects text rows, where the studio hands rows it tokenized with
            its own template."""
            if "prompt_ids" not in dataset.column_names:
                return super()._prepare_dataset(dataset, processing_class, args, dataset_name)
            if getattr(self, "calculate_KL", False):
                def add_kl(batch: dict[str, list]) -> dict[str, list]:
                    batch["KL_completion_ids"] = [batch["completion_ids"][-1]] + batch["completion_ids"][:-1]
                    return batch
                dataset = dataset.map(add_kl, batched=True, batch_size=args.per_device_train_batch_size)
            return dataset

    return StudioPreferenceTrainer


def build_trainer(cfg: RunConfig, run: RunDir, model: Any, tok: Any, train_rows: list[dict], val_rows: list[dict],
                  device: str, plan: PrecisionPlan, callbacks: list[Any], token_counter: Callable[[int], None]
                  ) -> tuple[Any, dict[str, Any]]:
    """The TRL trainer for the run and the counts the run log records (rows, truncated rows).

    Raises:
        StudioError: no row is left to train on.
    """
    # start-up: datasets, 1.3 s at import; only a preference run needs it
    from datasets import Dataset
    template = get_template(cfg.template, tok)
    kto = stage_of(cfg.stage).rows == "kto"   # tagged answers
    if kto:
        train_rows = list(train_rows)
        random.Random(cfg.seed).shuffle(train_rows)
    train, truncated = encode_preference(tok, template, train_rows, cfg.cutoff_len)
    val, _ = encode_preference(tok, template, val_rows, cfg.cutoff_len)
    if not train:
        raise StudioError.of("engine.no_preference_rows", dataset=cfg.dataset)
    args = preference_arguments(cfg, run, device, has_val=bool(val), plan=plan)
    cls = _trainer_class(stage_of(cfg.stage).rows)
    trainer = cls(model=model, ref_model=None, args=args, train_dataset=Dataset.from_list(train),
                  eval_dataset=Dataset.from_list(val) if val else None, processing_class=tok, callbacks=callbacks)
    peft_config = getattr(trainer.model, "peft_config", {})
    if REF_ADAPTER in peft_config and not keeps_reference_adapter(cfg):
        trainer.model.delete_adapter(REF_ADAPTER)  # reference = adapter off (see the module's docstring)
        trainer.model.set_adapter("default")
    collate = trainer.data_collator

    def counted(examples: list[dict]) -> dict:
        batch = collate(examples)
        # tokens per second on the page: every sequence the step runs forward (chosen and rejected, or the
        # answer and its KL pair), counted on the host from the collated batch
        token_counter(int(sum(v.sum() for k, v in batch.items() if k.endswith("attention_mask"))))
        return batch
    trainer.data_collator = counted
    n_good = sum(1 for r in train_rows if r.get("kto_tag") is True)
    counts = {"train_rows": len(train), "val_rows": len(val), "truncated": truncated, "history_masked": 0,
              "tokenized_from_cache": False,
              **({"desirable_rows": n_good, "undesirable_rows": len(train_rows) - n_good} if kto else {})}
    return trainer, counts


def stage_trainer(inputs: TrainerInputs) -> BuiltTrainer:
    """Stages dpo / kto (the stage table's trainer, studio/stages.py): the held-out rows are saved as for SFT (their
    chosen or good answers, so Evaluate checks the tuned model on them) and the training prompts fingerprinted, then
    TRL's trainer is built (build_trainer, looked up when called: a test may replace it)."""
    train_rows, val_rows = held_out_split(inputs)
    trainer, counts = build_trainer(inputs.cfg, inputs.run, inputs.model, inputs.tok, train_rows, val_rows,
                                    inputs.device, inputs.plan, inputs.callbacks, inputs.count_tokens)
    return BuiltTrainer(trainer, counts, val_rows)
