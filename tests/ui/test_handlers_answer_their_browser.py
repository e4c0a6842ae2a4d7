"""Every handler of the page is given whom it answers (studio/ui/handlers.py): its browser's language and login come
in as values, never read from a request kept somewhere global, so a message built for one browser cannot come out
in another's language."""
from __future__ import annotations

import ast
import symtable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr
import pytest
from gradio.helpers import special_args
from gradio.utils import check_function_inputs_match

from studio.app.context import AppContext
from studio.app.roles import is_owner_only
from studio.ui.handlers import CHECKS_ROLE, MARK, for_each_browser, in_browser_lang, owner_action

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "studio" / "ui"


def _request(lang: str | None = None, user: str | None = None, accept: str = "") -> Any:
    headers = {"accept-language": accept}
    if lang:
        headers["cookie"] = f"other=1; studio_lang={lang}"
    return SimpleNamespace(headers=headers, username=user)


def _gradio_call(fn: Any, inputs: list, request: Any) -> Any:
    """Call ``fn`` the way Gradio does: it checks the inputs match, then puts the request where the function asks."""
    assert check_function_inputs_match(fn, inputs, False) is None
    args, *_ = special_args(fn, list(inputs), request)
    return fn(*args)


@pytest.fixture()
def ctx(tmp_path: Path) -> AppContext:
    return AppContext.create(tmp_path / "ws", lang="en")


def test_a_handler_gets_its_browsers_language_and_login(ctx: AppContext) -> None:
    def handler(ctx: AppContext, text: str, n: int = 1) -> tuple:
        return ctx.lang, ctx.user, text, n

    fn = for_each_browser(ctx, handler)
    assert _gradio_call(fn, ["a", 2], _request("zh", "ann")) == ("zh", "ann", "a", 2)
    assert _gradio_call(fn, ["b", 3], _request(accept="zh-CN,zh;q=0.9")) == ("zh", None, "b", 3)
    assert _gradio_call(fn, ["c", 4], _request(accept="fr")) == ("en", None, "c", 4)  # the server's default
    assert fn("d") == ("en", None, "d", 1)  # called directly (a test, another handler): the context as given
    assert ctx.lang == "en" and ctx.user is None  # the page's own context is never changed by an answer


def test_the_servers_lang_flag_comes_after_the_page_switch(ctx: AppContext) -> None:
    ctx.forced_lang = "zh"
    fn = for_each_browser(ctx, lambda ctx: ctx.lang)
    assert _gradio_call(fn, [], _request(accept="en-US")) == "zh"
    assert _gradio_call(fn, [], _request("en", accept="zh-CN")) == "en"


def test_generators_values_and_an_own_request_keep_their_shape(ctx: AppContext) -> None:
    def stream(ctx: AppContext, n: int):
        for i in range(n):
            yield ctx.lang, i

    def every(ctx: AppContext, *values: Any) -> tuple:
        return ctx.lang, values

    def named_then_every(ctx: AppContext, text: str, *values: Any) -> tuple:  # the Settings tab's form handlers
        return ctx.lang, text, values

    def own(lang: str, text: str, request: Any) -> tuple:  # a handler that needs the request itself too
        return lang, text, request.username

    assert list(_gradio_call(for_each_browser(ctx, stream), [2], _request("zh"))) == [("zh", 0), ("zh", 1)]
    zh = gr.Request(headers={"cookie": "studio_lang=zh"})
    assert _gradio_call(for_each_browser(ctx, every), [1, 2, 3], zh) == ("zh", (1, 2, 3))
    assert for_each_browser(ctx, every)(1, 2) == ("en", (1, 2))  # called directly: no request, the ctx given
    assert _gradio_call(for_each_browser(ctx, named_then_every), ["t", 1], zh) == ("zh", "t", (1,))
    assert for_each_browser(ctx, named_then_every)("t", 1) == ("en", "t", (1,))
    assert _gradio_call(in_browser_lang(None, "en", own), ["t"], _request("zh", "bo")) == ("zh", "t", "bo")


