"""Evaluate tab: what did the model learn? Sentiment check, before/after, playground, chat, batch, export.

Thin by design: handlers turn widget values into calls on ``studio.inference`` (which owns the
models) and format the plain results for display. No torch/transformers import here.
Handlers are module-level functions so tests call them directly.
"""
from __future__ import annotations

import functools
import inspect
import logging
from pathlib import Path
from typing import Any, Callable, Iterator

import gradio as gr

from .. import inference
from ..errors import StudioError

log = logging.getLogger("studio.ui.evaluate")

TEXT = {
    "en": {"run": "Finished run", "refresh": "Refresh", "check": "Sentiment check", "source": "Rows to check",
           "val": "the run's validation split", "upload": "an uploaded file", "file": "Labelled file (.jsonl/.csv/.xlsx: "
           "instruction, input, output = label, or text + label columns)", "mode": "How to read the answer",
           "max_rows": "At most this many rows (0 = all)", "run_check": "Check accuracy", "scorecard": "Before / after (base vs fine-tuned)",
           "play": "Playground", "prompt": "Instruction", "input": "Input (optional)", "max_new": "Max new tokens",
           "temp": "Temperature (0 = greedy)", "top_p": "Top-p", "stream": "Stream the answer",
           "compare": "Also ask the base model", "send": "Generate", "tuned": "Fine-tuned model", "base": "Base model",
           "chat": "Chat with the fine-tuned model", "message": "Message", "clear": "Clear chat",
           "batch": "Batch prediction", "predict": "Predict every row", "csv": "Predictions (CSV)",
           "export": "Export", "merge": "Merge the LoRA adapter into a standalone model",
           "overwrite": "Overwrite an existing export folder", "name": "Folder name (optional)",
           "do_export": "Export", "mode_help": "score: pick the most likely label (fast, always a label). "
           "generate: let the model write its answer and read the label from it (what a chat user would see)."},
    "zh": {"run": "已完成的训练", "refresh": "刷新", "check": "情感分类检查", "source": "检查哪些数据",
           "val": "训练时留出的验证集", "upload": "上传的文件", "file": "带标签的文件（.jsonl/.csv/.xlsx：instruction, input, "
           "output = 标签，或 文本 + 标签 两列）", "mode": "如何读取答案", "max_rows": "最多检查行数（0 = 全部）", "run_check": "计算准确率",
           "scorecard": "训练前 / 训练后对比", "play": "试一试", "prompt": "指令", "input": "输入（可选）",
           "max_new": "最多生成 token 数", "temp": "温度（0 = 贪心）", "top_p": "Top-p", "stream": "流式输出",
           "compare": "同时询问基础模型", "send": "生成", "tuned": "微调后的模型", "base": "基础模型",
           "chat": "与微调后的模型对话", "message": "消息", "clear": "清空对话", "batch": "批量预测",
           "predict": "预测每一行", "csv": "预测结果（CSV）", "export": "导出", "merge": "把 LoRA 适配器合并为独立模型",
           "overwrite": "覆盖已存在的导出文件夹", "name": "文件夹名（可选）", "do_export": "导出",
           "mode_help": "score：选出概率最高的标签（快，总能得到标签）。generate：让模型写出答案再解析标签（和对话时看到的一样）。"},
}
DATA_TYPES = [".jsonl", ".json", ".csv", ".tsv", ".xlsx", ".parquet"]
PER_CLASS_HEADERS = ["label", "precision", "recall", "f1", "support"]
WRONG_HEADERS = ["input", "expected", "model's answer", "read as"]


