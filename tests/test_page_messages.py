"""Every message a page user sees names page fields, never CLI flags (issue 28 finding 6: a file with no label
column got the fix "CLI: --label-column NAME" on the Data tab).

The rule, for the whole class: every error is raised by its code (``StudioError.of``), and a code whose fix names a
command-line flag has a page fix in the page's words; tests/test_words_catalog.py holds both (the catalog, and no
StudioError raised with a sentence). The page (``studio/ui/common.user_error``) shows the page's fix, while the CLI
keeps its flags; here the Data / Settings / Train handlers are driven with the bad inputs that raise those errors.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import gradio as gr
import pytest

from studio.errors import ConfigError, StudioError
from studio.ui.common import user_error
from studio.words.error_words import page_message

ROOT = Path(__file__).resolve().parents[1]
# a command-line flag (--label-column, --max-mb), or the "(CLI: ...)" hints that introduce them
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*|\bCLI\b")
def test_the_page_shows_the_page_fix_and_the_cli_keeps_its_flag() -> None:
    exc = StudioError("No label column", "name it (CLI: --label-column NAME)",
                      page_fix="choose it under Label column on the Data tab", code="data_column")
    assert "--label-column" in exc.message and "--label-column" not in exc.page_message
    shown = user_error(exc, "on_convert")
    assert isinstance(shown, gr.Error)
    assert shown.message == "No label column. Fix: choose it under Label column on the Data tab."
    plain = StudioError("Bad", "do this")
    assert plain.page_message == plain.message == "Bad. Fix: do this."
    assert not FLAG.search(ConfigError(["learning_rate must be positive"]).page_message)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_config_error_is_worded_on_the_page_in_its_language_by_its_problems_codes(lang: str) -> None:
    """The CLI prints a ConfigError as written (config keys, the YAML / --set fix); the page words each coded problem
    in its own fields and language, and the fix too; a problem not yet coded names the page's fields."""
    from studio.config.checks import problem
    exc = ConfigError([problem("check.max_steps"), "cutoff_len: expected a whole number, got '12.5'"])
    assert exc.message == ("The run configuration has 2 problems: max_steps must be -1 (use epochs) or a positive "
                           "number; cutoff_len: expected a whole number, got '12.5'. Fix: correct the listed fields in "
                           "the YAML, the --set options or the Settings tab.")
    shown = page_message(exc, lang)
    assert "max_steps" not in shown and "cutoff_len" not in shown and not FLAG.search(shown)
    if lang == "zh":
        assert shown.startswith("运行配置有 2 个问题：“最大步数”必须是 -1") and "解决办法：在“设置”页改正列出的字段" in shown
    else:
        assert shown.startswith("The run configuration has 2 problems: 'Max steps' must be -1")
        assert shown.endswith("Fix: correct the listed fields on the Settings tab.")
    one = ConfigError([problem("check.max_steps")])
    assert one.message.startswith("The run configuration has 1 problem: max_steps")
    assert StudioError.from_dict(exc.to_dict()).text(lang, "page") == shown  # as a run's status.json keeps it


# ----------------------------------------------------------------- the page's own handlers, driven


@pytest.fixture()
def ctx(tmp_path: Path):  # type: ignore[no-untyped-def]
    from studio.app.context import AppContext
    return AppContext.create(tmp_path / "ws", max_upload_mb=0.001)


def _page_error(fn, *args):  # type: ignore[no-untyped-def]
    """What the page shows when ``fn(*args)`` fails: the message of the gr.Error that ui_errors raises."""
    from studio.ui.common import ui_errors
    with pytest.raises(gr.Error) as err:
        ui_errors(fn)(*args)
    return err.value.message


