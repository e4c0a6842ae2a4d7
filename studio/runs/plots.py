"""Loss curves from a run's events (raw + smoothed + eval), for loss.png and the UI."""
from __future__ import annotations

import functools
from pathlib import Path
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
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib
    matplotlib.use("Agg")
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib.pyplot as plt
    words = {**LABELS, **(labels or {})}
    steps = [e["step"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    losses = [e["loss"] for e in events if e.get("type") == "progress" and e.get("loss") is not None]
    evals = [(e["step"], e["eval_loss"]) for e in events if e.get("type") == "eval"]
    use_plot_fonts()
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
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
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib
    matplotlib.use("Agg")
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib.pyplot as plt
    words = {**LABELS, **(labels or {})}
    use_plot_fonts()
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
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


# matplotlib draws a character missing from every font in its family list as an empty box; the first
# that covers the Chinese page words is used as a fallback behind DejaVu Sans (per-glyph fallback, matplotlib >= 3.6)
_CJK_NAMES = ("Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei",
              "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN", "SimHei", "Microsoft YaHei")
_CJK_FILES = ("notosanscjk", "sourcehansans", "wqy", "droidsansfallback", "uming", "simhei", "msyh")


@functools.cache
def cjk_font() -> str | None:
    """The name of an installed font with Chinese glyphs, or None.

    matplotlib caches its font list the first time it runs and never rescans, so a font installed after that
    (``apt-get install fonts-noto-cjk``) is invisible to it; the system's font files are added here when the
    cached list has none.
    """
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    from matplotlib import font_manager
    fm = font_manager.fontManager
    found = _first_known({f.name for f in fm.ttflist})
    if found is None:
        for path in font_manager.findSystemFonts():
            if any(k in Path(path).name.lower() for k in _CJK_FILES):
                try:
                    fm.addfont(path)
                except (OSError, RuntimeError, ValueError):  # an unreadable font file is not the plot's problem
                    continue
        found = _first_known({f.name for f in fm.ttflist})
    return found


def _first_known(names: set[str]) -> str | None:
    return next((n for n in _CJK_NAMES if n in names), None)


def font_family() -> list[str]:
    """The fonts every plot uses, in fallback order."""
    cjk = cjk_font()
    return ["DejaVu Sans"] + ([cjk] if cjk else [])


@functools.cache
def _charmap(name: str) -> frozenset[int]:
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font
    path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
    return frozenset(FT2Font(path).get_charmap())


def drawable(*texts: str) -> bool:
    """True when the plot fonts have a glyph for every character of ``texts`` (no empty boxes)."""
    covered = frozenset().union(*(_charmap(n) for n in font_family()))
    return all(ord(ch) in covered or ch.isspace() for t in texts for ch in t)


def use_plot_fonts() -> None:
    """Set matplotlib's font family to ``font_family()``; every figure builder calls it first.

    The family is the list itself, not the generic "sans-serif": matplotlib resolves a generic name to one
    font, and only an explicit list falls back glyph by glyph.
    """
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib
    matplotlib.rcParams["font.family"] = font_family()


def save_loss_plot(run: RunDir) -> None:
    # start-up: matplotlib, 0.35-0.75 s at import; only a drawn figure needs it
    import matplotlib.pyplot as plt
    fig = loss_figure(run.events(), title=f"Loss: {run.path.name}")
    tmp = run.loss_plot.with_name(".loss.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(run.loss_plot)
