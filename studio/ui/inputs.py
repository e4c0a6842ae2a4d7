"""An event's inputs by name: a page handler takes ``(ctx, v)``, ``v`` the values of its inputs by the names the
wiring gave them, never a positional ``*args`` it slices (``args[-2]`` meant the card memory until an input was
added before it).

Gradio hands an event's inputs to its function in order, one argument each; ``named`` turns that call into
``fn(ctx, Values)``, and gives the components in the same order to wire:

    fn, inputs = named(apply_suggestion_handler, {"form": tab.form, "gpu_mem": tab.gpu_mem, "pick": tab.suggest})
    tab.apply.click(for_each_browser(ctx, fn), inputs, outputs, api_name="apply_suggestion")

A group of inputs (the Settings form: field name -> component) is a ``Values`` of its own (``v.form``). The
function Gradio sees has one parameter per input, named as here, so an API caller's parameters carry the same
names (``/apply_suggestion``'s are the form's field names, then ``gpu_mem``, then ``pick``). Parameters of the
handler after ``v`` (``request``, ``progress``) are Gradio's to fill, as for any handler.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping

import gradio as gr

Inputs = Mapping[str, "gr.components.Component | Mapping[str, gr.components.Component]"]


class Values(dict):
    """An event's input values by name: ``v.task`` or ``v["task"]``; a group's values are a Values too."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _flat(inputs: Inputs) -> tuple[list[tuple[str | None, str]], list[Any]]:
    """(group or None, name) and the component, for every input, in the order the inputs were given."""
    keys: list[tuple[str | None, str]] = []
    comps: list[Any] = []
    for name, item in inputs.items():
        members = item.items() if isinstance(item, Mapping) else [(name, item)]
        for member, comp in members:
            keys.append((name if isinstance(item, Mapping) else None, member))
            comps.append(comp)
    names = [n for _, n in keys]
    clash = sorted({n for n in names if names.count(n) > 1} | ({"ctx", "request"} & set(names)))
    if clash or not all(n.isidentifier() for n in names):
        raise ValueError(f"input names must be distinct identifiers, not ctx or request: {clash or names}")
    return keys, comps


def named(fn: Callable, inputs: Inputs) -> tuple[Callable, list[Any]]:
    """``fn(ctx, v: Values, *gradio_filled)`` as a function of ``ctx`` and one parameter per input (wrap it with
    ``for_each_browser`` or ``owner_action`` as any handler), and the input components in that order."""
    keys, comps = _flat(inputs)
    n = len(keys)

    def values(args: tuple, kwargs: dict) -> tuple[Values, tuple, dict]:
        given = dict(zip(keys, args[:n]))
        for key in keys:  # an API caller may name an input
            if key[1] in kwargs:
                given[key] = kwargs.pop(key[1])
        v = Values()
        for (group, name), value in given.items():
            (v.setdefault(group, Values()) if group else v)[name] = value
        for group, name in keys:  # a group always there, even when its caller sent nothing
            if group:
                v.setdefault(group, Values())
        return v, args[n:], kwargs

    if inspect.isgeneratorfunction(inspect.unwrap(fn)) or inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def adapter(ctx: Any, *args: Any, **kwargs: Any) -> Any:
            v, rest, kw = values(args, kwargs)
            yield from fn(ctx, v, *rest, **kw)
    else:
        @functools.wraps(fn)  # type: ignore[no-redef]
        def adapter(ctx: Any, *args: Any, **kwargs: Any) -> Any:
            v, rest, kw = values(args, kwargs)
            return fn(ctx, v, *rest, **kw)
    own = list(inspect.signature(fn).parameters.values())
    adapter.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [own[0].replace(annotation=inspect.Parameter.empty)]
        + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for _, name in keys]
        + [p.replace(annotation=inspect.Parameter.empty) for p in own[2:]])
    return adapter, comps


__all__ = ["Values", "named"]
