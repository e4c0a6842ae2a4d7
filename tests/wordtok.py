"""A word-level tokenizer built in-process: one token per whitespace-separated word, so tests can
say exactly which positions carry loss."""
from __future__ import annotations

from typing import Any

SPECIALS = ["<s>", "</s>", "[UNK]"]


def id_tokenizer(vocab_size: int, pad_id: int = 0) -> Any:
    """A tokenizer whose token ids are just 0..vocab_size-1 ('t0', 't1', ...), pad = ``pad_id``: for tests that
    train on random ids and need a collator (transformers' collators pad through a tokenizer)."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    core = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab_size)}, unk_token=f"t{pad_id}"))
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token=f"t{pad_id}", pad_token=f"t{pad_id}")


def word_tokenizer(words: str, chat_template: str | None = None) -> Any:
    """PreTrainedTokenizerFast over SPECIALS + ``words`` (space-separated); ids follow that order."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {w: i for i, w in enumerate(dict.fromkeys(SPECIALS + words.split()))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="[UNK]")
    if chat_template:
        tok.chat_template = chat_template
    return tok
