"""Training notices on the page name the page's fields in the page's language (the Train tab must not show
"raise cutoff_len to keep them whole" and "choose Method: full (presets/recipes/tiny-demo-cpu.yaml)").

The rule, for the whole class: whatever the engine passes to ``notify(...)`` is a ``Notice`` (studio/notices.py:
the CLI's text plus a code and values), followed back through variables, loops, helpers of other modules and the
precision plan's warnings, so a plain-string notice fails here the day it is written; every Notice's code has its
page sentence in studio/words/notice_words.NOTICES, in both languages, naming no config key.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from source_texts import calls_named
from tests.ui.test_page_messages import FLAG

ROOT = Path(__file__).resolve().parents[2]


class _World:
    """Every module of studio/: functions and module constants by name, for following a notice to its source."""

    def __init__(self) -> None:
        self.funcs: dict[str, ast.AST] = {}
        self.consts: dict[str, list[ast.AST]] = {}
        self.trees: dict[str, ast.Module] = {}
        for path in sorted((ROOT / "studio").rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            self.trees[path.relative_to(ROOT).as_posix()] = tree
            for n in ast.walk(tree):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.funcs.setdefault(n.name, n)
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            self.consts.setdefault(t.id, []).append(node.value)

    def plain(self, node: ast.AST, func: ast.AST | None, depth: int = 0) -> list[str]:
        """What ``node`` can hold that is not a Notice (empty: every value is a Notice or None)."""
        if depth > 12:
            return [f"too deep: {ast.unparse(node)[:80]}"]
        again = lambda n, f=func: self.plain(n, f, depth + 1)  # noqa: E731
        name = getattr(node, "func", None)
        callee = (getattr(name, "id", None) or getattr(name, "attr", None)) if isinstance(node, ast.Call) else None
        if callee == "Notice" or isinstance(node, ast.Constant) and node.value is None:
            return []
        if callee in ("list", "tuple") and len(node.args) == 1:  # type: ignore[attr-defined]
            return again(node.args[0])  # type: ignore[attr-defined]
        if isinstance(node, ast.BinOp):
            return again(node.left) + again(node.right)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [p for e in node.elts for p in again(e)]
        if isinstance(node, ast.ListComp):
            return again(node.elt)
        if isinstance(node, ast.Attribute) and node.attr == "warnings":  # plan.warnings: every PrecisionPlan's
            return [p for tree in self.trees.values() for call in ast.walk(tree) if isinstance(call, ast.Call)
                    and getattr(call.func, "id", None) == "PrecisionPlan"
                    for w in call.args[5:6] + [k.value for k in call.keywords if k.arg == "warnings"]
                    for p in self.plain(w, None, depth + 1)]
        if callee in self.funcs:
            f = self.funcs[callee]
            return [p for r in ast.walk(f) if isinstance(r, ast.Return) and r.value is not None
                    for p in self.plain(r.value, f, depth + 1)]
        if isinstance(node, ast.Name):
            return self._name(node.id, func, depth)
        return [f"plain text: {ast.unparse(node)[:120]}"]

    def _name(self, name: str, func: ast.AST | None, depth: int) -> list[str]:
        found: list[str] = []
        sources = False
        for n in ast.walk(func) if func is not None else []:
            values = []
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                values = [n.value]
            elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) and \
                    n.target.id == name:
                values = [n.iter]
            elif isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "append" and \
                    getattr(n.func.value, "id", None) == name:  # type: ignore[attr-defined]
                values = n.args[:1]
            for v in values:
                sources = True
                found += self.plain(v, func, depth + 1)
        if sources:
            return found
        if name in self.consts:
            return [p for v in self.consts[name] for p in self.plain(v, None, depth + 1)]
        return [f"cannot see what '{name}' holds"]


def test_every_notice_the_engine_sends_is_a_notice_with_a_page_form() -> None:
    world = _World()
    calls = [(rel, f, c) for rel, tree in world.trees.items() for f, c in calls_named(tree, {"notify"})]
    assert len(calls) >= 6, [rel for rel, *_ in calls]  # the run's notices and the trainer's
    plain = {f"{rel}:{call.lineno}": world.plain(call.args[0], func) for rel, func, call in calls if call.args}
    plain = {k: v for k, v in plain.items() if v}
    assert not plain, "notices sent as plain text (wrap them in studio.notices.Notice):\n" + "\n".join(
        f"  {k}: {v}" for k, v in plain.items())


def _notice_calls() -> list[tuple[str, ast.Call]]:
    out = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [(f"{path.relative_to(ROOT).as_posix()}:{n.lineno}", n) for n in ast.walk(tree)
                if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "Notice"]
    return out


def test_every_notice_code_has_page_words_that_name_no_config_key() -> None:
    from tests.ui.test_ui_zh_page import latin_words
    from studio.config.run_config import RunConfig
    from studio.words.notice_words import NOTICES, field_words
    calls = _notice_calls()
    assert len(calls) >= 12, calls
    keys = set(RunConfig.__dataclass_fields__)
    for where, call in calls:
        code = call.args[1].value if len(call.args) > 1 and isinstance(call.args[1], ast.Constant) else None
        assert code in NOTICES, f"{where}: Notice code {code!r} has no page words in studio/words/notice_words.py"
        given = {k.arg for k in call.keywords} | set(field_words("en"))
        for text in NOTICES[code]:
            slots = set(re.findall(r"\{(\w+)\}", text))
            assert slots <= given, f"{where}: {code} uses {slots - given}, which the Notice does not give"
            bare = re.sub(r"\{\w+\}", " ", text)
            assert not {w for w in re.findall(r"[a-z]\w*", bare) if w in keys and "_" in w}, (code, text)
            assert not FLAG.search(bare) and "presets/" not in bare and ".yaml" not in bare, (code, text)
        zh_left = latin_words(re.sub(r"\{\w+\}", " ", NOTICES[code][1])) - {"adam", "mantissa"}
        assert not zh_left, (code, zh_left)


def test_the_train_tab_shows_notices_in_page_words() -> None:
    from studio.notices import Notice
    from studio.ui.train_tab import page_log, status_markdown
    note = Notice("3 training rows are longer than cutoff_len=512 and were truncated; raise cutoff_len to keep them "
                  "whole", "truncated", n=3, cutoff=512)
    event = {"type": "notice", "message": str(note), **note.page_form()}
    snap = {"state": "running", "run": "/w/runs/r1", "notices": [event]}
    shown = status_markdown(snap, "zh")  # a Chinese browser
    assert "3 条训练数据超过了“每条样本最大 token 数”（512）" in shown and "cutoff_len" not in shown, shown
    log = page_log(f"WARNING studio.engine.run: {note}\n", [event], "zh")
    assert "cutoff_len" not in log and "“每条样本最大 token 数”" in log, log


def test_an_english_page_names_the_settings_field_and_the_cli_keeps_the_key() -> None:
    from studio.engine.run import startup_notices
    from studio.config.run_config import RunConfig
    from studio.words.notice_words import notice_text
    cfg = RunConfig(model_name_or_path="tiny-demo", dataset="x.jsonl", finetuning_type="lora", lora_alpha=None)
    [note] = [n for n in startup_notices(cfg, "cpu") if n.code == "lora_alpha"]
    assert "lora_alpha" in note  # the run log and the CLI
    assert notice_text({"message": str(note), **note.page_form()}, "en").startswith("LoRA alpha is not set: using "
                                                                                      "2 x LoRA rank = ")

