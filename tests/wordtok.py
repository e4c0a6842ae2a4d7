"""A word-level tokenizer built in-process: one token per whitespace-separated word, so tests can
say exactly which positions carry loss."""
from __future__ import annotations

from typing import Any

SPECIALS = ["<s>", "</s>", "[UNK]"]


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
