"""The one entry shape and its one renderer (studio/words/entry.py, studio/words/render.py).

Every message is a code with (English, Chinese) for the command line and for the page; the catalog is built from
lists of entries and refuses a code defined twice at import (a dict literal keeps the later of two equal keys in
silence: 19 field labels and helps were written twice that way). The renderer words a code's values the same way
for every kind of message: settings named as each surface names them, lists and closed-set values in the
language, English plurals.
"""
from __future__ import annotations

import pytest

from studio.words.entry import Catalog, DuplicateCode, Entry, error, field, label, message, notice


def test_a_code_defined_twice_is_refused_whichever_list_defines_it() -> None:
    with pytest.raises(DuplicateCode, match="'a.b'"):
        Catalog([message("a.b", "one", "一"), message("a.b", "two", "二")])
    with pytest.raises(DuplicateCode, match="'x.fix'"):  # an error's part clashes with a message of its name
        Catalog([error("x", what=("What", "什么"), fix=("do", "做")), message("x.fix", "fix", "修")])
    catalog = Catalog([message("a.b", "one", "一")], [label("a.c", "two", "二")])
    assert sorted(catalog) == ["a.b", "a.c"] and catalog["a.c"].browser and not catalog["a.b"].browser


def test_the_real_catalog_is_built_by_the_registry_that_refuses_duplicates() -> None:
    from studio.words import catalog
    assert isinstance(catalog.CATALOG, Catalog) and len(catalog.CATALOG) > 1000
    groups = catalog.GROUPS
    with pytest.raises(DuplicateCode):  # any entry of any group, defined again anywhere, fails the build
        Catalog(*groups, [groups[-1][0]])


def test_every_kind_is_one_entry_shape() -> None:
    [one] = [message("m", "Hello {name}", "你好 {name}", page=("Hi {name}", "嗨 {name}"))]
    assert one == Entry("m", cli=("Hello {name}", "你好 {name}"), page=("Hi {name}", "嗨 {name}"))
    what, why, fix = error("e.x", what=("W", "什"), why=("Y", "为"), fix=("--flag", "--flag"), page_fix=("F", "修"))
    assert (what.code, why.code, fix.code) == ("e.x", "e.x.why", "e.x.fix")
    assert what.page == what.cli and fix.cli == ("--flag", "--flag") and fix.page == ("F", "修")
    n = notice("notice.n", cli="cli {f_cutoff_len}", page=("page {f_cutoff_len}", "页 {f_cutoff_len}"))
    assert n.cli == ("cli {f_cutoff_len}", "页 {f_cutoff_len}")  # the CLI's Chinese is the page's, keys for labels
    lab, hlp = field("lr", label=("LR", "学习率"), help=("Peak rate", "峰值"))
    assert (lab.code, hlp.code) == ("f.lr", "h.lr") and lab.browser and hlp.browser


@pytest.fixture()
def render():  # type: ignore[no-untyped-def]
    from studio.words import render as r
    return r.render


def test_a_setting_is_named_as_each_surface_names_it(render) -> None:  # type: ignore[no-untyped-def]
    values = {"name": "learning_rate", "bound": 0}
    assert render("check.above", {**values, "value": 0}, "en", "cli") == "learning_rate must be above 0 (got 0)"
    assert render("check.above", {**values, "value": 0}, "en", "page") == "'Learning rate' must be above 0 (got 0)"
    assert render("check.above", {**values, "value": 0}, "zh", "page") == "“学习率”必须大于 0（现在是 0）"


def test_plurals_lists_and_closed_set_values_are_worded_in_the_language(render) -> None:  # type: ignore[no-untyped-def]
    one = render("report.empty_text", {"count": 1}, "en", "cli")
    assert one == "1 row has no text to read"
    assert render("report.empty_text", {"count": 3}, "en", "cli") == "3 rows have no text to read"
    values = {"file": "a.csv", "skipped": [(2, "empty text"), (1, "missing label")]}
    assert "2 with empty text, 1 with missing label" in render("data.no_usable_rows", values, "en", "cli")
    assert "2 行文本为空，1 行缺少标签" in render("data.no_usable_rows", values, "zh", "page")
    assert render("term.role.label", {}, "zh") == "标签"


def test_an_unknown_code_or_values_that_do_not_fit_fail_loudly(render) -> None:  # type: ignore[no-untyped-def]
    from studio.words.render import UnknownCode
    with pytest.raises(UnknownCode, match="no.such"):
        render("no.such", {}, "en")
    with pytest.raises(UnknownCode, match="check.above"):
        render("check.above", {"name": "learning_rate"}, "en")
