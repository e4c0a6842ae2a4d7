"""Chat templates render with a budget: steps, characters and seconds (a template is code an owner brought in).

transformers renders a tokenizer's ``chat_template`` in Jinja's ``ImmutableSandboxedEnvironment``: no file or
attribute escapes, but no limit on work either. A 2e8-step loop took 11 s per answer and ``'x' * N`` allocated
what it was told, inside the server every teammate uses. Jinja has no budget of its own, so the environment here
is the sandbox with four additions, and it replaces the one transformers compiles (``install``), so every
``apply_chat_template`` in the process (prompts, chat, training, export checks) renders the same way, with the
library's own message handling, filters and globals:

- every ``for`` loop's iterable is wrapped (an AST rewrite before compiling) so each item is one step; each
  call, attribute, item and operator the sandbox intercepts is one step too; over ``MAX_STEPS`` or
  ``MAX_SECONDS`` the render stops;
- every ``{{ ... }}`` and literal text is counted as it is produced (captured ``{% set %}`` blocks included):
  over ``MAX_CHARS`` the render stops;
- ``*``, ``**``, ``+`` and ``~`` check the size of what they would make *before* making it;
- filters and methods that take a width or a count (``center``, ``indent``, ``format``, ``replace``, ``join``
  ...) are refused numbers and format widths that would make more than ``MAX_CHARS``.
A refusal is a StudioError that names the model's chat template and the limit.
"""
from __future__ import annotations

import contextvars
import functools
import re
import threading
import time
from typing import Any, Iterable, Iterator

from ..errors import StudioError
from .limits import TEMPLATE_MAX_CHARS as MAX_CHARS, TEMPLATE_MAX_SECONDS as MAX_SECONDS, \
    TEMPLATE_MAX_STEPS as MAX_STEPS

_WIDE_FORMAT = re.compile(r"[%{][^%{}]{0,8}?\d{7,}")  # a printf / str.format width of 1,000,000 or more


class _Budget:
    __slots__ = ("steps", "chars", "deadline")

    def __init__(self) -> None:
        self.steps = 0
        self.chars = 0
        self.deadline = time.monotonic() + MAX_SECONDS


_current: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("template_budget", default=None)


def _refuse(code: str, **values: Any) -> StudioError:
    """One of the template.* errors (studio/words/dataset_errors.py): what the template went over."""
    return StudioError.of(code, **values)


def _budget() -> _Budget:
    b = _current.get()
    if b is None:  # a template rendered outside BoundedTemplate.render: give it its own budget
        b = _Budget()
        _current.set(b)
    return b


def _tick(n: int = 1) -> None:
    b = _budget()
    b.steps += n
    if b.steps > MAX_STEPS:
        raise _refuse("template.steps", limit=MAX_STEPS)
    if not b.steps & 255 and time.monotonic() > b.deadline:
        raise _refuse("template.slow", seconds=MAX_SECONDS)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple)) else 0


def _check_size(n: int, code: str = "template.would_make") -> None:
    """``code``: template.would_make (an operation about to run), template.made (its result), template.is (the
    template's own text)."""
    if n > MAX_CHARS:
        raise _refuse(code, n=n, limit=MAX_CHARS)


def budget_iter(iterable: Any) -> Iterator[Any]:
    """A ``for`` loop's items, one step each."""
    for item in iterable:
        _tick()
        yield item


def budget_out(value: Any) -> Any:
    """One piece of output, counted whether it goes to the answer or into a ``{% set %}`` block."""
    b = _budget()
    b.chars += len(value) if isinstance(value, str) else 16
    if b.chars > MAX_CHARS:
        raise _refuse("template.writes", limit=MAX_CHARS)
    _tick()
    return value


def budget_concat(*parts: Any) -> str:
    """``a ~ b``: sized before it is joined."""
    texts = [str(p) for p in parts]
    _check_size(sum(map(len, texts)))
    _tick()
    return "".join(texts)


def _check_args(args: Iterable[Any], formatting: bool = False) -> None:
    for a in args:
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_CHARS:
            raise _refuse("template.asks_size", n=a, limit=MAX_CHARS)
        if formatting and isinstance(a, str) and _WIDE_FORMAT.search(a):
            raise _refuse("template.format_width")


def _estimate(name: str, obj: Any, args: tuple) -> int:
    """What a size-multiplying operation would make, before it runs (join, replace)."""
    if name == "join":
        items = obj if not isinstance(obj, str) else (args[0] if args else ())
        sep = obj if isinstance(obj, str) else (args[0] if args and isinstance(args[0], str) else "")
        if isinstance(items, (list, tuple)):
            return sum(len(str(x)) for x in items) + len(sep) * len(items)
    if name == "replace" and isinstance(obj, str) and len(args) >= 2:
        return len(obj) * max(1, len(str(args[1])))
    return 0


def _wrap_filter(name: str, fn: Any) -> Any:
    formatting = name == "format"

    @functools.wraps(fn)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _tick()
        values = [a for a in args if not _is_context(a)]
        _check_args([*values, *kwargs.values()], formatting)
        if name in ("join", "replace") and values:
            _check_size(_estimate(name, values[0], tuple(values[1:])))
        out = fn(*args, **kwargs)
        _check_size(_size(out), "template.made")
        return out
    return bounded


