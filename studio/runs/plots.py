"""Loss curves from a run's events (raw + smoothed + eval), for loss.png and the UI."""
from __future__ import annotations

from typing import Any

from .run_dir import RunDir


def smooth(values: list[float], weight: float = 0.8) -> list[float]:
    """Exponential moving average with bias correction (as TensorBoard's smoothing)."""
    out, last, n = [], 0.0, 0
    for v in values:
        n += 1
        last = weight * last + (1 - weight) * v
        out.append(last / (1 - weight ** n))
    return out


LABELS = {"loss": "loss", "smoothed": "smoothed", "eval": "eval loss", "step": "step", "waiting":
          "waiting for the first logged step"}


def loss_figure(events: list[dict[str, Any]], title: str = "Training loss",
                labels: dict[str, str] | None = None) -> Any:
    """The loss curve; ``labels`` words the axes and legend (the UI passes its language's)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    words = {**LABELS, **(labels or {})}
    steps = [e["step"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    losses = [e["loss"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    evals = [(e["step"], e["eval_loss"]) for e in events if e.get("type") == "eval"]
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    _cjk_font(words)
    if steps:
        # markers while there are few points: a one-point curve is a dot, not empty axes
        mark = "o" if len(steps) < 20 else None
        ax.plot(steps, losses, color="#9ab8e8", linewidth=1, marker=mark, label=words["loss"])
        ax.plot(steps, smooth(losses), color="#1f5fbf", linewidth=2, label=words["smoothed"])
    if evals:
        ax.plot([s for s, _ in evals], [v for _, v in evals], "o-", color="#d9534f", label=words["eval"])
    ax.set_xlabel(words["step"])
    ax.set_ylabel(words["loss"])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if steps or evals:
        ax.legend(loc="upper right")
    else:
        ax.text(0.5, 0.5, words["waiting"], ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    return fig


def overlay_figure(runs: list[tuple[str, list[dict[str, Any]]]], title: str = "Loss",
                   labels: dict[str, str] | None = None) -> Any:
    """Smoothed loss of several runs on one plot (compare runs)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    words = {**LABELS, **(labels or {})}
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    _cjk_font(words)
    for name, events in runs:
        pts = [(e["step"], e["loss"]) for e in events if e.get("type") == "progress" and e.get("loss") is not None]
        if pts:
            ax.plot([s for s, _ in pts], smooth([v for _, v in pts]), linewidth=2, label=name,
                    marker="o" if len(pts) < 20 else None)
    ax.set_xlabel(words["step"])
    ax.set_ylabel(words["loss"])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(loc="upper right")
    fig.tight_layout()
    return fig


def _cjk_font(words: dict[str, str]) -> None:
    """Pick an installed font with Chinese glyphs when the labels need one (else matplotlib draws boxes)."""
    if not any("\u4e00" <= ch <= "\u9fff" for w in words.values() for ch in w):
        return
    import matplotlib
    from matplotlib import font_manager
    names = {f.name for f in font_manager.fontManager.ttflist}
    for cand in ("Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "AR PL UMing CN",
                 "Droid Sans Fallback", "SimHei"):
        if cand in names:
            matplotlib.rcParams["font.sans-serif"] = [cand, "DejaVu Sans"]
            return


def save_loss_plot(run: RunDir) -> None:
    import matplotlib.pyplot as plt
    fig = loss_figure(run.events(), title=f"Loss: {run.path.name}")
    tmp = run.loss_plot.with_name(".loss.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(run.loss_plot)
