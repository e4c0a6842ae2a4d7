"""Every message a page user sees names page fields, never CLI flags (a file with no label
column must not get the fix "CLI: --label-column NAME" on the Data tab).

The rule, for the whole class: every error is raised by its code (``StudioError.of``), and a code whose fix names a
command-line flag has a page fix in the page's words (tests/words/test_catalog_complete.py holds the catalog; a
StudioError cannot be made from a sentence). The page (``studio/ui/common.user_error``) shows the page's fix, while the CLI
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

ROOT = Path(__file__).resolve().parents[2]
# a command-line flag (--label-column, --max-mb), or the "(CLI: ...)" hints that introduce them
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*|\bCLI\b")
def test_the_page_shows_the_page_fix_and_the_cli_keeps_its_flag() -> None:
    exc = StudioError.of("data.column_missing", name="star", file="typo.csv", columns=["review", "stars"],
                         role="label")
    assert "--label-column" in exc.message and "--label-column" not in exc.page_message
    shown = user_error(exc, "on_convert")
    assert isinstance(shown, gr.Error)
    assert shown.message == ("Column 'star' not found in 'typo.csv'. Available columns: review, stars. Fix: pick one "
                             "of those under Label column on the Data tab.")
    assert "page_fix" not in exc.to_dict()  # a run keeps the code and values; the page words them again
    old = StudioError.from_dict({"error": "gone", "what": "Old", "fix": "use --x", "page_fix": "pick X on the Data tab"})
    assert old.page_message == "Old. Fix: pick X on the Data tab."  # a run recorded by an older studio
    plain = StudioError.from_dict({"what": "Bad", "fix": "do this"})  # a record without a code
    assert plain.page_message == plain.message == "Bad. Fix: do this."
    from studio.config.checks import problem
    assert not FLAG.search(ConfigError([problem("check.above", name="learning_rate", bound=0, value=0)]).page_message)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_config_error_is_worded_on_the_page_in_its_language_by_its_problems_codes(lang: str) -> None:
    """The CLI prints a ConfigError as written (config keys, the YAML / --set fix); the page words each coded problem
    in its own fields and language, and the fix too (a value of the wrong type as well as a broken rule)."""
    from studio.config.checks import problem
    exc = ConfigError([problem("check.max_steps"), problem("check.not_whole", name="cutoff_len", value="12.5")])
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
    from studio.words.catalog import CATALOG
    # the problems of a cluster request name the `cluster` verb's flags: no page makes one
    found = {k for k, e in CATALOG.items() if any(FLAG.search(t) for t in e.page) and not k.startswith("cluster.")}
    assert found - COMMAND_TEXTS - KNOWN_TEXTS == set()
    assert not KNOWN_TEXTS - found, f"fixed, so take them off KNOWN_TEXTS: {sorted(KNOWN_TEXTS - found)}"


# ----------------------------------------------------------------- a Chinese page: the same errors in Chinese
# (no English left in the Chinese page). Every error is raised by its code (StudioError refuses a sentence)
# and worded when shown; the Data tab's common errors come out wholly Chinese.


@pytest.fixture()
def zh_page(ctx):  # type: ignore[no-untyped-def]
    """The context a handler is given for a browser whose language is Chinese (studio/ui/handlers.py)."""
    ctx.lang = "zh"
    return ctx


def test_a_chinese_page_shows_the_data_tabs_errors_in_chinese(ctx, tmp_path: Path, zh_page) -> None:  # type: ignore[no-untyped-def]
    from tests.ui.test_ui_zh_page import latin_words
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
# Runs table): the engine and the job runner write it once, by code with values beside its English text
# (studio/runs/reasons.py), and the page words it in its own language (studio/words/reason_words.py; the catalog is
# held complete by tests/words/test_catalog_complete.py). An error that ends a run is written with its parts
# (``page_error``), which the page shows in its own words and language (studio/ui/train_tab.run_reason).


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


def test_a_run_ended_by_an_error_shows_its_page_words(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tests.ui.test_ui_zh_page import latin_words
    from studio.ui.train_tab import run_reason, status_markdown
    exc = StudioError.of("engine.reshard", checkpoint="checkpoint-4", saved=2, world_size=1, detail="")
    status = _ended_by(exc, tmp_path, monkeypatch)
    assert "--nproc" in status["reason"] and status["state"] == "failed"  # the CLI keeps its words
    assert run_reason(status, "zh") == page_message(exc, "zh")  # a Chinese browser is answered here
    shown = status_markdown(status, "zh")
    assert "--nproc" not in shown and "“进程数（显卡数）”" in shown and "解决办法：" in shown, shown
    assert not latin_words(run_reason(status, "zh").split("解决办法：")[1]), shown


def test_a_run_that_lost_a_peer_shows_page_words(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.train_tab import run_reason
    monkeypatch.setenv("WORLD_SIZE", "2")
    status = _ended_by(RuntimeError("Connection reset by peer"), tmp_path, monkeypatch)
    assert status["code"] == "peer_lost" and "--resume last" in status["reason"]
    shown = run_reason(status, "en")
    assert "Lost contact with another process" in shown and not FLAG.search(shown), shown




# A Chinese page shows every plain end reason in Chinese, by its codes: the engine's (a failed run: an internal
# error, the card's memory, a full disk; a stopped run), the job runner's (a killed run, a stopped run, an exit);
# a run recorded by an older version (no codes) shows its English text as written.
KILLED_ZH = ("训练进程被终止了（SIGKILL，信号 9）。如果没有人停止它，多半是系统内存不足（被内核的 OOM 机制终止）。"
             "最新的检查点（checkpoint-4）已保留：按“继续”可从它接着训练。")
FREE_SPACE_ZH = "腾出一些磁盘空间（旧的运行、导出文件、检查点），然后再按“继续”或“开始”"


def _fake_runner(tmp_path: Path, code: str):  # type: ignore[no-untyped-def]
    from tests.runs.test_jobs import FakeRunner
    return FakeRunner(tmp_path / "runs", code=code, grace_s=0.3, poll_s=0.05)


def test_a_killed_run_shows_its_reason_in_chinese(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.ui.train_tab import run_reason, status_markdown
    code = ("import os, pathlib, signal, sys; c = pathlib.Path(sys.argv[2]).parent / 'checkpoints' / 'checkpoint-4'; "
            "c.mkdir(parents=True); (c / 'trainer_state.json').write_text('{}'); os.kill(os.getpid(), signal.SIGKILL)")
    runner = _fake_runner(tmp_path, code)
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "k")))
    assert runner.wait(20) == "failed"
    snap = runner.snapshot(run)
    assert snap["reason"] == ("the training process was killed (SIGKILL, signal 9). If nobody stopped it, the system "
                              "probably ran out of memory (the kernel's OOM killer). The last checkpoint "
                              "(checkpoint-4) is kept: press Resume to continue from it.")  # the CLI's words
    assert run_reason(snap, "zh") == KILLED_ZH  # the browser's language decides
    assert f"{KILLED_ZH}" in status_markdown(snap, "zh")
    assert run_reason(runner.past_runs()[0], "zh") == KILLED_ZH  # the Runs table


def test_every_end_the_job_runner_words_shows_in_chinese(tmp_path: Path) -> None:
    from tests.ui.test_ui_zh_page import latin_words
    from studio.runs.processes import end_reason
    from studio.runs.reasons import reason_fields, reason_text
    from studio.runs.run_dir import RunDir
    run = RunDir(tmp_path / "run").ensure()
    run.stdout.write_text("Traceback ...\nboom\n", encoding="utf-8")
    (run.checkpoints / "checkpoint-4").mkdir(parents=True)
    (run.checkpoints / "checkpoint-4" / "trainer_state.json").write_text("{}", encoding="utf-8")
    shown = {}
    for rc, aborted in ((-9, False), (-15, False), (-77, False), (None, False), (3, False), (0, True)):
        reason = end_reason(run, rc, aborted)[1]
        shown[(rc, aborted)] = reason_text(reason_fields(reason), "zh")
        assert not latin_words(shown[(rc, aborted)]) - {"oom", "sigkill", "sigterm", "boom"}, (reason, shown)
        assert "按“继续”可从它接着训练" in shown[(rc, aborted)], shown
    assert shown[(-77, False)].startswith("训练进程被终止了（信号 77）。")  # a signal with no name
    assert shown[(3, False)].startswith("训练进程在完成之前退出了，退出码 3：boom。详见 stdout.log。")


def test_a_stopped_run_shows_its_reason_in_chinese(tmp_path: Path) -> None:
    from studio.config.run_config import RunConfig
    from studio.ui.train_tab import run_reason
    runner = _fake_runner(tmp_path, "import time; time.sleep(30)")
    run = runner.start(RunConfig(dataset="x.jsonl", output_dir=str(tmp_path / "runs" / "s")))
    assert runner.abort(by="bob") and runner.wait(10) == "aborted"
    snap = runner.snapshot(run)
    assert snap["reason"] == ("stopped on request by bob before the first checkpoint. No checkpoint was written yet, "
                              "so a resume would start over.")
    assert run_reason(snap, "zh") == "应 bob 的请求在第一个检查点之前停止。还没有写出任何检查点，所以继续训练会从头开始。"


def test_a_run_the_engine_stopped_at_a_step_shows_its_reason_in_chinese(tmp_path: Path) -> None:
    from studio.engine.run import _end_stopped
    from studio.runs.reasons import reason_text
    from studio.runs.run_dir import RunDir
    run = RunDir(tmp_path / "run").ensure()
    for who, en, zh in (("bob", "stopped on request by bob at step 7; resume continues from here",
                         "应 bob 的请求在第 7 步停止；按“继续”会从这里接着训练"),
                        ("", "stopped on request at step 7; resume continues from here",
                         "应请求在第 7 步停止；按“继续”会从这里接着训练")):
        run.stop_flag.write_text(who, encoding="utf-8")
        _end_stopped(run, 7, {"step": 7})
        status = run.read_status()
        assert status["state"] == "aborted" and status["reason"] == en
        assert reason_text(status, "zh") == zh and reason_text(status, "en") == en
        end = run.events()[-1]
        assert end["type"] == "end" and end["reason"] == en.split(" at step")[0]  # the event keeps who asked


def test_a_failed_run_shows_its_reason_in_chinese(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import errno

    import torch
    from studio.runs.reasons import reason_text
    from studio.ui.train_tab import run_reason, status_markdown
    cases = [
        (RuntimeError("boom"), "Training stopped with an internal error (RuntimeError: boom); see error.log",
         "训练因内部错误而停止（RuntimeError：boom）；详见 error.log"),
        (torch.OutOfMemoryError("CUDA out of memory"),
         "The card ran out of memory. Turn on gradient checkpointing, use QLoRA or a smaller Batch size / Max tokens "
         "per example (cutoff_len), or enable DeepSpeed offload (see the memory estimate)",
         "显卡内存不足。请打开“梯度检查点”，使用 QLoRA，或调小“批大小”/“每条样本最大 token 数”，或启用 DeepSpeed 卸载"
         "（参见内存估算）"),
        (OSError(errno.ENOSPC, "No space left on device"),
         "The disk is full (No space left on device) while writing the base model, a checkpoint or the model; free "
         "some space (old runs, exports, checkpoints), then press Resume or Start again",
         f"磁盘已满（设备上没有剩余空间），发生在写入基础模型、检查点或模型时；{FREE_SPACE_ZH}"),
    ]
    for i, (exc, cli, zh) in enumerate(cases):
        status = _ended_by(exc, tmp_path / str(i), monkeypatch)
        assert status["state"] == "failed" and status["reason"] == cli and status["page_error"] is None
        assert run_reason(status, "zh") == zh, status
        assert zh in status_markdown(status, "zh")
    # the English page names the Settings fields by their labels, where the command line names a config key
    assert reason_text(_ended_by(cases[1][0], tmp_path / "en", monkeypatch), "en") == (
        "The card ran out of memory. Turn on Gradient checkpointing, use QLoRA or a smaller Batch size / Max tokens "
        "per example, or enable DeepSpeed offload (see the memory estimate)")


def test_a_run_recorded_by_an_older_version_shows_its_english_reason() -> None:
    from studio.ui.train_tab import run_reason
    old = {"state": "failed", "run": "/runs/old", "reason": "the training process was killed (SIGKILL, signal 9)."}
    assert run_reason(old, "zh") == old["reason"]  # on a Chinese page too: it has no code to word it by
