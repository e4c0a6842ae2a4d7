"""One time estimate on the Settings tab: the Model list and the Settings panel give the same number.

They disagreed on one screen (14 m 40 s in the list, 12 m 11 s in the panel): the list was labelled when the page
was built, for a default config on placeholder rows, and only relabelled on the user's own clicks, so a dataset
chosen from the Data tab (a programmatic change) left it estimating rows that were not the data. Now the list is
relabelled after every estimate of the form, by the same function (run_estimate.form_estimate) on the same form.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from studio.app import form_values, settings
from studio.data.registry import register_dataset
from studio.app.context import AppContext
from studio.app.run_estimate import form_estimate, time_line
from studio.config.run_config import Draft
from studio.runs import run_time
from studio.ui import app
from studio.words.units import fmt_seconds

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, AppContext, str]:
    ctx = AppContext.create(tmp_path_factory.mktemp("estimate") / "ws")
    rows = [{"instruction": "Is this tweet positive, negative or neutral?",
             "input": f"flight {i} was {'late again' if i % 3 else 'great'}, thanks",
             "output": ("positive", "negative", "neutral")[i % 3]} for i in range(600)]
    path = ctx.data_root / "tweets.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    register_dataset(ctx.data_root, "tweets", path, rows, task="sentiment")
    return app.build_app(ctx), ctx, str(path)


def _relist(blocks: Any) -> Any:
    """The handler the page runs after every estimate of the form, with the Model list as its output."""
    cfg = blocks.get_config_file()
    model_pick = next(c["id"] for c in cfg["components"] if c.get("props", {}).get("elem_id") == "simple-model")
    estimate = next(fn for fn in blocks.fns.values() if fn.api_name == "estimate")
    after = [fn for fn in blocks.fns.values() if fn.trigger_after == estimate._id
             and model_pick in [o._id for o in fn.outputs]]
    assert after, "the Model list is not relabelled after the form is estimated"
    return after[0].fn


def _time(label: str) -> str:
    found = re.search(r"about (.+?) here", label)
    assert found, label
    return found.group(1)


def test_the_model_list_and_the_panel_give_the_same_number(page: tuple[Any, AppContext, str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # the machine's load is an input of every estimate, sampled afresh every 10 s; held still here so that three
    # estimates of one form minutes apart on a busy machine compare the functions, not the load (CI saw 1h 04m
    # against 39m 29s when the sample changed between them)
    monkeypatch.setattr(run_time, "others_load", lambda **kw: 0.5)
    blocks, ctx, data = page
    relist = _relist(blocks)
    values, _ = settings.derive(ctx, MODEL, "sentiment", "balanced", data,
                                form_values.config_to_values(Draft()))
    edited = form_values.values_to_draft(values).replace(num_train_epochs=7.0)  # the user's own edit counts too
    for form in (values, form_values.config_to_values(edited)):
        update = relist(MODEL, "sentiment", "balanced", data, *form, 0)
        labels = {v: lab for lab, v in update["choices"]}
        cfg = form_values.values_to_draft(form)
        panel = time_line(ctx, cfg)
        assert f"About {_time(labels[MODEL])} here" in panel, (labels[MODEL], panel)
        assert _time(labels[MODEL]) == fmt_seconds(form_estimate(ctx, cfg).seconds, "en")
    # every other model: the form the page would hold after picking it, timed by the same function
    other = "tiny-demo"
    picked, _ = settings.derive(ctx, other, "sentiment", "balanced", data, values)
    assert _time(labels[other]) == fmt_seconds(form_estimate(ctx, form_values.values_to_draft(picked)).seconds, "en")
