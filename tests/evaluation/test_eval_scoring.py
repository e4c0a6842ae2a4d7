"""Label scoring reads only the answer tokens' logits: same scores as the full log-softmax,
a fraction of its memory at a 128k vocabulary."""
from __future__ import annotations

import weakref
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from studio.data.templates import get_template
from studio.data.tokenize import prompt_ids
from studio.evaluation.evaluate import _score_labels
from tests.conftest import make_review_rows

VOCAB = 128256   # Llama-3's vocabulary
LABELS = ["positive", "negative"]


class LiveBytes(TorchDispatchMode):
    """Peak bytes of CPU tensor storages alive at once, counting every storage an op creates (views share one).

    Why not tracemalloc: torch's CPU allocator is not Python's, so tracemalloc does not see tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}
        self.current = self.peak = self.largest = 0

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                st = t.untyped_storage()
                if id(st) not in self.live and st.nbytes():
                    self.live[id(st)] = st.nbytes()
                    self.current += st.nbytes()
                    self.peak = max(self.peak, self.current)
                    self.largest = max(self.largest, st.nbytes())
                    weakref.finalize(st, self._free, id(st))
        return out


@pytest.fixture(scope="module")
def big_vocab(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """A 1-layer Llama with a 128k vocabulary (random weights) and a small BPE tokenizer whose ids fit in it."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from studio.models.loading import build_tiny_llama, demo_texts, load_tokenizer
    folder = build_tiny_llama(tmp_path_factory.mktemp("vocab") / "tok", demo_texts(make_review_rows(120, seed=2)),
                              hidden=16, layers=1, heads=2, vocab_size=300)
    tok = load_tokenizer(str(folder))
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=True,
                         pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.get_input_embeddings().weight.normal_(0, 0.5)   # a spread-out distribution, not near-uniform
    return model, tok


def _old_scores(model, tok, template, rows) -> list[list[float]]:
    """The scoring before the fix: log_softmax over the full vocabulary at every position (same answers)."""
    answers = _answers(tok, template)
    prompts = [prompt_ids(tok, template, r["instruction"], r["input"]) for r in rows]
    seqs = [p + a for p in prompts for a in answers]
    width = max(len(s) for s in seqs)
    ids = torch.tensor([s + [tok.pad_token_id] * (width - len(s)) for s in seqs])
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
    out = []
    for i, p in enumerate(prompts):
        out.append([float(logp[i * len(answers) + j, torch.arange(len(p) - 1, len(p) - 1 + len(a)),
                                torch.tensor(a)].sum()) for j, a in enumerate(answers)])
    return out


def _answers(tok, template) -> list[list[int]]:
    """Each label's answer tokens as _score_labels builds them (the template's answer ends the turn itself)."""
    return [tok.encode(template.answer(lab), add_special_tokens=False) for lab in LABELS]


def _batch(tok, template, rows):
    answers = _answers(tok, template)
    seqs = [prompt_ids(tok, template, r["instruction"], r["input"]) + a for r in rows for a in answers]
    width = max(len(s) for s in seqs)
    ids = torch.tensor([s + [tok.pad_token_id] * (width - len(s)) for s in seqs])
    return ids, (ids != tok.pad_token_id).long()


def test_scores_equal_the_full_log_softmax(big_vocab) -> None:
    model, tok = big_vocab
    template = get_template("default")
    rows = make_review_rows(6, seed=4)
    new = _score_labels(model, tok, template, rows, LABELS, batch_rows=4)   # two batches, uneven
    old = _old_scores(model, tok, template, rows)
    # 1e-4: scores here are ~-100, where one fp32 ulp is 7.6e-6; the KV-cache path (left-padded prompts, labels
    # scored on the cache) differs from the one-batch forward by a couple of ulps (measured 1.5e-5)
    assert max(abs(a - b) for n, o in zip(new, old) for a, b in zip(n, o)) < 1e-4, (new, old)
    assert len({round(s[0] - s[1], 3) for s in new}) > 1   # the scores really differ between rows


def test_peak_memory_stays_within_twice_the_forward(big_vocab) -> None:
    model, tok = big_vocab
    model = model.to(torch.bfloat16)   # as evaluated on a card
    try:
        template = get_template("default")
        rows = make_review_rows(8, seed=6)
        ids, mask = _batch(tok, template, rows)
        forward = LiveBytes()
        with forward, torch.no_grad():
            out = model(input_ids=ids, attention_mask=mask)
            del out
        scoring = LiveBytes()
        with scoring:
            _score_labels(model, tok, template, rows, LABELS, batch_rows=8)
        full_vocab_rows = ids.shape[0] * ids.shape[1] * VOCAB
        print(f"forward peak {forward.peak / 2**20:.1f} MiB, scoring peak {scoring.peak / 2**20:.1f} MiB, "
              f"largest tensor {scoring.largest / 2**20:.1f} MiB ({ids.shape[0]}x{ids.shape[1]} tokens, vocab {VOCAB})")
        assert scoring.peak <= 2 * forward.peak, (scoring.peak, forward.peak)
        assert scoring.largest < full_vocab_rows * 2 / 4   # no batch x length x vocabulary tensor, not even in bf16
    finally:
        model.to(torch.float32)
