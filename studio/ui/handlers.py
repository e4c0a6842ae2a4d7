"""How a handler of the page learns whom it answers: Gradio hands the request to a wrapper made here, and the
handler gets that browser's language and login as plain values, in an AppContext made for this one answer.

Every Python handler the studio's page and the demo page wire is made here (``for_each_browser``,
``in_browser_lang``; tests/ui/test_handlers_answer_their_browser.py holds the whole page to it). Nothing below reads
a request: words are built in the language a function is given (``msg(key, ctx.lang)``), so a message built for
one browser cannot come out in another's language, and a service called from a test or the command line words
exactly as it does for the page.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional

import gradio as gr

from ..app.context import AppContext
from ..app.roles import mark_owner_only
from ..errors import StudioError
from .common import user_error
from ..web.session_lang import from_headers

MARK = "studio_answers_its_browser"  # on every wrapper made here: the page's rule test looks for it
CHECKS_ROLE = "studio_checks_its_role"  # on every owner action made here: it refuses a viewer by itself


def browser_lang(request: Any, forced: str | None, fallback: str) -> str:
    """The language ``request``'s browser asked for (its in-page switch, then --lang, then its Accept-Language:
    studio/web/session_lang.py), else ``fallback``."""
    return from_headers(getattr(request, "headers", None), forced) or fallback


def browser_user(request: Any) -> str | None:
    """The login ``request`` was made under (None without logins)."""
    user = getattr(request, "username", None)
    return user if isinstance(user, str) and user else None


def answering(ctx: AppContext, request: Any) -> AppContext:
    """``ctx`` for the browser of ``request`` (``ctx`` itself when there is none: a direct call, a test)."""
    if request is None:
        return ctx
    return ctx.answering(lang=browser_lang(request, ctx.forced_lang, ctx.lang), user=browser_user(request))


def for_each_browser(ctx: AppContext, fn: Callable) -> Callable:
    """``fn(ctx, *inputs)`` as a Gradio handler of ``*inputs``: its first argument is ``ctx`` for the browser being
    answered (its language and login). Called directly (tests, another handler), it gets ``ctx`` as given."""
    return _with_request(fn, functools.partial(answering, ctx))


def owner_action(ctx: AppContext, fn: Callable) -> Callable:
    """``for_each_browser(ctx, fn)`` for an action only an owner may take (start, stop, delete, export, review...):
    the login the request proves is asked for its role (``AppContext.role``) before ``fn`` runs, and a viewer is
    refused in its browser's language. This check is the boundary, whatever route or event id form the call came
    by; the login guard in front of Gradio (studio/web/guard.py) is a first gate, and a greyed-out button the page's word."""
    handler = mark_owner_only(_with_request(fn, functools.partial(_owner_answering, ctx)))
    setattr(handler, CHECKS_ROLE, True)
    return handler


def _owner_answering(ctx: AppContext, request: Any) -> AppContext:
    """``answering(ctx, request)``, refused (a coded error in its language) unless that login is an owner."""
    asking = answering(ctx, request)
    if asking.role() != "owner":
        raise user_error(StudioError.of("app.owner_only", user=asking.user or ""), "owner_action", asking.lang)
    return asking


def in_browser_lang(forced: str | None, fallback: str, fn: Callable) -> Callable:
    """``fn(lang, *inputs)`` as a Gradio handler of ``*inputs``: its first argument is the language of the browser
    being answered (the demo page, which has no AppContext)."""
    return _with_request(fn, lambda request: fallback if request is None else browser_lang(request, forced, fallback))


def _with_request(fn: Callable, first: Callable[[Any], Any]) -> Callable:
    """A function Gradio calls with the request (a parameter typed ``gr.Request``, which Gradio fills) in place of
    ``fn``'s first parameter, which gets ``first(request)``. The other parameters keep their names, so the
    endpoint's API description and a direct call read as ``fn``'s."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    names = [p.name for p in params]
    varying = False
    own = "request" in names  # fn needs the request itself too (whose generation a Stop ends): it gets it as well
    request = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
    if own:
        where, public = names.index("request"), params
    elif varying := any(p.kind is p.VAR_POSITIONAL for p in params):  # (*values): the request goes first
        # with no default: before fn's own parameters a default makes no signature (split finds a direct call's)
        request = request.replace(default=inspect.Parameter.empty)
        where, public = 0, [request, *params]
    else:  # after the last positional parameter (Gradio fills only positional ones), before keyword-only ones
        where = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        public = [*params[:where], request, *params[where:]]

    def split(args: tuple, kwargs: dict) -> tuple[Any, tuple]:
        if "request" in kwargs:
            return (kwargs["request"] if own else kwargs.pop("request")), args
        if varying:  # Gradio puts its request first; a direct call (a test, another handler) has none there
            return (args[0], args[1:]) if args and isinstance(args[0], gr.Request) else (None, args)
        if len(args) > where:
            return args[where], (args if own else args[:where] + args[where + 1:])
        return None, args

    if inspect.isasyncgenfunction(fn) or inspect.iscoroutinefunction(fn):
        raise TypeError(f"{getattr(fn, '__name__', fn)}: the page's handlers are plain functions or generators")
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            req, rest = split(args, kwargs)
            yield from fn(first(req), *rest, **kwargs)
    else:
        @functools.wraps(fn)  # type: ignore[no-redef]
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            req, rest = split(args, kwargs)
            return fn(first(req), *rest, **kwargs)
    wrapper.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p.replace(annotation=inspect.Parameter.empty) for p in public])
    # Gradio finds the request parameter by its type; only it is annotated (fn's own annotations are strings of
    # its module, which this module could not resolve)
    wrapper.__annotations__ = {"request": Optional[gr.Request]}
    del wrapper.__wrapped__  # inspect and Gradio read the signature above, not fn's
    setattr(wrapper, MARK, True)
    return wrapper
