"""The Evaluate tab's result tables as Markdown, in the page's language: the before/after scorecard, full vs
quantized, the deploy report (and, in generation_report.py, the generation check).

Pure formatting of the services' plain results (no web framework): the page's Markdown components make every name
in them text (studio/ui/text.py).
"""
from __future__ import annotations

from ..words.catalog import msg

MB = 2 ** 20


def measured_rows(base: dict, tuned: dict, lang: str = "en") -> list[str]:
    """Scorecard rows for latency per answer and model memory (the two sides' measured values)."""
    lat = base["latency_ms_per_row"], tuned["latency_ms_per_row"]
    rows = [f"| {msg('ev.card_latency', lang)} | {lat[0]:.1f} | {lat[1]:.1f} | {lat[1] - lat[0]:+.1f} |"]
    if "memory_bytes" in base and "memory_bytes" in tuned:
        mem = base["memory_bytes"] / MB, tuned["memory_bytes"] / MB
        rows.append(f"| {msg('ev.card_memory', lang)} | {mem[0]:.2f} | {mem[1]:.2f} | {mem[1] - mem[0]:+.2f} |")
    return rows


def compare_markdown(res: dict, lang: str = "en") -> str:
    """Full vs quantized as a markdown table (same columns as the before/after scorecard)."""
    full, quant = res["full"], res["quantized"]
    lines = [msg("ev.q_head", lang, n=res["n"], mode=full["mode"], full=full["weights"], quant=quant["weights"]),
             "", msg("ev.q_cols", lang), "|---|---|---|---|",
             f"| {msg('ev.card_acc', lang)} | {full['accuracy']:.1%} | {quant['accuracy']:.1%} | "
             f"{res['delta']['accuracy']:+.1%} |",
             f"| macro-F1 | {full['macro_f1']:.3f} | {quant['macro_f1']:.3f} | {res['delta']['macro_f1']:+.3f} |"]
    lines += measured_rows(full, quant, lang)
    return "\n".join(lines + ["", msg("ev.measured_note", lang)])


def deploy_markdown(res: dict, lang: str = "en") -> str:
    """The deploy report (``studio.evaluation.deploy_report``) as a markdown table: one line per form; a generation
    run's with chrF and exact match where a labels run's have accuracy."""
    if res["mode"] == "generate-check":
        return _deploy_generation(res, lang)
    lines = [msg("ev.d_head", lang, n=res["n"], mode=res["mode"], device=res["device"]), "", msg("ev.d_cols", lang),
             "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        name = msg(f"ev.d_{r['form']}", lang)
        if r["unavailable"]:
            lines.append(f"| {name} | " + msg("ev.d_unavailable", lang, why=r["unavailable"].replace("|", "/"))
                         + " |  |  |  |  |  |  |")
            continue
        lines.append(f"| {name} | {r['size_bytes'] / MB:.1f} | {r['load_s']:.2f} | {r['memory_bytes'] / MB:.1f} | "
                     f"{r['latency_ms_per_row']:.1f} | {r['accuracy']:.1%} | {r['agreement']:.1%} | {r['cpu_s']:.1f} |")
    return "\n".join(lines + ["", msg("ev.d_note", lang)])


def label_map_line(mapped: dict[str, str] | None, lang: str = "en") -> str:
    """How a check file's labels were read as the run's (``inference.as_trained``), "" when none was renamed."""
    if not mapped:
        return ""
    return msg("ev.label_map", lang, pairs=", ".join(f"{k} → {v}" for k, v in mapped.items()))


def scorecard_markdown(card: dict, lang: str = "en") -> str:
    """The before/after sentiment scorecard (``inference.scorecard``) as a Markdown table."""
    b, t = card["base"], card["tuned"]
    acc, bad = msg("ev.card_acc", lang), msg("ev.card_bad", lang)
    lines = [msg("ev.card_head", lang, n=card["n"], mode=t["mode"]) + label_map_line(card.get("label_map"), lang), "",
             msg("ev.card_cols", lang),
             "|---|---|---|---|",
             f"| {acc} | {b['accuracy']:.1%} | {t['accuracy']:.1%} | {card['delta']['accuracy']:+.1%} |",
             f"| macro-F1 | {b['macro_f1']:.3f} | {t['macro_f1']:.3f} | {card['delta']['macro_f1']:+.3f} |",
             f"| {bad} | {b['unparseable']} | {t['unparseable']} | |"] + measured_rows(b, t, lang)
    for lab in card["labels"]:
        lines.append(f"| F1 {lab} | {b['per_class'][lab]['f1']:.3f} | {t['per_class'][lab]['f1']:.3f} | "
                     f"{t['per_class'][lab]['f1'] - b['per_class'][lab]['f1']:+.3f} |")
    return "\n".join(lines + ["", msg("ev.measured_note", lang)])


def _deploy_generation(res: dict, lang: str) -> str:
    lines = [msg("ev.d_head", lang, n=res["n"], mode=res["mode"], device=res["device"]), "",
             msg("gen.d_cols", lang), "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        name = msg(f"ev.d_{r['form']}", lang)
        if r["unavailable"]:
            lines.append(f"| {name} | " + msg("ev.d_unavailable", lang, why=r["unavailable"].replace("|", "/"))
                         + " |  |  |  |  |  |  |  |")
            continue
        lines.append(f"| {name} | {r['size_bytes'] / MB:.1f} | {r['load_s']:.2f} | {r['memory_bytes'] / MB:.1f} | "
                     f"{r['latency_ms_per_row']:.1f} | {r['chrf']:.1f} | {r['exact_match']:.1%} | "
                     f"{r['agreement']:.1%} | {r['cpu_s']:.1f} |")
    return "\n".join(lines + ["", msg("gen.d_note", lang)])
