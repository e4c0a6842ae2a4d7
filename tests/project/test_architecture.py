"""The layering in docs/ARCHITECTURE.md, enforced by reading every module's imports (function-level ones too).

ui/ (the pages), web/ (the server around them) and cli/ on top; app/ (what the page does that is not drawing it) under ui/; evaluation/,
engine/, memory/ and autoconfig in the middle; data/, models/, config/, runs/, words/, errors and workspace at
the bottom. A module may import its own layer or lower, never higher; no group of modules imports each other in
a circle; only ui/ imports the web framework, and every ui/ module does; cli/ never imports ui/, not even by name
(the verbs that serve a page, webui and demo, are added to the command line by studio/__main__.py).
"""
from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "studio"
LAYERS = {"ui": 4, "web": 4, "cli": 4, "__main__": 4,
          "app": 3,
          "evaluation": 2, "engine": 2, "memory": 2, "autoconfig": 2,
          "data": 1, "models": 1, "config": 1, "runs": 1, "words": 1,
          "errors": 1, "notices": 1, "state_files": 1, "safe_files": 1, "feedback": 1,
          "workspace": 1, "stages": 1, "__init__": 1}
WEB = ("gradio", "gradio_client", "starlette", "fastapi", "uvicorn")
HEAVY = ("torch", "transformers", "peft", "deepspeed", "bitsandbytes", "accelerate")


def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _imports(name: str, path: Path) -> set[str]:
    is_pkg = path.name == "__init__.py"
    pkg = name if is_pkg else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}  # `from . import forms` names a module
    return found


def _internal(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph = {}
    for name, path in mods.items():
        graph[name] = {m for m in _imports(name, path) if m in mods and m != name and m != "studio"}
    return graph


def _layer(mod: str) -> int:
    return LAYERS[mod.split(".")[1] if "." in mod else "__init__"]


def test_no_lower_layer_imports_a_higher_one() -> None:
    graph = _internal(_modules())
    bad = sorted(f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
                 for a, deps in graph.items() for b in deps if _layer(b) > _layer(a))
    assert bad == []


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    cycles, state, stack = [], {}, []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cycles.append(" -> ".join(stack[stack.index(m):] + [m]))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return cycles


def test_no_import_circles() -> None:
    graph = _internal(_modules())
    # a package's __init__ importing its own submodules is not a circle of design
    graph = {a: {b for b in deps if not b.startswith(a + ".")} for a, deps in graph.items()}
    assert _cycles(graph) == []


def _package(mod: str) -> str:
    return mod.split(".")[1] if "." in mod else mod


def test_no_circles_between_packages_either() -> None:
    """Read as packages (data/, words/, config/ ... and the single-module ones: errors, workspace), the imports
    still run one way: a package whose modules sit on both sides of another (words/ both under errors and over
    config) is an arrow back up, though no two modules import each other."""
    graph: dict[str, set[str]] = {}
    for a, deps in _internal(_modules()).items():
        graph.setdefault(_package(a), set()).update(_package(b) for b in deps if _package(b) != _package(a))
    assert _cycles(graph) == []


def test_the_words_import_nothing_of_the_studio() -> None:
    """words/ is the bottom: studio/errors.py words an error from it, so a word module that imports any other part
    (config for a field list, state_files for a problem) would put words/ above what it sits under."""
    graph = _internal(_modules())
    out = sorted(f"{a} imports {b}" for a, deps in graph.items() if _package(a) == "words"
                 for b in deps if _package(b) != "words")
    assert out == []


def test_tab_modules_stay_thin() -> None:
    """A tab builds components and calls the engine; it never imports torch & co. itself."""
    for f in (PKG / "ui").glob("*_tab.py"):
        heavy = sorted(m for m in _imports(f"studio.ui.{f.stem}", f) if m.split(".")[0] in HEAVY)
        assert heavy == [], f"{f.name} imports {heavy}"


def test_only_the_pages_import_the_web_framework() -> None:
    """Services, the engine and the command line run without a web framework: only the page (studio/ui/) and the
    server around it (studio/web/) import one."""
    bad = sorted(f"{name} imports {m}" for name, path in _modules().items()
                 if not name.startswith(("studio.ui", "studio.web"))
                 for m in _imports(name, path) if m.split(".")[0] in WEB)
    assert bad == []


def test_cli_never_imports_the_pages() -> None:
    graph = _internal(_modules())
    bad = sorted(f"{a} imports {b}" for a, deps in graph.items() if a.startswith("studio.cli")
                 for b in deps if b.startswith(("studio.ui", "studio.web")))
    assert bad == []


def _named_modules(path: Path) -> set[str]:
    """Module names a file spells as strings (``importlib.import_module("studio.ui.app")``, a verb table)."""
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.startswith("studio.") and " " not in node.value}


