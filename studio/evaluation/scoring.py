"""Log-probabilities of chosen next tokens without the full-vocabulary logits of every position.

Why: ``log_softmax(model(ids).logits)`` materialises batch x length x vocabulary floats, twice (logits and their
log-softmax), in fp32: 8.4 GB for 64 sequences x 256 tokens x a 128k vocabulary, for the few answer tokens a
label score needs. Here the output head only sees the hidden states at the scored positions: a pre-hook on the
model's output-embedding module gathers them, so the head projects N positions instead of batch x length, and the
log-softmax runs over those N rows in chunks. transformers has ``logits_to_keep``, but it keeps the same positions
for every row, and the rows' prompts differ in length.
"""
from __future__ import annotations

from typing import Any, Sequence

CHUNK = 256   # positions per fp32 log-softmax: 128 MB at a 128k vocabulary


def token_logprobs(model: Any, input_ids: Any, attention_mask: Any, rows: Sequence[int], positions: Sequence[int],
                   tokens: Sequence[int], argmax: bool = False, **forward: Any) -> Any:
    """``log p(tokens[k] | input_ids[rows[k], :positions[k] + 1])`` for every k, as a 1-D fp32 tensor.

    Equal (to float rounding) to indexing ``log_softmax(model(input_ids).logits.float(), -1)``. ``forward``
    goes to the model's forward as well (position_ids, past_key_values: scoring after a cached prefix).
    ``argmax``: also the most likely token at each of those positions (greedy decoding's choice), as a pair.
    """
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    dev = input_ids.device
    r = torch.tensor(list(rows), device=dev, dtype=torch.long)
    p = torch.tensor(list(positions), device=dev, dtype=torch.long)
    t = torch.tensor(list(tokens), device=dev, dtype=torch.long)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    fired: list[bool] = []

    def gather(_module: Any, args: tuple) -> tuple | None:
        hidden = args[0]
        if not fired and torch.is_tensor(hidden) and hidden.dim() == 3 and \
                tuple(hidden.shape[:2]) == tuple(input_ids.shape):
            fired.append(True)
            return (hidden[r, p].unsqueeze(0), *args[1:])
        return None

    handle = head.register_forward_pre_hook(gather) if head is not None else None
    try:
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=attention_mask, **forward).logits
    finally:
        if handle is not None:
            handle.remove()
    # a model whose forward does not go through its output embeddings returns all positions: pick them here
    picked = logits[0] if fired else logits[r, p]
    out = torch.empty(len(t), dtype=torch.float32, device=dev)
    best = torch.empty(len(t), dtype=torch.long, device=dev)
    with torch.no_grad():
        for start in range(0, len(t), CHUNK):
            part = picked[start:start + CHUNK].float()
            out[start:start + CHUNK] = part.gather(1, t[start:start + CHUNK, None]).squeeze(1) - \
                torch.logsumexp(part, dim=-1)
            if argmax:
                best[start:start + CHUNK] = part.argmax(dim=-1)
    return (out, best) if argmax else out
