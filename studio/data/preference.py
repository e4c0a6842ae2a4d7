"""Preference rows (the stage table's "ranking" and "kto" rows: stage dpo / kto) read the way LLaMA-Factory reads them, and tokenized the way SFT rows are.

A ranking dataset (``"ranking": true`` in dataset_info.json, or a plain file whose rows carry chosen/rejected) gives
{instruction, input, chosen, rejected[, system][, history]}; in ShareGPT form ``chosen``/``rejected`` are message
objects after the conversation. A KTO dataset gives {instruction, input, output, kto_tag} (kto_tag true = a
desirable answer); a ranking dataset trained with stage kto is unpaired (chosen -> true, rejected -> false), as TRL
does.

Tokenization is the studio's own (the run's template, its BOS rule and its answer end marker, exactly as SFT and
inference render them) rather than TRL's text path, so a DPO run continues an SFT run on the same prompt format;
TRL's trainers receive prompt_ids / chosen_ids / rejected_ids (or completion_ids + label) ready to collate.
"""
from __future__ import annotations

from typing import Any

from ..errors import StudioError
from .lf_dataset import SHAREGPT_TAGS, Kind, _alpaca_row, _sharegpt_row, entry_kind, kind_mismatch  # noqa: F401
from .templates import Template
from .tokenize import _bos_kept, answer_as_text, example_prompt, special_texts

_TRUE = ("true", "1", "yes", "good", "desirable", "up")
_FALSE = ("false", "0", "no", "bad", "undesirable", "down")


def _tag(value: Any, where: str, n: int) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise StudioError.of("pref.kto_tag", row=n, file=where, value=str(value)[:40])


def _message_text(value: Any, content: str) -> str:
    if isinstance(value, dict):
        return str(value.get(content) or "")
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        return str(value[-1].get(content) or "")
    return "" if value is None else str(value)


def preference_rows(rows: list[dict[str, Any]], entry: dict[str, Any] | None, where: str, kind: Kind
                    ) -> list[dict[str, Any]]:
    """Raw rows -> ranking rows {instruction, input, chosen, rejected, ...} or KTO rows {..., output, kto_tag}.

    Raises:
        StudioError: a row without a prompt, without both answers, or with a kto_tag that is not true/false.
    """
    entry = entry or {}
    have = entry_kind(entry, rows)
    columns = entry.get("columns") or {}
    sharegpt = entry.get("formatting", "alpaca") == "sharegpt"
    content = {**SHAREGPT_TAGS, **(entry.get("tags") or {})}["content_tag"]
    chosen_col, rejected_col = columns.get("chosen", "chosen"), columns.get("rejected", "rejected")
    tag_col = columns.get("kto_tag", "kto_tag")
    # the prompt part is read exactly as for SFT rows (history, system, ShareGPT turns); the answers are not
    bare = {k: v for k, v in entry.items() if k != "ranking"}
    bare["columns"] = {k: v for k, v in columns.items() if k not in ("chosen", "rejected", "kto_tag")}
    prompts = [_sharegpt_row(_with_open_turn(r, bare, content), bare, where, n) if sharegpt
               else _alpaca_row(r, bare if entry else {}, where, n) for n, r in enumerate(rows, 1)]
    out: list[dict[str, Any]] = []
    same: list[int] = []  # rows whose two answers are one text: DPO's loss sits at ln 2 on them, nothing is learnt
    for n, (raw, row) in enumerate(zip(rows, prompts), 1):
        if not (row.get("instruction") or row.get("input")):
            raise StudioError.of("pref.no_prompt", row=n, file=where)
        base = {k: v for k, v in row.items() if k != "output"}
        if have == "ranking":
            chosen, rejected = _message_text(raw.get(chosen_col), content), _message_text(raw.get(rejected_col),
                                                                                          content)
            if not chosen.strip() or not rejected.strip():
                raise StudioError.of("pref.no_pair", row=n, file=where)
            if chosen.strip() == rejected.strip():
                same.append(n)
            if kind == "ranking":
                out.append({**base, "chosen": chosen, "rejected": rejected})
            else:  # kto: a pair is one good and one bad answer to the same prompt
                out += [{**base, "output": chosen, "kto_tag": True}, {**base, "output": rejected, "kto_tag": False}]
        else:
            answer = row.get("output", "")
            if not str(answer).strip():
                raise StudioError.of("pref.no_answer", row=n, file=where)
            out.append({**base, "output": answer, "kto_tag": _tag(raw.get(tag_col), where, n)})
    if same:
        raise StudioError.of("pref.same_pair", n=len(same), total=len(rows), file=where, row=same[0])
    if not out:
        raise StudioError.of("dataset.no_rows", name=where)
    return out


