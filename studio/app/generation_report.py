"""The generation check as a person reads it: one scorecard, one list of rows, for the page and the command line.

Both surfaces format the same dict (``GenerationCheck.to_dict``) through ``scorecard``, so the page and
``python -m studio eval --task generate`` cannot show different numbers for the same rows; only the language
(the page's) and the table syntax (Markdown or aligned text) differ.
"""
from __future__ import annotations

from typing import Any, Callable

from ..words.catalog import msg

# (score key, words key, format, scale): the scorecard's lines, in order
LINES: tuple[tuple[str, str, str, float], ...] = (
    ("exact_match", "gen.exact_match", "{:.1%}", 1.0),
    ("chrf", "gen.chrf", "{:.1f}", 1.0),
    ("bleu", "gen.bleu", "{:.1f}", 1.0),
    ("rouge_l", "gen.rouge_l", "{:.3f}", 1.0),
    ("answer_loss", "gen.answer_loss", "{:.3f}", 1.0),
    ("perplexity", "gen.perplexity", "{:.2f}", 1.0),
    ("length_ratio", "gen.length", "{:.2f}", 1.0),
    ("latency_ms_per_row", "gen.latency", "{:.1f}", 1.0),
)
CELL = 160   # characters of a prompt or an answer shown in a row table


def _fmt(fmt: str, value: Any) -> str:
    return "–" if value is None else fmt.format(value)


def _change(fmt: str, a: Any, b: Any) -> str:
    if a is None or b is None:
        return ""
    return ("{:+.1%}" if "%" in fmt else fmt.replace("{:", "{:+")).format(a - b)


def scorecard(result: dict[str, Any], lang: str = "en") -> list[list[str]]:
    """[name, base, tuned, change] per score (base and change empty without a base), structure lines last."""
    tuned, base = result["tuned"], result.get("base")
    rows: list[list[str]] = []

    def line(name: str, fmt: str, t: Any, b: Any) -> None:
        rows.append([name, _fmt(fmt, b) if base else "", _fmt(fmt, t), _change(fmt, t, b) if base else ""])

    for key, words, fmt, _ in LINES:
        line(msg(words, lang), fmt, tuned.get(key), base.get(key) if base else None)
    s, bs = tuned.get("structure"), (base or {}).get("structure")
    if s:
        line(msg(f"gen.parses_{s['kind']}", lang), "{:.1%}", s["parses"], bs["parses"] if bs else None)
        line(msg("gen.fields_match", lang), "{:.1%}", s["fields_match"], bs["fields_match"] if bs else None)
        if len(s["per_field"]) > 1:
            for name, share in s["per_field"].items():
                line(msg("gen.field", lang, name=name), "{:.1%}", share,
                     bs["per_field"].get(name) if bs else None)
    return rows


def _cell(text: Any, limit: int = CELL) -> str:
    text = " ".join(str(text or "").split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _prompt(row: dict[str, Any]) -> str:
    return _cell(row.get("input") or row.get("instruction"), 100)


def row_table(rows: list[dict[str, Any]], with_base: bool) -> list[list[str]]:
    """[prompt, reference, (base,) tuned, chrF] per listed row."""
    out = []
    for r in rows:
        if with_base:
            out.append([_prompt(r), _cell(r["reference"]), _cell(r.get("base")), _cell(r["tuned"]),
                        f"{r.get('base_chrf', 0):.0f} → {r['tuned_chrf']:.0f}"])
        else:
            out.append([_prompt(r), _cell(r["reference"]), _cell(r["tuned"]), f"{r['tuned_chrf']:.0f}"])
    return out


def markdown(result: dict[str, Any], lang: str = "en") -> str:
    """The page's form: the scorecard, the changed-most and worst rows, the note on what the scores are."""
    both = result.get("base") is not None
    lines = [msg("gen.head", lang, n=result["n"], tokenize=result["tuned"]["tokenize"]), "",
             msg("gen.cols_both" if both else "gen.cols_one", lang), "|---|---|---|---|" if both else "|---|---|"]
    for name, b, t, d in scorecard(result, lang):
        lines.append(f"| {name} | {b} | {t} | {d} |" if both else f"| {name} | {t} |")
    for title, rows in (("gen.changed", result.get("changed") or []), ("gen.worst", result.get("worst") or [])):
        if not rows:
            continue
        lines += ["", f"**{msg(title, lang)}**", "", msg("gen.row_cols_both" if both else "gen.row_cols_one", lang),
                  "|---|---|---|---|---|" if both else "|---|---|---|---|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in row_table(rows, both)]
    return "\n".join(lines + ["", msg("gen.note", lang)])


def text(result: dict[str, Any], echo: Callable[[str], None] = print) -> None:
    """The command line's form (English): aligned columns, then the rows."""
    both = result.get("base") is not None
    echo(msg("gen.head", "en", n=result["n"], tokenize=result["tuned"]["tokenize"]).replace("**", ""))
    echo(f"{'':<36}" + (f"{'base':>12}{'fine-tuned':>12}{'change':>10}" if both else f"{'fine-tuned':>12}"))
    for name, b, t, d in scorecard(result, "en"):
        echo(f"{name:<36}" + (f"{b:>12}{t:>12}{d:>10}" if both else f"{t:>12}"))
    for title, rows in (("changed most", result.get("changed") or []), ("worst rows", result.get("worst") or [])):
        if rows:
            echo(f"\n{title}:")
            for r in rows:
                echo(f"  > {_prompt(r)}\n    reference: {_cell(r['reference'])}")
                if both:
                    echo(f"    base ({r['base_chrf']:.0f}): {_cell(r['base'])}")
                echo(f"    fine-tuned ({r['tuned_chrf']:.0f}): {_cell(r['tuned'])}")
    echo("\n" + msg("gen.note", "en"))
