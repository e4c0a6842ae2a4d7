"""The error catalog is complete: every code has its words in every page language, on both surfaces, with the
same values, and every code the studio raises has an entry (studio/words/errors.py).

This replaces reading the source for English sentences: a coded error carries no sentence, so the rule is held
on the catalog itself, and on the codes written in studio/.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.words.errors import ERRORS, LANGS, LISTS, PARTS, PROBLEMS, TERMS, UnknownCode, placeholders, words
from tests.ui.test_page_messages import FLAG
from tests.ui.test_ui_zh_page import latin_words

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"^[a-z]+\.[a-z_]+$")
# a file's name is no code (config.json, model.gguf)
FILE_TYPES = {"json", "jsonl", "yaml", "yml", "txt", "csv", "py", "gguf", "safetensors", "bin"}
# what a data file or dataset_info.json holds literally (keys and column names, JSON's null, the NUL character),
# the names of training stages and formats, and what the command line takes as typed (convert, DIR, sentiment)
LITERAL = {"conversations", "formatting", "history", "human", "tools", "null", "nul", "openai", "sharegpt",
           "dpo", "kto", "pt", "convert", "dir", "sentiment"}
LITERAL |= {"export", "run", "from"}  # the export command and its RUN argument as typed, a Modelfile's FROM line
LITERAL |= {"feedback", "verdict"}  # the feedback verdict command as typed


def _texts() -> list[tuple[str, str, str, str]]:
    """(code, part, English, Chinese) of every part of every entry."""
    return [(code, part, *e[part]) for code, e in ERRORS.items() for part in PARTS if part in e]


def test_every_code_has_every_language_for_every_part() -> None:
    assert len(ERRORS) >= 100  # the data subsystem's errors at least
    for code, e in ERRORS.items():
        assert CODE.match(code), code
        assert "what" in e and set(e) <= set(PARTS), (code, sorted(e))
        for part in e:
            pair = e[part]
            assert isinstance(pair, tuple) and len(pair) == len(LANGS), (code, part)
            assert all(isinstance(t, str) and t.strip() for t in pair), (code, part, pair)


def test_the_same_values_in_every_language() -> None:
    for code, part, en, zh in _texts():
        assert placeholders(en) == placeholders(zh), (code, part, en, zh)


def test_both_surfaces_where_they_differ() -> None:
    """A fix that names a command-line flag has a page fix that names none (the page's field names instead);
    a page fix is there only where it differs."""
    for code, e in ERRORS.items():
        if any(FLAG.search(t) for t in e.get("fix", ())):
            assert "page_fix" in e, f"{code}: its fix names a flag, and the page has no fix of its own"
        if "page_fix" in e:
            assert "fix" in e and e["page_fix"] != e["fix"], code
            assert not any(FLAG.search(t) for t in e["page_fix"]), (code, e["page_fix"])
        for part in ("what", "why"):  # what is wrong is the same on both surfaces: a flag belongs in a fix
            assert not any(FLAG.search(t) for t in e.get(part, ())), (code, part)


def test_no_english_left_in_the_chinese() -> None:
    english = {}
    for code, part, _en, zh in _texts():
        left = latin_words(re.sub(r"\{[^{}]*\}", " ", zh)) - LITERAL
        if left:
            english[f"{code}.{part}"] = sorted(left)
    assert english == {}
    for name, (en_form, zh_form) in LISTS.items():  # the list values' own words
        for item in (en_form[0], zh_form[0]):
            assert callable(item) or isinstance(item, str), name
    for name, words_of in TERMS.items():
        for value, (en, zh) in words_of.items():
            assert en and zh and not latin_words(zh) - LITERAL, (name, value, zh)


def test_every_listed_problem_has_both_languages_and_the_same_values() -> None:
    """The problems an error lists (``PROBLEMS``: a cluster request's) are held to the catalog's rule; a run
    configuration's are held by tests/config/test_config_problems.py."""
    assert PROBLEMS
    for code, (en, zh) in PROBLEMS.items():
        assert CODE.match(code) and en.strip() and zh.strip(), code
        assert placeholders(en) == placeholders(zh), (code, en, zh)
        assert not latin_words(re.sub(r"\{[^{}]*\}", " ", zh)) - LITERAL, (code, zh)


@pytest.mark.parametrize("lang", LANGS)
def test_a_listed_problem_is_worded_in_the_language_and_surface_of_its_error(lang: str) -> None:
    """Each problem of a ``problems`` value by its own code, in the error's language; a run configuration's names
    a setting as the surface does; a problem not yet coded is shown as written."""
    exc = StudioError.of("engine.cluster_shape", problems=[{"problem": "cluster.nnodes", "got": 0},
                                                           {"problem": "cluster.host_names", "hosts": ["a b", "c;d"]},
                                                           {"problem": "check.max_steps"}, "an old sentence"])
    text = exc.text(lang)
    if lang == "zh":
        assert text.startswith("无法写出集群文件：--nnodes 至少要为 1（实际是 0）；--hosts 中有不是主机名的名字：“a b”，“c;d”；")
        assert "max_steps必须是 -1" in text and "；an old sentence。" in text
        assert "“最大步数”必须是 -1" in exc.text(lang, "page")
    else:
        assert text.startswith("Cannot write the cluster files: --nnodes must be at least 1 (got 0); --hosts has names "
                               "that are not host names: a b, c;d; max_steps must be -1")
        assert "'Max steps' must be -1" in exc.text(lang, "page")
    assert "max_steps" not in exc.text(lang, "page")
    with pytest.raises(UnknownCode, match="cluster.nowhere"):
        StudioError.of("engine.cluster_shape", problems=[{"problem": "cluster.nowhere"}])


def _sample_values(code: str) -> dict[str, object]:
    """A value for each placeholder of ``code`` (a number where the text formats one)."""
    out: dict[str, object] = {}
    for en, _zh in (ERRORS[code][p] for p in PARTS if p in ERRORS[code]):
        for _, name, spec, _ in __import__("string").Formatter().parse(en):
            if name and not name.endswith(("_flag", "_label")) and not name.startswith(("f_", "q_")):
                out[name] = 1.5 if spec else ("text" if name == "role" else "v")
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_every_entry_is_worded_on_both_surfaces(lang: str) -> None:
    """Each entry formats with its values in each language for the CLI and the page (a stray brace, a format the
    value cannot take, a derived value such as {role_flag} without its role fails here, not in front of a user)."""
    for code in ERRORS:
        values = _sample_values(code)
        for surface in ("cli", "page"):
            what, _why, fix = words(code, values, lang, surface)
            assert what and "{" not in what.replace("{{", ""), (code, what)
            if "fix" in ERRORS[code]:
                assert fix, code


def _codes_written_in_studio() -> dict[str, str]:
    """code -> 'path:line' of every code studio/ passes to ``StudioError.of``: the literal first argument, and
    for a code chosen at run time (a variable) every code-like string of that module, and every ``code=`` keyword
    in studio/ (safe_name's callers name theirs so). Another error's code passed on (``exc.code``) is checked
    where that error is raised."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "studio").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("studio/words/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        variable = False
        for call in calls:
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "of" and getattr(f.value, "id", "") == "StudioError":
                first = call.args[0] if call.args else None
                if isinstance(first, ast.Constant):
                    found[first.value] = f"{rel}:{call.lineno}"
                elif isinstance(first, ast.Name):  # chosen here at run time (not ``exc.code``: passed on)
                    variable = True
            for k in call.keywords:
                if k.arg == "code" and isinstance(k.value, ast.Constant) and CODE.match(str(k.value.value)):
                    found[k.value.value] = f"{rel}:{call.lineno}"
        if variable:
            for n in ast.walk(tree):
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and CODE.match(n.value) \
                        and n.value.split(".")[0] in {c.split(".")[0] for c in ERRORS} \
                        and n.value.split(".")[1] not in FILE_TYPES:
                    found[n.value] = f"{rel}:{n.lineno}"
    return found


def test_every_code_raised_in_the_studio_has_its_words() -> None:
    written = _codes_written_in_studio()
    assert len(written) >= 100, len(written)  # the scan sees the data subsystem's codes
    missing = {code: where for code, where in written.items() if code not in ERRORS}
    assert missing == {}, f"codes without words in studio/words/errors.py: {missing}"


def test_an_unknown_code_fails_loudly() -> None:
    with pytest.raises(UnknownCode, match="data.no_such_code"):
        StudioError.of("data.no_such_code", file="a.csv")
    with pytest.raises(UnknownCode, match="data.nul_byte"):  # values that do not fit its words
        StudioError.of("data.nul_byte", file="a.csv")
    assert not issubclass(UnknownCode, (LookupError, ValueError))  # the readers turn those into a user's error


def test_a_coded_error_keeps_its_code_and_values_and_words_them_per_language() -> None:
    exc = StudioError.of("data.too_large", file="big.csv", mb=52.31, limit=50.0, need=53)
    assert exc.code == "data.too_large" and exc.coded
    assert exc.message == ("'big.csv' is 52.3 MB, over the 50 MB limit. Fix: split the file into smaller parts, or "
                           "raise the limit (CLI: --max-mb 53).")
    assert "--max-mb" not in exc.page_message and "at least 53 MB" in exc.page_message
    zh = exc.text("zh", "page")
    assert zh.startswith("“big.csv”有 52.3 MB") and "解决办法：" in zh and not FLAG.search(zh)
    assert "--max-mb 53" in exc.text("zh", "cli")  # the command line's Chinese keeps the flag


@pytest.mark.parametrize("lang", LANGS)
def test_a_column_role_is_named_as_the_data_tab_labels_it(lang: str) -> None:
    """{role_label} is the Data tab's own label, whether or not the caller passes the page's label lookup."""
    from studio.words.catalog import UI, msg
    from studio.words.error_words import page_message
    for role in TERMS["role"]:
        values = {"name": "x", "file": "f.csv", "columns": ["a"], "role": role}
        bare = words("data.column_missing", values, lang, "page")[2]
        shown = page_message(StudioError.of("data.column_missing", **values), lang)
        assert bare in shown and "data.col" not in shown, (role, shown)
        key = f"data.col_{role}"
        if key in UI:  # the system column has no field of its own on the Data tab
            assert msg(key, lang) in bare, (role, bare)


def _literal(node: ast.AST | None) -> bool:
    """A sentence written where the error is raised: a string literal, an f-string, or a concatenation of one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and any(isinstance(n, (ast.Constant, ast.JoinedStr)) for n in ast.walk(node))


def _sentence_argument(call: ast.Call) -> bool:
    """Whether a StudioError(...) call is given a sentence: its what a literal or a ``msg(...)`` of the UI catalog
    (words in one language, fixed when raised), or a literal what / fix / why."""
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "what"), None)
    if isinstance(first, ast.Call) and getattr(first.func, "id", getattr(first.func, "attr", "")) == "msg":
        return True
    parts = list(call.args) + [k.value for k in call.keywords if k.arg in ("what", "fix", "why")]
    return any(_literal(p) for p in parts)


