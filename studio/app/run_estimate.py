"""The page's "about N minutes here": studio/runs/run_time.py's estimate for the form's settings, in page words.

Why a UI module: the estimate needs what only the page knows (which of the studio's datasets is chosen, this
studio's runs, the model cache) and says it in the page's language. Only datasets the studio converted are read
(``dataset_info`` finds them in the data folder): a path typed into the form is never opened from here.
"""
from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..autoconfig import suggest_settings
from ..config.run_config import DEMO_MODEL, Draft
from ..data.dataset import load_rows
from ..errors import StudioError
from ..memory.cards import load_card
from ..models import zoo
from ..runs import run_time
from ..words.units import fmt_seconds
from .context import AppContext
from .paths import estimate_paths
from .datasets import dataset_info
from .settings import hardware
from ..words.catalog import msg

# rows of a task when no dataset is chosen yet (the old estimate's tokens per row, as characters)
PLACEHOLDER_CHARS = {"sentiment": 240, "instruction": 1200, "chat": 2400}
PLACEHOLDER = "_placeholder"
_lock = threading.Lock()  # tokenizers and the row cache are shared by the server's request threads


@lru_cache(maxsize=4)
def _rows(path: str, mtime: float, size: int) -> tuple[dict[str, Any], ...]:
    return tuple(load_rows(path))


def _model_folder(model: str) -> tuple[Path | None, float]:
    """(a local folder holding the model's tokenizer, CPU-seconds of preparation still to do)."""
    if model == DEMO_MODEL:
        return None, 0.0
    if zoo.is_builtin(model):
        state = zoo.availability(model)
        if state == "ready":
            return zoo.prepared_folder(model), 0.0
        return None, run_time.PREPARE_CPU_S.get(zoo.get(model).name, 30.0) if state in ("package", "download") else 0.0
    path = Path(model).expanduser()
    return (path, 0.0) if (path / "tokenizer_config.json").is_file() or (path / "tokenizer.json").is_file() \
        else (None, 0.0)


def _card(cfg: Draft, folder: Path | None) -> Any:
    """A built-in model's shipped card (no transformers import in the server for the Model list); a local
    folder's own config.json otherwise."""
    name = cfg.model_name_or_path.strip()
    if zoo.is_builtin(name) or folder is None:
        return load_card(name)
    try:
        return load_card(str(folder))
    except StudioError:
        return load_card(name)


def rows_for(ctx: AppContext, dataset: str | None, task: str, n_rows: int | None = None) -> list[dict[str, Any]]:
    """The chosen dataset's rows when the studio knows it, else ``n_rows`` placeholder rows of ``task``'s size."""
    info = dataset_info(ctx, dataset) if dataset else None
    if info:
        p = Path(info["path"])
        try:
            st = p.stat()
            with _lock:
                return list(_rows(str(p), st.st_mtime, st.st_size))
        except (OSError, StudioError):
            pass
    return placeholder_rows(task, n_rows or (info or {}).get("rows"))


def placeholder_rows(task: str, n_rows: int | None) -> list[dict[str, Any]]:
    """``n_rows`` (400 when unknown) rows of the usual size of ``task`` (no dataset chosen yet)."""
    chars = PLACEHOLDER_CHARS.get(task, 1200)
    # marked: tokenizing made-up text says nothing, the character rule counts these (run_time.run_work)
    return [{"instruction": "x" * (chars * 3 // 4), "input": "", "output": "y" * (chars // 4),
             PLACEHOLDER: True}] * (n_rows or 400)


def estimate(ctx: AppContext, cfg: Draft, rows: list[dict[str, Any]]) -> Any:
    """run_time.estimate for ``cfg`` (its model folder confined already) on this machine and this studio's runs;
    None when the model has no architecture card."""
    return _estimate(cfg, rows, hardware(ctx).device, ctx.runs_root)


def plan_seconds(model: str, task: str, budget: str, rows: list[dict[str, Any]], hw: Any,
                 runs_root: Path | None = None) -> float | None:
    """Seconds of the plan the page derives for ``model`` (the Model list's "about N here"); None: no card."""
    changes, _ = suggest_settings(model, len(rows), task, hw, budget)
    est = _estimate(Draft().replace(**changes), rows, hw.device, runs_root)
    return est.seconds if est is not None else None


def _estimate(cfg: Draft, rows: list[dict[str, Any]], device: str, runs_root: Path | None) -> Any:
    folder, prepare = _model_folder(cfg.model_name_or_path.strip())
    try:
        card = _card(cfg, folder)
    except StudioError:
        return None
    tok = None
    if folder is not None and not (rows and rows[0].get(PLACEHOLDER)):
        try:
            with _lock:
                tok = run_time.tokenizer(str(folder))
        except Exception:  # noqa: BLE001 - a folder without a usable tokenizer: the character rule counts instead
            tok = None
    with _lock:
        return run_time.estimate(cfg, rows, card=card, device=device, runs_root=runs_root, tokenizer=tok,
                                 prepare_cpu_s=prepare)


def form_estimate(ctx: AppContext, cfg: Draft, task: str = "sentiment") -> Any:
    """The one estimate of a form's settings: the Settings panel's time line and every Model list entry come from
    here, so the two numbers on one screen cannot disagree (the list used to estimate a default config with
    placeholder rows while the panel estimated the form on the chosen data). None: no card for the model.

    Raises:
        StudioError: a path in ``cfg`` outside the studio's folders.
    """
    confined = estimate_paths(cfg, ctx)  # before the estimator reads config.json
    return estimate(ctx, confined, rows_for(ctx, confined.dataset, task))


def time_line(ctx: AppContext, cfg: Draft, task: str = "sentiment") -> str:
    """One line for the Settings panel: the total, its largest parts and where the speed comes from."""
    try:
        est = form_estimate(ctx, cfg, task)
    except StudioError:
        return ""
    if est is None:
        return ""
    lang = ctx.lang
    parts = [msg(f"time.{k}", lang, t=fmt_seconds(v, lang)) for k, v in est.parts.items() if v >= 1]
    line = msg("time.total", lang, t=fmt_seconds(est.seconds, lang), parts=" · ".join(parts))
    line += " " + (msg("time.history", lang, n=est.runs) if est.source == "history" else msg("time.measured", lang))
    if est.slowdown >= 1.2:
        line += " " + msg("time.busy", lang, x=est.slowdown)
    if est.early_stop_share is not None:
        line += " " + msg("time.early_stop_history", lang, pct=round(100 * est.early_stop_share),
                          t=fmt_seconds(est.early_stop_saves_s, lang))
    elif cfg.early_stopping_patience and cfg.val_size:
        line += " " + msg("time.early_stop", lang, n=cfg.early_stopping_patience)
    return line


__all__ = ["estimate", "form_estimate", "placeholder_rows", "plan_seconds", "rows_for", "time_line"]