def _with_open_turn(row: dict[str, Any], entry: dict[str, Any], content: str) -> dict[str, Any]:
    """A ShareGPT ranking row ends on the user's turn; give it an empty answer so the SFT reader keeps the turn."""
    messages = (entry.get("columns") or {}).get("messages", "conversations")
    tags = {**SHAREGPT_TAGS, **(entry.get("tags") or {})}
    turns = list(row.get(messages) or [])
    if turns and isinstance(turns[-1], dict) and turns[-1].get(tags["role_tag"]) == tags["user_tag"]:
        turns.append({tags["role_tag"]: tags["assistant_tag"], content: ""})
    return {**row, messages: turns}


def encode_preference(tokenizer: Any, template: Template, rows: list[dict[str, Any]], cutoff_len: int
                      ) -> tuple[list[dict[str, Any]], int]:
    """Rows -> TRL's tokenized columns; returns (features, rows truncated).

    Ranking rows give prompt_ids / chosen_ids / rejected_ids, KTO rows prompt_ids / completion_ids / label. Longer
    rows are cut as SFT rows are: the answers keep up to half the budget, the prompt loses its start (BOS kept).
    """
    out, truncated = [], 0
    specials = special_texts(tokenizer)
    for row in rows:
        prompt = tokenizer(example_prompt(template, row), add_special_tokens=False)["input_ids"]
        answers = [row["chosen"], row["rejected"]] if "chosen" in row else [row["output"]]
        # an answer's typed control markers stay text (tokenize.answer_as_text), the template's own stay markers
        ids = [answer_as_text(tokenizer, template, a, specials)
               or tokenizer(template.answer(a), add_special_tokens=False)["input_ids"] for a in answers]
        longest = max(len(a) for a in ids)
        if len(prompt) + longest > cutoff_len:
            truncated += 1
            keep_answer = min(longest, max(cutoff_len // 2, cutoff_len - len(prompt)))
            ids = [a[:keep_answer] for a in ids]
            n_bos = _bos_kept(tokenizer, template, prompt)
            keep_prompt = cutoff_len - keep_answer
            prompt = prompt[:n_bos] + prompt[len(prompt) - (keep_prompt - n_bos):] if keep_prompt > n_bos \
                else prompt[:keep_prompt]
        if "chosen" in row:
            out.append({"prompt_ids": list(prompt), "chosen_ids": list(ids[0]), "rejected_ids": list(ids[1])})
        else:
            out.append({"prompt_ids": list(prompt), "completion_ids": list(ids[0]), "label": bool(row["kto_tag"])})
    return out, truncated


def as_sft_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Preference rows seen as instruction rows (the chosen / desirable answer): what tiny-demo's base model and
    the validation file (Evaluate checks it) are built from."""
    out = []
    for r in rows:
        if "chosen" in r:
            out.append({**{k: v for k, v in r.items() if k not in ("chosen", "rejected")}, "output": r["chosen"]})
        elif r.get("kto_tag", True):
            out.append({k: v for k, v in r.items() if k != "kto_tag"})
    return out
