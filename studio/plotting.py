"""Loss curves from a run's events (raw + smoothed + eval), for loss.png and the UI."""
from __future__ import annotations

from typing import Any

from .runs import RunDir


def smooth(values: list[float], weight: float = 0.8) -> list[float]:
    """Exponential moving average with bias correction (as TensorBoard's smoothing)."""
    out, last, n = [], 0.0, 0
    for v in values:
        n += 1
        last = weight * last + (1 - weight) * v
        out.append(last / (1 - weight ** n))
    return out


def loss_figure(events: list[dict[str, Any]], title: str = "Training loss") -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = [e["step"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    losses = [e["loss"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    evals = [(e["step"], e["eval_loss"]) for e in events if e.get("type") == "eval"]
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    if steps:
        ax.plot(steps, losses, color="#9ab8e8", linewidth=1, label="loss")
        ax.plot(steps, smooth(losses), color="#1f5fbf", linewidth=2, label="smoothed")
    if evals:
        ax.plot([s for s, _ in evals], [v for _, v in evals], "o-", color="#d9534f", label="eval loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if steps or evals:
        ax.legend(loc="upper right")
    else:
        ax.text(0.5, 0.5, "waiting for the first logged step", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    return fig


def save_loss_plot(run: RunDir) -> None:
    import matplotlib.pyplot as plt
    fig = loss_figure(run.events(), title=f"Loss: {run.path.name}")
    tmp = run.loss_plot.with_name(".loss.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(run.loss_plot)
