"""Both languages everywhere: no English-only label on any tab of the Chinese UI, reports in Chinese."""
from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from studio.data.report import format_report, validation_report
from studio.errors import StudioError
from studio.ui.i18n import translations

CJK = re.compile(r"[\u4e00-\u9fff]")
MARK = re.compile(r'__i18n__\{"__type__": "translation_metadata", "key": "([^"]+)"\}')
NOT_CJK = {"f.bf16", "f.fp16", "f.deepspeed", "f.lora_dropout"}  # names that read the same in Chinese
PLAIN_OK_TABS = {"evaluate"}
SERVER_BUILT_CHOICES = {"simple-model", "simple-data"}  # model cards and dataset lists: numbers and names  # built in the server's language (see evaluate_tab.labeler)


def tab_components(cfg: dict) -> dict[str, list[dict]]:
    """Components under each tab of a served/built Blocks config, keyed by the tab's id."""
    comps = {c["id"]: c for c in cfg["components"]}
    out: dict[str, list[dict]] = {}

    def walk(node: dict, tab: str | None) -> None:
        c = comps.get(node["id"])
        if c and c["type"] == "tabitem":
            tab = c["props"]["id"]
        elif c and tab:
            out.setdefault(tab, []).append(c)
        for child in node.get("children", []):
            walk(child, tab)
    walk(cfg["layout"], None)
    return out


def untranslated(cfg: dict, zh: dict[str, str]) -> tuple[list[str], dict[str, int]]:
    """(problems, texts checked per tab): every label, info, button text, Markdown key, table header and
    named choice must be Chinese in the zh UI, either through an I18n key or as plain Chinese text."""
    problems: list[str] = []
    checked: dict[str, int] = {}

    def check(tab: str, what: str, text: Any) -> None:
        if not isinstance(text, str) or not text.strip():
            return
        checked[tab] = checked.get(tab, 0) + 1
        key = MARK.search(text)
        if key:
            if key.group(1) not in zh:
                problems.append(f"{tab}: {what} key {key.group(1)!r} has no Chinese")
            elif not CJK.search(zh[key.group(1)]) and key.group(1) not in NOT_CJK:
                problems.append(f"{tab}: {what} key {key.group(1)!r} is not Chinese: {zh[key.group(1)]!r}")
        elif tab not in PLAIN_OK_TABS:
            problems.append(f"{tab}: {what} shows text without an I18n key: {text!r}")
        elif not CJK.search(text):
            problems.append(f"{tab}: {what} is English only: {text!r}")

    for tab, comps in tab_components(cfg).items():
        for c in comps:
            props, kind = c["props"], f"a {c['type']}"
            check(tab, f"{kind} label", props.get("label"))
            check(tab, f"{kind} info", props.get("info"))
            if c["type"] == "button" or "__i18n__" in str(props.get("value")):
                check(tab, f"{kind} text", props.get("value"))
            if c["type"] == "dataframe":
                shown = [h for h in (props.get("headers") or []) if re.search("[A-Za-z]", h) and h != "F1"]
                for h in shown:  # the browser never translates table headers
                    if not CJK.search(h):
                        problems.append(f"{tab}: table header {h!r} is English only")
            for choice in props.get("choices") or []:
                if isinstance(choice, list) and choice[0] != choice[1]:  # a named choice, not a value
                    if props.get("elem_id") in SERVER_BUILT_CHOICES and CJK.search(choice[0]):
                        checked[tab] = checked.get(tab, 0) + 1  # facts (size, rows, dates) built in the server's language
                        continue
                    check(tab, f"{kind} choice", choice[0])
    return problems, checked


def built_config(tmp_path: Path, lang: str) -> dict:
    from studio.ui.app import build_app
    from studio.app.context import AppContext
    app = build_app(AppContext.create(tmp_path / "ws", lang=lang))
    return json.loads(json.dumps(app.get_config_file(), default=str))


def test_chinese_ui_has_no_english_only_label_on_any_tab(tmp_path: Path) -> None:
    cfg = built_config(tmp_path, "zh")
    problems, checked = untranslated(cfg, translations()["zh"])
    assert problems == []
    assert set(checked) == {"data", "settings", "train", "evaluate", "runs", "feedback"}
    assert min(v for k, v in checked.items() if k != "runs") >= 8, checked
    assert checked["runs"] >= 4  # a small tab: intro, picker, refresh, plot
    assert checked["evaluate"] >= 30  # every widget of the tab was looked at, not a sample


def test_english_ui_lets_the_browser_translate_the_evaluate_tab(tmp_path: Path) -> None:
    cfg = built_config(tmp_path, "en")
    evaluate = tab_components(cfg)["evaluate"]
    labels = [c["props"]["label"] for c in evaluate if isinstance(c["props"].get("label"), str)]
    keys = [MARK.search(t) for t in labels]
    assert labels and all(keys), labels  # I18n keys: a Chinese browser gets Chinese
    en = translations()["en"]
    assert {"ev.per_class", "ev.confusion", "ev.wrong"} <= {k.group(1) for k in keys}
    assert en["ev.per_class"] == "per class" and en["ev.wrong"] == "misclassified rows"
    headers = {c["props"]["label"]: c["props"]["headers"] for c in evaluate if c["type"] == "dataframe"}
    assert list(headers.values()) == [["label", "precision", "recall", "f1", "support"],
                                      ["input", "expected", "model's answer", "read as"]]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_string_exists_in_both_languages_with_the_same_placeholders() -> None:
    """What the browser translates: every key in both languages with the same placeholders (Gradio's own); the
    whole catalog is held so by tests/words/test_catalog_complete.py."""
    t = translations()
    assert set(t["en"]) == set(t["zh"]) and len(t["en"]) > 300
    for key, en in t["en"].items():
        assert en.strip() and t["zh"][key].strip(), key
        assert _fields(en) == _fields(t["zh"][key]), key


