"""Authorization lives in the action: every event of the built studio page, called as a viewer through Gradio's own
calling path (``Blocks.process_api``, the function every route ends in, whatever event id form or route brought the
call there), with the most damaging values the page itself offers (the first run of a run list, every choice of a
multi-select, the form's values). Nothing in front of the handler (the login guard) is in the way here, so what is
measured is the action's own check.

Every owner action must refuse the viewer before it does anything, and no event a viewer can reach may change a file
of the workspace outside what a viewer owns (its own settings, the feedback it gives). An event wired tomorrow is
called the day it is wired: the list comes from the built page, and the test prints the events it called.

The HTTP half (tests/robustness/test_endpoint_fuzz.py::test_a_viewer_is_refused_owner_actions_in_every_id_form)
sends the same calls through the running server with the event id in every form Gradio accepts.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from studio.app.context import AppContext
from studio.app.roles import is_owner_only
from studio.ui import app
from studio.ui.handlers import CHECKS_ROLE

VIEWER_OWNS = ("feedback.sqlite3", "users/bob")  # what a viewer's own use writes: feedback given, its own settings


def _tree(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a digest of its content (folders: '')."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(folder, d), root)] = ""
        for f in files:
            p = os.path.join(folder, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    keys = set(before) | set(after)
    return sorted(k for k in keys if before.get(k) != after.get(k)
                  and not any(k == own or k.startswith(own + os.sep) or k.startswith(own + "-")
                              or k == os.path.dirname(own) for own in VIEWER_OWNS))


def _workspace(ws: Path) -> None:
    from tests.robustness.test_http import _finished_run
    _finished_run(ws / "runs" / "done")
    _finished_run(ws / "runs" / "other")
    (ws / "data").mkdir(parents=True, exist_ok=True)
    (ws / "data" / "rows.jsonl").write_text("".join(
        f'{{"instruction": "Is it good? {i}", "input": "", "output": "{"yes" if i % 2 else "no"}"}}\n'
        for i in range(8)))


def _value(block: Any, offered: dict[int, list]) -> Any:
    """The most damaging value the page itself offers this input: every choice of a multi-select, the first choice
    of a list (a run, a dataset: as the page's own events filled it in, ``offered``), the component's own value
    otherwise."""
    config = block.get_config() if hasattr(block, "get_config") else {}
    choices = [c[1] if isinstance(c, (list, tuple)) else c
               for c in (offered.get(block._id) or config.get("choices") or [])]
    if choices:
        return choices if config.get("multiselect") or isinstance(block, gr.CheckboxGroup) else choices[0]
    return config.get("value")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, AppContext, dict[int, list]]:
    """The built page, its context, and the choices its own events offer (every event that is no owner action,
    called once as the owner: the run lists, the dataset lists, filled as a browser sees them)."""
    ws = tmp_path_factory.mktemp("roles") / "ws"
    _workspace(ws)
    ctx = AppContext.create(ws)
    built = app.build_app(ctx)
    ctx.extra["roles"] = {"alice": "owner", "bob": "viewer"}
    offered: dict[int, list] = {}
    for fn in built.fns.values():
        if fn.fn is not None and not is_owner_only(fn.fn):
            out = _call_as(built, fn, "alice", offered)
            for block, value in zip(fn.outputs, out.get("data", []) if isinstance(out, dict) else []):
                if isinstance(value, dict) and value.get("choices") and hasattr(block, "choices"):
                    offered[block._id] = value["choices"]
                    # as a browser's session holds the page after that update: its values are choices
                    block.choices = [tuple(c) if isinstance(c, (list, tuple)) else (c, c) for c in value["choices"]]
    return built, ctx, offered


def _call_as(built: Any, fn: Any, user: str | None, offered: dict[int, list]) -> Any:
    """What the event answered, or the exception it raised."""
    from gradio.state_holder import SessionState
    inputs = [_value(b, offered) for b in fn.inputs]
    request = gr.Request(username=user, headers={"accept-language": "en"}, session_hash="roles-test")
    try:
        return asyncio.run(asyncio.wait_for(built.process_api(
            block_fn=fn, inputs=inputs, state=SessionState(built), request=request, session_hash="roles-test"), 60))
    except BaseException as exc:  # noqa: BLE001 - a refusal is an exception; whatever else happened is reported
        return exc


def test_every_owner_action_checks_the_role_itself(page: tuple[Any, AppContext]) -> None:
    """Structure: an event marked owner-only (which the guard and the page read) is made by owner_action, so the
    mark never stands for a check that is not there."""
    built, _, _ = page
    marked = [f for f in built.fns.values() if f.fn is not None and is_owner_only(f.fn)]
    assert len(marked) >= 20
    assert [f.api_name for f in marked if not getattr(f.fn, CHECKS_ROLE, False)] == []


def test_a_viewer_calling_any_event_changes_nothing_an_owner_owns(page: tuple[Any, AppContext]) -> None:
    built, ctx, offered = page
    assert any(len(c) >= 2 for c in offered.values()), "the page's own events offer the runs to act on"
    called, problems = [], []
    for fn in built.fns.values():
        if fn.fn is None:
            continue
        name = f"{fn._id} {fn.api_name or fn.name}"
        before = _tree(ctx.workspace)
        raised = _call_as(built, fn, "bob", offered)
        changed = _changed(before, _tree(ctx.workspace))
        owner = is_owner_only(fn.fn)
        if owner and not (isinstance(raised, gr.Error) and "viewer" in str(raised.message)):
            problems.append(f"{name}: an owner action ran for a viewer ({str(raised)[:160]})")
        if changed:
            problems.append(f"{name}: a viewer's call changed {changed[:5]}")
        called.append(f"{name}{' (owner action: refused)' if owner and not problems else ''}")
    print(f"\n{len(called)} events called as a viewer:\n  " + "\n  ".join(called))
    assert problems == [], "\n".join(problems)
    assert (ctx.workspace / "runs" / "done").is_dir() and (ctx.workspace / "runs" / "other").is_dir()


@pytest.mark.parametrize("task", ["labels", "chat"])
def test_every_demo_page_event_as_a_viewer_and_an_anonymous_visitor(page: tuple[Any, AppContext, dict[int, list]],
                                                                    task: str) -> None:
    """The demo pages have no owner action, and nothing a visitor (a viewer login, or anonymous on a loopback demo)
    can call changes a file of the workspace other than the feedback it gives."""
    from studio.app.demo_run import DemoRun
    from studio.feedback.store import FeedbackStore
    from studio.ui.demo import build_demo
    _, ctx, _ = page
    run = DemoRun(str(ctx.runs_root / "done"), "done", task, "tiny-demo", "lora", "default",
                  ["positive", "negative"] if task == "labels" else [],
                  [{"instruction": "Is it good?", "input": "fine", "output": "positive"}] if task == "labels" else [])
    built = build_demo(run, "en", auth=True, store=FeedbackStore.in_workspace(ctx.workspace))
    fns = [f for f in built.fns.values() if f.fn is not None]
    assert fns and not [f.api_name for f in fns if is_owner_only(f.fn)]
    problems, called = [], []
    for who in ("bob", None):
        for fn in fns:
            before = _tree(ctx.workspace)
            _call_as(built, fn, who, {})
            changed = _changed(before, _tree(ctx.workspace))
            if changed:
                problems.append(f"{who or 'anonymous'}: {fn._id} {fn.api_name or fn.name} changed {changed[:5]}")
            called.append(f"{who or 'anonymous'}: {fn._id} {fn.api_name or fn.name}")
    print(f"\n{len(called)} demo-page ({task}) events called:\n  " + "\n  ".join(called))
    assert problems == [], "\n".join(problems)


def test_an_owner_action_runs_for_an_owner(page: tuple[Any, AppContext]) -> None:
    """The same call as an owner goes through the check: renaming a run works (the check refuses by role, not by
    refusing everything)."""
    built, ctx, offered = page
    rename = next(f for f in built.fns.values() if f.api_name == "rename_run")
    answer = _call_as(built, rename, "alice", offered)
    assert "viewer" not in str(getattr(answer, "message", answer)), answer