def _user_errors(fn: Callable) -> Callable:
    """Show StudioError as a gradio error popup with its message as-is; log anything else as a bug."""
    def convert(exc: BaseException) -> BaseException:
        if isinstance(exc, StudioError):
            return gr.Error(exc.message, print_exception=False)
        log.exception("evaluate tab: unexpected error in %s", fn.__name__)
        return exc

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from fn(*args, **kwargs)
            except Exception as exc:
                raise convert(exc) from None
        return gen

    @functools.wraps(fn)
    def plain(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise convert(exc) from None
    return plain


# ------------------------------------------------------------------ handlers
def refresh_runs(runs_root: str | Path, current: str | None = None) -> Any:
    choices = inference.finished_runs(runs_root)
    values = [v for _, v in choices]
    return gr.update(choices=choices, value=current if current in values else (values[0] if values else None))


def _data_file(source: str, file: str | None) -> str | None:
    if source == "upload":
        if not file:
            raise StudioError("No file uploaded",
                              "upload a labelled .jsonl or .csv file, or check the validation split")
        return file
    return None


def _fmt(x: float) -> str:
    return f"{x:.3f}"


@_user_errors
def on_check(run: str, source: str, file: str | None, mode: str, max_rows: float | None) -> tuple[str, list, Any, list]:
    """Sentiment check -> (summary markdown, per-class rows, confusion figure, misclassified rows)."""
    r = inference.sentiment_check(run, _data_file(source, file), mode, int(max_rows or 0) or None)
    summary = (f"**Accuracy {r['accuracy']:.1%}** on {r['n']} rows · macro-F1 {r['macro_f1']:.3f} · "
               f"{r['latency_ms_per_row']:.1f} ms per row · mode `{r['mode']}` · "
               f"unparseable answers: {r['unparseable']} (counted as wrong)")
    if r.get("skipped_rows"):
        summary += f" · {r['skipped_rows']} rows skipped (their output is none of the labels {r['labels']})"
    table = [[lab, _fmt(c["precision"]), _fmt(c["recall"]), _fmt(c["f1"]), c["support"]]
             for lab, c in r["per_class"].items()]
    wrong = [[m["input"] or m["instruction"], m["expected"], m["answer"], m["parsed"]] for m in r["misclassified"]]
    return summary, table, r["figure"], wrong


@_user_errors
def on_scorecard(run: str, source: str, file: str | None, mode: str, max_rows: float | None) -> str:
    """Before/after scorecard as a markdown table."""
    card = inference.scorecard(run, _data_file(source, file), mode, int(max_rows or 0) or None)
    b, t = card["base"], card["tuned"]
    lines = [f"Same {card['n']} rows, mode `{t['mode']}`.", "", "| | base model | fine-tuned | change |",
             "|---|---|---|---|",
             f"| accuracy | {b['accuracy']:.1%} | {t['accuracy']:.1%} | {card['delta']['accuracy']:+.1%} |",
             f"| macro-F1 | {b['macro_f1']:.3f} | {t['macro_f1']:.3f} | {card['delta']['macro_f1']:+.3f} |",
             f"| unparseable | {b['unparseable']} | {t['unparseable']} | |"]
    for lab in card["labels"]:
        lines.append(f"| F1 {lab} | {b['per_class'][lab]['f1']:.3f} | {t['per_class'][lab]['f1']:.3f} | "
                     f"{t['per_class'][lab]['f1'] - b['per_class'][lab]['f1']:+.3f} |")
    return "\n".join(lines)


@_user_errors
def on_generate(run: str, instruction: str, input_text: str, max_new_tokens: float, temperature: float,
                top_p: float, stream: bool, compare: bool) -> Iterator[tuple[str, str]]:
    """Yield (fine-tuned answer, base answer) as they grow (or once, at the end, without streaming)."""
    last = ("", "")
    for last in inference.playground(run, instruction, input_text, int(max_new_tokens), float(temperature),
                                     float(top_p), bool(compare)):
        if stream:
            yield last
    if not stream:
        yield last


@_user_errors
def on_chat(message: str, history: list[dict[str, Any]] | None, run: str, max_new_tokens: float,
            temperature: float, top_p: float) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield ("" for the textbox, the chat history with the reply growing at its end)."""
    if not (message or "").strip():
        raise StudioError("The message is empty", "type something to send")
    history = list(history or [])
    shown = history + [{"role": "user", "content": message}, {"role": "assistant", "content": ""}]
    yield "", shown
    for reply in inference.chat_stream(run, history, message, int(max_new_tokens), float(temperature),
                                       float(top_p)):
        shown[-1] = {"role": "assistant", "content": reply}
        yield "", shown


@_user_errors
def on_predict(run: str, file: str | None, out_dir: str | Path) -> tuple[str, str]:
    """Batch prediction -> (CSV path for download, summary)."""
    info = inference.predict_file(run, file or "", out_dir)
    acc = f" · accuracy {info['accuracy']:.1%} against the file's outputs" if info["accuracy"] is not None else ""
    return info["path"], (f"Predicted {info['n']} rows ({info['mode']} mode, {info['latency_ms_per_row']:.1f} ms "
                          f"per row){acc}. Saved to `{info['path']}`.")


@_user_errors
def on_export(run: str, merge: bool, overwrite: bool, name: str, exports_dir: str | Path) -> str:
    info = inference.export_run(run, exports_dir, bool(merge), bool(overwrite), name)
    return (f"Exported **{info['kind']}** model to `{info['path']}` ({info['size_mb']} MB). "
            f"{info['what']} See README.md in that folder for how to load it.")


# ------------------------------------------------------------------ layout
def build_evaluate_tab(ctx: Any) -> dict[str, Any]:
    """Build the tab's components inside the caller's ``gr.Tab``; returns them for app-level wiring."""
    workspace = Path(getattr(ctx, "workspace", ".") or ".")
    runs_root = str(getattr(ctx, "runs_root", None) or workspace / "runs")
    exports_dir = str(workspace / "exports")
    predictions_dir = str(workspace / "predictions")
    lang = getattr(ctx, "lang", "en")
    T = TEXT.get(lang, TEXT["en"])

    runs = inference.finished_runs(runs_root)
    with gr.Row():
        run = gr.Dropdown(choices=runs, value=runs[0][1] if runs else None, label=T["run"], scale=4)
        refresh = gr.Button(T["refresh"], scale=1)
    refresh.click(lambda cur: refresh_runs(runs_root, cur), inputs=run, outputs=run, api_name="refresh_runs")

    with gr.Accordion(T["check"], open=True):
        with gr.Row():
            source = gr.Radio([(T["val"], "validation"), (T["upload"], "upload")], value="validation",
                              label=T["source"])
            mode = gr.Radio(["score", "generate"], value="score", label=T["mode"], info=T["mode_help"])
            max_rows = gr.Number(value=0, precision=0, minimum=0, label=T["max_rows"])
        data_file = gr.File(label=T["file"], file_types=DATA_TYPES, type="filepath")
        with gr.Row():
            check_btn = gr.Button(T["run_check"], variant="primary")
            score_btn = gr.Button(T["scorecard"])
        summary = gr.Markdown()
        with gr.Row():
            per_class = gr.Dataframe(headers=PER_CLASS_HEADERS, interactive=False, label="per class")
            confusion = gr.Plot(label="confusion matrix")
        card = gr.Markdown()
        wrong = gr.Dataframe(headers=WRONG_HEADERS, interactive=False, label="misclassified rows", wrap=True)
    check_inputs = [run, source, data_file, mode, max_rows]
    check_btn.click(on_check, check_inputs, [summary, per_class, confusion, wrong])
    score_btn.click(on_scorecard, check_inputs, card)

    with gr.Accordion(T["play"], open=False):
        prompt = gr.Textbox(label=T["prompt"], lines=2)
        input_text = gr.Textbox(label=T["input"], lines=2)
        with gr.Row():
            max_new = gr.Slider(1, 1024, value=128, step=1, label=T["max_new"])
            temperature = gr.Slider(0.0, 2.0, value=0.0, step=0.05, label=T["temp"])
            top_p = gr.Slider(0.05, 1.0, value=1.0, step=0.05, label=T["top_p"])
        with gr.Row():
            stream = gr.Checkbox(value=True, label=T["stream"])
            compare = gr.Checkbox(value=True, label=T["compare"])
            send = gr.Button(T["send"], variant="primary")
        with gr.Row():
            tuned_out = gr.Textbox(label=T["tuned"], lines=6)
            base_out = gr.Textbox(label=T["base"], lines=6)
    send.click(on_generate, [run, prompt, input_text, max_new, temperature, top_p, stream, compare],
               [tuned_out, base_out])

    with gr.Accordion(T["chat"], open=False):
        chatbot = gr.Chatbot(height=360, label=T["chat"])
        message = gr.Textbox(label=T["message"], lines=1)
        with gr.Row():
            chat_tokens = gr.Slider(1, 1024, value=256, step=1, label=T["max_new"])
            chat_temp = gr.Slider(0.0, 2.0, value=0.7, step=0.05, label=T["temp"])
            chat_top_p = gr.Slider(0.05, 1.0, value=0.9, step=0.05, label=T["top_p"])
            clear = gr.Button(T["clear"])
    message.submit(on_chat, [message, chatbot, run, chat_tokens, chat_temp, chat_top_p], [message, chatbot])
    clear.click(lambda: [], None, chatbot, api_name="clear_chat")

    with gr.Accordion(T["batch"], open=False):
        batch_file = gr.File(label=T["file"], file_types=DATA_TYPES, type="filepath")
        predict_btn = gr.Button(T["predict"])
        batch_out = gr.File(label=T["csv"], interactive=False)
        batch_info = gr.Markdown()
    predict_btn.click(lambda r, f: on_predict(r, f, predictions_dir), [run, batch_file], [batch_out, batch_info],
                      api_name="predict_file")

    with gr.Accordion(T["export"], open=False):
        with gr.Row():
            merge = gr.Checkbox(value=True, label=T["merge"])
            overwrite = gr.Checkbox(value=False, label=T["overwrite"])
            export_name = gr.Textbox(label=T["name"], placeholder=f"{exports_dir}/<run>-merged")
        export_btn = gr.Button(T["do_export"])
        export_info = gr.Markdown()
    export_btn.click(lambda r, m, o, n: on_export(r, m, o, n, exports_dir), [run, merge, overwrite, export_name],
                     export_info, api_name="export_run")

    return {"run": run, "refresh": refresh, "summary": summary, "per_class": per_class, "confusion": confusion,
            "scorecard": card, "tuned_out": tuned_out, "base_out": base_out, "chatbot": chatbot,
            "batch_out": batch_out, "export_info": export_info,
            "refresh_runs": lambda cur=None: refresh_runs(runs_root, cur)}