def _is_context(value: Any) -> bool:
    # start-up: jinja2, 0.02 s at import; only a model's own chat template needs it
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context
    from jinja2 import Environment
    return isinstance(value, (Context, EvalContext, Environment))


def _rewrite(tree: Any) -> Any:
    """Every loop's iterable, every output piece and every ``~`` go through the counters above."""
    # start-up: jinja2, 0.02 s at import; only a model's own chat template needs it
    from jinja2 import nodes
    here = __name__

    def call(fn: str, *args: Any) -> Any:
        return nodes.Call(nodes.ImportedName(f"{here}.{fn}"), list(args), [], None, None)

    from jinja2.visitor import NodeTransformer  # start-up: jinja2, as above

    class Budgeted(NodeTransformer):
        def visit_For(self, node: Any) -> Any:
            self.generic_visit(node)
            node.iter = call("budget_iter", node.iter)
            return node

        def visit_Output(self, node: Any) -> Any:
            self.generic_visit(node)
            node.nodes = [call("budget_out", child) for child in node.nodes]
            return node

        def visit_Concat(self, node: Any) -> Any:
            self.generic_visit(node)
            return call("budget_concat", *node.nodes)

    return Budgeted().visit(tree)


_env_class: Any = None
_env_lock = threading.Lock()


def _environment_class() -> Any:
    """The sandbox that counts (built on first use: jinja2 is only needed where a chat template renders)."""
    global _env_class
    with _env_lock:
        if _env_class is not None:
            return _env_class
        # start-up: jinja2, 0.02 s at import; only a model's own chat template needs it
        from jinja2 import Template
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        class BoundedTemplate(Template):
            def render(self, *args: Any, **kwargs: Any) -> str:
                token = _current.set(_Budget())
                try:
                    return super().render(*args, **kwargs)
                except RecursionError:
                    raise _refuse("template.recursion") from None
                finally:
                    _current.reset(token)

        class BoundedSandbox(ImmutableSandboxedEnvironment):
            intercepted_binops = frozenset(["*", "**", "+"])
            template_class = BoundedTemplate

            def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
                return _rewrite(super()._parse(source, name, filename))

            def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
                _tick()
                if operator == "*":
                    for seq, n in ((left, right), (right, left)):
                        if _size(seq) and isinstance(n, int):
                            _check_size(_size(seq) * max(n, 0))
                elif operator == "**":
                    if isinstance(right, (int, float)) and abs(right) > 4096 and abs(left) > 1:
                        raise _refuse("template.power", power=right, limit=4096)
                elif operator == "+":
                    _check_size(_size(left) + _size(right))
                return super().call_binop(context, operator, left, right)

            def getattr(self, obj: Any, attribute: str) -> Any:
                _tick()
                return super().getattr(obj, attribute)

            def getitem(self, obj: Any, argument: Any) -> Any:
                _tick()
                return super().getitem(obj, argument)

            def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
                _tick()
                name = getattr(__obj, "__name__", "")
                owner = getattr(__obj, "__self__", None)
                _check_args([*args, *kwargs.values()], formatting=name in ("format", "format_map"))
                if name in ("join", "replace") and owner is not None:
                    _check_size(_estimate(name, owner, args))
                out = ImmutableSandboxedEnvironment.call(__self, __context, __obj, *args, **kwargs)
                _check_size(_size(out), "template.made")
                return out

        _env_class = BoundedSandbox
        return _env_class


def bounded_compile(chat_template: str, like: Any) -> Any:
    """``chat_template`` compiled in the counting sandbox, with the filters, globals and extensions of
    ``like`` (the environment transformers built for it)."""
    if len(chat_template) > MAX_CHARS:
        _check_size(len(chat_template), "template.is")
    src = like.environment
    env = _environment_class()(trim_blocks=src.trim_blocks, lstrip_blocks=src.lstrip_blocks,
                               extensions=[type(e) for e in src.extensions.values()])
    env.filters.update({k: _wrap_filter(k, f) for k, f in src.filters.items()})
    env.globals.update(src.globals)
    return env.from_string(chat_template)


_installed = False


def install() -> None:
    """Make transformers compile every chat template here (idempotent). Why patch the library's compile step and
    not render ourselves: ``apply_chat_template`` keeps its own message conversion, kwargs and assistant-mask
    logic, so the text is exactly what transformers renders, only bounded."""
    global _installed
    with _env_lock:
        if _installed:
            return
        # start-up: transformers, 1.2 s at import (and torch); only a model's own chat template needs it
        from transformers.utils import chat_template_utils as ctu
        original = ctu._compile_jinja_template

        @functools.lru_cache(maxsize=32)
        def compile_bounded(chat_template: str) -> Any:
            # the library's environment comes from an empty template: compiling the hostile one there would
            # already run it (Jinja folds constant expressions such as 'x' * 10**9 while compiling)
            return bounded_compile(chat_template, original(""))

        ctu._compile_jinja_template = compile_bounded
        _installed = True
