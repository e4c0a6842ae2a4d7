"""What code below studio/words/ hands the page is a code and its values, never an English sentence: a Chinese page
shows why the studio chose each setting, the memory panel's suggested changes, the data report and the model's
preparation in Chinese, and each of them carries the code it was said by.

These were the English sources: autoconfig's reasons (written twice, English beside the catalog), the memory
advice's changes (English only: the Chinese page dropped them), the data report's problems (English built where they
were found), and the model's preparation (English log lines the Train tab translated back with regexes).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from studio.autoconfig import Hardware, learning_problems, offload_disk_problem, suggest_settings
from studio.config.run_config import Draft, RunConfig
from studio.words.render import has
from tests.ui.test_ui_zh_page import latin_words

# names a Chinese sentence keeps as they are: methods, libraries, a model, data values of the test rows
NAMES = {"lora", "qlora", "tiny", "demo", "full", "deepspeed", "zero", "bitsandbytes", "token", "gb", "pcie",
         "positive", "negative", "good", "bad", "long", "x"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _chinese(text: str) -> bool:
    return bool(CJK.search(text)) and not latin_words(text) - NAMES


@pytest.mark.parametrize("model,hw", [("tiny-demo", Hardware(None, 16.0)),
                                      ("smollm2-135m-instruct", Hardware(None, 16.0)),
                                      ("smollm2-135m-instruct", Hardware(80.0, 64.0)),
                                      ("smollm2-135m-instruct", Hardware(0.05, 64.0))])
def test_why_each_setting_was_chosen_is_said_by_code(model: str, hw: Hardware) -> None:
    from studio.app.settings import why_markdown
    _, reasons = suggest_settings(model, 300, "sentiment", hw, "balanced")
    reasons += learning_problems(Draft(model_name_or_path="tiny-demo", finetuning_type="lora", val_size=0.0))
    assert reasons and all(has(f"why.{r.code}") for r in reasons), [r.code for r in reasons]
    for r in reasons:
        assert r.words("en", "page") == r.text  # one English, said once: the page's is the command line's
        assert _chinese(r.words("zh", "page")), (r.code, r.words("zh", "page"))
    zh = why_markdown(reasons, "zh")
    assert _chinese(zh), zh


def test_a_disk_too_small_for_an_offload_checkpoint_is_said_by_code() -> None:
    from types import SimpleNamespace
    est = SimpleNamespace(card=SimpleNamespace(n_params=7_000_000_000))
    r = offload_disk_problem(Draft(finetuning_type="full"), est, Hardware(24.0, 64.0, disk_gb=10.0))
    assert r is not None and r.code == "disk" and r.text == "a checkpoint needs about 78 GB of disk, only 10 GB are free"
    assert _chinese(r.words("zh", "page"))


def test_every_memory_suggestion_names_its_change_in_the_page_language() -> None:
    """The Chinese page showed a suggestion without its change (the change was English only); now each change is
    a code whose words the page has in both languages, and the command line's text is as it was."""
    from studio.autoconfig import fit_estimate
    from studio.ui.settings_tab import suggestion_label
    cfg = RunConfig(model_name_or_path="smollm2-135m-instruct", finetuning_type="full", cutoff_len=2048,
                    per_device_train_batch_size=16, gradient_checkpointing=False, dataset="d.jsonl")
    details = fit_estimate(cfg, Hardware(2.0, 64.0)).suggestion_details
    assert len(details) >= 3
    for d in details:
        change = d["change"]
        assert has(change.catalog_code), change
        assert str(change) in str(d["text"])  # the command line's line names the English change
        en, zh = suggestion_label(d, "en"), suggestion_label(d, "zh")
        assert en.startswith(f"{change}: set ") and zh.startswith(change.text("zh") + "：设为 "), (en, zh)
        assert change.text("zh") and _chinese(zh.split("（")[0].replace("=", " ")), zh


def test_the_data_report_is_said_by_code_on_the_page() -> None:
    from studio.data.report import format_report, validation_report
    rows = ([{"instruction": "Classify.", "input": f"good {i}", "output": "positive"} for i in range(24)]
            + [{"instruction": "Classify.", "input": f"bad {i}", "output": "negative"} for i in range(4)]
            + [{"instruction": "Classify.", "input": "", "output": "positive"},
               {"instruction": "Classify.", "input": "good 0", "output": "positive"},
               {"instruction": "Classify.", "input": "x", "output": "Positive"},
               {"instruction": "Classify.", "input": "long " * 400, "output": "negative"}])
    report = validation_report(rows, cutoff_len=256, val_size=5, seed=0)
    assert len(report["problems"]) >= 5 and all(has(f"report.{p['code']}") for p in report["problems"])
    for line in format_report(report, "zh", "page").splitlines():
        words = latin_words(re.sub(r"'[^']*'|“[^”]*”", " ", line)) - NAMES - {"classify"}
        assert CJK.search(line) and not words, line
    assert "cutoff_len" in format_report(report) and "cutoff_len" not in format_report(report, "en", "page")


