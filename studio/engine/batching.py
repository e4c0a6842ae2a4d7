"""Length-aware dynamic batching and the padding collator (transformers' DataCollatorForSeq2Seq).

Reviews are short with a long tail; fixed batches pad every row to the longest one in the
batch. Sorting rows into buckets of similar length and filling each batch up to a token
budget (rows x longest row) removes most padding, so more real tokens go through per second.
"""
from __future__ import annotations

import copy
import random
from typing import Any, Iterator

from ..data.tokenize import IGNORE_INDEX


class TokenBudgetBatchSampler:
    """Yields lists of indices: similar lengths together, ``len(batch) * max_len <= max_tokens``.

    Batches are shuffled per epoch (seeded) so the order is not long-to-short. ``set_epoch``
    keeps resumed runs on the same order as uninterrupted ones.
    """

    def __init__(self, lengths: list[int], max_tokens: int, max_batch_size: int | None = None,
                 seed: int = 42, bucket_factor: int = 50, packed: bool = False):
        if max_tokens < max(lengths, default=1):
            max_tokens = max(lengths)
        self.lengths = lengths
        self.max_tokens = max_tokens
        self.max_batch_size = max_batch_size or len(lengths)
        self.seed = seed
        self.epoch = 0
        self.bucket_factor = bucket_factor
        self.packed = packed  # packed rows cost the sum of lengths (no padding), padded ones rows x longest
        self._batches = self._make_batches(0)

    def set_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self._batches = self._make_batches(epoch)

    def _make_batches(self, epoch: int) -> list[list[int]]:
        rng = random.Random(self.seed + epoch)
        order = list(range(len(self.lengths)))
        rng.shuffle(order)
        # sort within large chunks: similar lengths together, yet a different mix each epoch
        chunk = max(1, self.bucket_factor * max(1, self.max_tokens // max(1, max(self.lengths))))
        batches: list[list[int]] = []
        for start in range(0, len(order), chunk):
            part = order[start:start + chunk]
            if not self.packed:  # packed rows carry no padding: no need to group by length
                part = sorted(part, key=lambda i: self.lengths[i])
            batch: list[int] = []
            longest = 0
            for i in part:
                new_longest = longest + self.lengths[i] if self.packed else max(longest, self.lengths[i])
                cost = new_longest if self.packed else new_longest * (len(batch) + 1)
                if batch and (cost > self.max_tokens or len(batch) >= self.max_batch_size):
                    batches.append(batch)
                    batch, new_longest = [], self.lengths[i]
                batch.append(i)
                longest = new_longest
            if batch:
                batches.append(batch)
        rng.shuffle(batches)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches)

    def __len__(self) -> int:
        return len(self._batches)


def card_batching(device: str, attention: str | None, packing: bool) -> str:
    """How a run batches its rows: "as_configured" (CPU, or packing asked for), "padding_free" or "token_budget".

    On a card padding is wasted work, so rows go padding-free (flattened into one row, ``position_ids``
    restarting at each example, transformers' DataCollatorWithFlattening) where the attention kernel runs such a
    row without a mask: FlashAttention's varlen kernel and flex attention's block mask. SDPA would need the block-
    diagonal mask materialised (rows x rows per flattened row), which takes it off its flash kernel and computes
    attention across the whole flattened row; there the token-budget batches (similar lengths, little padding,
    no mask) are the cheaper way. On a CPU the configured batching stays (its speed was measured there).
    """
    if device != "cuda" or packing:
        return "as_configured"
    impl = attention or ""
    return "padding_free" if "flash" in impl or impl == "flex_attention" else "token_budget"


def pad_collator(tokenizer: Any, pad_to_multiple_of: int | None = None) -> Any:
    """transformers' DataCollatorForSeq2Seq, padding on the right whatever side the tokenizer pads on.

    Inputs get the tokenizer's pad id and mask 0, labels get -100 (no loss), lengths round up to
    ``pad_to_multiple_of``. Right, because the collator pads labels and inputs on ``tokenizer.padding_side`` and
    some tokenizers ship 'left' (for batched generation): a left-padded training row would start at position
    k instead of 0. The collator gets its own shallow copy, so the caller's tokenizer keeps its side.
    """
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    from transformers import DataCollatorForSeq2Seq
    right = copy.copy(tokenizer)
    right.padding_side = "right"
    return DataCollatorForSeq2Seq(right, pad_to_multiple_of=pad_to_multiple_of, label_pad_token_id=IGNORE_INDEX,
                                  return_tensors="pt")


# Keys the host adds to a collated batch: counted on the host before the batch moves, so the step never asks the
# card for them (an ``.item()`` there waits for every queued kernel). StudioTrainer pops them before the forward.
TOKENS_KEY = "studio_tokens"          # real (non-padding) input tokens: the progress log's tokens/s
ITEMS_KEY = "studio_items"            # next-token labels that carry loss: num_items_in_batch
LOSS_INDEX_KEY = "studio_loss_index"  # flat [rows x (seq-1)] positions that carry loss: the selective loss
HOST_KEYS = (TOKENS_KEY, ITEMS_KEY, LOSS_INDEX_KEY)


class HostCounts:
    """Wraps a collator: the batch it returns also carries the counts the step needs (``HOST_KEYS``).

    Why a wrapper and not a count in the step: the collator runs on the host (in a loader worker on a card), where
    ``nonzero`` and ``sum`` cost nothing and need no card; the same count inside the step is a host-device sync.
    """

    def __init__(self, collate: Any, loss_index: bool = True, drop_mask: bool = False):
        self.collate = collate
        self.loss_index = loss_index
        # A right-padded row of a causal LM needs no attention mask: each real token attends only to earlier
        # positions, all real, and the pads after it carry no loss. Without the mask, transformers' mask builder
        # does not ask the card whether the mask is all ones (two syncs a forward with SDPA) and SDPA runs its
        # causal kernel with no mask in memory. make_collator turns this on only where it holds.
        self.drop_mask = drop_mask

    def __call__(self, features: list[dict[str, Any]]) -> Any:
        # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
        import torch
        batch = self.collate(features)
        ids = batch["input_ids"]
        mask = batch.get("attention_mask")
        batch[TOKENS_KEY] = int(mask.sum()) if mask is not None else int(ids.numel())
        if self.drop_mask and mask is not None:
            del batch["attention_mask"]
        labels = batch.get("labels")
        if labels is not None:
            keep = labels[:, 1:] != IGNORE_INDEX
            batch[ITEMS_KEY] = int(keep.sum())
            if self.loss_index:
                batch[LOSS_INDEX_KEY] = keep.reshape(-1).nonzero().flatten().to(torch.long)
        return batch


def pop_host_counts(inputs: dict[str, Any]) -> dict[str, Any]:
    """Take the host's counts out of a batch (the model's forward must not see them)."""
    return {key: inputs.pop(key) for key in HOST_KEYS if key in inputs}
