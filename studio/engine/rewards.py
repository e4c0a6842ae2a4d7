"""Verifiable rewards: what a stage that samples answers and scores them (grpo, rloo: studio/stages.py, the rows
with ``rewards``) scores each answer with, against the row's reference answer. Offered on the page by name
(RunConfig ``reward``); stage-neutral, so an online-RL stage added to the table gets all of them.

* ``row_label``: the answer is the row's label (1 or 0; case and surrounding spaces and full stops ignored);
* ``json_fields``: the answer is valid JSON with the reference's fields (0 not a JSON object; 0.5 for one, plus
  0.5 x the share of the reference object's keys it has: 1 = valid and complete);
* ``regex``: the answer matches the regular expression ``reward_pattern`` as a whole (1 or 0).

An answer is read up to the run's template's end marker. Light on purpose: json and regex only (no torch).
"""
from __future__ import annotations

import json
from typing import Any, Callable

import regex

from ..data.templates import Template

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
# re has no time limit; the regex package (transformers' own dependency, re's syntax) does. The config's check
# compiles the pattern the same way (studio/stages.py ``_reward_problems``).
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
    """The reward the config names (``reward``, ``reward_pattern``), reading answers up to ``template``'s end."""
    end = template.assistant_suffix.strip()
    if cfg.reward == "json_fields":
        return json_fields_reward(end)
    if cfg.reward == "regex":
        return pattern_reward(cfg.reward_pattern, end)
    return label_reward(end)
