"""The generation check on a tiny run that learned to answer as JSON: numbers that tell trained from untrained."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

try:
    from genkit import build_generation_run
except ImportError:  # tests/ as a package
    from tests.genkit import build_generation_run

pytestmark = pytest.mark.integration  # each builds and trains a tiny run (~7 s)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_generation_run(tmp_path_factory.getbasetemp() / "genkit")


def test_answer_loss_is_the_training_loss_on_the_answer(gen: dict) -> None:
    """The answer loss equals the model's own loss with the prompt masked (what training minimises)."""
    import torch
    from studio.data.templates import get_template
    from studio.data.tokenize import prompt_ids
    from studio.evaluation.answer_loss import answer_loss
    from studio.models.loading import load_for_inference
    model, tok, cfg = load_for_inference(gen["run"])
    template = get_template(cfg.template, tok)
    rows = gen["heldout"][:3]
    got = answer_loss(model, tok, template, rows, batch_rows=2)
    nll = tokens = 0.0
    for r in rows:
        p = prompt_ids(tok, template, r["instruction"], r["input"])
        a = tok.encode(template.answer(r["output"]), add_special_tokens=False)
        ids = torch.tensor([p + a])
        labels = torch.tensor([[-100] * len(p) + a])
        with torch.no_grad():
            loss = model(input_ids=ids, labels=labels).loss.item()
        nll += loss * len(a)
        tokens += len(a)
    assert got.tokens == tokens
    assert got.loss == pytest.approx(nll / tokens, rel=1e-4)
    assert got.perplexity == pytest.approx(math.exp(got.loss))


def test_the_tuned_run_beats_its_base_on_every_score(gen: dict) -> None:
    from studio.evaluation.generation_check import generation_check
    check = generation_check(gen["run"], gen["heldout"], compare_base=True)
    t, b = check.tuned, check.base
    assert b is not None and t.n == b.n == len(gen["heldout"])
    assert t.chrf > b.chrf + 20 and t.exact_match > b.exact_match
    assert t.answer_loss < b.answer_loss and t.perplexity < b.perplexity
    assert t.structure is not None and t.structure.kind == "json"
    assert t.structure.parses >= 0.9 and t.structure.fields_match > b.structure.fields_match
    assert check.delta()["chrf"] == pytest.approx(t.chrf - b.chrf)
    assert check.headline == t.chrf
    changed = check.changed()
    assert changed and all({"reference", "base", "tuned"} <= set(c) for c in changed)
    assert len(check.worst(3)) == 3
    assert check.worst(3)[0]["tuned_chrf"] == min(t.row_chrf)


def test_the_check_is_json_and_matches_the_rows(gen: dict) -> None:
    from studio.evaluation.generation_check import generation_check
    check = generation_check(gen["run"], gen["heldout"][:6])
    data = json.loads(json.dumps(check.to_dict()))
    assert data["base"] is None and data["n"] == 6
    assert [o["expected"] for o in data["outputs"]] == [r["output"] for r in gen["heldout"][:6]]
    assert data["tuned"]["structure"]["kind"] == "json"


def test_rows_without_references_are_refused(gen: dict) -> None:
    from studio.errors import StudioError
    from studio.evaluation.generation_check import generation_check
    with pytest.raises(StudioError) as err:
        generation_check(gen["run"], [{"instruction": "hi", "input": "", "output": ""}])
    assert err.value.code == "eval.no_references"


def test_paths_are_not_taken_from_rows(gen: dict, tmp_path: Path) -> None:
    """A reference that looks like a path is text: nothing is read from it."""
    from studio.evaluation.generation_check import generation_check
    rows = [{**gen["heldout"][0], "output": str(tmp_path / "secret")}]
    assert generation_check(gen["run"], rows).tuned.n == 1



def test_one_pass_gives_the_answers_and_loss_of_generation_then_the_loss_pass(gen: dict) -> None:
    """The check's one pass (answer_pass.py) against batched generation and the separate loss pass, tuned and base:
    the same answers, the same loss; the tuned run's reference-matching answers came without decoding steps."""
    from studio.evaluation.generation_check import score_generation
    from studio.evaluation.inference import base_of, get_model
    loaded = get_model(gen["run"])
    rows = gen["heldout"]
    with loaded.lock:
        base = base_of(loaded)
        for model, tok in ((loaded.model, loaded.tokenizer), base):
            decoded: list[int] = []
            plain_generate = model.generate

            def spy(*args, **kwargs):
                decoded.append(int(kwargs["input_ids"].shape[0]))
                return plain_generate(*args, **kwargs)

            model.generate = spy
            try:
                one = score_generation(model, tok, loaded.template, rows, one_pass=True)
            finally:
                del model.generate
            apart = score_generation(model, tok, loaded.template, rows, one_pass=False)
            assert one.answers == apart.answers
            assert one.answer_loss == pytest.approx(apart.answer_loss, rel=1e-4, abs=1e-6)
            assert max(abs(a - b) for a, b in zip(one.row_loss, apart.row_loss)) < 1e-4
            assert (one.chrf, one.exact_match, one.structure) == (apart.chrf, apart.exact_match, apart.structure)
            assert sum(decoded) <= one.n - round(one.exact_match * one.n)
        assert sum(decoded) > 0 or one.exact_match == 1.0   # the base side (last) writes its own answers