def test_cli_never_names_the_pages_either() -> None:
    """An import spelled as a string is still an import: cli/ loads no ui/ module by name (the verbs that serve a
    page are named by studio/__main__.py, above both)."""
    bad = sorted(f"{name} names {m}" for name, path in _modules().items() if name.startswith("studio.cli")
                 for m in _named_modules(path) if m in ("studio.ui", "studio.web")
                 or m.startswith(("studio.ui.", "studio.web.")))
    assert bad == []


def test_every_page_module_uses_the_web_framework() -> None:
    """ui/ holds only what builds or serves the page: a module there that never imports the web framework is a
    service and belongs in app/ (or runs/, data/)."""
    bad = sorted(name for name, path in _modules().items()
                 if name.startswith("studio.ui.") and not any(m.split(".")[0] in WEB for m in _imports(name, path)))
    assert bad == []


def test_every_package_has_a_layer() -> None:
    """A new top-level package must be placed in the layering on purpose, not fall through a default."""
    assert sorted({m.split(".")[1] for m in _modules() if "." in m} - set(LAYERS)) == []


# the page stays small enough to read; services go below it, to app/, the server beside it, to web/. 4,100: every tab
# now names its components in a dataclass (draw/wire, ARCHITECTURE "A tab"), ~60 lines of field declarations that
# were locals before; the budget is for services that creep into the page, not for that structure
UI_MAX_LINES = 4100


def test_the_pages_stay_under_their_line_budget() -> None:
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (PKG / "ui").rglob("*.py"))
    assert lines <= UI_MAX_LINES, (f"studio/ui/ has {lines} lines; move what does not draw the page to studio/app/ "
                                   "(a service) or studio/web/ (serving it)")


LATE_IMPORT_REASONS = ("start-up", "circle")


def _comment_lines(source: str) -> dict[int, str]:
    return {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT}


def _why_above(line: int, comments: dict[int, str], lines: list[str], import_ends: dict[int, int]) -> str:
    """The comment that explains the run of function-level imports ``line`` belongs to: on the line, or the
    comment block right above the first import of the run."""
    while line - 1 in import_ends and line - 1 not in comments:
        line = import_ends[line - 1]  # the import above, of the same run
    block = []
    while line - 1 in comments and lines[line - 2].lstrip().startswith("#"):
        block.append(comments[line - 1])
        line -= 1
    return " ".join(block)


def _unexplained_late_imports(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines, comments = source.splitlines(), _comment_lines(source)
    late = [node for fn in ast.walk(ast.parse(source)) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))]
    import_ends = {node.end_lineno: node.lineno for node in late}
    out = []
    for node in late:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if not (getattr(node, "level", 0) or any(n.split(".")[0] == "studio" for n in names)):
            continue  # a library's: the rule is for the studio's own modules
        why = " ".join(comments.get(n, "") for n in range(node.lineno, node.end_lineno + 1))
        why = why or _why_above(node.lineno, comments, lines, import_ends)
        if not any(reason in why for reason in LATE_IMPORT_REASONS):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return out


def test_a_late_import_of_the_studio_says_why() -> None:
    """An import sits at the top of its module, where the module's dependencies can be read. One inside a function
    is a hidden dependency, kept only where the top would cost a measured start-up time on a path that never needs
    it (`python -m studio VERB --help`, the page's build) or would close an import circle; a comment on its line or
    right above its run of imports says which ("# start-up: torch, 1.9 s at import; ..." or "# circle: ...")."""
    bad = sorted(line for path in _modules().values() for line in _unexplained_late_imports(path))
    assert bad == [], "move these to the top of their module, or say why not:\n" + "\n".join(bad)