def test_the_models_preparation_reaches_the_page_by_code_not_by_its_log_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The engine reports each step as a code: the log keeps the command line's line, the event its code; the
    Train tab words the event in the page's language (no regex over English lines)."""
    from studio.engine.run import _preparer
    from studio.models.progress import Step
    from studio.runs.run_dir import RunDir
    from studio.ui.train_tab import page_log
    run = RunDir(tmp_path / "run").ensure()
    say = _preparer(run, True)
    steps = [Step.of("locating", name="gemma3-270m", pkg="gemma3-270m-gguf"),
             Step.of("checking", file="model.gguf"), Step.of("tokenizer", file="model.gguf"),
             Step.of("dequant", file="model.gguf"), Step.of("rebuild"), Step.of("saving", path=tmp_path / "m"),
             Step.of("done", name="gemma3-270m", s=12.4), Step.of("using", path=tmp_path / "m")]
    for i, step in enumerate(steps):
        say(i / len(steps), step)
    log = capsys.readouterr().out
    assert log.splitlines()[0] == "[prepare   0%] Preparing gemma3-270m (first use only): locating the GGUF in package " \
                                  "gemma3-270m-gguf"  # the run log's words, as they always were
    events = [e for e in run.events() if e["type"] == "prepare"]
    assert [e["code"] for e in events] == [s.code for s in steps]
    zh = page_log(log, events, "zh").splitlines()
    assert len(zh) == len(steps) and all(line.startswith("[准备 ") for line in zh), zh
    for line in zh:
        assert not latin_words(re.sub(r"\S*[/\\]\S*", " ", line)) - {"gguf", "model", "fp"}, line
    assert page_log(log, events, "en").splitlines()[4] == "[prepare 50%] Rebuilding a plain fp32 model"
    # an older run's log has no events: its lines are shown as written
    assert page_log(log, [], "zh").splitlines()[4] == "[prepare  50%] Rebuilding a plain fp32 model"


def test_a_models_download_reports_its_steps_in_the_page_language(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The Settings tab's Download button shows each step of the download in the browser's language."""
    from studio.app import model_download
    from studio.models import zoo
    from studio.models.progress import Step

    def fetch(name, progress=None):  # type: ignore[no-untyped-def]
        progress(0.0, Step.of("downloading", pin="smollm2-gguf==1.0", mb=120.4))
        progress(1.0, Step.of("ready", file="model.gguf", mb=120.4))
    monkeypatch.setattr(zoo, "availability", lambda name: "download")
    monkeypatch.setattr(zoo, "download", fetch)
    shown: list[str] = []
    model_download.download("smollm2-135m-instruct", "zh", progress=lambda f, text: shown.append(text))
    assert shown == ["正在从 PyPI 下载 smollm2-gguf==1.0（120 MB）", "model.gguf 已就绪（120 MB）"], shown
    with pytest.raises(TypeError):
        Step("Downloading smollm2")  # a step is made from a code, never from a sentence


def test_what_reading_and_converting_a_file_noticed_is_said_by_code(tmp_path: Path) -> None:
    """A repeated header, a quote never closed, rows longer than the header, labels merged: the command line keeps
    its English lines, the Data tab shows them in the page's language."""
    from studio.data.convert import convert_table
    from studio.data.readers import read_table
    cases = {"twice.csv": "text,text,label\na,b,pos\nc,d,neg\n", "quote.csv": 'text,label\n"a,pos\nb,neg\n',
             "long.csv": "text,label\na,pos\nb,neg,extra\nc,pos\n"}
    notes = []
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        notes += read_table(tmp_path / name).warnings
    table = read_table(_write(tmp_path, "merge.csv", "text,label\n" + "a,Positive\nb,pos\nc,positive\nd,neg\n" * 3))
    notes += convert_table(table, "sentiment", text_column="text", label_column="label").notes
    assert len(notes) >= 4
    for note in notes:
        assert has(note.catalog_code), note
        zh = note.text("zh")
        assert CJK.search(zh) and not latin_words(re.sub(r"'[^']*'|“[^”]*”|\S*\.csv\S*", " ", zh)) - NAMES, zh


def _write(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name
