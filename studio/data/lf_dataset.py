"""dataset_info.json entries and rows read the way LLaMA-Factory 0.9.x reads them.

LLaMA-Factory's ``DatasetAttr`` defaults: alpaca columns prompt=instruction, query=input,
response=output (history/system unset); ShareGPT messages=conversations with tags
from/value/human/gpt/observation/function_call/system. An entry's ``columns`` and ``tags``
override those. Ranking pairs and KTO rows are read by studio/data/preference.py for stage dpo / kto.
Kinds the studio cannot train are refused before training, never turned into rows without answers:
pre-training text, tool calls, multimodal rows, hub downloads.
"""
from __future__ import annotations

from typing import Any, Literal

from ..errors import StudioError
from ..stages import reader_of

ALPACA_COLUMNS = {"prompt": "instruction", "query": "input", "response": "output", "history": None,
                  "system": None}
SHAREGPT_TAGS = {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                 "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system"}
Kind = Literal["sft", "ranking", "kto"]  # the rows a stage trains on: sft, dpo's pairs, kto's tagged answers


def entry_kind(entry: dict[str, Any] | None, rows: list[Any] | None = None) -> Kind:
    """What a dataset_info.json entry (or, without one, a plain file's rows) holds."""
    if entry:
        columns = entry.get("columns") or {}
        if entry.get("ranking") or "chosen" in columns or "rejected" in columns:
            return "ranking"
        return "kto" if "kto_tag" in columns else "sft"
    first = next((r for r in rows or [] if isinstance(r, dict)), {})
    if "chosen" in first and "rejected" in first:
        return "ranking"
    return "kto" if "kto_tag" in first else "sft"


def kind_mismatch(name: str, have: Kind, want: Kind) -> StudioError:
    """The one error for a dataset whose kind the stage cannot train, naming the stage that can (the stage
    table's first reader of each kind, studio/stages.py)."""
    return StudioError.of("dataset.kind_mismatch", name=name, have=have, want=want, stage=reader_of(want),
                          other=reader_of(have))




def check_entry(name: str, entry: dict[str, Any], kind: str = "sft") -> None:
    """Refuse entries the run's stage cannot train, naming why (before any row is read). ``kind``: the rows the
    stage trains on (sft: instruction rows, ranking: chosen/rejected pairs for dpo, kto: tagged answers; kto also
    takes ranking pairs, unpaired).

    Raises:
        StudioError: hub dataset, a kind the stage does not train, multimodal or tool columns, unknown formatting.
    """
    if not isinstance(entry, dict):
        raise StudioError.of("lf.entry_not_object", name=name)
    for hub in ("hf_hub_url", "ms_hub_url", "om_hub_url", "script_url", "cloud_file_name"):
        if hub in entry and "file_name" not in entry:
            raise StudioError.of("lf.hub", name=name, hub=hub)
    if "file_name" not in entry:
        raise StudioError.of("lf.no_file_name", name=name)
    _check_shapes(name, entry)
    columns = entry.get("columns") or {}
    have = entry_kind(entry)
    if have != kind and not (kind == "kto" and have == "ranking"):
        raise kind_mismatch(name, have, kind)  # type: ignore[arg-type]
    for media in ("images", "videos", "audios"):
        if media in columns:
            raise StudioError.of("lf.media", name=name, media=media)
    if "tools" in columns:
        raise StudioError.of("lf.tools", name=name)
    formatting = entry.get("formatting", "alpaca")
    if formatting not in ("alpaca", "sharegpt"):
        raise StudioError.of("lf.formatting", name=name, formatting=formatting)
    if formatting == "alpaca" and "prompt" in columns and "response" not in columns and \
            columns.get("prompt") not in (None, "instruction"):
        raise StudioError.of("lf.pretrain", name=name, column=columns["prompt"])


def _check_shapes(name: str, entry: dict[str, Any]) -> None:
    """The types LLaMA-Factory's DatasetAttr expects, checked before they reach a dict merge or a path join.

    Raises:
        StudioError: file_name not a non-empty string, columns/tags not objects of names, formatting not a name.
    """
    if not isinstance(entry["file_name"], str) or not entry["file_name"].strip():
        raise StudioError.of("lf.file_name_shape", name=name, got=repr(entry["file_name"]))
    for key, example in (("columns", '{"prompt": "instruction", "response": "output"}'),
                         ("tags", '{"role_tag": "from", "content_tag": "value"}')):
        value = entry.get(key)
        if value is not None and (not isinstance(value, dict) or
                                  not all(isinstance(v, (str, type(None))) for v in value.values())):
            raise StudioError.of("lf.names_shape", name=name, key=key, kind=type(value).__name__,
                                 got=str(value)[:60], example=example)
    if not isinstance(entry.get("formatting", "alpaca"), str):
        raise StudioError.of("lf.formatting_shape", name=name, got=repr(entry["formatting"]))