def test_an_owner_action_checks_the_login_it_answers(ctx: AppContext) -> None:
    """The mark the guard and the page read, and the check itself, inside the action: a viewer is refused in its
    browser's language before the action runs (plain and generator handlers); an owner, a login not listed and a
    studio without logins go through."""
    ctx.extra["roles"] = {"ann": "owner", "vic": "viewer"}
    ran: list[str] = []

    def act(ctx: AppContext, what: str) -> str:
        ran.append(what)
        return what

    def stream(ctx: AppContext, what: str) -> Any:
        ran.append(what)
        yield what

    for fn in (owner_action(ctx, act), owner_action(ctx, stream)):
        assert is_owner_only(fn) and getattr(fn, CHECKS_ROLE) and getattr(fn, MARK)
        for lang in ("en", "zh"):
            with pytest.raises(gr.Error) as refused:
                list(_gradio_call(fn, ["delete"], _request(lang, "vic")) or [])
            assert ("viewer" if lang == "en" else "查看者") in str(refused.value.message)
        assert ran == []
        assert list(_gradio_call(fn, ["rename"], _request("en", "ann"))) in (list("rename"), ["rename"])
        assert list(_gradio_call(fn, ["mine"], _request("en", "other"))) in (list("mine"), ["mine"])
        assert list(_gradio_call(fn, ["solo"], _request("en", None))) in (list("solo"), ["solo"])
        ran.clear()


def _studio_handlers(app: Any) -> list[Any]:
    """The Python functions the page's events call that the studio wrote (not Gradio's own, such as an Examples
    table's loader)."""
    return [fn.fn for fn in app.fns.values() if fn.fn is not None
            and not getattr(fn.fn, "__module__", "").startswith("gradio")]


def test_every_handler_of_the_studio_page_answers_its_browser(ctx: AppContext) -> None:
    from studio.ui.app import build_app
    handlers = _studio_handlers(build_app(ctx))
    assert len(handlers) > 60
    bare = sorted({getattr(fn, "__qualname__", repr(fn)) for fn in handlers if not getattr(fn, MARK, False)})
    assert not bare, f"handlers wired without for_each_browser (studio/ui/handlers.py): {bare}"


def test_every_handler_of_the_demo_page_answers_its_browser(tmp_path: Path) -> None:
    from studio.ui.demo import build_demo
    for task in ("labels", "chat"):
        run = SimpleNamespace(name="r", task=task, labels=["a", "b"], examples=[], model="m", method="lora",
                              template="t", path=tmp_path, like=None)
        handlers = _studio_handlers(build_demo(run, None))
        bare = sorted({getattr(fn, "__qualname__", repr(fn)) for fn in handlers if not getattr(fn, MARK, False)})
        assert handlers and not bare, f"{task} demo: handlers wired without in_browser_lang: {bare}"


COMPREHENSIONS = {"genexpr", "listcomp", "dictcomp", "setcomp"}  # they read their function's names, not a builder's


def _made_inside_a_function(table: symtable.SymbolTable, inside: bool = False):
    for child in table.get_children():
        function = child.get_type() == "function" and child.get_name() not in COMPREHENSIONS
        if function and inside:
            yield child
        yield from _made_inside_a_function(child, inside or function)


def test_no_handler_keeps_the_language_it_was_built_with() -> None:
    """A function made while the page is built (a handler, a helper of one) that uses the builder's ``ctx`` or
    ``lang`` would answer every browser in the server's language: it takes them as parameters instead, which
    ``for_each_browser`` fills per request."""
    bad = []
    for path in sorted(UI.glob("*.py")):
        top = symtable.symtable(path.read_text(encoding="utf-8"), str(path), "exec")
        for scope in _made_inside_a_function(top):
            held = sorted(set(scope.get_frees()) & {"ctx", "lang"})
            if held:
                bad.append(f"{path.name}:{scope.get_lineno()} {scope.get_name()} keeps {held}")
    assert not bad, "\n".join(bad)


def test_nothing_reads_the_request_gradio_is_answering() -> None:
    """Gradio keeps the request it answers in a context variable (gradio.context.LocalContext); reading it there
    is the hidden way a function could learn a language it was not given."""
    bad = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n == "gradio.context" for n in names) or (isinstance(node, ast.Name) and node.id == "LocalContext"):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad
