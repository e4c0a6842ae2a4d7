"""Coded errors: worded by their code in the reader's language and for the surface that shows them, never made
from a sentence (a runtime rule: ``StudioError("...")`` raises), and an unknown code fails loudly.

The catalog's own completeness (every code, every language, every surface, the same values, no flag or config key
on the page, no English in the Chinese) is tests/words/test_catalog_complete.py; no test reads studio/ for codes.
"""
from __future__ import annotations

import re

import pytest

from studio.errors import StudioError
from studio.words.entry import LANGS
from studio.words.errors import UnknownCode, words
from tests.ui.test_page_messages import FLAG


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
    from studio.words.catalog import msg
    from studio.words.error_words import page_message
    from studio.words.render import has
    for role in ("text", "label", "instruction", "input", "output", "system", "messages"):
        values = {"name": "x", "file": "f.csv", "columns": ["a"], "role": role}
        bare = words("data.column_missing", values, lang, "page")[2]
        shown = page_message(StudioError.of("data.column_missing", **values), lang)
        assert bare in shown and "data.col" not in shown, (role, shown)
        key = f"data.col_{role}"
        if has(key):  # the system column has no field of its own on the Data tab
            assert msg(key, lang) in bare, (role, bare)


# RunConfig's keys that are also words of a sentence (a dataset, a template, a reward, bf16 the number format;
# "a built-in template: …" introduces a list): a sentence names them as settings only as `key=value` or the key in
# quotes
WORD_KEYS = {"stage", "dataset", "template", "seed", "precision", "packing", "bf16", "fp16", "reward"}


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




def test_an_error_cannot_be_made_from_a_sentence() -> None:
    """Every StudioError is made by its code (``StudioError.of``), worded when shown in the reader's language; one
    made from a sentence would reach a Chinese page in English. The constructor refuses it, wherever it is called
    (a subclass words itself by code too); only a run recorded by an older studio reads back as written."""
    with pytest.raises(TypeError, match="StudioError.of"):
        StudioError("The file is broken", "fix it")
    with pytest.raises(TypeError):
        StudioError(what="The file is broken")
    old = StudioError.from_dict({"error": "gone", "what": "Old", "fix": "use --x"})
    assert old.message == "Old. Fix: use --x." and not old.coded
    import copy
    again = copy.deepcopy(StudioError.of("data.nul_byte", file="a.csv", line=3))
    assert again.code == "data.nul_byte" and again.values == {"file": "a.csv", "line": 3}
