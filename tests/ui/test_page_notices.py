"""Training notices on the page name the page's fields in the page's language (the Train tab must not show
"raise cutoff_len to keep them whole" and "choose Method: full (presets/recipes/tiny-demo-cpu.yaml)").

A notice is a code and its values (studio/notices.py ``Notice.of``); studio/words/notice_words.py words each code
for the command line and for the page, in English and Chinese. The engine's notify refuses anything else, so a
plain-string notice fails the first test that sends it; the catalog is held complete here.
"""
from __future__ import annotations

import re
from string import Formatter

import pytest

from tests.ui.test_page_messages import FLAG


def _slots(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def test_every_notice_code_has_cli_and_page_words_in_both_languages_naming_no_config_key() -> None:
    from tests.ui.test_ui_zh_page import latin_words
    from studio.config.run_config import RunConfig
    from studio.words.catalog import CATALOG, FIELD_LABELS
    keys = set(RunConfig.__dataclass_fields__)
    notices = {c: e for c, e in CATALOG.items() if c.startswith("notice.")}
    assert len(notices) >= 14, sorted(notices)
    for code, entry in notices.items():
        cli, (en, zh) = entry.cli[0], entry.page
        assert _slots(en) == _slots(zh), (code, _slots(en) ^ _slots(zh))
        for text in (cli, en, zh):
            named = {s[2:] for s in _slots(text) if s.startswith(("f_", "q_"))}
            assert named <= keys, (code, named - keys)  # a setting named by its config key
        assert {s[2:] for s in _slots(en) if s.startswith(("f_", "q_"))} <= set(FIELD_LABELS), code
        for text in (en, zh):
            bare = re.sub(r"\{\w+\}", " ", text)
            assert not {w for w in re.findall(r"[a-z]\w*", bare) if w in keys and "_" in w}, (code, text)
            assert not FLAG.search(bare) and "presets/" not in bare and ".yaml" not in bare, (code, text)
        zh_left = latin_words(re.sub(r"\{\w+\}", " ", zh)) - {"adam", "mantissa"}
        assert not zh_left, (code, zh_left)


def test_a_notice_of_a_code_the_catalog_lacks_or_with_values_its_words_lack_is_a_bug() -> None:
    from studio.notices import Notice
    from studio.words.errors import UnknownCode
    with pytest.raises(UnknownCode):
        Notice.of("no_such_notice")
    with pytest.raises(UnknownCode):
        Notice.of("truncated", n=3)  # its words need the cutoff too
    with pytest.raises(TypeError):
        Notice("3 training rows are longer than cutoff_len=512", "truncated", n=3, cutoff=512)  # type: ignore


def test_a_copied_or_pickled_notice_is_the_same_notice() -> None:
    import copy
    import pickle
    from studio.notices import Notice
    note = Notice.of("truncated", n=3, cutoff=512)
    for again in (copy.deepcopy(note), pickle.loads(pickle.dumps(note))):
        assert type(again) is Notice and again == note and again.page_form() == note.page_form()


def test_the_engine_refuses_a_notice_that_is_a_plain_sentence() -> None:
    from studio.engine.run import _notifier
    from studio.engine.studio_trainer import StudioTrainer
    from studio.notices import Notice
    events: list[dict] = []
    notify = _notifier(type("Events", (), {"emit": staticmethod(events.append)})())
    with pytest.raises(TypeError):
        notify("3 training rows are longer than cutoff_len=512 and were truncated")  # type: ignore[arg-type]
    assert events == []
    notify(Notice.of("truncated", n=3, cutoff=512))
    assert [e["code"] for e in events] == ["truncated"]
    assert events[0]["message"] == ("3 training rows are longer than cutoff_len=512 and were truncated; raise "
                                    "cutoff_len to keep them whole")
    trainer = StudioTrainer.__new__(StudioTrainer)
    sent: list[str] = []
    trainer._send_notice = sent.append
    with pytest.raises(TypeError):
        trainer.notify("Out of memory with 8 rows per micro-batch")  # type: ignore[arg-type]
    trainer.notify(Notice.of("selective_logits_off"))
    assert sent == [Notice.of("selective_logits_off")]


def test_the_train_tab_shows_notices_in_page_words() -> None:
    from studio.notices import Notice
    from studio.ui.train_tab import page_log, status_markdown
    note = Notice.of("truncated", n=3, cutoff=512)
    event = {"type": "notice", "message": str(note), **note.page_form()}
    snap = {"state": "running", "run": "/w/runs/r1", "notices": [event]}
    shown = status_markdown(snap, "zh")  # a Chinese browser
    assert "3 条训练数据超过了“每条样本最大 token 数”（512）" in shown and "cutoff_len" not in shown, shown
    log = page_log(f"WARNING studio.engine.run: {note}\n", [event], "zh")
    assert "cutoff_len" not in log and "“每条样本最大 token 数”" in log, log


def test_an_english_page_names_the_settings_field_and_the_cli_keeps_the_key() -> None:
    from studio.engine.run import startup_notices
    from studio.config.run_config import RunConfig
    from studio.notices import notice_text
    cfg = RunConfig(model_name_or_path="tiny-demo", dataset="x.jsonl", finetuning_type="lora", lora_alpha=None)
    [note] = [n for n in startup_notices(cfg, "cpu") if n.code == "lora_alpha"]
    assert "lora_alpha" in note  # the run log and the CLI
    # the page names a field as its other messages do (studio/words/config_problems.py ``field_name``)
    assert notice_text({"message": str(note), **note.page_form()}, "en").startswith("'LoRA alpha' is not set: using "
                                                                                      "2 x 'LoRA rank' = ")


def test_a_notice_a_run_recorded_earlier_still_reads_in_page_words() -> None:
    from studio.notices import notice_text
    event = {"type": "notice", "message": "AMD card (gfx942): quantization_bit needs bitsandbytes built for ROCm; ...",
             "code": "rocm_bitsandbytes", "params": {"card": "AMD ROCm gfx942"}}
    shown = notice_text(event, "zh")
    assert shown.startswith("这是 AMD ROCm gfx942 显卡：“量化位数（QLoRA）”使用") and "quantization_bit" not in shown, shown
    assert notice_text({**event, "code": "gone_since"}, "zh") == event["message"]  # a code this studio lacks
    assert notice_text("bf16: true but this machine has no GPU", "zh") == "bf16: true but this machine has no GPU"