def test_no_error_in_the_studio_is_raised_with_a_sentence() -> None:
    """Every StudioError is raised by its code (``StudioError.of``), worded when shown in the reader's language;
    one raised with a sentence would reach a Chinese page in English, or in the language of whoever raised it.
    studio/errors.py itself builds errors from their words."""
    found = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "studio/errors.py":
            continue
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) \
                    == "StudioError" and _sentence_argument(call):
                found.append(f"{rel}:{call.lineno}")
    assert found == []


# RunConfig's keys that are also words of a sentence (a dataset, a template, bf16 the number format; "a built-in
# template: …" introduces a list): a sentence names them as settings only as `key=value` or the key in quotes
WORD_KEYS = {"stage", "dataset", "template", "seed", "precision", "packing", "bf16", "fp16"}


def _setting_pattern(key: str) -> re.Pattern[str]:
    """``key`` as a config key in a sentence of either language (ASCII neighbours only: a Chinese character next to
    a key is a word boundary; a path such as presets/deepspeed/ds_z2.json names no setting)."""
    if key in WORD_KEYS:
        return re.compile(rf"(?<![A-Za-z0-9_./-]){key}\s*=|['“`‘]{key}['”`’]")
    return re.compile(rf"(?<![A-Za-z0-9_./-]){re.escape(key)}(?![A-Za-z0-9_/-])")


