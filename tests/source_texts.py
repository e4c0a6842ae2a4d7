"""The texts a source expression can make, read from the code (for the scans that hold every message the page
can show to a rule: its Chinese exists, it names page fields). A runtime value becomes 'X'; a name is followed to
what it holds (a local variable, a parameter's default and the arguments its module's callers pass, a module
constant, the returns of a function of the same module), so an error written as ``StudioError(what, fix)`` with
``fix`` computed a few lines up is read as well as one written inline.
"""
from __future__ import annotations

import ast
from itertools import product

MAX_VARIANTS = 64  # past this many spellings of one expression, its value counts as a runtime value


class Module:
    """One parsed module: its functions and constants, for following names."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.consts: dict[str, list[ast.AST]] = {}
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name):
                        self.consts.setdefault(t.id, []).append(node.value)

    def texts(self, node: ast.AST | None, func: ast.AST | None, depth: int = 0) -> list[str]:
        """Every text ``node`` (inside ``func``) can make, 'X' for each runtime value."""
        if node is None or depth > 10:
            return ["X"]
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else ["X"]
        if isinstance(node, ast.JoinedStr):
            parts = [[v.value] if isinstance(v, ast.Constant) else self.texts(v.value, func, depth + 1)
                     for v in node.values]
            return _joined(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _joined([self.texts(node.left, func, depth + 1), self.texts(node.right, func, depth + 1)])
        if isinstance(node, ast.IfExp):
            return _unique(self.texts(node.body, func, depth + 1) + self.texts(node.orelse, func, depth + 1))
        if isinstance(node, ast.Name):
            values = self._values_of(node.id, func)
            return _unique([t for v, f, m in values for t in m.texts(v, f, depth + 1)]) if values else ["X"]
        if isinstance(node, ast.Call):
            f, module = self._callee(node)
            if f is not None:
                returns = [r.value for r in ast.walk(f) if isinstance(r, ast.Return) and r.value is not None]
                out = _unique([t for r in returns for t in module.texts(r, f, depth + 1)])
                return out if out and len(out) <= MAX_VARIANTS else ["X"]
        return ["X"]

    def _callee(self, call: ast.Call) -> tuple[ast.AST | None, "Module"]:
        """The definition a call runs (this module's function) and its module."""
        name = getattr(call.func, "id", None)
        if isinstance(call.func, ast.Name) and name in self.funcs:
            return self.funcs[name], self
        return None, self

    def _values_of(self, name: str, func: ast.AST | None) -> list[tuple[ast.AST, ast.AST | None, "Module"]]:
        """What ``name`` can hold in ``func``: its assignments there, else (a parameter) its default and the
        arguments of the module's calls of ``func``, else a module constant."""
        if func is not None:
            found = []
            for a in ast.walk(func):
                if not isinstance(a, ast.Assign):
                    continue
                for t in a.targets:
                    if isinstance(t, ast.Name) and t.id == name:
                        found.append((a.value, func, self))
                    elif isinstance(t, ast.Tuple) and isinstance(a.value, ast.Tuple) and \
                            len(t.elts) == len(a.value.elts):
                        found += [(v, func, self) for e, v in zip(t.elts, a.value.elts)
                                  if isinstance(e, ast.Name) and e.id == name]
                    elif isinstance(t, ast.Tuple) and isinstance(a.value, ast.Call):  # a, b = helper(...)
                        at = [i for i, e in enumerate(t.elts) if isinstance(e, ast.Name) and e.id == name]
                        f, module = self._callee(a.value)
                        if at and f is not None:
                            found += [(r.value.elts[at[0]], f, module) for r in ast.walk(f) if isinstance(r, ast.Return)
                                      and isinstance(r.value, ast.Tuple) and len(r.value.elts) > at[0]]
            if found:
                return found
            args = func.args  # type: ignore[attr-defined]
            params = [a.arg for a in args.posonlyargs + args.args]
            if name in params + [a.arg for a in args.kwonlyargs]:
                return self._arguments(name, func, params)
        return [(v, None, self) for v in self.consts.get(name, [])]

    def _arguments(self, name: str, func: ast.AST, params: list[str]) -> list[tuple[ast.AST, ast.AST | None, "Module"]]:
        args = func.args  # type: ignore[attr-defined]
        out: list[tuple[ast.AST, ast.AST | None, "Module"]] = []
        defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        if name in defaults:
            out.append((defaults[name], None, self))
        for caller in self.funcs.values():
            for call in ast.walk(caller):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
                        call.func.id == func.name:  # type: ignore[attr-defined]
                    pos = params.index(name) if name in params else None
                    if pos is not None and pos < len(call.args):
                        out.append((call.args[pos], caller, self))
                    out += [(k.value, caller, self) for k in call.keywords if k.arg == name]
        return out


def _unique(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def _joined(parts: list[list[str]]) -> list[str]:
    count = 1
    for p in parts:
        count *= len(p)
    if count > MAX_VARIANTS:
        parts = [p if len(p) == 1 else ["X"] for p in parts]
    return _unique(["".join(c) for c in product(*parts)])


def calls_named(tree: ast.AST, names: set[str]) -> list[tuple[ast.AST, ast.Call]]:
    """(innermost enclosing function, call) for every call of one of ``names`` (a plain name or an attribute)."""
    found: dict[int, tuple[ast.AST, ast.Call]] = {}
    for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for call in ast.walk(func):  # ast.walk meets an outer function first: the inner one overwrites it
            if isinstance(call, ast.Call) and (getattr(call.func, "id", None) or getattr(call.func, "attr", None)) \
                    in names:
                found[id(call)] = (func, call)
    return list(found.values())
