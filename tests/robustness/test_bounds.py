"""Every request is bounded before it is read: template render budget, cells, rows, tokens, turns.

Each case is one row of the "bounded requests" group; a case that takes more than a few seconds or accepts what
it must refuse fails here (``expect``), so the table in docs/ROBUSTNESS.md cannot hold a wrong verdict.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from studio.data import limits
from studio.errors import StudioError
from tests.robustness.harness import api, expect, record

GROUP = "bounded requests"
FAST_S = 5.0  # every refusal below must come at once, not after the work it refuses


def _tokenizer(chat_template: str) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {w: i for i, w in enumerate(["[UNK]", "<s>", "</s>", "hi", "there", "x"])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="[UNK]")
    tok.chat_template = chat_template
    return tok


NORMAL = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] | trim }}{{ eos_token }}"
          "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
HOSTILE = {
    "2e8 nested loop steps": "{% for i in range(100000) %}{% for j in range(2000) %}{% endfor %}{% endfor %}",
    "'x' * 1e9": "{{ 'x' * 1000000000 }}",
    "list * 1e9": "{{ ([1] * 1000000000) | length }}",
    "loops over a long string": "{% set s = 'x' * 50000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    "center(1e9)": "{{ 'x' | center(1000000000) }}",
    "ljust(1e9) method": "{{ 'x'.ljust(1000000000) }}",
    "doubling with ~": "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
                       "{% endfor %}{{ ns.s | length }}",
    "doubling in a set block": "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set t %}{{ ns.s }}"
                               "{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s | length }}",
    "replace blow-up": "{% set s = 'x' * 100000 %}{{ s.replace('x', s) | length }}",
    "join blow-up": "{% set s = 'x' * 100000 %}{{ ([s] * 10000) | join('') | length }}",
    "printf width": "{{ '%1000000000s' | format('x') }}",
    "format width": "{{ '{:>1000000000}'.format('x') }}",
    "huge power": "{{ (10 ** 100000000) | string | length }}",
    "recursive macro": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "writes 100 MB": "{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}",
}


def _render(template: str) -> str:
    from studio.data.templates import ChatTemplate
    return ChatTemplate(_tokenizer(template)).chat_prompt([{"role": "user", "content": "hi there"}])


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_chat_template_is_refused_fast(name: str) -> None:
    start = time.perf_counter()
    outcome, detail = api(lambda: _render(HOSTILE[name]))
    took = time.perf_counter() - start
    if took > FAST_S:
        outcome, detail = "survived", f"took {took:.1f} s: {detail}"
    record(GROUP, "python", f"chat template: {name}", outcome, detail)
    expect(outcome, detail, "clear", "chat template")


def test_a_normal_chat_template_renders_exactly_as_transformers_does() -> None:
    from studio.data.templates import ChatTemplate
    msgs = [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "x"}, {"role": "user", "content": "there"}]
    ours = ChatTemplate(_tokenizer(NORMAL)).chat_prompt(msgs)
    assert ours == "<s><|system|>be kind</s><|user|>hi there</s><|assistant|>x</s><|user|>there</s><|assistant|>"
    outcome, detail = api(lambda: ours, expect_error=False)
    record(GROUP, "python", "chat template: a normal one renders unchanged", outcome, detail)
    expect(outcome, detail, "ok")


# ------------------------------------------------------------------ the inference services (tiny real runs)
def _csv(path: Path, texts: list[str]) -> Path:
    import csv
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text"])
        for t in texts:
            w.writerow([t])
    return path


def _peak_mb(fn: Any) -> tuple[Any, float]:
    """Python-heap peak of ``fn()`` (tracemalloc sees torch's CPU tensors' storage only indirectly, so the
    HTTP test below watches the server's RSS as well)."""
    import tracemalloc
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_long_row_costs_one_context_not_its_length(runs: dict, tmp_path: Path) -> None:
    """A 150,000-character cell (under the cell limit) is cut before tokenizing and fitted to the model's context:
    the prediction answers in seconds (the old code tokenized it whole and ran attention over all of it)."""
    from studio.evaluation import inference
    long = "good film " * 15_000
    f = _csv(tmp_path / "long.csv", [long, "bad film"])
    start = time.perf_counter()
    outcome, detail = api(lambda: inference.predict_file(str(runs["full"]), str(f), tmp_path / "out"),
                          expect_error=False, ok=lambda info: info["n"] == 2)
    took = time.perf_counter() - start
    if took > 20:
        outcome, detail = "survived", f"took {took:.1f} s"
    record(GROUP, "python", "batch prediction: a 150,000-character cell", outcome, detail)
    expect(outcome, detail, "ok")


@pytest.mark.parametrize("case", ["4 MB cell", "rows over the limit", "bytes over the limit"])
def test_a_batch_file_over_a_bound_is_refused_before_the_model(runs: dict, tmp_path: Path, case: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.evaluation import inference
    from studio.evaluation import limits as req
    if case == "4 MB cell":
        f, fragment = _csv(tmp_path / "cell.csv", ["x" * 4_000_000, "fine"]), "characters"
    elif case == "rows over the limit":
        f, fragment = _csv(tmp_path / "rows.csv", [f"row {i}" for i in range(req.MAX_BATCH_ROWS + 1)]), "rows"
    else:
        f, fragment = _csv(tmp_path / "big.csv", ["y" * 1000] * (int(req.MAX_BATCH_MB) * 1100)), "MB"
    monkeypatch.setattr(inference, "get_model", lambda *_: pytest.fail("the model was touched"))
    start = time.perf_counter()
    outcome, detail = api(lambda: inference.predict_file(str(runs["full"]), str(f), tmp_path / "out"))
    if time.perf_counter() - start > 15:
        outcome = "survived"
    record(GROUP, "python", f"batch prediction: {case}", outcome, detail)
    expect(outcome, detail, "clear", fragment)


def test_a_check_file_is_bounded_like_a_batch_file(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation import inference
    from studio.evaluation import limits as req
    rows = [{"text": f"t{i}", "label": "positive" if i % 2 else "negative"} for i in range(req.MAX_BATCH_ROWS + 1)]
    import json
    f = tmp_path / "check.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    outcome, detail = api(lambda: inference.check_rows(str(runs["full"]), str(f), None))
    record(GROUP, "python", "sentiment check file: rows over the limit", outcome, detail)
    expect(outcome, detail, "clear", "rows")


def test_a_chat_history_of_100k_turns_is_cut_before_it_is_read(runs: dict) -> None:
    from studio.evaluation import inference
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": "good film"} for i in range(100_000)]
    start = time.perf_counter()
    outcome, detail = api(lambda: list(inference.chat_stream(str(runs["full"]), history, "hello", 4, 0.0, 1.0)),
                          expect_error=False)
    took = time.perf_counter() - start
    if took > 10:
        outcome, detail = "survived", f"took {took:.1f} s"
    record(GROUP, "python", "chat: 100,000 turns of history", outcome, detail)
    expect(outcome, detail, "ok")


@pytest.mark.parametrize("value", [10**12, -1, "1e999", float("nan")])
def test_max_new_tokens_out_of_range_is_refused(runs: dict, value: Any) -> None:
    from studio.evaluation import inference
    outcome, detail = api(lambda: list(inference.playground(str(runs["full"]), "hi", "", value)))
    record(GROUP, "python", f"playground: max_new_tokens={value!r}", outcome, detail)
    expect(outcome, detail, "clear", "max new tokens")


def test_prompt_token_ids_are_fitted_to_the_context() -> None:
    from studio.evaluation.limits import fit_ids
    ids = list(range(10_000))
    out = fit_ids(ids, 100)
    assert len(out) == 100 and out[:25] == ids[:25] and out[-75:] == ids[-75:]
    assert fit_ids([1, 2], 100) == [1, 2]