def _messy_rows() -> list[dict[str, str]]:
    instr = "Classify the sentiment."
    return ([{"instruction": instr, "input": f"good {i}", "output": "positive"} for i in range(24)]
            + [{"instruction": instr, "input": f"bad {i}", "output": "negative"} for i in range(4)]
            + [{"instruction": instr, "input": "", "output": "positive"},
               {"instruction": instr, "input": "good 0", "output": "positive"},
               {"instruction": instr, "input": "x", "output": "Positive"},
               {"instruction": instr, "input": "long " * 400, "output": "negative"}])


def test_report_in_chinese_keeps_the_numbers_and_english_stays_as_it_was() -> None:
    report = validation_report(_messy_rows(), cutoff_len=256, val_size=5, seed=0)
    codes = [p["code"] for p in report["problems"]]
    assert codes == ["empty_text", "duplicates", "too_long", "mixed_spellings", "imbalance", "small_validation"]
    en, zh = format_report(report).splitlines(), format_report(report, "zh").splitlines()
    assert len(en) == len(zh)
    assert en[0] == "Rows: 32 (train 27, validation 5)" and zh[0] == "行数：32（训练 27，验证 5）"
    problem_lines = zh[-len(codes):]
    assert all(CJK.search(line) and "Fix:" not in line for line in problem_lines)
    too_long = report["problems"][2]
    assert problem_lines[2] == (f"[警告] 1 行超过 cutoff_len=256 个估算 token，会被截断（第 {too_long['examples'][0]} "
                                f"行）。解决办法：把 cutoff_len 提高到 {report['lengths']['max']}（覆盖全部行；"
                                f"{report['lengths']['p95']} 覆盖 95%），或缩短这些文本。")
    assert "--label-map 'positive=positive,Positive=positive'" in problem_lines[3]
    assert format_report(validation_report([]), "zh").splitlines()[-1].startswith("[错误] 数据集中没有任何行")
    clean = validation_report(_messy_rows()[:28], cutoff_len=256)
    assert format_report(clean, "zh").splitlines()[-1].startswith("[警告] 标签不均衡：'positive' 有 24 行")


def test_data_tab_report_follows_the_ui_language(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    from studio.ui.data_tab import convert
    src = tmp_path / "reviews.csv"
    src.write_text("text,label\n" + "".join(f"good {i},1\n" for i in range(12)) + ",0\nbad,0\nawful,0\n",
                   encoding="utf-8")
    cols = {"text": "text", "label": "label"}
    for lang, skipped, problem in (("en", "Skipped 1 row(s) with empty text", "[info] Only 14 training rows."),
                                   ("zh", "跳过了 1 行（文本为空）", "[提示] 只有 14 行训练数据。")):
        ctx = AppContext.create(tmp_path / f"ws-{lang}", lang=lang)
        text, path = convert(ctx, str(src), "sentiment", cols, "1=positive,0=negative", "", "reviews")
        assert Path(path).is_file() and skipped in text and problem in text, text
    with pytest.raises(StudioError) as err:
        convert(AppContext.create(tmp_path / "ws-none", lang="zh"), None, "sentiment", cols, "", "", "x")
    from studio.words.error_words import page_message
    assert err.value.code == "page.no_file"  # worded when shown, in the page's language
    assert page_message(err.value, "zh") == "请先上传文件或点击示例数据按钮。解决办法：使用上传框或示例数据按钮。"


def test_evaluate_messages_follow_the_ui_language() -> None:
    from studio.ui import evaluate_tab as tab
    with pytest.raises(gr.Error, match="没有上传文件。解决办法：上传带标签的"):
        tab.on_check("some-run", "upload", None, "score", 0, lang="zh")
    with pytest.raises(gr.Error, match="No file uploaded. Fix: upload a labelled"):
        tab.on_scorecard("some-run", "upload", None, "score", 0)
    with pytest.raises(gr.Error, match="消息为空。解决办法：输入内容后再发送"):
        list(tab.on_chat(" ", [], "some-run", 5, 0.0, 1.0, lang="zh"))


def test_gradio_status_keys_are_translated() -> None:
    """The raw key 'common.complete' never appears in the page: both languages carry it."""
    from studio.ui.i18n import translations
    t = translations()
    for key in ("common.complete", "common.error"):
        assert t["en"][key] and t["zh"][key] and t["zh"][key] != key


def test_train_tab_says_what_start_uses() -> None:
    """The Train tab says which model and data Start will use."""
    from studio.ui.train_tab import start_line
    line = start_line("/ws/models/gemma3-270m/", "/ws/data/my_reviews.jsonl", "lora", "en")
    assert "**gemma3-270m**" in line and "**my_reviews**" in line and "(lora)" in line
    assert "Settings tab" in start_line("tiny-demo", "", "full", "en")
    assert "gemma3-270m" in start_line("gemma3-270m", "d.jsonl", "lora", "zh") and "训练" in start_line(
        "gemma3-270m", "d.jsonl", "lora", "zh")


def test_deepspeed_help_lists_every_plan_in_both_languages() -> None:
    """Both help texts read the vocabulary's plans, so neither lacks one (the Chinese lacked z3-nvme)."""
    from studio.config.run_config import field_meta
    from studio.config.vocabulary import DEEPSPEED_SHORTCUTS
    from studio.ui.i18n import translations
    en = next(m["help"] for m in field_meta() if m["name"] == "deepspeed")
    zh = translations()["zh"]["h.deepspeed"]
    for plan in DEEPSPEED_SHORTCUTS:
        assert plan in en and plan in zh, plan
    assert "{" not in zh
