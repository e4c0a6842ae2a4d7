"""``python -m studio feedback verdict|promote|rollback|versions|agreement|queue``: the gate before teammates see an
improved run, and the teammates' side of the loop (studio/app/verdict.py, versions.py, least_sure.py;
studio/feedback/agreement.py). The command line is the machine's own user: an owner of its workspace."""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import StudioError
from ..feedback.agreement import agreement
from ..feedback.store import FeedbackStore
from ..words.catalog import msg


def warn_before(workspace: Path, run: str, method: str) -> None:
    """Before an improvement starts: a DPO run on a labels run is told SFT is the measured better choice."""
    # start-up: the scoring services, 0.1 s at import; `studio feedback --help` never needs them
    from ..app.improve import plan
    p = plan(workspace, run, method)
    if p.get("warning"):
        print(msg(p["warning"], "en"), file=sys.stderr)
    print(f"{p['corrections']} correction(s), {p['confirmed']} confirmed answer(s) teach; {p['aside']} row(s) kept "
          "aside to judge the result", file=sys.stderr)


def verdict_text(v: dict[str, Any]) -> str:
    """The verdict as the command line prints it: the gate, the flips, the scores per part and per label."""
    from ..app.verdict import flips_line  # start-up: the scoring services (see above)
    g = v["gate"]
    lines = [msg(g["code"], "en", **{k: x for k, x in g.items() if k not in ("passed", "code")}).replace("**", ""),
             flips_line(v, "en"),
             f"{'':<24}{'before':>8}{'after':>8}"]
    measure = "mean chrF/100" if v.get("graded") else "accuracy"
    for part, side in v["parts"].items():
        lines.append(f"{measure + ', ' + part:<24}{side['before']:>8.3f}{side['after']:>8.3f}")
    lines.append(f"{measure + ', all':<24}{v['before']['accuracy']:>8.3f}{v['after']['accuracy']:>8.3f}")
    for lab, c in (v["before"].get("per_label") or {}).items():
        after = v["after"]["per_label"][lab]
        lines.append(f"{'F1 ' + lab:<24}{c['f1']:>8.3f}{after['f1']:>8.3f}")
    for key, word in (("right_rows", "right"), ("wrong_rows", "wrong")):
        for r in v[key][:10]:
            lines.append(f"  flipped {word}: {json.dumps(r['input'][:60], ensure_ascii=False)} expected "
                         f"{r['expected']!r}: {r['before']!r} -> {r['after']!r}")
    return "\n".join(lines)


def judge_and_print(workspace: Path, run: str, quiet: bool = False, as_json: bool = False) -> dict[str, Any]:
    # start-up: the scoring services, 0.1 s at import; `studio feedback --help` never needs them
    from ..app import improve, verdict
    folder = improve.workspace_run(workspace, run)
    info = improve.lineage(folder)
    if info is None:
        raise StudioError.of("improve.not_improved", name=folder.name)
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # library chatter never mixes with the JSON
        v = verdict.judge(folder, folder.parent / str(info["run"]))
    if as_json:
        real_stdout.write(json.dumps(v, ensure_ascii=False) + "\n")
    else:  # the gate's line always: an improvement is not done before it is judged
        text = verdict_text(v)
        print(text.splitlines()[0] if quiet else text, file=sys.stderr)
        print(f"promote it: python -m studio feedback promote {folder.name}" if v["gate"]["passed"] else
              f"not promoted; to promote it anyway: python -m studio feedback promote {folder.name} --anyway",
              file=sys.stderr)
    return v


def run(action: str, workspace: Path, store: FeedbackStore, me: str, args: argparse.Namespace) -> int:
    # start-up: the scoring services, 0.1 s at import; `studio feedback --help` never needs them
    from ..app import least_sure, versions
    from ..app.improve import workspace_run
    runs = workspace / "runs"
    if action == "verdict":
        judge_and_print(workspace, args.run, as_json=args.json)
        return 0
    if action == "promote":
        done = versions.promote(store, runs, args.run, me, anyway=args.anyway)
        print(msg("gate.live", "en", **done).replace("**", ""))
        return 0
    if action == "rollback":
        done = versions.rollback(store, runs, args.run, me)
        print(msg("gate.live", "en", line=done["line"], live=done["live"]).replace("**", ""))
        return 0
    if action == "versions":
        for line in versions.lines(store, runs):
            print(f"{line['line']}: {' -> '.join(line['versions'])} (live: {line['live']})")
            for h in line["history"]:
                print(f"  {h['action']:<8} {h['run']} by {h['login']}")
        return 0
    if action == "agreement":
        for p in agreement(store, args.run):
            print(f"{p['pair'][0]} & {p['pair'][1]}: {p['rows']} shared row(s), {p['agree']} agree, "
                  f"kappa {p['kappa'] if p['kappa'] is not None else '-'}")
        print(f"{len(store.conflict_keys(args.run))} input(s) in conflict (left out of training until resolved)")
        return 0
    q = least_sure.build_queue(workspace_run(workspace, args.run), args.file, args.n, limit_mb=float("inf"))
    for item in q["items"]:
        print(json.dumps({k: item[k] for k in ("text", "answer", "sureness")}, ensure_ascii=False))
    return 0