def convert_rows(rows: list[dict[str, Any]], entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """Raw rows -> studio rows {instruction, input, output[, system][, history]}.

    Raises:
        StudioError: rows of a kind the studio cannot train (no answers, tool calls, bad turn order), or a row of
            the wrong shape (named by its number: history not pairs, conversations not message objects).
    """
    sharegpt = entry.get("formatting", "alpaca") == "sharegpt"
    out = []
    for n, r in enumerate(rows, 1):
        try:
            out.append(_sharegpt_row(r, entry, where, n) if sharegpt else _alpaca_row(r, entry, where, n))
        except StudioError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # the boundary of this reader: a shape the checks below did not foresee is still the user's to fix
            raise StudioError.of("lf.row_shape", file=where, row=n, error=type(exc).__name__,
                                 detail=str(exc)[:120]) from None
    if rows and not entry and not any(r["output"] for r in out):
        if any("conversations" in r or "messages" in r for r in rows):
            raise StudioError.of("lf.sharegpt_rows", file=where)
        if any("chosen" in r for r in rows) or any("kto_tag" in r for r in rows):
            raise kind_mismatch(where, entry_kind(None, rows), "sft")
        if any("text" in r for r in rows):
            raise StudioError.of("lf.pretrain_rows", file=where)
    return out


def _alpaca_row(r: dict[str, Any], entry: dict[str, Any], where: str, n: int) -> dict[str, Any]:
    cols = {**ALPACA_COLUMNS, **(entry.get("columns") or {})}
    if not entry:  # a plain file: the studio's own rows also carry system/history under those names
        cols.update(system="system", history="history")

    def get(key: str) -> Any:
        return r.get(cols[key]) if cols.get(key) else None

    def text(key: str) -> str:  # a 0 label stored as a number is an answer, not an empty one
        value = get(key)
        return "" if value is None else str(value)
    row: dict[str, Any] = {"instruction": text("prompt"), "input": text("query"), "output": text("response")}
    if isinstance(get("response"), list):  # LLaMA-Factory allows a list of candidate answers; it trains the first
        row["output"] = str(get("response")[0]) if get("response") else ""
    if get("system"):
        row["system"] = str(get("system"))
    history = get("history")
    if history:
        if not isinstance(history, list) or not all(isinstance(h, (list, tuple)) and len(h) == 2 for h in history):
            raise StudioError.of("lf.row_history", file=where, row=n, got=repr(str(history)[:60]))
        row["history"] = [[str(u), str(a)] for u, a in history]
    return row


def _sharegpt_row(r: dict[str, Any], entry: dict[str, Any], where: str, n: int) -> dict[str, Any]:
    cols = {"messages": "conversations", "system": None, **(entry.get("columns") or {})}
    tags = {**SHAREGPT_TAGS, **(entry.get("tags") or {})}
    role, content = tags["role_tag"], tags["content_tag"]
    value = r.get(cols["messages"]) or []
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise StudioError.of("lf.row_messages", file=where, row=n, column=cols["messages"], got=repr(str(value)[:60]),
                             role_tag=role, content_tag=content)
    messages = list(value)
    system = r.get(cols["system"]) if cols.get("system") else None
    if messages and messages[0].get(role) == tags["system_tag"] and not cols.get("system"):
        system, messages = messages[0].get(content), messages[1:]
    odd, even = tags["user_tag"], tags["assistant_tag"]
    for m in messages:
        if m.get(role) in (tags["function_tag"], tags["observation_tag"]):
            raise StudioError.of("lf.tool_turns", file=where, turn=m.get(role))
    turns = [(m.get(role), str(m.get(content) or "")) for m in messages]
    if not turns or len(turns) % 2 or any(t[0] != (odd if i % 2 == 0 else even) for i, t in enumerate(turns)):
        # LLaMA-Factory drops such rows with "Invalid role tag"; here they become rows without answers and are
        # skipped before training (the run counts and reports them)
        return {"instruction": "", "input": "", "output": ""}
    pairs = [(turns[i][1], turns[i + 1][1]) for i in range(0, len(turns), 2)]
    row: dict[str, Any] = {"instruction": pairs[-1][0], "input": "", "output": pairs[-1][1]}
    if system:
        row["system"] = str(system)
    if len(pairs) > 1:
        row["history"] = [list(p) for p in pairs[:-1]]
    return row