def _csv(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_form_value_of_the_wrong_type_is_worded_by_the_train_tab_in_its_fields(ctx, lang: str) -> None:  # type: ignore[no-untyped-def]
    from studio.app import form_values as forms
    from studio.config.run_config import RunConfig
    from studio.ui.train_tab import start_run
    values = forms.config_to_values(RunConfig(dataset="d.jsonl"))
    values[forms.FIELD_NAMES.index("cutoff_len")] = 12.5
    ctx.lang = lang
    with pytest.raises(StudioError) as err:
        start_run(ctx, values)
    shown = page_message(err.value, lang)
    assert "cutoff_len" not in shown and not FLAG.search(shown), shown
    assert shown.startswith("运行配置有 1 个问题：" if lang == "zh" else "The run configuration has 1 problem: "), shown


def test_data_tab_errors_name_the_data_tab_fields(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.data_tab import convert
    ctx.max_upload_mb = 50.0
    none = {"text": None, "label": None}
    cases = [
        # no label column at all: the fix named "--label-column NAME", then a Label column with nothing to pick
        (_csv(tmp_path, "only_text.csv", "review\nnice\nbad\n"), "sentiment", none, "",
         "add a column with each row's label"),
        # two columns, none of them named as labels: pick it
        (_csv(tmp_path, "two.csv", "review,x\nnice,a\nbad,b\n"), "sentiment", none, "", "Label column"),
        # a label column that is empty in every row
        (_csv(tmp_path, "empty.csv", "review,stars\nnice,\nbad,\n"), "sentiment",
         {"text": "review", "label": "stars"}, "", "Label column"),
        # a column name that is not in the file
        (_csv(tmp_path, "typo.csv", "review,stars\nnice,5\nbad,1\n"), "sentiment",
         {"text": "review", "label": "star"}, "", "Label column"),
        # too many different labels: free text
        (_csv(tmp_path, "many.csv", "review,answer\n" + "".join(f"t{i},a{i}\n" for i in range(60))), "sentiment",
         {"text": "review", "label": "answer"}, "", "Task"),
        # the same label spelled twice: the fix named "--label-map"
        (_csv(tmp_path, "spell.csv", "review,fruit\n" + "x,Apple\ny,apple\nz,Pear\nw,pear\n" * 3), "sentiment",
         {"text": "review", "label": "fruit"}, "", "Label map"),
        # instruction data without an output column
        (_csv(tmp_path, "instr.csv", "foo,bar\n1,2\n"), "instruction", {}, "", "Output column"),
        # chat data without a conversation column
        (_csv(tmp_path, "chat.csv", "foo,bar\n1,2\n"), "chat", {}, "", "Messages column"),
    ]
    for path, task, cols, label_map, field in cases:
        shown = _page_error(convert, ctx, path, task, cols, label_map, "", Path(path).stem)
        assert not FLAG.search(shown), (Path(path).name, shown)
        assert field in shown, (Path(path).name, shown)


def test_a_too_large_file_and_a_path_outside_the_workspace_name_no_flag(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.data_tab import inspect
    from studio.app.paths import resolve_run_paths
    from studio.config.run_config import RunConfig
    from studio.workspace import confine
    big = _csv(tmp_path, "big.csv", "review,stars\n" + "nice,5\n" * 1000)
    shown = _page_error(inspect, big, ctx)
    assert not FLAG.search(shown) and "upload limit" in shown, shown
    shown = _page_error(confine, "/etc/passwd", ctx.allowed_roots)
    assert not FLAG.search(shown), shown
    remote = RunConfig(dataset="x.jsonl", trust_remote_code=True)
    shown = _page_error(resolve_run_paths, remote, ctx)
    assert not FLAG.search(shown) and "Trust remote code" in shown, shown


# Page texts that show a command on purpose (to copy into a terminal, and they say so); KNOWN_TEXTS: known
# offenders, none now (a new one is still caught, and a fixed one must leave).
COMMAND_TEXTS: set[str] = set()
KNOWN_TEXTS: set[str] = set()


def test_page_texts_name_no_flags() -> None:
    """The labels and messages of the page (both languages): the Data tab's path box said '--data-root', the locked
    Trust remote code box 'python launch.py --trust-remote-code'."""
    from studio.ui.i18n import MESSAGES, UI
    found = {k for table in (UI, MESSAGES) for k, pair in table.items() if any(FLAG.search(t) for t in pair)}
    assert found - COMMAND_TEXTS - KNOWN_TEXTS == set()
    assert not KNOWN_TEXTS - found, f"fixed, so take them off KNOWN_TEXTS: {sorted(KNOWN_TEXTS - found)}"


# ----------------------------------------------------------------- a Chinese page: the same errors in Chinese
# (issue 28: "English left in the Chinese page"). Every error is raised by its code (tests/test_words_catalog.py)
# and worded when shown; the Data tab's common errors come out wholly Chinese.


@pytest.fixture()
def zh_page():  # type: ignore[no-untyped-def]
    """Handlers run as they do for a browser whose language is Chinese."""
    from types import SimpleNamespace
    from gradio.context import LocalContext
    token = LocalContext.request.set(SimpleNamespace(headers={"accept-language": "zh-CN,zh;q=0.9"}))
    yield
    LocalContext.request.reset(token)


def test_a_chinese_page_shows_the_data_tabs_errors_in_chinese(ctx, tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    from test_ui_zh_page import latin_words
    from studio.ui.data_tab import convert, inspect
    ctx.max_upload_mb = 50.0
    cases = [  # the Data tab's common mistakes: (file, its text, task, columns, label map)
        ("only_text.csv", "review\nnice\nbad\n", "sentiment", {"text": None, "label": None}, ""),
        ("empty.csv", "review,stars\nnice,\nbad,\n", "sentiment", {"text": "review", "label": "stars"}, ""),
        ("typo.csv", "review,stars\nnice,5\nbad,1\n", "sentiment", {"text": "review", "label": "star"}, ""),
        ("many.csv", "review,answer\n" + "".join(f"t{i},a{i}\n" for i in range(60)), "sentiment",
         {"text": "review", "label": "answer"}, ""),
        ("spell.csv", "review,fruit\n" + "x,Apple\ny,apple\nz,Pear\nw,pear\n" * 3, "sentiment",
         {"text": "review", "label": "fruit"}, ""),
        ("copy.csv", "review,stars\nnice,nice\nbad,bad\n", "sentiment", {"text": "review", "label": "stars"}, ""),
        ("instr.csv", "foo,bar\n1,2\n", "instruction", {}, ""),
        ("chat.csv", "foo,bar\n1,2\n", "chat", {}, ""),
    ]
    for name, text, task, cols, label_map in cases:
        path = _csv(tmp_path, name, text)
        shown = _page_error(convert, ctx, path, task, cols, label_map, "", Path(path).stem)
        own = set(re.findall(r"[a-z]{2,}", (text + str(cols)).lower()))  # the file's and the user's own words
        assert "解决办法：" in shown and not latin_words(shown) - own, (name, shown)
    ctx.max_upload_mb = 0.001
    big = _csv(tmp_path, "big.csv", "review,stars\n" + "nice,5\n" * 1000)
    shown = _page_error(inspect, big, ctx)
    assert "上传上限" in shown and not latin_words(shown), shown


def test_an_english_page_keeps_the_english_words(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.data_tab import convert
    ctx.max_upload_mb = 50.0
    path = _csv(tmp_path, "empty.csv", "review,stars\nnice,\nbad,\n")
    shown = _page_error(convert, ctx, path, "sentiment", {"text": "review", "label": "stars"}, "", "",
                         "empty")
    assert shown == ("Label column 'stars' is empty in every row. Fix: fill in the labels, or pick the column that "
                     "holds them under Label column on the Data tab.")


# ----------------------------------------------------------------- why a run ended (the Train tab's Reason, the
# Runs table): the engine writes it once, for the CLI and the page. The rule, for the whole class: every reason the
# engine or the job runner can write (studio/engine, studio/runs) names no flag, and one that is a StudioError's
# message (whose fix may name flags) goes with the error's parts (``page_error``), which the page shows in its own
# words and language (studio/ui/train_tab.run_reason).
REASON_ROOTS = ("studio/engine", "studio/runs")
END_WRITERS = {"_end": 2}  # the engine's end writer: the reason is its third argument (else a reason= keyword)


def _reason_index() -> tuple[dict[str, list[ast.AST]], dict[str, list[ast.AST]],
                             list[tuple[str, ast.AST, ast.AST, ast.AST]]]:
    """(function name -> definitions, module constant -> values,
    [(where, enclosing function, reason expression, the call or dict that writes it)])."""
    funcs: dict[str, list[ast.AST]] = {}
    consts: dict[str, list[ast.AST]] = {}
    reasons: list[tuple[str, ast.AST, ast.AST, ast.AST]] = []
    for root in REASON_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            consts.setdefault(t.id, []).append(node.value)
            for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
                funcs.setdefault(func.name, []).append(func)
                for n in ast.walk(func):
                    found: list[ast.AST] = []
                    if isinstance(n, ast.Call):
                        name = getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                        if name in END_WRITERS and len(n.args) > END_WRITERS[name]:
                            found.append(n.args[END_WRITERS[name]])
                        found += [k.value for k in n.keywords if k.arg == "reason"]
                    elif isinstance(n, ast.Dict):
                        found += [v for k, v in zip(n.keys, n.values)
                                  if isinstance(k, ast.Constant) and k.value == "reason"]
                    elif isinstance(n, ast.Assign):
                        found += [n.value for t in n.targets if isinstance(t, ast.Subscript)
                                  and isinstance(t.slice, ast.Constant) and t.slice.value == "reason"]
                    reasons += [(f"{rel}:{func.name}:{e.lineno}", func, e, n) for e in found]
    return funcs, consts, reasons


def _walk_outside_errors(node: ast.AST) -> list[ast.AST]:
    """ast.walk, leaving out what is inside StudioError(...) (an error's own words: held to the page rule by the
    scan above, and shown by the page through page_error)."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) in (
                "StudioError", "ConfigError"):
            continue
        out.append(n)
        todo += list(ast.iter_child_nodes(n))
    return out


def _reason_texts(expr: ast.AST, func: ast.AST, funcs: dict, consts: dict,
                  seen: set[int]) -> tuple[list[str], bool]:
    """The words a reason expression can hold: its strings, those of the local variables and module constants it
    reads and of what the engine's own functions it calls return; and whether it is a StudioError's ``message``."""
    texts, is_message = [], False
    todo = [(expr, func)]
    while todo:
        node, where = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for n in _walk_outside_errors(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                texts.append(n.value)
            elif isinstance(n, ast.Attribute) and n.attr == "message":
                is_message = True
            elif isinstance(n, ast.Name):
                local = [a.value for a in ast.walk(where) if isinstance(a, (ast.Assign, ast.AnnAssign)) and a.value
                         is not None and any(isinstance(t, ast.Name) and t.id == n.id or isinstance(t, ast.Tuple)
                                             and any(getattr(e, "id", None) == n.id for e in t.elts)
                                             for t in (a.targets if isinstance(a, ast.Assign) else [a.target]))]
                todo += [(v, where) for v in local or consts.get(n.id, [])]
            if isinstance(n, ast.Call):
                name = getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                for f in funcs.get(name, []):
                    todo += [(r.value, f) for r in ast.walk(f) if isinstance(r, ast.Return) and r.value is not None]
    return texts, is_message


def _writes_page_error(writer: ast.AST, func: ast.AST) -> bool:
    """Whether the call or dict that writes a reason also writes page_error (a keyword, a key, or a **dict
    assigned in the same function with that key)."""
    def has_key(d: ast.AST) -> bool:
        return isinstance(d, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "page_error"
                                               for k in d.keys)
    if has_key(writer):
        return True
    keywords = writer.keywords if isinstance(writer, ast.Call) else []
    if any(k.arg == "page_error" for k in keywords):
        return True
    spread = {k.value.id for k in keywords if k.arg is None and isinstance(k.value, ast.Name)}
    return any(isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id in spread for t in a.targets)
               and any(has_key(d) for d in ast.walk(a.value)) for a in ast.walk(func))


def test_every_end_reason_the_engine_writes_names_page_words() -> None:
    funcs, consts, reasons = _reason_index()
    assert len(reasons) >= 12, [w for w, *_ in reasons]  # the scan sees the engine's and the job runner's
    flagged, bare = {}, []
    for where, func, expr, writer in reasons:
        texts, is_message = _reason_texts(expr, func, funcs, consts, set())
        if any(FLAG.search(t) for t in texts):
            flagged[where] = [t for t in texts if FLAG.search(t)]
        if is_message and not _writes_page_error(writer, func):
            bare.append(where)
    assert not flagged, f"end reasons that name a command-line flag: {flagged}"
    assert not bare, f"a StudioError's message written as a reason without its page_error: {bare}"


def _ended_by(exc: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The status a run leaves when training raises ``exc`` (the engine's own end writing, no model loaded)."""
    from studio.config.run_config import RunConfig
    from studio.engine import run as engine
    from studio.runs.run_dir import RunDir

    def fail(*_a, **_k):  # type: ignore[no-untyped-def]
        raise exc
    monkeypatch.setattr(engine, "_train", fail)
    cfg = RunConfig(model_name_or_path="tiny-demo", dataset=str(tmp_path / "d.jsonl"),
                    output_dir=str(tmp_path / "run"))
    with pytest.raises(type(exc)):
        engine.run_training(cfg)
    return {**RunDir(cfg.output_dir).read_status(), "run": cfg.output_dir}


def test_a_run_ended_by_an_error_shows_its_page_words(tmp_path: Path, monkeypatch, zh_page) -> None:  # type: ignore[no-untyped-def]
    from test_ui_zh_page import latin_words
    from studio.ui.train_tab import run_reason, status_markdown
    exc = StudioError.of("engine.reshard", checkpoint="checkpoint-4", saved=2, world_size=1, detail="")
    status = _ended_by(exc, tmp_path, monkeypatch)
    assert "--nproc" in status["reason"] and status["state"] == "failed"  # the CLI keeps its words
    assert run_reason(status, "en") == page_message(exc, "zh")  # a Chinese browser is answered here (zh_page)
    shown = status_markdown(status, "en")
    assert "--nproc" not in shown and "“进程数（显卡数）”" in shown and "解决办法：" in shown, shown
    assert not latin_words(run_reason(status, "en").split("解决办法：")[1]), shown


def test_a_run_that_lost_a_peer_shows_page_words(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.train_tab import run_reason
    monkeypatch.setenv("WORLD_SIZE", "2")
    status = _ended_by(RuntimeError("Connection reset by peer"), tmp_path, monkeypatch)
    assert status["code"] == "peer_lost" and "--resume last" in status["reason"]
    shown = run_reason(status, "en")
    assert "Lost contact with another process" in shown and not FLAG.search(shown), shown


# A Chinese page shows a run's plain end reason in Chinese too (studio/words/reason_words.py). The rule, for the whole
# class: every reason the engine and the job runner can write, read from the source as whole sentences (the helpers
# that make them followed across modules: end_reason, disk_full_reason, RunDir.stop_reason), comes out of
# zh_reason with no English left but its runtime values.
REASON_NAMES = {"oom", "error", "log", "sigkill"}  # the kernel's OOM killer and its signal; error.log, a file


def reason_sentences() -> dict[str, list[str]]:
    """'path:function:line' -> every text the reason written there can be ('X' for a runtime value)."""
    from source_texts import Module
    world: dict = {}
    modules = {}
    for root in REASON_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            module = Module(ast.parse(path.read_text(encoding="utf-8")), world)
            modules[path.relative_to(ROOT).as_posix()] = module
            for name, f in module.funcs.items():
                world.setdefault(name, (f, module))
    _, _, reasons = _reason_index()
    return {where: modules[where.split(":")[0]].texts(expr, func) for where, func, expr, _ in reasons}


def test_every_plain_end_reason_has_its_chinese() -> None:
    from test_ui_zh_page import latin_words
    from studio.words.reason_words import zh_reason
    found = reason_sentences()
    texts = {t for ts in found.values() for t in ts if t.strip(" .") not in ("", "X")}
    assert len(texts) >= 20, sorted(texts)  # the scan reads whole sentences (the job runner's composed ones too)
    english = {t: zh_reason(t) for t in texts if latin_words(zh_reason(t).replace("X", " ")) - REASON_NAMES}
    assert not english, ("end reasons a Chinese page would show in English (add their phrases to "
                         "studio/words/reason_words.REASON_PHRASES):\n" + "\n".join(f"  {k!r} -> {v!r}"
                                                                                for k, v in english.items()))


def test_a_killed_run_shows_its_reason_in_chinese(tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    from test_ui_zh_page import latin_words
    from studio.runs.processes import end_reason
    from studio.runs.run_dir import RunDir
    from studio.ui.train_tab import run_reason, status_markdown
    run = RunDir(tmp_path / "run").ensure()
    for rc, aborted in ((-9, False), (None, False), (3, False), (0, True)):
        state, reason = end_reason(run, rc, aborted)
        snap = {"state": state, "reason": reason, "run": str(run.path)}
        shown = run_reason(snap, "en")  # the browser's language (zh_page) decides
        assert not latin_words(shown) - REASON_NAMES and "继续训练" in shown, (reason, shown)
        assert shown in status_markdown(snap, "en")
    assert run_reason({"reason": "stopped on request by bob at step 7; resume continues from here"}, "zh") == \
        "应 bob 的请求在第 7 步停止；按“继续”会从这里接着训练"
