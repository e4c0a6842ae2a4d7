"""Is the exported GGUF the model that was trained? Reload it with transformers' GGUF reader (as the studio's
importer does) and compare it with the trained run on held-out rows.

Measured per row: the prompt the GGUF's embedded chat template renders, tokenized by the GGUF's own tokenizer,
against the training prompt ids (token for token); the next-token logits at the end of the prompt (max absolute
difference, same argmax); and the label the evaluator's own label scoring picks (same label, accuracy of each).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from ..data.templates import get_template
from ..data.tokenize import prompt_ids
from ..models.loading import load_for_inference
from .evaluate import _score_labels
from .gguf_export import GGUF_NAME
from .metrics import label_set


def load_gguf(folder: str | Path) -> tuple[Any, Any]:
    """(model in fp32, tokenizer) read from ``folder/model.gguf`` by transformers alone."""
    # start-up: transformers, 1.3 s at import (and torch); only the work on a model needs it
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=GGUF_NAME)
    model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=GGUF_NAME, dtype=torch.float32).eval()
    return model, tok


def _messages(row: dict[str, str]) -> list[dict[str, str]]:
    instruction, text = row.get("instruction", ""), row.get("input", "")
    content = f"{instruction}\n{text}" if instruction and text else instruction or text
    return ([{"role": "system", "content": row["system"]}] if row.get("system") else []) + \
        [{"role": "user", "content": content}]


def agreement(run: str | Path, folder: str | Path, rows: Sequence[dict[str, str]],
              labels: Sequence[str] | None = None, trained: tuple[Any, Any, Any] | None = None) -> dict[str, Any]:
    """Compare the GGUF in ``folder`` with the trained ``run`` on ``rows`` (see the module docstring).

    ``trained``: an already loaded ``load_for_inference(run)`` result, to compare several exports with one load.
    """
    # start-up: torch, 1.9 s at import; only the work on a loaded model needs it
    import torch
    model, tok, cfg = trained or load_for_inference(run)
    template = get_template(cfg.template if cfg else "auto", tok)
    started = time.perf_counter()
    g_model, g_tok = load_gguf(folder)
    load_s = time.perf_counter() - started
    g_template = get_template(cfg.template if cfg else "auto", g_tok)
    same_text = same_ids = same_argmax = 0
    max_diff = 0.0
    for row in rows:
        want = prompt_ids(tok, template, row.get("instruction", ""), row.get("input", ""))
        text = g_tok.apply_chat_template(_messages(row), tokenize=False, add_generation_prompt=True)
        same_text += text == template.prompt(row.get("instruction", ""), row.get("input", ""), row.get("system"))
        got = g_tok(text, add_special_tokens=True)["input_ids"]  # as llama.cpp would: add_bos_token is false
        same_ids += list(got) == list(want)
        ids = torch.tensor([want])
        with torch.no_grad():  # the head only where the answer starts (a 262k-token head costs as much as Gemma's body)
            a = model(input_ids=ids, logits_to_keep=1).logits[0, -1].float()
            b = g_model(input_ids=ids, logits_to_keep=1).logits[0, -1].float()
        max_diff = max(max_diff, (a - b).abs().max().item())
        same_argmax += int(a.argmax() == b.argmax())
    result: dict[str, Any] = {"rows": len(rows), "prompt_text_match": same_text / len(rows),
                              "prompt_token_match": same_ids / len(rows), "max_abs_logit_diff": max_diff,
                              "next_token_argmax_agree": same_argmax / len(rows), "gguf_load_s": round(load_s, 2),
                              "gguf_mb": round((Path(folder) / GGUF_NAME).stat().st_size / 2**20, 2)}
    labels = list(labels) if labels else label_set([r.get("output", "") for r in rows])
    if labels:
        s_t = _score_labels(model, tok, template, rows, labels)
        s_g = _score_labels(g_model, g_tok, g_template, rows, labels)
        pick = [labels[max(range(len(labels)), key=lambda i: s[i])] for s in s_t]
        pick_g = [labels[max(range(len(labels)), key=lambda i: s[i])] for s in s_g]
        gold = [r.get("output", "").strip() for r in rows]
        # how sure the trained model was where the GGUF picks another label (log-prob gap of its two best labels)
        margins = sorted(round(sorted(s)[-1] - sorted(s)[-2], 3) for s, a, b in zip(s_t, pick, pick_g) if a != b)
        result.update(label_agree=sum(a == b for a, b in zip(pick, pick_g)) / len(rows), flip_margins=margins,
                      accuracy_trained=sum(a == g for a, g in zip(pick, gold)) / len(rows),
                      accuracy_gguf=sum(a == g for a, g in zip(pick_g, gold)) / len(rows))
    return result