def named_settings(text: str) -> list[str]:
    """The RunConfig keys and command-line flags ``text`` names."""
    import dataclasses

    from studio.config.run_config import RunConfig
    keys = [f.name for f in dataclasses.fields(RunConfig)]
    return [k for k in keys if _setting_pattern(k).search(text)] + [m.group(0) for m in FLAG.finditer(text)]


def test_the_setting_finder_tells_a_key_from_a_word() -> None:
    assert named_settings("set val_size to 0.1") == ["val_size"]
    assert named_settings("把offload_nvme_path设为") == ["offload_nvme_path"]
    assert named_settings("optim 'x' is unknown; use --label-map") == ["optim", "--label-map"]
    assert named_settings("give a dataset with rows; --set dataset=x") == ["dataset", "--set"]
    assert named_settings("把“dataset”设为") == ["dataset"]
    assert named_settings("give a dataset with a few rows, the model's chat template, presets/deepspeed/ds_z2.json, "
                          "a card that supports bf16, 'Learning rate'") == []


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_words_name_a_config_key_or_a_flag(lang: str) -> None:
    """What the page shows of every entry (what, why and the page's fix) names each setting as the Settings tab
    labels it ({f_<key>}), never by its config key or a command-line flag: driven by the catalog and RunConfig's
    fields, so a new entry or a new setting is held to it the day it is written."""
    found = {}
    for code in ERRORS:
        shown = " | ".join(words(code, _sample_values(code), lang, "page"))
        if named_settings(shown):
            found[code] = named_settings(shown)
    assert found == {}
